"""Rounds and minutes of the generated plan for a few fleet sizes, computed by the planner.

Racks of 20 hosts (tests/tools/fleet_sim.synthetic_members), one test `--test-s`
seconds long (its set-up included: cxfab_workloads.fleet.test_s). Per size: the ring
alone (the least budget the validation accepts), the ring and the racks' round-robin,
the plan inside `--budget-s`, and every pair once; the planner's time for the budgeted
plan (best of 3).

    python -m tests.tools.fleet_rounds [--test-s 20] [--budget-s 600] [--hosts 40 400 2000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "module_utils"))

from cxfab.workloads.fleet_plan import circle_round_count, plan_fleet

from tests.tools.fleet_sim import RACK_SIZE, synthetic_members

NO_LIMIT = 10**9


def minutes(rounds: int, test_s: float) -> str:
    seconds = rounds * test_s
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def row(hosts: int, test_s: float, budget_s: float) -> dict:
    members = synthetic_members(hosts)
    ring = plan_fleet(members, 0, test_s)
    racks = len(ring["rounds"]) + max(0, min(hosts, RACK_SIZE) - 1 + min(hosts, RACK_SIZE) % 2)
    with_racks = plan_fleet(members, racks * test_s, test_s)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        budgeted = plan_fleet(members, budget_s, test_s)
        best = min(best, time.perf_counter() - start)
    # Every pair once: the budget never binds. 2,000 hosts is ~2 M tests, so there the
    # rounds are bounded, not planned: the ring's, the racks' and one fleet-wide
    # tournament's (circle method: n - 1 rounds, n for odd n).
    if hosts <= 400:
        every = plan_fleet(members, NO_LIMIT, test_s)
        every_rounds, every_tests = len(every["rounds"]), every["tests"]
    else:
        every_rounds, every_tests = None, hosts * (hosts - 1) // 2
        bound = racks + circle_round_count(hosts)
    return {
        "hosts": hosts,
        "racks": -(-hosts // RACK_SIZE),
        "ring": (len(ring["rounds"]), ring["tests"]),
        "with_racks": (len(with_racks["rounds"]), with_racks["tests"]),
        "budgeted": (len(budgeted["rounds"]), budgeted["tests"]),
        "every": (every_rounds, every_tests),
        "planner_s": best,
        "bound": None if every_rounds else bound,
    }


def table(test_s: float, budget_s: float, sizes) -> str:
    lines = [
        f"| hosts | racks | ring | ring + racks | {budget_s:g} s budget | every pair once |"
        " planner |",
        "| ---: | ---: | --- | --- | --- | --- | ---: |",
    ]
    for hosts in sizes:
        r = row(hosts, test_s, budget_s)
        cells = []
        for key in ("ring", "with_racks", "budgeted"):
            rounds, tests = r[key]
            cells.append(f"{rounds} rounds, {tests:,} tests, {minutes(rounds, test_s)}")
        rounds, tests = r["every"]
        if rounds is None:
            bound = r["bound"]
            cells.append(f"at most {bound:,} rounds, {tests:,} tests, {minutes(bound, test_s)}")
        else:
            cells.append(f"{rounds} rounds, {tests:,} tests, {minutes(rounds, test_s)}")
        lines.append(
            f"| {hosts:,} | {r['racks']} | " + " | ".join(cells) + f" | {r['planner_s']:.2f} s |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test-s", type=float, default=20.0)
    parser.add_argument("--budget-s", type=float, default=600.0)
    parser.add_argument("--hosts", type=int, nargs="+", default=[40, 400, 2000])
    args = parser.parse_args(argv)
    print(table(args.test_s, args.budget_s, args.hosts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
