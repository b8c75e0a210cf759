"""The verdict of a fleet's pairwise tests: its matrix and the checks that name the
slow node, the slow link or the slow fabric, with the pairs that prove it.

Input: one result per tested pair, {server, client, gbps, latency_us (optional)},
and each host's link limit (Gb/s; a pair's is the lower of its two hosts'). A pair's
figure is its share of its link limit when every host's limit is known (so a host
with a slower card at its own limit is not slow), else its bandwidth. A pair is slow
when its figure is below `tolerance` times the fleet's median figure, or its latency
above the median latency divided by `tolerance`. Then:

- **one bad node**: every pair of the host is slow (its best pair is below the
  tolerance), so the host is named, with all of its pairs as evidence;
- **one bad link**: a slow pair whose two hosts are both fine elsewhere (each has a
  pair that is not slow) is named as the link between them;
- **the whole fabric is slow**: the median share of the link limit is itself below
  `fabric_tolerance`; the nodes are still judged against the median, so one bad node in
  a slow fabric is still named.

A slow pair with a named node at one end is that node's evidence, not a link. A
host measured in one pair only cannot tell node from link: its pair is named as a
link and the host's own check is a warning.

A pair tested both ways (the ring of two hosts) is judged per direction, keyed
`client->server` (the way the reference tool's data went): a host's slow transmit
shows as one slow direction against the other.
"""

from __future__ import annotations

import json
from statistics import median

from ..common.checks import Checks, check, unmeasured
from .perf import link_ceiling

TOLERANCE = 0.8
FABRIC_TOLERANCE = 0.7
FLEET = "fleet"


def _pair_key(a: str, b: str) -> str:
    return f"{a}~{b}" if a <= b else f"{b}~{a}"


def both_ways(tests: list[dict]) -> set:
    """The pairs of hosts tested in both directions, as frozensets."""
    ways = {(t["server"], t["client"]) for t in tests}
    return {frozenset(w) for w in ways if (w[1], w[0]) in ways and w[0] != w[1]}


def matrix_key(server: str, client: str, directed: set) -> str:
    """`a~b` for a pair tested one way, `client->server` for each way of one tested
    both ways (`directed`: both_ways' set)."""
    if frozenset((server, client)) in directed:
        return f"{client}->{server}"
    return _pair_key(server, client)


def matrix(
    results: list[dict], limits: dict, tolerance: float = TOLERANCE, directed: set | None = None
) -> dict:
    """The matrix for report.json: the medians, every pair with its verdict and each
    host's pairs. `limits`: host -> link limit in Gb/s (a pair's is the lower);
    `directed`: the pairs judged per direction (both_ways of the plan, else of the
    results)."""
    directed = both_ways(results) if directed is None else directed
    if not results:
        return {"median_gbps": None, "median_latency_us": None, "pairs": [], "hosts": {}}
    bandwidth = median(float(r["gbps"]) for r in results)
    latencies = [float(r["latency_us"]) for r in results if r.get("latency_us") is not None]
    latency = median(latencies) if latencies else None
    # with every host's limit known, a pair is judged by its share of its own link, so
    # a host with a slower card is not a slow node; else by its bandwidth
    by_share = all(r["server"] in limits and r["client"] in limits for r in results)

    def limit_of(a, b):
        return min(float(limits[a]), float(limits[b])) if a in limits and b in limits else None

    def figure(r):
        return float(r["gbps"]) / limit_of(r["server"], r["client"]) if by_share else r["gbps"]

    typical = median(float(figure(r)) for r in results)
    pairs, hosts = [], {}
    for result in results:
        a, b = sorted((result["server"], result["client"]))
        gbps = float(result["gbps"])
        lat = result.get("latency_us")
        limit = limit_of(a, b)
        reasons = []
        if by_share and gbps / limit < tolerance * typical:
            reasons.append(
                f"{gbps:g} Gb/s = {gbps / limit:.0%} of {limit:g} Gb/s"
                f" < {tolerance:g} x median share {typical:.0%}"
            )
        elif not by_share and gbps < tolerance * bandwidth:
            reasons.append(f"{gbps:g} Gb/s < {tolerance:g} x median {bandwidth:g}")
        if lat is not None and latency and float(lat) > latency / tolerance:
            reasons.append(f"{float(lat):g} us > median {latency:g} / {tolerance:g}")
        pair = {"pair": matrix_key(result["server"], result["client"], directed), "hosts": [a, b]}
        pair.update(client=result["client"], server=result["server"], gbps=gbps, latency_us=lat)
        pair.update({k: result[k] for k in ("transport_gbps", "round", "tool") if k in result})
        pair.update(limit_gbps=limit, slow=bool(reasons), why=reasons)
        pairs.append(pair)
        for host in (a, b):
            row = hosts.get(host)
            if row is None:
                row = hosts[host] = {"pairs": [], "slow": 0, "best_gbps": 0.0}
                row["limit_gbps"] = float(limits[host]) if host in limits else None
            row["pairs"].append(pair["pair"])
            row["slow"] += bool(reasons)
            row["best_gbps"] = max(row["best_gbps"], gbps)
    for row in hosts.values():
        limit = row["limit_gbps"]
        row["share_of_limit"] = round(row["best_gbps"] / limit, 3) if limit else None
    return {
        "median_gbps": bandwidth,
        "median_latency_us": latency,
        "median_share_of_limit": round(typical, 3) if by_share else None,
        "tolerance": tolerance,
        "pairs": pairs,
        "hosts": hosts,
    }


