"""Verify's dataplane checks: targets from the structured configs, parsers on real outputs,
checks that fail closed and carry what was observed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cxfab.verify import dataplane
from cxfab.verify.checks import all_checks
from cxfab.verify.dataplane import DataplaneReadError, parse_lacp_partners, parse_neigh, parse_ping

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "unit" / "outputs" / "dataplane"
GOLDEN = REPO / "tests" / "golden" / "lab" / "structured"
MAGP_MAC_10 = "00:00:5E:00:01:0A"


def read(name: str) -> str:
    return (OUT / name).read_text()


@pytest.fixture(scope="module")
def structured():
    return {p.stem: yaml.safe_load(p.read_text()) for p in GOLDEN.glob("*.yml")}


@pytest.fixture(scope="module")
def plan(structured):
    return dataplane.targets(structured, "lab-host1")


def ping_result(check_id: str, text: str) -> dict:
    return {"id": check_id, "cmd": ["ping", "-c", "3"], "rc": 0, "stdout": text, "stderr": ""}


def observed_all_good(plan: dict, neigh: str | None = None, bonding: str | None = None) -> dict:
    """A probe result where every ping got its replies (the real outputs, per target)."""
    pings = []
    for vlan in plan["vlans"]:
        pings.append(ping_result(dataplane.ping_id("gateway", vlan), read("ping_ok.txt")))
        for peer in vlan["peers"]:
            pings.append(ping_result(dataplane.ping_id("peer", vlan, peer), read("ping_ok.txt")))
            pings.append(
                ping_result(dataplane.ping_id("jumbo", vlan, peer), read("ping_df_ok.txt"))
            )
    neigh_by_vlan = {}
    for vlan in plan["vlans"]:
        mac = vlan["gateway"]["mac"].lower()
        text = (neigh or read("neigh.json")).replace("12.0.10.1", vlan["gateway"]["address"])
        neigh_by_vlan[str(vlan["vlan"])] = text.replace("00:00:5e:00:01:0a", mac)
    return {
        "changed": False,
        "pings": pings,
        "neigh": neigh_by_vlan,
        "bonding": read("bonding_mlag_partner.txt") if bonding is None else bonding,
    }


def by_id(checks: list[dict]) -> dict:
    return {c["id"]: c for c in checks}


# ---------------------------------------------------------------- targets
def test_targets_come_from_the_structured_configs(plan):
    assert plan["system_mac"] == "00:00:5E:00:01:5D" and plan["pair"] == "lab-rack"
    assert plan["bond"] == {"name": "bond0", "members": ["ens1f0", "ens1f1"], "mode": "802.3ad"}
    vlan10 = next(v for v in plan["vlans"] if v["vlan"] == 10)
    assert vlan10["gateway"] == {"address": "12.0.10.1", "mode": "anycast", "mac": MAGP_MAC_10}
    assert vlan10["peers"] == [{"host": "lab-host2", "address": "12.0.10.12"}]
    assert (vlan10["interface"], vlan10["mtu"], vlan10["size"]) == ("bond0.10", 9000, 8972)


def test_vrrp_gateway_expects_the_vrrp_mac(structured):
    changed = {k: dict(v) for k, v in structured.items()}
    changed["lab-sw-a"] = {**changed["lab-sw-a"], "anycast_gateways": [], "vrrp": [
        {"vlan": 20, "vrid": 20, "virtual_ip": "12.0.20.1", "priority": 110, "preempt": True,
         "advertisement_interval": 1}]}  # fmt: skip
    vlan20 = next(v for v in dataplane.targets(changed, "lab-host1")["vlans"] if v["vlan"] == 20)
    assert vlan20["gateway"]["mode"] == "vrrp" and vlan20["gateway"]["mac"] == "00:00:5E:00:01:14"


# ---------------------------------------------------------------- parsers on real outputs
def test_ping_parser_reads_replies_and_losses():
    ok = parse_ping(read("ping_ok.txt"))
    assert (ok["transmitted"], ok["received"], ok["loss_percent"]) == (3, 3, 0.0)
    assert sorted(ok["replies"]) == [1, 2, 3]
    lost = parse_ping(read("ping_unreach.txt"))
    assert (lost["received"], lost["loss_percent"]) == (0, 100.0)
    too_long = parse_ping(read("ping_df_toolong.txt"))
    assert too_long["errors"] == 2 and too_long["error"] == "message too long, mtu=9000"
    drill = parse_ping(read("ping_drill.txt"))
    assert (drill["transmitted"], drill["received"]) == (39, 27)
    assert drill["replies"][15] == pytest.approx(1795445004.022166)


def test_ping_parser_fails_closed():
    with pytest.raises(DataplaneReadError, match=r"ping -I bond0\.10: no packet statistics in: "
                       r"ping: bond0\.10: No such device"):  # fmt: skip
        parse_ping("ping: bond0.10: No such device\n", "ping -I bond0.10")


def test_neigh_parser():
    assert parse_neigh(read("neigh.json"), "12.0.10.1") == {
        "lladdr": MAGP_MAC_10,
        "state": "REACHABLE",
    }
    assert parse_neigh(read("neigh.json"), "12.0.10.99") == {"lladdr": None, "state": "INCOMPLETE"}
    assert parse_neigh(read("neigh.json"), "12.0.10.77") is None
    with pytest.raises(DataplaneReadError, match='not JSON: Object "x" is unknown'):
        parse_neigh('Object "x" is unknown, try "ip help".', "12.0.10.1")


def test_lacp_partner_parser():
    got = parse_lacp_partners(read("bonding_mlag_partner.txt"), "bond0")
    assert got == {
        "aggregator_partner": "00:00:5E:00:01:5D",
        "members": {"ens1f0": "00:00:5E:00:01:5D", "ens1f1": "00:00:5E:00:01:5D"},
    }
    with pytest.raises(DataplaneReadError, match="/proc/net/bonding/bond0: no 'Bonding Mode'"):
        parse_lacp_partners("garbage", "bond0")


# ---------------------------------------------------------------- checks
def test_a_forwarding_fabric_passes_every_dataplane_check(plan):
    checks = dataplane.dataplane_checks("lab-host1", plan, observed_all_good(plan))
    assert checks and all(c["status"] == "pass" for c in checks), [
        c for c in checks if c["status"] != "pass"
    ]
    ids = by_id(checks)
    # 3 VLANs x (gateway, gateway MAC, peer, jumbo) + 2 LACP members
    assert len(ids) == 14
    assert ids["dataplane.gateway_mac.vlan10"]["observed"] == f"{MAGP_MAC_10} (REACHABLE)"
    assert ids["dataplane.lacp_partner.ens1f1"]["observed"] == "partner system 00:00:5E:00:01:5D"
    assert ids["dataplane.jumbo.vlan30.lab-host2"]["expected"].startswith("replies to 9000-byte DF")


def test_gateway_answering_with_the_svi_mac_fails_with_the_observed_mac(plan):
    observed = observed_all_good(plan, neigh=read("neigh_gateway_svi_mac.json"))
    check = by_id(dataplane.dataplane_checks("lab-host1", plan, observed))[
        "dataplane.gateway_mac.vlan10"
    ]
    assert check["status"] == "fail"
    assert check["observed"] == "82:19:48:1B:AE:97 (DELAY)"
    assert "anycast virtual MAC" in check["message"]


def test_lost_pings_fail_with_the_count(plan):
    observed = observed_all_good(plan)
    for ping in observed["pings"]:
        if ping["id"] == "dataplane.peer.vlan20.lab-host2":
            ping["stdout"] = read("ping_unreach.txt")
        if ping["id"] == "dataplane.jumbo.vlan30.lab-host2":
            ping["stdout"] = read("ping_df_toolong.txt")
    checks = by_id(dataplane.dataplane_checks("lab-host1", plan, observed))
    assert checks["dataplane.peer.vlan20.lab-host2"]["observed"] == "0/3 replies"
    assert checks["dataplane.jumbo.vlan30.lab-host2"]["observed"] == (
        "0/2 replies (message too long, mtu=9000)"
    )
    assert checks["dataplane.peer.vlan20.lab-host2"]["status"] == "fail"


def test_drill_like_partial_loss_fails(plan):
    observed = observed_all_good(plan)
    observed["pings"][0]["stdout"] = read("ping_drill.txt")
    check = dataplane.dataplane_checks("lab-host1", plan, observed)[0]
    assert (check["status"], check["observed"]) == ("fail", "27/39 replies")


def test_lacp_partner_other_than_the_mlag_system_mac(plan):
    text = read("bonding_mlag_partner.txt")
    head, _, second = text.partition("Slave Interface: ens1f1")
    second = second.replace("system mac address: 00:00:5e:00:01:5d", "system mac address: "
                            "7c:fe:90:11:00:0b")  # fmt: skip
    observed = observed_all_good(plan, bonding=head + "Slave Interface: ens1f1" + second)
    checks = by_id(dataplane.dataplane_checks("lab-host1", plan, observed))
    assert checks["dataplane.lacp_partner.ens1f0"]["status"] == "pass"
    assert checks["dataplane.lacp_partner.ens1f1"]["status"] == "fail"
    assert checks["dataplane.lacp_partner.ens1f1"]["observed"] == "partner system 7C:FE:90:11:00:0B"


def test_unreadable_outputs_fail_closed(plan):
    observed = observed_all_good(plan, bonding="")
    observed["neigh"]["10"] = 'rc 1: Cannot find device "bond0.10"'
    observed["pings"][0]["stdout"] = "ping: bond0.10: No such device\n"
    checks = by_id(dataplane.dataplane_checks("lab-host1", plan, observed))
    assert checks["dataplane.gateway.vlan10"]["observed"] == "unreadable"
    assert "no packet statistics" in checks["dataplane.gateway.vlan10"]["message"]
    assert checks["dataplane.gateway_mac.vlan10"]["status"] == "fail"
    assert "Cannot find device" in checks["dataplane.gateway_mac.vlan10"]["message"]
    assert checks["dataplane.lacp_partner.ens1f0"]["observed"] == "unreadable"


def test_switched_off_reports_every_check_skipped_with_the_reason(plan):
    skipped = {"changed": False, "skipped": True, "skip_reason": "Conditional result was False"}
    checks = dataplane.dataplane_checks("lab-host1", plan, skipped)
    assert len(checks) == 14 and {c["status"] for c in checks} == {"skip"}
    assert checks[0]["message"].startswith("cxfab_verify_dataplane is off")


def test_a_failed_probe_fails_every_check(plan):
    checks = dataplane.dataplane_checks("lab-host1", plan, {"failed": True, "msg": "boom"})
    assert {c["status"] for c in checks} == {"fail"} and checks[0]["message"] == "boom"


def test_the_dataplane_section_is_judged_when_it_ran_and_unmeasured_when_its_probe_did_not(
    structured,
):
    fabric = {"hosts": {"lab-host1": {}}, "structured": structured, "vlans": [], "workloads": {}}
    gathered = {"lab-host1": {"facts": {"skipped": True}}}
    # verify_dataplane skipped by name: the section is not in the run, nothing is expected.
    without = all_checks(fabric, gathered, {}, {}, [], ["hosts"])
    assert not [c for c in without["checks"] if c["id"].startswith("dataplane.")]
    # The section ran but this host's probe left no result: each check fails unmeasured.
    lost = all_checks(fabric, gathered, {}, {}, [], ["hosts", "dataplane"])
    found = [c for c in lost["checks"] if c["id"].startswith("dataplane.")]
    assert len(found) == 14 and {c["status"] for c in found} == {"fail"}
    assert all(c["observed"] == "not measured" for c in found), found
    # Turned off by intent (the task's `when`): a skip, with the reason.
    data = {"lab-host1": {"facts": {"skipped": True}, "dataplane": {"skipped": True}}}
    with_section = all_checks(fabric, data, {}, {}, [], ["hosts", "dataplane"])
    found = [c for c in with_section["checks"] if c["id"].startswith("dataplane.")]
    assert len(found) == 14 and {c["category"] for c in found} == {"network"}
    assert {c["status"] for c in found} == {"skip"}
