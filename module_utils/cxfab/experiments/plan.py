"""The runs of the seed experiments on one host pair, as argv lists (no shell text).

Every run has a server side (argv per parallel pair, or none) and a client side,
pinned to the NIC-local cores of each host unless the experiment is about
placement (numa). The playbook only starts what the plan lists, so a unit test
of the plan is a test of what runs in the lab.
"""

from __future__ import annotations

from ..hostnet.cpulist import format_cpulist, parse_cpulist

EXPERIMENTS = ("pingpong_matrix", "reference_tools", "numa", "rcat", "latency", "smc", "rsocket")

# Small lab defaults: a smoke run of every experiment stays under 3 minutes.
DEFAULTS = {
    "experiments": list(EXPERIMENTS),
    "transports": ["rdma", "tcp"],
    "sizes": [65536, 1048576],
    "pairs": [1, 2],
    "compute": [False, True],
    "iterations": 20,
    "duration": 2,
    "rcat_mib": [16],
    "rcat_chunk": 1048576,
    "latency_iterations": 200,
    "port_base": 18600,
}
_INT_RANGES = {
    "iterations": (1, 1_000_000),
    "duration": (1, 600),
    "rcat_chunk": (4096, 1 << 30),
    "latency_iterations": (1, 10_000_000),
    "port_base": (1024, 65000),
}
_LIST_RANGES = {"sizes": (4096, 1 << 30), "pairs": (1, 64), "rcat_mib": (1, 65536)}
NETWORK_TRANSPORTS = ("rdma", "tcp", "rsocket", "smc")
LATENCY_BYTES = 4096  # pingpong's smallest message (its grid is at least 8 x 8 doubles)


