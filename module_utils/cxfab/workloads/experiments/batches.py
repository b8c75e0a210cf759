"""The plan's runs in batches, and a batch's outputs back to one record per run.

A batch costs four module calls whatever its number of runs (a call into a host
costs seconds on a slow host): its servers started at once on the server
host, seen listening there, its clients run in turn on the client host, its
servers collected. A batch holds consecutive runs (of one or more experiments) up
to MAX_SERVERS servers waiting at once; a run is never split.
"""

from __future__ import annotations

from . import parsers, results

MAX_SERVERS = 48


def batches(runs: list[dict], max_servers: int = MAX_SERVERS) -> list[dict]:
    """[{'index', 'experiments', 'runs', 'servers'}]: consecutive runs, servers capped."""
    out: list[dict] = []
    for run in runs:
        count = len(run.get("servers") or [])
        last = out[-1] if out else None
        if last and last["servers"] + count <= max_servers:
            last["runs"].append(run)
            last["servers"] += count
        else:
            out.append({"runs": [run], "servers": count})
    for index, batch in enumerate(out):
        batch["index"] = index
        batch["experiments"] = list(dict.fromkeys(r["experiment"] for r in batch["runs"]))
    return out


def _live(batch: dict) -> list[dict]:
    return [run for run in batch["runs"] if not run.get("skipped")]


def server_entries(batch: dict) -> list[dict]:
    """Every server process of the batch, as runs of cxfab_workload_servers."""
    return [
        {"tool": run["tool"], "server": argv} for run in _live(batch) for argv in run["servers"]
    ]


def listeners(batch: dict, started: list | None = None) -> list[dict]:
    """What cxfab_listening waits for: each server's kind and port (server_entries order),
    with its process id from cxfab_workload_servers' `started` when given."""
    out = []
    for run in _live(batch):
        for port in run["listen"]["ports"]:
            out.append({"kind": run["listen"]["kind"], "port": port})
    for item, pid in zip(out, started or [], strict=False):
        if pid:
            item["pid"] = pid
    return out


def _not_listening(run: dict, missing: list[dict]) -> str:
    gone = [
        m
        for m in missing
        if m["kind"] == run["listen"]["kind"] and m["port"] in run["listen"]["ports"]
    ]
    if not gone:
        return ""
    ports = ", ".join(str(m["port"]) for m in gone)
    kind = "RDMA-CM" if gone[0]["kind"] == "rdma_cm" else "TCP"
    return f"server not listening on {kind} port {ports}: {gone[0]['why']}"


def client_runs(batch: dict, missing: list[dict]) -> list[dict]:
    """The runs for cxfab_experiment_clients: each run's clients, or why they do not run."""
    out = []
    for run in batch["runs"]:
        skip = f"skipped: {run['skipped']}" if run.get("skipped") else _not_listening(run, missing)
        out.append({"id": run["id"], "clients": [] if skip else run["clients"], "skip": skip})
    return out


def _server_slices(batch: dict, servers: list) -> dict:
    """run id -> its servers' outcomes (in server_entries order)."""
    slices, at = {}, 0
    for run in _live(batch):
        count = len(run["servers"])
        slices[run["id"]] = [s for s in servers[at : at + count] if s] if servers else []
        at += count
    return slices


def servers_to_wait_for(batch: dict, clients: list[dict]) -> list[int]:
    """Indexes (server_entries order) of the servers whose run's clients all exited 0:
    those exit by themselves; the others are killed at collection."""
    by_id = {run["id"]: outcome for run, outcome in zip(batch["runs"], clients, strict=True)}
    wait, at = [], 0
    for run in _live(batch):
        outcome = by_id[run["id"]]
        count = len(run["servers"])
        done = not outcome["skip"] and all(c["rc"] == 0 for c in outcome["clients"])
        if done:
            wait += list(range(at, at + count))
        at += count
    return wait


def _with_server(why: str, servers: list[dict]) -> str:
    """A run that did not run: its reason, then how its failed server ended."""
    failed = [s for s in servers if s.get("error")]
    if not why or not failed:
        return why
    return f"{why} (server: {failed[0]['error']}: {parsers.excerpt(failed[0].get('stderr'))})"


def records(batch: dict, clients: list[dict], servers: list) -> list[dict]:
    """One record per run of the batch (figures, or the reason there are none)."""
    slices = _server_slices(batch, servers or [])
    out = []
    for run, outcome in zip(batch["runs"], clients, strict=True):
        if run.get("skipped"):
            out.append(results.record(run, [], []))
            continue
        mine = slices.get(run["id"], [])
        out.append(
            results.record(run, outcome["clients"], mine, _with_server(outcome["skip"], mine))
        )
    return out


def failed_records(batch: dict, why: str) -> list[dict]:
    """Every run of a batch that could not run, with the reason."""
    return [results.record(run, [], [], why) for run in batch["runs"]]
