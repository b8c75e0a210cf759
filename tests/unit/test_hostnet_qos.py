"""QoS back ends: command lines, read-back parsers and the idempotency comparison."""

import json

from cxfab.host.net.qos import (
    dcb_args,
    dcb_needs_legacy_units,
    dcb_state,
    differences,
    expected_state,
    mlnx_qos_args,
    mlnx_qos_state,
    mlnx_unrepresentable,
    quantise_mlnx,
    tc_args,
    tc_burst_bytes,
    tc_classes,
    tc_state,
)
from cxfab.structured.hosts import qos_plan

HOST = {
    "vlans": [{"id": 10}, {"id": 20}, {"id": 30}],
    "qos": [
        # As the validated fabric has them: schema defaults filled.
        {"vlan": 10, "user_priority": 1, "traffic_class": 0, "rate_limit_mbps": 1000,
         "tsa": "strict", "bandwidth_percent": 0},
        {"vlan": 20, "user_priority": 3, "traffic_class": 1, "rate_limit_mbps": 5000,
         "tsa": "strict", "bandwidth_percent": 0},
        {"vlan": 30, "user_priority": 5, "traffic_class": 2, "tsa": "strict",
         "bandwidth_percent": 0},
    ],
}  # fmt: skip

# What `mlnx_qos -i ens1f0` prints after the seed's command (mlnx-tools block format).
MLNX_QOS_OUTPUT = """\
DCBX mode: OS controlled
Priority trust state: pcp
Cable len: 7
PFC configuration:
\tpriority    0   1   2   3   4   5   6   7
\tenabled     0   0   0   0   0   0   0   0
tc: 0 ratelimit: 1.0 Gbps, tsa: strict
\t priority:  0
\t priority:  1
tc: 1 ratelimit: 5.0 Gbps, tsa: strict
\t priority:  2
\t priority:  3
tc: 2 ratelimit: unlimited, tsa: strict
\t priority:  4
\t priority:  5
tc: 3 ratelimit: unlimited, tsa: strict
\t priority:  6
\t priority:  7
"""


def test_mlnx_qos_command_is_the_seed_command_for_eight_tcs():
    argv = mlnx_qos_args("mlnx_qos", "ens1f0", qos_plan(HOST))
    assert argv == [
        "mlnx_qos", "-i", "ens1f0",
        "--prio_tc=0,0,1,1,2,2,3,3",
        "--tsa=strict,strict,strict,strict,strict,strict,strict,strict",
        "--tcbw=0,0,0,0,0,0,0,0",
        "--ratelimit=1,5,0,0,0,0,0,0",
    ]  # fmt: skip


def test_mlnx_qos_read_back_matches_plan_so_rerun_is_a_no_op():
    observed = mlnx_qos_state(MLNX_QOS_OUTPUT)
    assert observed["prio_tc"] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert observed["tcs"][1] == {"tsa": "strict", "bandwidth_percent": 0, "rate_limit_mbps": 5000}
    assert differences(expected_state(qos_plan(HOST), "mlnx_qos"), observed) == []


def test_mlnx_qos_drift_is_reported():
    drifted = MLNX_QOS_OUTPUT.replace("5.0 Gbps", "4.0 Gbps").replace("priority:  3", "x")
    found = differences(expected_state(qos_plan(HOST), "mlnx_qos"), mlnx_qos_state(drifted))
    assert "tc 1 rate_limit_mbps 4000 != 5000" in found
    assert any(item.startswith("prio_tc") for item in found)


def test_mlnx_qos_ets_share_is_parsed():
    text = "tc: 4 ratelimit: unlimited, tsa: ets, bw: 40%\n\t priority:  6\n"
    assert mlnx_qos_state(text)["tcs"][4] == {
        "tsa": "ets",
        "bandwidth_percent": 40,
        "rate_limit_mbps": None,
    }


def test_mlnx_quantisation_is_whole_gbps_and_sub_gbps_is_flagged():
    assert quantise_mlnx(5000) == 5000
    assert quantise_mlnx(None) is None
    plan = qos_plan({**HOST, "qos": [{**HOST["qos"][0], "rate_limit_mbps": 1500}]})
    assert mlnx_unrepresentable(plan) == [0]


def test_dcb_commands_and_read_back_in_fixed_and_legacy_units():
    plan = qos_plan(HOST)
    ets, maxrate = dcb_args("dcb", "eth1", plan, legacy_maxrate_units=False)
    assert ets[:6] == ["dcb", "ets", "set", "dev", "eth1", "prio-tc"]
    assert "3:1" in ets and "tc-tsa" in ets
    assert maxrate[6:8] == ["0:1000000kbit", "1:5000000kbit"]
    _, legacy = dcb_args("dcb", "eth1", plan, legacy_maxrate_units=True)
    assert legacy[6] == "0:8000000bit"  # parsed as 1e6 "bytes/s", which old dcb sends as kb/s
    ets_json = json.dumps(
        {"tc_tsa": ["strict"] * 8, "tc_bw": [0] * 8, "prio_tc": [0, 0, 1, 1, 2, 2, 3, 3]}
    )
    fixed = json.dumps({"tc_maxrate": [125_000_000, 625_000_000, 0, 0, 0, 0, 0, 0]})
    old = json.dumps({"tc_maxrate": [1_000_000, 5_000_000, 0, 0, 0, 0, 0, 0]})
    expected = expected_state(plan, "dcb")
    assert differences(expected, dcb_state(ets_json, fixed, legacy_maxrate_units=False)) == []
    assert differences(expected, dcb_state(ets_json, old, legacy_maxrate_units=True)) == []


