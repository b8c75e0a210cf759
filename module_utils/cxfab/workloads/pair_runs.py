"""Parsers for the outputs of the standard workloads and the plan of a pair's runs.

Each parser returns bits per second (float) and raises ValueError naming what it
could not find, so a verify report says why a figure is missing instead of 0.
"""

from __future__ import annotations

import json

from . import marking as workload_marking
from .experiments import parsers, retries
from .experiments.plan import host_address
from .experiments.plan import listen_kind as plan_listen_kind
from .planned import PlannedPair


def iperf3_bps(stdout: str) -> float:
    """iperf3 -J: the receiver's view of the whole run (summed over parallel streams)."""
    data = json.loads(stdout)
    if data.get("error"):
        raise ValueError(f"iperf3: {data['error']}")
    end = data.get("end") or {}
    for key in ("sum_received", "sum"):
        value = (end.get(key) or {}).get("bits_per_second")
        if value is not None:
            return float(value)
    raise ValueError("iperf3 output has no end.sum_received.bits_per_second")


def perftest_bps(stdout: str) -> float:
    """ib_write_bw / ib_read_bw: the BW average column of the (last) result row, bits/s."""
    return parsers.perftest_bw_rows(stdout)[-1]["bw_average_bps"]


def qperf_bps(stdout: str, test: str) -> float:
    """qperf: the test's `bw = 9.5 GB/sec` line, in bits/s."""
    values = parsers.qperf_results(stdout, [test])[test]
    if "bw" not in values:
        raise ValueError(f"qperf: no bandwidth for {test}")
    return values["bw"] * 8


def pingpong_result(stdout: str) -> dict:
    """pingpong --json: the client's summary object."""
    data = json.loads(stdout)
    for key in ("checksum", "bytes_per_s_client_to_server"):
        if key not in data:
            raise ValueError(f"pingpong: JSON has no {key!r}")
    return data


# ---------------------------------------------------------------- the plan of a pair


def plan_pair(
    fabric: dict,
    pair: PlannedPair,
    bin_dir: str,
    port_base: int,
    duration: int,
    rcat_file: str,
    rcat_out: str,
    cpus: dict | None = None,
    marking: dict | None = None,
) -> list[dict]:
    """Every run of one host pair: server and client argv, in the order they run.

    pingpong for each network transport and message size; shm in loopback on the
    client (it never crosses the network); then the references measured between
    the same hosts in the same run: iperf3 for TCP, ib_write_bw per size and qperf
    for RDMA; last, rcat streams a file whose sha256 must arrive intact.
    `marking` (workload_marking.roce_marking) marks the RDMA runs of a lossless
    RoCE VLAN with its ToS and GID; each such run's `marking` says how.
    """
    workloads = fabric["workloads"]
    server_ip = host_address(fabric["hosts"][pair["server"]], pair["vlan"])
    cpus = cpus or {}
    pin = {
        side: (["--cpus", cpus[side]] if cpus.get(side) else []) for side in ("server", "client")
    }
    common = ["--iterations", str(workloads["iterations"])]
    common += ["--pipeline", str(workloads.get("pipeline", 1))]
    common += ["--compute"] if workloads.get("compute") else []
    common += ["--json"]
    transports = workloads["transports"]
    runs: list[dict] = []
    port = port_base

    def add(run: dict) -> None:
        nonlocal port
        runs.append({"port": port, "size_bytes": None, **run})
        if run["transport"] == "rdma" and marking:
            runs[-1]["marking"] = workload_marking.describe(marking, run["tool"])
        port += 1

    tos = ["--tos", str(int(marking["tos"]))] if marking else []
    tos_words = " ".join(tos)  # digits only: safe inside rcat's sh -c line

    for transport in (t for t in transports if t != "shm"):
        for size in workloads["message_sizes"]:
            base = [f"{bin_dir}/pingpong", "--transport", transport, "--size", str(size)]
            add(
                {
                    "tool": "pingpong",
                    "transport": transport,
                    "size_bytes": size,
                    "server": [*base, "--server", f"0.0.0.0:{port}", *common, *pin["server"]],
                    "client": [
                        *base,
                        "--client",
                        f"{server_ip}:{port}",
                        *common,
                        *pin["client"],
                        *(tos if transport == "rdma" else []),
                    ],
                }
            )
    if "shm" in transports:
        for size in workloads["message_sizes"]:
            add(
                {
                    "tool": "pingpong",
                    "transport": "shm",
                    "size_bytes": size,
                    "server": None,
                    "client": [
                        f"{bin_dir}/pingpong",
                        "--transport",
                        "shm",
                        "--loopback",
                        "--size",
                        str(size),
                        *common,
                    ],
                }
            )
    if "tcp" in transports:
        add(
            {
                "tool": "iperf3",
                "transport": "tcp",
                "server": ["iperf3", "-s", "-1", "-p", str(port)],
                "client": ["iperf3", "-c", server_ip, "-p", str(port), "-t", str(duration), "-J"],
            }
        )
    if "rdma" in transports:
        for size in workloads["message_sizes"]:
            perftest = ["ib_write_bw", "-F", "--report_gbits", "-s", str(size)]
            perftest += ["-D", str(duration), "-p", str(port)]
            connect = {
                side: workload_marking.perftest_connection(marking, side)
                for side in ("server", "client")
            }
            add(
                {
                    "tool": "ib_write_bw",
                    "transport": "rdma",
                    "size_bytes": size,
                    "server": [perftest[0], *connect["server"], *perftest[1:]],
                    "client": [perftest[0], *connect["client"], *perftest[1:], server_ip],
                }
            )
        add(
            {
                "tool": "qperf",
                "transport": "rdma",
                "server": ["qperf", "-lp", str(port)],
                "client": [
                    "qperf",
                    server_ip,
                    "-lp",
                    str(port),
                    # Connect through RDMA-CM: it picks the RoCE GID from the address.
                    "-cm1",
                    "-t",
                    str(duration),
                    "rc_rdma_write_bw",
                    "tcp_bw",
                    "quit",
                ],
            }
        )
        add(
            {
                "tool": "rcat",
                "transport": "rdma",
                "server": [
                    "sh",
                    "-c",
                    f'exec "$0" --transport rdma --server 0.0.0.0:{port} > "$1"',
                    f"{bin_dir}/rcat",
                    rcat_out,
                ],
                "client": [
                    "sh",
                    "-c",
                    f'exec "$0" --transport rdma --client {server_ip}:{port} {tos_words} < "$1"',
                    f"{bin_dir}/rcat",
                    rcat_file,
                ],
            }
        )
    return runs


