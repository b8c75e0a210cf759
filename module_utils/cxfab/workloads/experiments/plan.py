"""The runs of the seed experiments on one host pair, as argv lists (no shell text).

Every run has a server side (argv per parallel pair, or none) and a client side
(the clients of one run start together), pinned to the NIC-local cores of each
host unless the experiment is about placement (numa). Each run also says how its
servers can be seen listening: a TCP port, or an RDMA-CM port for what listens
through RDMA-CM only (rdma and rsocket transports, perftest with -R), which has
no TCP socket to probe. The playbook only starts what the plan lists, so a unit
test of the plan is a test of what runs on the hosts.
"""

from __future__ import annotations

from ...host.net.cpulist import format_cpulist, parse_cpulist
from . import plan_runs
from .plan_runs import LATENCY_BYTES  # noqa: F401  (re-exported)
from .settings import (  # noqa: F401  (re-exported: the filters and the role use them here)
    DEFAULTS,
    EXPERIMENTS,
    NETWORK_TRANSPORTS,
    experiments_from_tags,
    iterations_for,
    settings_with_defaults,
    unknown_tags,
)

# Transports whose servers listen through RDMA-CM (librdmacm), not on a TCP socket.
RDMA_CM_TRANSPORTS = ("rdma", "rsocket")


def listen_kind(tool: str, transport: str | None) -> str:
    """How a run's servers listen: 'rdma_cm' or 'tcp'."""
    if tool.startswith("ib_"):  # perftest with -R: RDMA-CM only
        return "rdma_cm"
    if tool in ("pingpong", "rcat") and transport in RDMA_CM_TRANSPORTS:
        return "rdma_cm"
    return "tcp"  # pingpong/rcat over tcp or smc (AF_SMC listens on TCP), iperf3, qperf


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
    def __init__(self, fabric, pair, settings, bin_dir, cpus):
        self.s = settings
        self.bin = bin_dir
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
        run.setdefault("transport", None)
        run["id"] = f"{len(self.runs):03d}-{run['experiment']}-{run['tool']}"
        has_servers = bool(run.get("servers"))
        run["listen"] = {
            "kind": listen_kind(run["tool"], run["transport"]),
            "ports": list(range(self.port, self.port + ports)) if has_servers else [],
        }
        run["pair"] = self.pair
        run["server_ip"] = self.server_ip
        self.runs.append(run)
        if has_servers:
            self.port += ports

    def pin(self, side: str, argv: list[str], placement: str = "local") -> list[str]:
        cpus = self.place[side][placement]
        return ["taskset", "-c", cpus, *argv] if cpus else argv

    def _pp_pin(self, side, argv):
        cpus = self.place[side]["local"]
        return [*argv, "--cpus", cpus] if cpus else argv

    def pingpong(self, experiment, transport, size, pairs=1, compute=False, iterations=None):
        iterations = iterations or iterations_for(self.s, size)
        servers, clients = [], []
        for i in range(pairs):
            base = [f"{self.bin}/pingpong", "--transport", transport, "--size", str(size)]
            base += ["--iterations", str(iterations), "--json"]
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
                "iterations": iterations,
                "servers": servers,
                "clients": clients,
            },
            ports=pairs,
        )

    def loopback(self, experiment, transport, size, iterations, compute=False):
        """pingpong with both ends on the client host (shm; smc over loopback)."""
        argv = [f"{self.bin}/pingpong", "--transport", transport, "--loopback"]
        argv += ["--size", str(size), "--iterations", str(iterations), "--json"]
        argv += ["--compute"] if compute else []
        self.add(
            {
                "experiment": experiment,
                "tool": "pingpong",
                "transport": transport,
                "size_bytes": size,
                "iterations": iterations,
                "compute": compute,
                "placement": "loopback",
                "servers": [],
                "clients": [self._pp_pin("client", argv)],
            }
        )

    def both(self, experiment, tool, server, client, placement="local", **extra):
        """One server and its client, each pinned; `server(port)` and `client(port)` build argv."""
        self.add(
            {
                "experiment": experiment,
                "tool": tool,
                "placement": placement,
                "servers": [self.pin("server", server(self.port), placement)] if server else [],
                "clients": [self.pin("client", client(self.port), placement)],
                **extra,
            }
        )

    def iperf3(self, experiment, placement, processes=1, streams=1):
        """`processes` iperf3 server/client pairs at once, each -P `streams`."""
        duration = str(self.s["duration"])
        ports = range(self.port, self.port + processes)
        self.add(
            {
                "experiment": experiment,
                "tool": "iperf3",
                "transport": "tcp",
                "placement": placement,
                "processes": processes,
                "streams": streams,
                "servers": [
                    self.pin("server", ["iperf3", "-s", "-1", "-p", str(p)], placement)
                    for p in ports
                ],
                "clients": [
                    self.pin(
                        "client",
                        [
                            *("iperf3", "-c", self.server_ip, "-p", str(p), "-t", duration),
                            *("-J", "-P", str(streams)),
                        ],
                        placement,
                    )
                    for p in ports
                ],
            },
            ports=processes,
        )


def plan_experiments(
    fabric: dict, pair: dict, settings: dict, bin_dir: str, work_dir: str, cpus: dict | None = None
) -> list[dict]:
    """Every run of the selected experiments between the pair's hosts, in order."""
    s = settings_with_defaults(settings)
    p = _Planner(fabric, pair, s, bin_dir, cpus)
    for experiment in EXPERIMENTS:
        if experiment in s["experiments"]:
            getattr(plan_runs, experiment)(p, s, work_dir)
    return p.runs


def rcat_inputs(runs: list[dict]) -> list[dict]:
    """The files the rcat runs stream: [{'path', 'mib'}], each once."""
    seen = {}
    for run in runs:
        if run["tool"] == "rcat":
            seen[run["input_file"]] = run["size_bytes"] >> 20
    return [{"path": path, "mib": mib} for path, mib in seen.items()]
