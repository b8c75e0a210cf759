"""One more try for a run whose tool could not measure for a reason of the moment.

perftest's cycle-counter calibration (r^2 of its samples < 0.9) fails at random on a
loaded virtual machine (a TCG lab guest: r^2 0.873 in the CI run of 64ac4df), and
ib_write_bw / ib_read_bw then print 0 bandwidth (parsers.UNCALIBRATED). The
workloads (pair_runs) and the experiments (batches) run such runs once more; the
second try's record replaces the first, says `attempts: 2` and keeps the first error.
A second failure stands; no other failure is retried.
"""

from __future__ import annotations

from .parsers import UNCALIBRATED


def worth_a_retry(error: str | None) -> bool:
    """Whether a run's error is one the same run may not repeat (UNCALIBRATED)."""
    return bool(error) and UNCALIBRATED in error


def to_retry(runs: list, records: list) -> list:
    """The runs (in their order) whose record is worth a retry; records: one per run."""
    return [run for run, rec in zip(runs, records, strict=True) if worth_a_retry(rec.get("error"))]


def with_second_tries(first: list, first_keys: list, second: list, second_keys: list) -> list:
    """`first` (records, each identified by its key) with the record of each key that
    ran again replaced by its second try's; the second tries come in the same order."""
    tries = list(zip(second_keys, second, strict=True))
    out = []
    for key, rec in zip(first_keys, first, strict=True):
        if tries and key == tries[0][0]:
            out.append({**tries.pop(0)[1], "attempts": 2, "first_error": rec.get("error")})
        else:
            out.append(rec)
    if tries:
        raise ValueError(f"{len(tries)} second tries are not of the records tried first, in order")
    return out