def run_result(run: dict, stdout: str) -> dict:
    """One line of the results: what ran and the bits per second it reached."""
    result = {k: run.get(k) for k in ("tool", "transport", "size_bytes")}
    if run.get("marking"):
        result["marking"] = run["marking"]
    if run["tool"] == "pingpong":
        data = pingpong_result(stdout)
        result["bits_per_second"] = 8 * float(data["bytes_per_s_client_to_server"])
        result["checksum"] = data["checksum"]
    elif run["tool"] == "iperf3":
        result["bits_per_second"] = iperf3_bps(stdout)
    elif run["tool"] == "ib_write_bw":
        result["bits_per_second"] = perftest_bps(stdout)
    elif run["tool"] == "qperf":
        result["bits_per_second"] = qperf_bps(stdout, "rc_rdma_write_bw")
        result["tcp_bits_per_second"] = qperf_bps(stdout, "tcp_bw")
    else:
        result["bits_per_second"] = None
    return result


def client_error(run: dict, stdout: str) -> str:
    """Why a client's output holds no result ('' when it does).

    Some tools exit 0 without measuring anything (iperf3 -J reports "unable to
    connect" in its JSON with status 0), so the exit status alone cannot tell a
    client that reached its server from one that started before the server did.
    """
    try:
        run_result(run, stdout)
    except (ValueError, KeyError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
        return str(exc) or type(exc).__name__
    return ""


# ---------------------------------------------------------------- the records of a batch

# Characters of a failed program's stderr kept in its record (its last lines).
ERROR_TAIL = 200


def _why(reason: str, stderr: str) -> str:
    """The reason, then the end of the program's stderr (as the rescue of a task put it)."""
    return f"{reason} {stderr[-ERROR_TAIL:]}".strip()


def run_record(pair: str, run: dict, client: dict, servers: list[dict]) -> dict:
    """The result line of one run of a batch, or why it has no figure.

    client is what cxfab_workload_clients returned for the run (its one client's
    outcome and the run's error), servers what cxfab_workload_servers collected of
    the run's server (none for a run without one). A client without a reading fails
    the run (with the server's own failure appended when the server ended badly by
    itself: it is the likely cause); a server that failed after its client read a
    figure fails it too, as the figure may be the tool's half of a broken exchange.
    """
    failed = {"pair": pair, **{k: run.get(k) for k in ("tool", "transport", "size_bytes")}}
    failed["bits_per_second"] = None
    outcome = (client["clients"] or [{}])[0]
    server = servers[0] if servers else None
    if client["error"]:
        why = "Run the client: " + _why(client["error"], outcome.get("stderr") or "")
        if server and server["error"] and not server["killed"]:
            why += f" (server: {_why(server['error'], server['stderr'])})"
        return {**failed, "error": why}
    if server and server["error"]:
        why = "Wait for the server to finish: " + _why(server["error"], server["stderr"])
        return {**failed, "error": why}
    try:
        return {"pair": pair, **run_result(run, outcome["stdout"])}
    except (ValueError, KeyError, TypeError) as exc:
        return {**failed, "error": f"Record the result: {exc or type(exc).__name__}"}


def batch_records(plan: list, outcome: dict, pair: str) -> list:
    """The records of a pair's plan, in its order, from the outcome of its batch.

    outcome: what roles/rdma_workloads/tasks/batch.yml kept, {'runs', 'servers'}
    (servers: per run, its server's outcome), or {'error'} when the batch failed:
    then every run is recorded with that reason.
    """
    if outcome.get("error"):
        return failed_records(plan, pair, outcome["error"])
    clients, servers = outcome["runs"], outcome["servers"]
    if not len(plan) == len(clients) == len(servers):
        raise ValueError(
            f"{pair}: {len(plan)} planned runs, {len(clients)} client and "
            f"{len(servers)} server outcomes"
        )
    return [run_record(pair, *each) for each in zip(plan, clients, servers, strict=True)]


def retry_plan(plan: list, records: list) -> list:
    """The runs of `plan` whose tool could not measure for a reason of the moment, to
    run once more (retries.worth_a_retry), in plan order."""
    return retries.to_retry(plan, records)


def with_retries(records: list, plan: list, retried: list, second: list) -> list:
    """`records` of `plan`, each retried run's record replaced by its second try's.

    retried: the runs that ran again (retry_plan, in plan order), second: their records.
    """
    return retries.with_second_tries(records, plan, second, retried)


def listen_kind(run: dict) -> str:
    """How a run's server listens: through RDMA-CM (pingpong and rcat over rdma, perftest
    with -R) or on a TCP socket (the others, perftest's own exchange included)."""
    if run["tool"].startswith("ib_"):
        return "rdma_cm" if "-R" in run["server"] else "tcp"
    return plan_listen_kind(run["tool"], run["transport"])


def batch(plan: list) -> dict:
    """A pair's plan as the batch of roles/rdma_workloads/tasks/batch.yml takes it.

    One server entry per run that has a server, seen listening on the run's port;
    each run's one client, judged by its reading (client_error).
    """
    servers = [
        {
            "tool": run["tool"],
            "server": run["server"],
            "listen": {"kind": listen_kind(run), "port": run["port"]},
            "run": index,
        }
        for index, run in enumerate(plan)
        if run.get("server")
    ]
    runs = [{**run, "clients": [run["client"]], "skip": ""} for run in plan]
    return {"servers": servers, "runs": runs}


def check_runs(runs, sides: tuple[str, ...] = ("client", "server")) -> None:
    """Raise ValueError naming the first run whose client or server is not an argv.

    The servers module checks only the servers: a run it starts may have its client
    elsewhere (the QoS measurement's iperf3 clients are another module's).
    """
    if not isinstance(runs, list):
        raise ValueError(f"runs: expected a list of runs, got {type(runs).__name__}")
    for index, run in enumerate(runs):
        if not isinstance(run, dict) or not isinstance(run.get("tool"), str):
            raise ValueError(f"runs[{index}]: expected a run with a 'tool' (a plan entry)")
        for side in sides:
            argv = run.get(side)
            if argv is None and side == "server":
                continue
            if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
                raise ValueError(f"runs[{index}].{side}: expected a non-empty list of strings")


def failed_records(plan: list, pair: str, why: str) -> list:
    """Every run of a pair recorded as failed for one reason (its batch did not run)."""
    keys = ("tool", "transport", "size_bytes")
    return [
        {"pair": pair, **{k: run.get(k) for k in keys}, "bits_per_second": None, "error": why}
        for run in plan
    ]


def qos_iperf3_server(target: dict) -> dict:
    """The iperf3 server of one QoS measurement target, as a run for the servers module.

    In the foreground (no -D): the servers module keeps its pid and ends it; it serves
    every retry of a starved measurement until then.
    """
    address, port = target.get("address"), target.get("port")
    if not isinstance(address, str) or not address or not isinstance(port, int):
        raise ValueError(f"QoS target needs an address and an integer port, got {target!r}")
    return {"tool": "iperf3", "server": ["iperf3", "-s", "-B", address, "-p", str(port)]}
