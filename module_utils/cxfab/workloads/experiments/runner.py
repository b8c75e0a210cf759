"""The clients of the experiments' runs on the client host: one run after another,
the clients of one run (its parallel pairs or processes) started together.

Used by library/cxfab_experiment_clients.py. Their servers were started and seen
listening before (cxfab_workload_servers, cxfab_listening), so a client is not
retried: a failure is the run's figure-less outcome, with its reason.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ..clients import run_once


def check_client_runs(runs) -> None:
    """Raise ValueError naming the first run that is neither clients to run nor a skip."""
    if not isinstance(runs, list):
        raise ValueError(f"runs: expected a list, got {type(runs).__name__}")
    for index, run in enumerate(runs):
        if not isinstance(run, dict):
            raise ValueError(f"runs[{index}]: expected a dict with 'clients' or 'skip'")
        if run.get("skip"):
            continue
        clients = run.get("clients")
        if not isinstance(clients, list) or not clients:
            raise ValueError(f"runs[{index}].clients: expected a non-empty list of argv")
        for c, argv in enumerate(clients):
            if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
                raise ValueError(
                    f"runs[{index}].clients[{c}]: expected a non-empty list of strings"
                )


def run_together(argvs: list, timeout: float) -> list[dict]:
    """Every argv at once; each outcome as workload_clients.run_once gives it."""
    with ThreadPoolExecutor(max_workers=len(argvs)) as pool:
        return list(pool.map(lambda argv: run_once(argv, timeout), argvs))


def run_groups(runs: list, timeout: float) -> list[dict]:
    """Per run: {'clients': [rc, stdout, stderr, fault], 'skip': why it did not run}."""
    results = []
    for run in runs:
        if run.get("skip"):
            results.append({"clients": [], "skip": run["skip"]})
            continue
        results.append({"clients": run_together(run["clients"], timeout), "skip": ""})
    return results