def verdict(table: dict) -> dict:
    """{nodes, links, undetermined}: the hosts whose pairs are all slow (two or more
    pairs), the slow pairs between hosts fine elsewhere, hosts with one slow pair only."""
    hosts = table["hosts"]
    nodes = sorted(h for h, r in hosts.items() if r["slow"] == len(r["pairs"]) >= 2)
    named = set(nodes)
    links, undetermined = [], set()
    for pair in table["pairs"]:
        if not pair["slow"] or named.intersection(pair["hosts"]):
            continue
        links.append(pair["pair"])
        undetermined.update(h for h in pair["hosts"] if len(hosts[h]["pairs"]) < 2)
    return {"nodes": nodes, "links": links, "undetermined": sorted(undetermined)}


def fleet_checks(
    results: list[dict],
    limits: dict,
    planned_hosts: list[str] | None = None,
    tolerance: float = TOLERANCE,
    fabric_tolerance: float = FABRIC_TOLERANCE,
    unmeasured_why: dict | None = None,
    directed: set | None = None,
) -> tuple[list[dict], dict]:
    """(checks, matrix): `perf.fleet.fabric`, `perf.fleet.node.<host>` for every
    planned host, `perf.fleet.pair.<a>~<b>` for every slow link named.
    `unmeasured_why`: host -> why a pair of it has no figure (a host with no figure
    at all fails "not measured" with it)."""
    table = matrix(results, limits, tolerance, directed)
    found = verdict(table)
    table["verdict"] = found
    hosts = table["hosts"]
    by_pair = {p["pair"]: p for p in table["pairs"]}
    checks = Checks(FLEET)
    share = table.get("median_share_of_limit")
    expected = f"median pair >= {fabric_tolerance:g} x its link limit"
    if not table["pairs"]:
        checks.unmeasured("perf.fleet.fabric", expected, "no pair has a figure")
    elif share is None:
        # As perf.link_fraction: a soft-RoCE port's rate is nominal, not a limit.
        checks.skip("perf.fleet.fabric", expected, "the hosts' link limits are not all known")
    else:
        checks.judge(
            "perf.fleet.fabric",
            share >= fabric_tolerance,
            expected,
            f"median {share:.0%} of the link limit ({table['median_gbps']:g} Gb/s)"
            f" over {len(table['pairs'])} pairs",
        )
    out = list(checks)
    for host in sorted(set(planned_hosts or []) | set(hosts)):
        why = (unmeasured_why or {}).get(host, "")
        out.append(_node_check(host, hosts.get(host), by_pair, table, found, why))
    alone = set(found["undetermined"])
    measure = "share of the link limit" if share is not None else "bandwidth"
    for key in found["links"]:
        pair = by_pair[key]
        why = "; ".join(pair["why"])
        # The evidence: the slow pair, then every other pair of its two hosts (what
        # shows that they are fine elsewhere).
        others = {k: by_pair[k] for h in pair["hosts"] for k in hosts[h]["pairs"] if k != key}
        if alone.intersection(pair["hosts"]):
            message = f"slow pair {key}: {why}; a host of it has no other pair: node or link?"
        else:
            elsewhere = "tests" if "->" in key else "pairs"
            message = (
                f"slow link {key}: {why}; both hosts are fine in their other {elsewhere}:"
                f" {_evidence(list(others.values()))}"
            )
        expected = f">= {tolerance:g} x the fleet's median {measure}"
        observed = f"{pair['gbps']:g} Gb/s"
        evidence = [pair, *others.values()]
        check_id = f"perf.fleet.pair.{key}"
        out.append(check(check_id, key, "fail", expected, observed, message, evidence=evidence))
    return out, table


def _node_check(
    host: str, row: dict | None, by_pair: dict, table: dict, found: dict, why: str = ""
) -> dict:
    check_id = f"perf.fleet.node.{host}"
    expected = f"best pair >= {table.get('tolerance', TOLERANCE):g} x median"
    if row is None:
        return unmeasured(check_id, host, expected, why or "no pair of it has a figure")
    observed = f"best {row['best_gbps']:g} Gb/s"
    if row["share_of_limit"] is not None:
        observed += f" ({row['share_of_limit']:.0%} of its {row['limit_gbps']:g} Gb/s link)"
    observed += f", {row['slow']} of {len(row['pairs'])} pairs slow"
    evidence = [by_pair[key] for key in row["pairs"]]
    if host in found["nodes"]:
        message = f"slow node {host}: every pair it took part in is slow: {_evidence(evidence)}"
        return check(check_id, host, "fail", expected, observed, message, evidence=evidence)
    if host in found["undetermined"]:
        message = f"{host} has one pair only and it is slow: node or link cannot be told"
        return check(check_id, host, "warn", expected, observed, message, evidence=evidence)
    return check(check_id, host, "pass", expected, observed)


