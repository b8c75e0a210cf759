"""One batch of runs between a server host and a client host, as data.

roles/rdma_workloads/tasks/batch.yml is the one start/run/collect path of the
workloads (one batch per host pair) and of the experiments (batches of consecutive
runs): every server started at once on the server host and seen listening there
(read from the kernel, cxfab/workloads/listening.py), the runs one after another on
the client host (the clients of one run together), then the servers collected. What
differs between its callers is data:

- servers: [{'tool', 'server': argv, 'listen': {'kind', 'port'}, 'run': index}],
  one entry per server process, `run` the index of its run in `runs`;
- runs: [{'clients': [argv, ...], 'skip': why it does not run ('' to run), ...}],
  any other key (the workloads' 'tool'...) left for the judgement of the outputs.
"""

from __future__ import annotations

import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor

_KIND_NAMES = {"rdma_cm": "RDMA-CM", "tcp": "TCP"}
# Characters kept of each client's output (the end: that is where a failure is printed).
OUTPUT_TAIL = 65536


def run_once(argv: list, timeout: float) -> dict:
    """One attempt: rc, stdout, stderr and why it has no exit status (timed out...)."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            close_fds=True,
            start_new_session=True,
        )
    except OSError as exc:
        return {"rc": None, "stdout": "", "stderr": "", "fault": f"{argv[0]}: {exc.strerror}"}
    fault = ""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # The whole process group: a client that forked must not keep the pipes open.
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        fault = f"timed out after {timeout:g} s"
    return {
        "rc": None if fault else proc.returncode,
        "stdout": out.decode("utf-8", "replace")[-OUTPUT_TAIL:],
        "stderr": err.decode("utf-8", "replace")[-OUTPUT_TAIL:],
        "fault": fault,
    }


def client_runs(runs: list[dict], servers: list[dict], missing: list[dict]) -> list[dict]:
    """The runs for cxfab_workload_clients: a run whose server does not listen is skipped.

    missing: what cxfab_workload_servers found not listening ([{'kind', 'port', 'why'}]).
    A run's own skip (the plan skipped it) comes first.
    """
    gone = {(m["kind"], m["port"]): m["why"] for m in missing}
    out = []
    for index, run in enumerate(runs):
        skip = run.get("skip") or ""
        if not skip:
            mine = [s["listen"] for s in servers if s["run"] == index and s.get("listen")]
            absent = [m for m in mine if (m["kind"], m["port"]) in gone]
            if absent:
                ports = ", ".join(str(m["port"]) for m in absent)
                kind = _KIND_NAMES[absent[0]["kind"]]
                why = gone[(absent[0]["kind"], absent[0]["port"])]
                skip = f"server not listening on {kind} port {ports}: {why}"
        out.append({**run, "clients": [] if skip else run["clients"], "skip": skip})
    return out


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
    """Every argv at once, each in its own session; each outcome as run_once gives it."""
    with ThreadPoolExecutor(max_workers=len(argvs)) as pool:
        return list(pool.map(lambda argv: run_once(argv, timeout), argvs))


def run_error(run: dict, clients: list[dict], reading_error=None) -> str:
    """Why a run has no figure ('' when every client exited 0 with a reading).

    reading_error(run, stdout), when given, says why an output holds no reading: some
    tools exit 0 without measuring anything (iperf3 -J on a refused connection).
    """
    if run.get("skip"):
        return run["skip"]
    for outcome in clients:
        if outcome["fault"]:
            return outcome["fault"]
    for outcome in clients:
        why = reading_error(run, outcome["stdout"]) if reading_error else ""
        if outcome["rc"] != 0 or why:
            return why or f"non-zero return code {outcome['rc']}"
    return ""


def run_groups(runs: list, timeout: float, reading_error=None) -> list[dict]:
    """Per run, one after another: {'clients': [rc, stdout, stderr, fault], 'skip', 'error'}.

    The clients of one run start together; a run with a skip is not run.
    """
    results = []
    for run in runs:
        clients = [] if run.get("skip") else run_together(run["clients"], timeout)
        results.append(
            {
                "clients": clients,
                "skip": run.get("skip") or "",
                "error": run_error(run, clients, reading_error),
            }
        )
    return results


def servers_to_wait_for(servers: list[dict], runs: list[dict]) -> list[int]:
    """Indexes of the servers whose run has its figures: those exit by themselves;
    the others are killed at collection."""
    return [index for index, entry in enumerate(servers) if not runs[entry["run"]]["error"]]


def servers_by_run(servers: list[dict], collected: list | None, count: int) -> list[list]:
    """Per run (of `count`), the outcomes of its servers as collected (none in check mode)."""
    out: list[list] = [[] for _ in range(count)]
    for entry, outcome in zip(servers, collected or [], strict=False):
        if outcome:
            out[entry["run"]].append(outcome)
    return out
