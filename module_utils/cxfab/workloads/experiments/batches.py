"""The plan's runs in batches, and a batch's outputs back to one record per run.

A batch costs three module calls whatever its number of runs (a call into a host
costs seconds on a slow host): its servers started at once on the server host and
seen listening there, its clients run in turn on the client host, its servers
collected (roles/rdma_workloads/tasks/batch.yml, the workloads' path too). A batch
holds consecutive runs (of one or more experiments) up to MAX_SERVERS servers
waiting at once; a run is never split.
"""

from __future__ import annotations

from . import parsers, results, retries

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


def _live(batch: dict) -> list[tuple[int, dict]]:
    return [(index, run) for index, run in enumerate(batch["runs"]) if not run.get("skipped")]


def batch_data(batch: dict) -> dict:
    """The batch as roles/rdma_workloads/tasks/batch.yml takes it (cxfab/workloads/batch.py).

    One server entry per server process of a run the plan did not skip, seen listening
    on its port; per run, its clients, or why the plan skipped it.
    """
    servers = [
        {
            "tool": run["tool"],
            "server": argv,
            "listen": {"kind": run["listen"]["kind"], "port": port},
            "run": index,
        }
        for index, run in _live(batch)
        for argv, port in zip(run["servers"], run["listen"]["ports"], strict=True)
    ]
    runs = [
        {
            "clients": run["clients"],
            "skip": f"skipped: {run['skipped']}" if run.get("skipped") else "",
        }
        for run in batch["runs"]
    ]
    return {"servers": servers, "runs": runs}


def _with_server(why: str, servers: list[dict]) -> str:
    """A run that did not run: its reason, then how its failed server ended."""
    failed = [s for s in servers if s.get("error")]
    if not why or not failed:
        return why
    return f"{why} (server: {failed[0]['error']}: {parsers.excerpt(failed[0].get('stderr'))})"


def records(batch: dict, outcome: dict) -> list[dict]:
    """One record per run of the batch (figures, or the reason there are none).

    outcome: what roles/rdma_workloads/tasks/batch.yml kept, {'runs', 'servers'}
    (servers: per run, its servers' outcomes), or {'error'} when the batch failed.
    """
    if outcome.get("error"):
        return failed_records(batch, outcome["error"])
    out = []
    for run, ran, mine in zip(batch["runs"], outcome["runs"], outcome["servers"], strict=True):
        if run.get("skipped"):
            out.append(results.record(run, [], []))
            continue
        out.append(results.record(run, ran["clients"], mine, _with_server(ran["skip"], mine)))
    return out


def failed_records(batch: dict, why: str) -> list[dict]:
    """Every run of a batch that could not run, with the reason."""
    return [results.record(run, [], [], why) for run in batch["runs"]]


def retry_batch(batch: dict, batch_records: list[dict]) -> dict:
    """The runs of `batch` to run once more, as a batch of their own (no runs: none):
    those whose tool could not measure for a reason of the moment (retries.py).
    batch_records: the batch's records, in its order."""
    runs = retries.to_retry(batch["runs"], batch_records)
    return {
        "index": batch["index"],
        "experiments": list(dict.fromkeys(run["experiment"] for run in runs)),
        "runs": runs,
        "servers": sum(len(run.get("servers") or []) for run in runs),
    }


def with_retries(all_records: list[dict], second: list[dict]) -> list[dict]:
    """`all_records` with the record of each run that ran again replaced (by run id) by
    its second try's (retries.with_second_tries)."""
    ids = [rec.get("id") for rec in all_records]
    return retries.with_second_tries(all_records, ids, second, [rec["id"] for rec in second])
