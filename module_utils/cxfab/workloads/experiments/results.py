"""One run's outputs -> one record of figures (or the reason there is none)."""

from __future__ import annotations

import json

from . import parsers

_KEPT = (
    "id",
    "experiment",
    "tool",
    "transport",
    "size_bytes",
    "pairs",
    "compute",
    "placement",
    "streams",
    "processes",
    "pipeline",
    "iterations",
    "pair",
)


def _json_line(text: str, what: str) -> dict:
    for line in reversed((text or "").splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError(f"{what}: no JSON line (output: {parsers.excerpt(text)})")


def parsers_pingpong(stdout: str) -> dict:
    data = _json_line(stdout, "pingpong")
    for key in ("bytes_per_s_total", "iteration_s", "cpu", "checksum", "bytes_client_to_server"):
        if key not in data:
            raise ValueError(f"pingpong: JSON has no {key!r}")
    return data


def _pingpong(run: dict, clients: list[dict]) -> dict:
    outs = [parsers_pingpong(c["stdout"]) for c in clients]
    n = len(outs)
    out = {
        "bytes_per_s_total": sum(o["bytes_per_s_total"] for o in outs),
        "iteration_s": sum(o["iteration_s"] for o in outs) / n,
        "bytes_moved": sum(o["bytes_client_to_server"] + o["bytes_server_to_client"] for o in outs),
        # The payload: the largest n x n grid of doubles that fits --size (each message
        # also carries a 16-byte band header, counted in bytes_moved).
        "message_bytes": 8 * outs[0].get("grid_n", 0) ** 2 or None,
        "checksums": sorted({o["checksum"] for o in outs}),
    }
    for side in ("client", "server"):
        for kind in ("user_s", "sys_s"):
            out[f"{side}_{kind}"] = sum(o["cpu"][side][kind] for o in outs) / n
    if "connection" in outs[0]:
        out["connection"] = outs[0]["connection"]
    return out


def _iperf3(run: dict, clients: list[dict]) -> dict:
    """One iperf3 process, or the sum of the run's processes (each its own client)."""
    outs = [parsers.iperf3_result(c["stdout"], run.get("streams")) for c in clients]
    if len(outs) == 1:
        return outs[0]
    return {
        "bits_per_second": sum(o["bits_per_second"] for o in outs),
        "streams": sum(o["streams"] for o in outs),
        "per_process": [o["bits_per_second"] for o in outs],
        "cpu": {"host_total": sum(o["cpu"].get("host_total", 0.0) for o in outs)},
    }


def figures(run: dict, clients: list[dict], servers: list[dict]) -> dict:
    """The figures of a run from its clients' (and servers') outputs; raises if unreadable."""
    tool, first = run["tool"], clients[0]["stdout"] if clients else ""
    if tool == "pingpong":
        return _pingpong(run, clients)
    if tool == "iperf3":
        return _iperf3(run, clients)
    if tool in ("ib_write_bw", "ib_read_bw"):
        row = parsers.perftest_bw_rows(first, tool)[-1]
        return {"bytes_per_s": row["bw_average_bps"] / 8, **row}
    if tool == "ib_write_lat":
        row = parsers.perftest_lat_rows(first, tool)[-1]
        # ib_write_lat reports half a round trip (ping-pong of writes).
        return {"rtt_s": 2 * row.get("t_typical_s", row["t_avg_s"]), **row}
    if tool == "ib_read_lat":
        row = parsers.perftest_lat_rows(first, tool)[-1]
        # A read is a whole round trip: request out, data back.
        return {"rtt_s": row.get("t_typical_s", row["t_avg_s"]), **row}
    if tool == "qperf":
        return {"tests": parsers.qperf_results(first, run.get("tests", ()))}
    if tool == "rcat":
        stats = _json_line(servers[0]["stderr"] if servers else "", "rcat receiver")
        if stats.get("role") != "receiver" or stats.get("bytes") != run["size_bytes"]:
            raise ValueError(
                f"rcat: the receiver got {stats.get('bytes')} bytes of {run['size_bytes']}"
            )
        return {"bytes_per_s": float(stats["bytes_per_s"])}
    if tool == "memcpy":
        return {"bytes_per_s": float(_json_line(first, "stencil-bench")["memcpy_bytes_per_s"])}
    if tool == "link_speed":
        fields = first.split()
        if len(fields) != 2 or not fields[1].lstrip("-").isdigit() or int(fields[1]) <= 0:
            raise ValueError(
                f"link speed unknown for {fields[0] if fields else '?'} "
                f"(virtual NIC or link down): {first.strip()!r}"
            )
        return {"device": fields[0], "bytes_per_s": int(fields[1]) * 1e6 / 8}
    raise ValueError(f"no parser for tool {tool!r}")


def _client_failure(clients: list[dict], servers: list[dict]) -> str:
    """Why a run's clients gave no figure ('' when they all exited 0), with the server's side."""
    failed = [c for c in clients if c.get("fault") or c.get("rc", 0) != 0]
    if not failed:
        return ""
    first = failed[0]
    what = first.get("fault") or f"exited {first['rc']}"
    why = f"client {what}: {parsers.excerpt(first.get('stderr') or first.get('stdout'))}"
    broken = [s for s in servers if s.get("error") and not s.get("killed")]
    if broken:
        why += f" (server: {broken[0]['error']}: {parsers.excerpt(broken[0].get('stderr'))})"
    return why


def record(run: dict, clients: list[dict], servers: list[dict], error: str = "") -> dict:
    """The run's identity plus its figures, or plus `error` (never both)."""
    rec = {k: run[k] for k in _KEPT if k in run}
    if run.get("skipped"):
        rec["error"] = f"skipped: {run['skipped']}"
        return rec
    if error:
        rec["error"] = error
        return rec
    if not clients:
        rec["error"] = "no client output"
        return rec
    failure = _client_failure(clients, servers)
    if failure:
        rec["error"] = failure
        return rec
    try:
        found = figures(run, clients, servers)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        rec["error"] = str(exc) or type(exc).__name__
        return rec
    # The run's identity wins over a figure of the same name (iperf3's stream count).
    return {**found, **rec}
