"""The clients of an experiment batch: one run after another, a run's clients together."""

import sys
import time

import pytest
from cxfab.workloads.experiments.runner import check_client_runs, run_groups

PRINT_TIME = (
    "import time, sys; time.sleep(0.6); print(time.monotonic()); sys.exit(int(sys.argv[1]))"
)


def test_a_runs_clients_run_together_and_runs_one_after_another():
    clients = [[sys.executable, "-c", PRINT_TIME, "0"] for _ in range(3)]
    started = time.monotonic()
    first, skipped, second = run_groups(
        [{"clients": clients}, {"skip": "server not listening"}, {"clients": clients[:1]}], 30
    )
    elapsed = time.monotonic() - started
    ends = [float(c["stdout"]) for c in first["clients"]]
    assert max(ends) - min(ends) < 0.5, "the run's clients did not start together"
    assert float(second["clients"][0]["stdout"]) > max(ends) + 0.5, "runs overlapped"
    assert elapsed < 3 * 0.6 + 1.0
    assert skipped == {"clients": [], "skip": "server not listening"}
    assert [c["rc"] for c in first["clients"]] == [0, 0, 0]


def test_a_failing_or_hung_client_is_reported_and_the_next_run_goes_on():
    failed, hung, fine = run_groups(
        [
            {"clients": [[sys.executable, "-c", PRINT_TIME, "3"]]},
            {"clients": [["sleep", "30"]]},
            {"clients": [["echo", "ok"]]},
        ],
        timeout=2,
    )
    assert failed["clients"][0]["rc"] == 3
    assert hung["clients"][0]["rc"] is None and hung["clients"][0]["fault"] == "timed out after 2 s"
    assert fine["clients"][0]["stdout"] == "ok\n"


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ("x", "runs: expected a list"),
        ([{"clients": []}], r"runs\[0\].clients: expected a non-empty list"),
        ([{"skip": "why"}, {"clients": [["a", 1]]}], r"runs\[1\].clients\[0\]: expected"),
    ],
)
def test_bad_runs_are_refused_naming_the_index(runs, message):
    with pytest.raises(ValueError, match=message):
        check_client_runs(runs)
