"""The clients of a host pair's workload runs, one after another on the client host.

Measurements never overlap: each client runs alone. A client is run again, after
a delay, while its output holds no reading (its server may not listen yet: on a
slow or loaded host a server can take seconds to start). One run failing does not
stop the next one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

# Characters kept of each output (the end: that is where a failure is printed).
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


def run_clients(runs, reading_error, attempts, delay, timeout, sleep=time.sleep) -> list:
    """Run each run's client (run['client'], an argv) in turn.

    reading_error(run, stdout) says why an output holds no reading ('' when it
    does). A client is tried up to `attempts` times, `delay` seconds apart, until
    it exits 0 with a reading; it is not tried again when it cannot be started or
    timed out (neither is a server that is not listening yet). Returns per run:
    rc, stdout, stderr, attempts, error ('' when the run has a reading).
    """
    results = []
    for run in runs:
        for attempt in range(1, attempts + 1):
            outcome = run_once(run["client"], timeout)
            if outcome["fault"]:
                error = outcome["fault"]
                break
            error = reading_error(run, outcome["stdout"])
            if outcome["rc"] == 0 and not error:
                break
            error = error or f"non-zero return code {outcome['rc']}"
            if attempt < attempts:
                sleep(delay)
        results.append(
            {
                "rc": outcome["rc"],
                "stdout": outcome["stdout"],
                "stderr": outcome["stderr"],
                "attempts": attempt,
                "error": error,
            }
        )
    return results
