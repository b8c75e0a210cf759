"""Simulate fleets' pairwise tests and score the fleet verdict on them.

Each synthetic fleet has a random size (8..400 hosts by default) spread over racks of
up to 20 hosts, is planned by `workloads.fleet_plan` and measured by a model: every
pair reaches `EFFICIENCY` of the 100 Gb/s link times the slower end's factor, with
uniform noise of +-`noise` on bandwidth and latency. One fault is planted per fleet:
a slow node (`SLOW` x on every pair it is in), a slow link (one planned pair at
`SLOW` x) or none. A fleet is a hit when the verdict names exactly the planted fault
(no node, no link for a clean fleet).

    python -m tests.tools.fleet_sim [--fleets 200] [--seed 30] [--noise 0.05]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "module_utils"))

from cxfab.verify.fleet import fleet_checks
from cxfab.workloads.fleet_plan import plan_fleet

LINK_GBPS = 100.0
EFFICIENCY = 0.92
LATENCY_US = 3.0
SLOW = 0.5
RACK_SIZE = 20
KINDS = ("node", "link", "none")


def synthetic_members(hosts: int) -> dict:
    """`hosts` hosts in racks of RACK_SIZE (the last one may be short), one VLAN a rack."""
    return {
        f"h{i:04d}": {"rack": f"rack{i // RACK_SIZE:03d}", "vlans": [100 + i // RACK_SIZE]}
        for i in range(hosts)
    }


def measure(rng: random.Random, plan: dict, noise: float, node=None, link=None) -> list[dict]:
    """One result per planned test: the model above, `node` or `link` (a pair key
    `a~b`, in either order) planted slow."""
    results = []
    for tests in plan["rounds"]:
        for test in tests:
            a, b = test["server"], test["client"]
            factor = SLOW if node in (a, b) else 1.0
            if link in (f"{a}~{b}", f"{b}~{a}"):
                factor *= SLOW
            gbps = LINK_GBPS * EFFICIENCY * factor * rng.uniform(1 - noise, 1 + noise)
            latency = LATENCY_US / factor * rng.uniform(1 - noise, 1 + noise)
            results.append({"server": a, "client": b, "gbps": gbps, "latency_us": latency})
    return results


def run_fleet(rng: random.Random, kind: str, sizes=(8, 400), noise=0.05, rounds=6) -> bool:
    """One fleet with a `kind` fault; True when the verdict names exactly it."""
    members = synthetic_members(rng.randint(*sizes))
    plan = plan_fleet(members, budget_s=rounds * 10, test_s=10)
    node = link = None
    if kind == "node":
        node = rng.choice(sorted(members))
    elif kind == "link":
        test = rng.choice([t for tests in plan["rounds"] for t in tests])
        link = test["name"]
    results = measure(rng, plan, noise, node=node, link=link)
    _, table = fleet_checks(results, dict.fromkeys(members, LINK_GBPS), sorted(members))
    found = table["verdict"]
    a, b = link.split("~") if link else ("", "")
    return found["nodes"] == ([node] if node else []) and found["links"] == (
        [f"{min(a, b)}~{max(a, b)}"] if link else []
    )


def rates(fleets: int = 200, seed: int = 30, noise: float = 0.05, rounds: int = 6) -> dict:
    """kind -> hits out of `fleets` fleets of that kind."""
    rng = random.Random(seed)
    return {
        kind: sum(run_fleet(rng, kind, noise=noise, rounds=rounds) for _ in range(fleets))
        for kind in KINDS
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleets", type=int, default=200)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=6, help="rounds of the plan's budget")
    args = parser.parse_args(argv)
    hits = rates(args.fleets, args.seed, args.noise, args.rounds)
    for kind, count in hits.items():
        planted = f"slow {kind} planted" if kind != "none" else "nothing planted"
        print(
            f"{planted:>18}: {count}/{args.fleets} named exactly ({100 * count / args.fleets:.1f}%)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
