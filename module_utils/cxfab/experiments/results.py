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
    "pipeline",
    "pair",
)


def _json_line(text: str, what: str) -> dict:
    for line in reversed((text or "").splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError(f"{what}: no JSON line (output: {parsers.excerpt(text)})")


def _pingpong(run: dict, clients: list[dict]) -> dict:
    outs = [parsers_pingpong(c["stdout"]) for c in clients]
    n = len(outs)
    out = {
        "bytes_per_s_total": sum(o["bytes_per_s_total"] for o in outs),
        "iteration_s": sum(o["iteration_s"] for o in outs) / n,
        "bytes_moved": sum(o["bytes_client_to_server"] + o["bytes_server_to_client"] for o in outs),
        "checksums": sorted({o["checksum"] for o in outs}),
    }
    for side in ("client", "server"):
        for kind in ("user_s", "sys_s"):
            out[f"{side}_{kind}"] = sum(o["cpu"][side][kind] for o in outs) / n
    if "connection" in outs[0]:
        out["connection"] = outs[0]["connection"]
    return out


def parsers_pingpong(stdout: str) -> dict:
    data = _json_line(stdout, "pingpong")
    for key in ("bytes_per_s_total", "iteration_s", "cpu", "checksum"):
        if key not in data:
            raise ValueError(f"pingpong: JSON has no {key!r}")
    return data


def figures(run: dict, clients: list[dict], servers: list[dict]) -> dict:
    """The figures of a run from its clients' (and servers') outputs; raises if unreadable."""
    tool, first = run["tool"], clients[0]["stdout"] if clients else ""
    if tool == "pingpong":
        return _pingpong(run, clients)
    if tool == "iperf3":
        return parsers.iperf3_result(first, run.get("streams"))
    if tool in ("ib_write_bw", "ib_read_bw"):
        row = parsers.perftest_bw_rows(first, tool)[-1]
        return {"bytes_per_s": row["bw_average_bps"] / 8, **row}
    if tool == "ib_write_lat":
        row = parsers.perftest_lat_rows(first, tool)[-1]
        # ib_write_lat reports half a round trip (ping-pong of writes).
        return {"rtt_s": 2 * row.get("t_typical_s", row["t_avg_s"]), **row}
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


def record(run: dict, clients: list[dict], servers: list[dict], error: str = "") -> dict:
    """The run's identity plus its figures, or plus `error` (never both)."""
    rec = {k: run[k] for k in _KEPT if k in run}
    if run.get("skipped"):
        rec["error"] = f"skipped: {run['skipped']}"
        return rec
    if error:
        rec["error"] = error
        return rec
    failed = [c for c in clients if c.get("rc", 0) != 0]
    if failed:
        rec["error"] = (
            f"client exited {failed[0]['rc']}: "
            f"{parsers.excerpt(failed[0].get('stderr') or failed[0].get('stdout'))}"
        )
        return rec
    try:
        rec.update(figures(run, clients, servers))
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        rec["error"] = str(exc) or type(exc).__name__
    return rec