# Pairs listed by name in a check's message; report.json's matrix holds all of them.
EVIDENCE_SHOWN = 12


def _evidence(pairs: list[dict]) -> str:
    """`h2~h3 45.1 Gb/s (slow), ...`: the pairs a verdict rests on, slow ones marked."""
    shown = [
        f"{p['pair']} {p['gbps']:g} Gb/s" + (" (slow)" if p["slow"] else "")
        for p in pairs[:EVIDENCE_SHOWN]
    ]
    more = len(pairs) - EVIDENCE_SHOWN
    return ", ".join(shown) + (f" and {more} more (report.json)" if more > 0 else "")


def plan_checks(
    workloads: dict, hosts: dict, host_facts: dict, fleet: dict | None
) -> tuple[list[dict], dict | None]:
    """(checks, matrix or None) of the generated plan (`workloads.plan: generated`).

    `fleet`: {plan: the published plan's JSON text (workloads/fleet_runs.publish),
    results: host -> the tests it ran as a client (fleet_runs.test_result), seconds:
    host -> how long its rounds took}. A planned test without a figure fails "not
    measured" with its reason, and so does a host none of whose tests has one; the
    rounds' time is judged against the budget (`perf.fleet.budget`)."""
    if workloads.get("plan") != "generated":
        return [], None
    settings = workloads.get("fleet") or {}
    fleet = fleet or {}
    plan = json.loads(fleet["plan"]) if fleet.get("plan") else None
    if not plan:
        why = "the fleet's plan was not computed in this run (rdma_workloads_fleet unset)"
        out = [unmeasured(f"perf.fleet.{k}", FLEET, k, why) for k in ("fabric", "budget")]
        out += [unmeasured(f"perf.fleet.node.{h}", h, "pairs measured", why) for h in sorted(hosts)]
        return out, None
    got = {}
    for results in (fleet.get("results") or {}).values():
        for result in results or []:
            got[result["name"]] = result
    measured, missing, why_of = [], [], {}
    planned = [t for tests in plan["rounds"] for t in tests]
    directed = both_ways(planned)
    for test in planned:
        result = got.get(test["name"])
        if result is not None and result.get("gbps"):
            measured.append(result)
            continue
        why = (result or {}).get("error") or (
            f"its client {test['client']} recorded no result (unreachable, or its play failed)"
        )
        key = matrix_key(test["server"], test["client"], directed)
        ends = sorted((test["server"], test["client"]))
        missing.append({"pair": key, "hosts": ends, "why": why})
        for host in (test["server"], test["client"]):
            why_of.setdefault(host, f"{missing[-1]['pair']}: {why}")
    limits = {}
    for host in plan["cpus"]:
        ceiling, _ = link_ceiling(hosts.get(host) or {}, (host_facts or {}).get(host) or {})
        if ceiling is not None:
            limits[host] = ceiling
    checks, table = fleet_checks(
        measured,
        limits,
        sorted(plan["cpus"]),
        float(settings.get("tolerance", TOLERANCE)),
        float(settings.get("fabric_tolerance", FABRIC_TOLERANCE)),
        why_of,
        directed,
    )
    for entry in missing:
        expected = "a figure of the reference tool"
        checks.append(
            unmeasured(f"perf.fleet.pair.{entry['pair']}", entry["pair"], expected, entry["why"])
        )
    table["not_measured"] = missing
    table["plan"] = {k: plan[k] for k in ("source", "test_s", "budget_s", "tests", "seconds")}
    table["plan"].update(rounds=len(plan["rounds"]), phases=plan["phases"])
    checks.append(_budget_check(plan, fleet.get("seconds") or {}, table))
    return checks, table


def _budget_check(plan: dict, seconds: dict, table: dict) -> dict:
    """The rounds ran inside the budget: the slowest host's time (they end together)."""
    budget, rounds = plan["budget_s"], len(plan["rounds"])
    expected = f"{rounds} rounds of {plan['test_s']} s in at most {budget} s"
    taken = [float(s) for s in seconds.values() if s is not None]
    if not taken:
        return unmeasured("perf.fleet.budget", FLEET, expected, "no host timed its rounds")
    elapsed = max(taken)
    table["plan"]["elapsed_s"] = elapsed
    observed = f"{elapsed:g} s, {elapsed / max(rounds, 1):.1f} s a round"
    message = ""
    if elapsed > budget:
        message = (
            f"the rounds took {elapsed:g} s of a {budget} s budget: a round lasts"
            f" {elapsed / max(rounds, 1):.1f} s, more than workloads.fleet.test_s"
            f" ({plan['test_s']} s)"
        )
    return check(
        "perf.fleet.budget", FLEET, "pass" if elapsed <= budget else "fail",
        expected, observed, message,
    )  # fmt: skip