def settings_with_defaults(given: dict | None, path: str = "experiments_settings") -> dict:
    """The settings merged over DEFAULTS; bad input raises naming its key path."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"{path}.{unknown[0]}: unknown setting (known: {', '.join(DEFAULTS)})")
    settings = {**DEFAULTS, **given}
    for key, (low, high) in _INT_RANGES.items():
        value = settings[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{path}.{key}: {value!r} is not an integer in [{low}, {high}]")
    for key, (low, high) in _LIST_RANGES.items():
        values = settings[key]
        if not isinstance(values, list) or not values:
            raise ValueError(f"{path}.{key}: must be a non-empty list")
        for i, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(
                    f"{path}.{key}[{i}]: {value!r} is not an integer in [{low}, {high}]"
                )
    for key, allowed in (("experiments", EXPERIMENTS), ("transports", NETWORK_TRANSPORTS)):
        values = settings[key]
        if not isinstance(values, list):
            raise ValueError(f"{path}.{key}: must be a list")
        for i, value in enumerate(values):
            if value not in allowed:
                raise ValueError(f"{path}.{key}[{i}]: {value!r} is not one of {', '.join(allowed)}")
    for i, value in enumerate(settings["compute"]):
        if not isinstance(value, bool):
            raise ValueError(f"{path}.compute[{i}]: {value!r} is not true or false")
    return settings


def host_address(host: dict, vlan: int) -> str:
    """The host's address on the pair's VLAN (the bond's for the untagged one)."""
    for interface in host.get("vlans", []):
        if interface["id"] == vlan:
            return interface["address"].split("/")[0]
    bond = host.get("bond") or {}
    if bond.get("address"):
        return bond["address"].split("/")[0]
    raise ValueError(f"the host has no address on VLAN {vlan}")


def placements(cpus: dict) -> dict:
    """{'local': 'a-b', 'far': 'c-d'} from a host's NIC-local and online CPU lists.

    Far is every online CPU outside the NIC's node; '' when the host has one node.
    """
    local = parse_cpulist(cpus.get("local") or "", "nic_local_cpus")
    online = parse_cpulist(cpus.get("online") or "", "cpus_online")
    far = [cpu for cpu in online if cpu not in set(local)]
    return {"local": format_cpulist(local), "far": format_cpulist(far) if local else ""}


class _Planner:
    def __init__(self, fabric, pair, settings, bin_dir, work_dir, cpus):
        self.s = settings
        self.bin = bin_dir
        self.work = work_dir
        self.server_ip = host_address(fabric["hosts"][pair["server"]], pair["vlan"])
        self.pair = pair["name"]
        self.place = {
            side: placements((cpus or {}).get(side) or {}) for side in ("server", "client")
        }
        self.port = settings["port_base"]
        self.runs: list[dict] = []

    def add(self, run: dict, ports: int = 1) -> None:
        run.setdefault("pairs", 1)
        run.setdefault("placement", "local")
        run.setdefault("size_bytes", None)
        run["id"] = f"{len(self.runs):03d}-{run['experiment']}-{run['tool']}"
        # How the playbook knows a server is ready: its TCP port, or (perftest over
        # RDMA-CM, which listens on no TCP port) a short pause.
        run["ports"] = list(range(self.port, self.port + ports)) if run.get("servers") else []
        run["wait"] = "pause" if run["tool"].startswith("ib_") else "port"
        run["pair"] = self.pair
        run["server_ip"] = self.server_ip
        self.runs.append(run)
        self.port += ports

    def pin(self, side: str, argv: list[str], placement: str = "local") -> list[str]:
        cpus = self.place[side][placement]
        return ["taskset", "-c", cpus, *argv] if cpus else argv

    def pingpong(
        self, experiment, transport, size, pairs=1, compute=False, iterations=None, **extra
    ):
        servers, clients = [], []
        for i in range(pairs):
            base = [f"{self.bin}/pingpong", "--transport", transport, "--size", str(size)]
            base += ["--iterations", str(iterations or self.s["iterations"]), "--json"]
            base += ["--compute"] if compute else []
            port = self.port + i
            servers.append(self._pp_pin("server", [*base, "--server", f"0.0.0.0:{port}"]))
            clients.append(self._pp_pin("client", [*base, "--client", f"{self.server_ip}:{port}"]))
        self.add(
            {
                "experiment": experiment,
                "tool": "pingpong",
                "transport": transport,
                "size_bytes": size,
                "pairs": pairs,
                "compute": compute,
                "servers": servers,
                "clients": clients,
                **extra,
            },
            ports=pairs,
        )

    def _pp_pin(self, side, argv):
        cpus = self.place[side]["local"]
        return [*argv, "--cpus", cpus] if cpus else argv

    def both(self, experiment, tool, server, client, placement="local", **extra):
        self.add(
            {
                "experiment": experiment,
                "tool": tool,
                "placement": placement,
                "servers": [self.pin("server", server, placement)] if server else [],
                "clients": [self.pin("client", client, placement)],
                **extra,
            }
        )


def plan_experiments(
    fabric: dict, pair: dict, settings: dict, bin_dir: str, work_dir: str, cpus: dict | None = None
) -> list[dict]:
    """Every run of the selected experiments between the pair's hosts, in order."""
    s = settings_with_defaults(settings)
    p = _Planner(fabric, pair, s, bin_dir, work_dir, cpus)
    duration = str(s["duration"])
    selected = set(s["experiments"])
    largest = max(s["sizes"])

    if "pingpong_matrix" in selected:
        for transport in s["transports"]:
            for size in s["sizes"]:
                for pairs in s["pairs"]:
                    for compute in s["compute"]:
                        p.pingpong("pingpong_matrix", transport, size, pairs, compute)

    if "reference_tools" in selected:
        for tool in ("ib_write_bw", "ib_read_bw"):
            argv = [tool, "-R", "-F", "--report_gbits", "-s", str(largest), "-D", duration]
            argv += ["-p", str(p.port)]
            p.both(
                "reference_tools",
                tool,
                argv,
                [*argv, p.server_ip],
                transport="rdma",
                size_bytes=largest,
            )
        qperf_tests = ["rc_rdma_write_bw", "rc_rdma_read_bw", "tcp_bw", "rc_lat", "tcp_lat"]
        p.both(
            "reference_tools",
            "qperf",
            ["qperf", "-lp", str(p.port)],
            [
                "qperf",
                p.server_ip,
                "-lp",
                str(p.port),
                "-cm1",
                "-vv",
                "-t",
                duration,
                "-m",
                str(largest),
                *qperf_tests,
                "quit",
            ],
            transport="rdma+tcp",
            size_bytes=largest,
            tests=qperf_tests,
        )
        for streams in (1, 4):
            p.both(
                "reference_tools",
                "iperf3",
                ["iperf3", "-s", "-1", "-p", str(p.port)],
                [
                    "iperf3",
                    "-c",
                    p.server_ip,
                    "-p",
                    str(p.port),
                    "-t",
                    duration,
                    "-J",
                    "-P",
                    str(streams),
                ],
                transport="tcp",
                streams=streams,
            )

    if "numa" in selected:
        far_missing = [side for side in ("server", "client") if not p.place[side]["far"]]
        for placement in ("local", "far"):
            if placement == "far" and far_missing:
                p.add(
                    {
                        "experiment": "numa",
                        "tool": "iperf3",
                        "placement": "far",
                        "transport": "tcp",
                        "servers": [],
                        "clients": [],
                        "skipped": f"{' and '.join(far_missing)} host has one NUMA node: "
                        "no far cores to pin to",
                    }
                )
                continue
            p.both(
                "numa",
                "iperf3",
                ["iperf3", "-s", "-1", "-p", str(p.port)],
                ["iperf3", "-c", p.server_ip, "-p", str(p.port), "-t", duration, "-J"],
                placement=placement,
                transport="tcp",
                streams=1,
            )

    if "rcat" in selected:
        p.add(
            {
                "experiment": "rcat",
                "tool": "memcpy",
                "servers": [],
                "size_bytes": s["rcat_chunk"],
                "clients": [
                    p.pin(
                        "client",
                        [
                            f"{bin_dir}/stencil-bench",
                            "--isa",
                            "scalar",
                            "--size",
                            str(s["rcat_chunk"]),
                            "--iterations",
                            "5",
                            "--json",
                        ],
                    )
                ],
            }
        )
        p.add(
            {
                "experiment": "rcat",
                "tool": "link_speed",
                "servers": [],
                "clients": [["sh", "-c", _LINK_SPEED, "link-speed", p.server_ip]],
            }
        )
        for transport in ("rdma", "tcp"):
            for mib in s["rcat_mib"]:
                for pipeline in (2, 1):
                    src = f"{work_dir}/rcat-{mib}m.bin"
                    common = [
                        "--transport",
                        transport,
                        "--size",
                        str(s["rcat_chunk"]),
                        "--pipeline",
                        str(pipeline),
                        "--json",
                    ]
                    p.both(
                        "rcat",
                        "rcat",
                        [
                            "sh",
                            "-c",
                            'exec "$@" > /dev/null',
                            "rcat",
                            f"{bin_dir}/rcat",
                            *common,
                            "--server",
                            f"0.0.0.0:{p.port}",
                        ],
                        [
                            "sh",
                            "-c",
                            'f=$1; shift; exec "$@" < "$f"',
                            "rcat",
                            src,
                            f"{bin_dir}/rcat",
                            *common,
                            "--client",
                            f"{p.server_ip}:{p.port}",
                        ],
                        transport=transport,
                        size_bytes=mib << 20,
                        pipeline=pipeline,
                        input_file=src,
                    )

    if "latency" in selected:
        for transport in NETWORK_TRANSPORTS:
            p.pingpong("latency", transport, LATENCY_BYTES, iterations=s["latency_iterations"])
        p.add(
            {
                "experiment": "latency",
                "tool": "pingpong",
                "transport": "shm",
                "size_bytes": LATENCY_BYTES,
                "servers": [],
                "clients": [
                    [
                        f"{bin_dir}/pingpong",
                        "--transport",
                        "shm",
                        "--loopback",
                        "--size",
                        str(LATENCY_BYTES),
                        "--iterations",
                        str(s["latency_iterations"]),
                        "--json",
                    ]
                ],
            }
        )
        lat = ["ib_write_lat", "-R", "-F", "-s", "2", "-n", "1000", "-p", str(p.port)]
        p.both("latency", "ib_write_lat", lat, [*lat, p.server_ip], transport="rdma", size_bytes=2)
        p.both(
            "latency",
            "qperf",
            ["qperf", "-lp", str(p.port)],
            [
                "qperf",
                p.server_ip,
                "-lp",
                str(p.port),
                "-cm1",
                "-v",
                "-t",
                duration,
                "rc_lat",
                "tcp_lat",
                "quit",
            ],
            transport="rdma+tcp",
            tests=["rc_lat", "tcp_lat"],
        )

    if "smc" in selected:
        for transport in ("smc", "tcp"):
            p.pingpong("smc", transport, largest, compute=True)

    if "rsocket" in selected:
        for transport in ("rsocket", "rdma", "tcp"):
            for size in s["sizes"]:
                p.pingpong("rsocket", transport, size)
    return p.runs


# Link rate (Mb/s) of the interface that routes to the server; virtual NICs print -1.
_LINK_SPEED = (
    'dev=$(ip -o route get "$1" | sed -n "s/.* dev \\([^ ]*\\).*/\\1/p"); '
    'echo "$dev $(cat /sys/class/net/$dev/speed 2>/dev/null || echo -1)"'
)


def rcat_inputs(runs: list[dict]) -> list[dict]:
    """The files the rcat runs stream: [{'path', 'mib'}], each once."""
    seen = {}
    for run in runs:
        if run["tool"] == "rcat":
            seen[run["input_file"]] = run["size_bytes"] >> 20
    return [{"path": path, "mib": mib} for path, mib in seen.items()]
