"""The generated plan on its way through verify.yml: published once, run round by round.

The plan (fleet_plan.plan_for_fabric) is computed once on the controller. Ansible
carries a fact node by node, and a fleet's plan is tens of thousands of tests, so it
is published as JSON texts (as the structured config is, structured/packed.py): the
whole plan for the verdict, and per host the tests it runs as a client, by round.

Each host of the play loops over the same round numbers (so Ansible runs every
host's round k together), and in round k runs its one test as the client, if it has
one; the plan guarantees no host is in two tests of a round. A test is two runs of
the pair's batch (roles/rdma_workloads/tasks/batch.yml): the reference tool for the
bandwidth (ib_write_bw with RDMA, else iperf3) and our own transport (pingpong) at
the largest message size, pinned to each side's NUMA-local CPUs like the pairs' runs.
"""

from __future__ import annotations

import json

from .experiments.plan import host_address
from .pair_runs import plan_pair
from .planned import ScheduledTest

# Ports a test's servers take: the tests of a round run at once, and two of them may
# share a server host only in a test set-up (one machine as several hosts).
PORTS_PER_TEST = 2
# The reference tool of each transport's bandwidth, and our transport beside it.
REFERENCE = {"rdma": "ib_write_bw", "tcp": "iperf3"}
# What a test's runs read of cxfab_workloads (pair_runs.plan_pair).
WORKLOAD_KEYS = ("transports", "message_sizes", "iterations", "pipeline", "compute")


def publish(plan: dict, fabric: dict) -> dict:
    """The plan as verify.yml carries it: its figures, the whole plan as one JSON text,
    each client host's tests as one JSON text ({round: test}, with the server's address
    on the test's VLAN) and the workload settings a test needs: the hosts never template
    the whole fabric, which is large at a fleet's size."""
    schedule: dict[str, dict[str, ScheduledTest]] = {}
    for number, tests in enumerate(plan["rounds"]):
        for slot, test in enumerate(tests):
            mine = schedule.setdefault(test["client"], {})
            entry: ScheduledTest = {**test, "round": number, "slot": slot}
            mine[str(number)] = entry
            entry["round_tests"] = len(tests)
            try:
                entry["address"] = host_address(fabric["hosts"][test["server"]], test["vlan"])
            except (KeyError, TypeError, ValueError) as exc:
                # Recorded as the test's figure-less result: "not measured" with this.
                entry["error"] = f"{test['server']}: no address on VLAN {test['vlan']} ({exc})"
    keys = ("source", "test_s", "budget_s", "tests", "seconds", "phases")
    workloads = fabric["workloads"]
    return {
        **{key: plan[key] for key in keys},
        "rounds": len(plan["rounds"]),
        "hosts": sorted(plan["cpus"]),
        "workloads": {k: workloads[k] for k in WORKLOAD_KEYS if k in workloads},
        "plan": json.dumps(plan, separators=(",", ":")),
        "schedule": {host: json.dumps(tests) for host, tests in schedule.items()},
    }


def test_of(published: dict, host: str, round_number: int | str) -> ScheduledTest | dict:
    """The test `host` runs as a client in round `round_number`, or {} (none)."""
    text = (published.get("schedule") or {}).get(host)
    return json.loads(text).get(str(int(round_number)), {}) if text else {}


def transport_of(workloads: dict) -> str:
    """RDMA when the fabric measures it, else TCP."""
    return "rdma" if "rdma" in workloads["transports"] else "tcp"


def test_runs(
    published: dict,
    test: ScheduledTest,
    bin_dir: str,
    port_base: int | str,
    duration: int | str,
    cpus: dict | None = None,
    marking: dict | None = None,
) -> list[dict]:
    """The runs of one test (none when its server has no address): the reference tool
    and pingpong at the largest size, as the pairs' runs plan them (same argv, pinning
    and RoCE marking), on the test's ports. The arguments after `test` are plan_pair's
    (bin_dir, port_base, duration, cpus, marking); the test's slot moves the port base."""
    if test.get("error"):
        return []
    workloads = published["workloads"]
    transport = transport_of(workloads)
    narrowed = {**workloads, "transports": [transport]}
    narrowed["message_sizes"] = [max(workloads["message_sizes"])]
    server = {"vlans": [{"id": test["vlan"], "address": test["address"]}]}
    fabric = {"hosts": {test["server"]: server}, "workloads": narrowed}
    port = int(port_base) + PORTS_PER_TEST * int(test.get("slot", 0))
    runs = plan_pair(fabric, test, bin_dir, port, duration, "", "", cpus, marking)
    wanted = [r for r in runs if r["tool"] in (REFERENCE[transport], "pingpong")]
    if len(wanted) != PORTS_PER_TEST:
        raise ValueError(f"{test['name']}: planned {[r['tool'] for r in wanted]}")
    return wanted


def test_result(test: ScheduledTest, records: list[dict]) -> dict:
    """The verdict's input of one test from its runs' records: the reference tool's
    bandwidth (`gbps`), our transport's (`transport_gbps`) and its time per exchange
    (`latency_us`: message size / its bandwidth, i.e. pingpong's wall time per
    iteration); `error` and no `gbps` when the reference has no figure."""
    result = {key: test[key] for key in ("name", "server", "client", "round")}
    result.update(vlan=test.get("vlan"), phase=test.get("phase"))
    reference = next((r for r in records if r["tool"] in REFERENCE.values()), {})
    ours = next((r for r in records if r["tool"] == "pingpong"), {})
    result["tool"] = reference.get("tool")
    if reference.get("bits_per_second"):
        result["gbps"] = round(float(reference["bits_per_second"]) / 1e9, 6)
    else:
        result["error"] = (
            test.get("error") or reference.get("error") or "no result of the reference tool"
        )
    if ours.get("bits_per_second") and ours.get("size_bytes"):
        bps = float(ours["bits_per_second"])
        result["transport_gbps"] = round(bps / 1e9, 6)
        result["latency_us"] = round(8 * int(ours["size_bytes"]) / bps * 1e6, 3)
    elif ours.get("error"):
        result["transport_error"] = ours["error"]
    return result