def test_dcb_version_decides_the_units():
    assert dcb_needs_legacy_units("dcb utility, iproute2-6.1.0")
    assert not dcb_needs_legacy_units("dcb utility, iproute2-6.18.0")


def test_tc_commands_build_htb_with_pcp_filters():
    commands = tc_args("tc", "ens1f0", qos_plan(HOST), ceiling_mbps=100000)
    assert commands[0] == ["tc", "qdisc", "del", "dev", "ens1f0", "root"]
    joined = [" ".join(c) for c in commands]
    # A limited class: its burst is 10 ms at its rate (1000 Mb/s -> 1,250,000 bytes).
    limited = "classid 1:10 htb rate 1000mbit ceil 1000mbit burst 1250000 cburst 1250000"
    assert f"tc class add dev ens1f0 parent 1:1 {limited}" in joined
    assert any("flower vlan_prio 3 classid 1:11" in line for line in joined)
    assert sum("flower" in line for line in joined) == 8


def test_tc_burst_follows_the_rate_with_a_floor_and_spares_unlimited_classes():
    plan = qos_plan(HOST)
    commands = tc_args("tc", "ens1f0", plan, ceiling_mbps=100000, burst_ms=50)
    by_class = {c[c.index("classid") + 1]: c for c in commands if "classid" in c[:9]}
    limited = {t["tc"]: t["rate_limit_mbps"] for t in plan["tcs"] if t["rate_limit_mbps"]}
    assert limited, "the golden host limits at least one class"
    for tc, mbps in limited.items():
        argv = by_class[f"1:{10 + tc}"]
        assert argv[argv.index("burst") + 1] == str(mbps * 1000 * 50 // 8), argv
    unlimited = [c for k, c in by_class.items() if int(k[2:]) - 10 not in limited]
    assert unlimited and all("burst" not in argv for argv in unlimited)
    assert tc_burst_bytes(1, 1) == 10 * 1514  # ten full frames at the least


def test_tc_read_back_matches_plan():
    plan = qos_plan(HOST)
    qdiscs = json.dumps([{"kind": "htb", "handle": "1:", "root": True}])
    classes = json.dumps(
        [
            {"class": "htb", "handle": "1:1", "root": True, "rate": 12500000000},
            {"class": "htb", "handle": "1:10", "parent": "1:1", "rate": 125000000,
             "ceil": 125000000},
            {"class": "htb", "handle": "1:11", "parent": "1:1", "rate": 625000000,
             "ceil": 625000000},
            {"class": "htb", "handle": "1:12", "parent": "1:1", "rate": 12500000000,
             "ceil": 12500000000},
            {"class": "htb", "handle": "1:13", "parent": "1:1", "rate": 12500000000,
             "ceil": 12500000000},
        ]
    )  # fmt: skip
    filters = json.dumps(
        [{"kind": "flower", "options": {"keys": {"vlan_prio": p}, "classid": f"1:1{p // 2}"}}
         for p in range(8)]
    )  # fmt: skip
    observed = tc_state(qdiscs, classes, filters, ceiling_mbps=100000)
    assert observed["tcs"][0] == {"rate_limit_mbps": 1000}
    assert observed["tcs"][2] == {"rate_limit_mbps": None}
    assert differences(expected_state(plan, "tc"), observed) == []
    missing = tc_state("[]", "[]", "[]", ceiling_mbps=100000)
    assert differences(expected_state(plan, "tc"), missing)


# What iproute2 6.1 prints for `tc -j class show` on an HTB tree: text, not JSON.
TC_61_CLASSES = """\
class htb 1:11 parent 1:1 prio 0 rate 5Gbit ceil 5Gbit burst 15000b cburst 15000b
class htb 1:10 parent 1:1 prio 0 rate 1Gbit ceil 1Gbit burst 15000b cburst 15000b
class htb 1:1 root rate 100Gbit ceil 100Gbit burst 1600b cburst 1600b
class htb 1:13 parent 1:1 prio 0 rate 100Gbit ceil 100Gbit burst 1600b cburst 1600b
class htb 1:12 parent 1:1 prio 0 rate 100Gbit ceil 100Gbit burst 1600b cburst 1600b
class htb 1:17 parent 1:1 prio 0 rate 300Kbit ceil 2500Kbit burst 1600b cburst 1600b
"""


def test_tc_read_back_accepts_the_text_iproute2_61_prints_with_j():
    classes = tc_classes(TC_61_CLASSES)
    assert classes[0] == {
        "class": "htb", "handle": "1:11", "parent": "1:1", "rate": 625_000_000, "ceil": 625_000_000
    }  # fmt: skip
    assert classes[2] == {"class": "htb", "handle": "1:1", "rate": 12_500_000_000,
                          "ceil": 12_500_000_000}  # fmt: skip
    assert classes[5]["rate"] == 37_500 and classes[5]["ceil"] == 312_500
    qdiscs = json.dumps([{"kind": "htb", "handle": "1:", "root": True}])
    filters = json.dumps(
        [{"kind": "flower", "options": {"keys": {"vlan_prio": p}, "classid": f"1:1{p // 2}"}}
         for p in range(8)]
    )  # fmt: skip
    observed = tc_state(qdiscs, TC_61_CLASSES, filters, ceiling_mbps=100000)
    assert differences(expected_state(qos_plan(HOST), "tc"), observed) == []
    assert tc_classes("") == [] and tc_classes("\n") == []
