"""Desired network/QoS state derived from cxfab_host (the example inventory's hosts)."""

from pathlib import Path

import pytest
import yaml
from cxfab.hostnet import IntentError
from cxfab.hostnet.intent import network_intent, qos_plan

EXAMPLE = Path(__file__).resolve().parents[2] / "inventories" / "example" / "host_vars"


def example_host(name="cardamine"):
    return yaml.safe_load((EXAMPLE / name / "cxfab.yml").read_text())["cxfab_host"]


def test_example_host_gives_bond_members_and_tagged_vlans():
    intent = network_intent(example_host())
    bond = intent["bond"]
    assert bond["name"] == "bond0"
    assert bond["members"] == ["enp23s0f0", "enp23s0f1"]
    assert (bond["mode"], bond["lacp_rate"], bond["mtu"]) == ("802.3ad", "fast", 9000)
    assert bond["addresses"] == ["12.0.0.23/24"]
    assert intent["members"] == [
        {"name": "enp23s0f0", "mtu": 9000},
        {"name": "enp23s0f1", "mtu": 9000},
    ]
    names = [v["name"] for v in intent["vlans"]]
    assert names == ["bond0.10", "bond0.20", "bond0.30"]
    assert intent["vlans"][1]["addresses"] == ["12.0.20.23/24"]


def test_egress_map_sends_every_socket_priority_to_the_vlan_user_priority():
    vlans = {v["id"]: v for v in network_intent(example_host())["vlans"]}
    assert vlans[10]["egress_qos_map"] == dict.fromkeys(range(8), 1)
    assert vlans[20]["egress_qos_map"] == dict.fromkeys(range(8), 3)
    assert vlans[30]["egress_qos_map"] == dict.fromkeys(range(8), 5)


def test_qos_plan_matches_seed_mlnx_qos_layout():
    plan = qos_plan(example_host())
    # seed 001: --prio_tc=0,0,1,1,2,2,3,3 --tsa=strict... --ratelimit=1,5
    assert plan["prio_tc"] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [t["rate_limit_mbps"] for t in plan["tcs"][:3]] == [1000, 5000, None]
    assert {t["tsa"] for t in plan["tcs"]} == {"strict"}


def test_active_backup_drops_lacp_rate_and_hash_policy():
    host = example_host()
    host["bond"]["mode"] = "active-backup"
    bond = network_intent(host, xmit_hash_policy="layer3+4")["bond"]
    assert (bond["lacp_rate"], bond["xmit_hash_policy"]) == ("slow", "layer2")


@pytest.mark.parametrize(
    ("build", "mutate", "path", "reason"),
    [
        (
            network_intent,
            lambda h: h["bond"].update(mode="lacp"),
            "cxfab_host.bond.mode",
            "not one of",
        ),
        (
            network_intent,
            lambda h: h["bond"].update(members=[]),
            "cxfab_host.bond.members",
            "at least one",
        ),
        (
            network_intent,
            lambda h: h["bond"].update(members=["a", "a"]),
            "cxfab_host.bond.members",
            "twice",
        ),
        (
            network_intent,
            lambda h: h["vlans"][0].update(mtu=9216),
            "cxfab_host.vlans[0].mtu",
            "larger than",
        ),
        (
            network_intent,
            lambda h: h["vlans"][2].update(address="12.0.30.300/24"),
            "cxfab_host.vlans[2].address",
            "not an address",
        ),
        (
            network_intent,
            lambda h: h["qos"][0].update(vlan=99),
            "cxfab_host.qos",
            "not in cxfab_host.vlans",
        ),
        (
            network_intent,
            lambda h: h["vlans"].append({"id": 10}),
            "cxfab_host.vlans[3].id",
            "listed twice",
        ),
        (
            qos_plan,
            lambda h: h["qos"][1].update(user_priority=1),
            "cxfab_host.qos[1].traffic_class",
            "already maps",
        ),
        (
            qos_plan,
            lambda h: h["qos"][1].update(traffic_class=0),
            "cxfab_host.qos[1]",
            "configured differently",
        ),
        (
            qos_plan,
            lambda h: h["qos"][0].update(tsa="ets", bandwidth_percent=40),
            "cxfab_host.qos",
            "sum to 40%",
        ),
        (qos_plan, lambda h: h["qos"][0].update(tsa="wfq"), "cxfab_host.qos[0].tsa", "not one of"),
    ],
)
def test_bad_input_names_the_key(build, mutate, path, reason):
    host = example_host()
    mutate(host)
    with pytest.raises(IntentError) as caught:
        build(host)
    assert caught.value.path == path
    assert reason in str(caught.value)
