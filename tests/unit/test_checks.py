"""Verification checks of a host (module_utils/cxfab/verify/checks.py): pass and fail."""

from __future__ import annotations

import pytest
from cxfab.structured import hosts as host_structured
from cxfab.verify import checks, nic, qos
from cxfab.verify import host as verify_host

from tests.unit.checks_data import (
    by_id,
    firmware_result,
    healthy_facts,
    host_data,
    host_intent,
    link_type_result,
    status_of,
    structured,
)

# ---------------------------------------------------------------- a healthy host


def test_healthy_host_has_no_failure_and_every_check_has_the_report_shape():
    found = verify_host.host_checks("h1", structured(host_intent()), host_data())
    assert found, "a configured host yields checks"
    keys = {"id", "target", "category", "status", "expected", "observed", "message"}
    assert all(set(c) == keys for c in found)
    failed = [c for c in found if c["status"] == "fail"]
    assert failed == []
    ids = by_id(found)
    for expected in (
        "firmware.cx4.version",
        "firmware.cx4.psid",
        "link_type.cx4.p1",
        "link.ens1f0.up",
        "link.ens1f0.speed",
        "mtu.bond0.10",
        "qos.egress.bond0.20",
        "irq.ens1f1",
        "bond.bond0.ens1f0",
        "rdma.rxe0.state",
        "network.config",
        "qos.readback.ens1f0",
        "mtu.path.vlan10.h2",
    ):
        assert ids[expected]["status"] == "pass", expected
    assert ids["firmware.cx4.version"]["message"] == "as intended"


def test_unreachable_host_fails_never_passes():
    found = verify_host.host_checks("h1", structured(host_intent()), None)
    assert [(c["id"], c["status"]) for c in found] == [("host.data", "fail")]


def test_unreachable_during_gathering_fails():
    data = host_data()
    data["facts"] = {"unreachable": True, "msg": "Data could not be sent to remote host"}
    found = verify_host.host_checks("h1", structured(host_intent()), data)
    assert [(c["id"], c["status"], c["observed"]) for c in found] == [
        ("host.data", "fail", "host unreachable")
    ]
    assert found[0]["message"] == "Data could not be sent to remote host"


def test_facts_module_failure_is_a_failure_with_its_message():
    data = host_data()
    data["facts"] = {"failed": True, "msg": "cxfab_host.bond.members: boom"}
    check = by_id(verify_host.host_checks("h1", structured(host_intent()), data))["host.facts"]
    assert check["status"] == "fail"
    assert "boom" in check["observed"]


# ---------------------------------------------------------------- firmware and link type


def test_firmware_old_version_fails_with_flash_and_running():
    found = nic.firmware_checks(
        "h1",
        [
            firmware_result(
                flash_version="12.20.1010",
                running_version="12.20.1010",
                target_in_flash=False,
                target_running=False,
            )
        ],
    )
    check = by_id(found)["firmware.cx4.version"]
    assert check["status"] == "fail"
    assert check["observed"] == "flash 12.20.1010, running 12.20.1010"


def test_firmware_pending_activation_fails_and_says_so():
    found = nic.firmware_checks(
        "h1", [firmware_result(running_version="12.20.1010", target_running=False)]
    )
    check = by_id(found)["firmware.cx4.version"]
    assert check["status"] == "fail"
    assert "awaiting activation" in check["message"]


def test_firmware_psid_mismatch_fails_with_observed_psid():
    check = by_id(nic.firmware_checks("h1", [firmware_result(psid="MT_2190110032")]))[
        "firmware.cx4.psid"
    ]
    assert (check["status"], check["expected"], check["observed"]) == (
        "fail",
        "LNV2190110032",
        "MT_2190110032",
    )


def test_firmware_tool_missing_fails_not_measured_other_errors_fail():
    missing = {
        "item": host_intent()["nics"][0],
        "failed": True,
        "msg": "no tool for querying firmware: install mstflint or NVIDIA MFT",
    }
    broken = dict(missing, msg="-E- Cannot open device 0000:65:00.0")
    unmeasured = by_id(nic.firmware_checks("h1", [missing]))["firmware.cx4.version"]
    assert (unmeasured["status"], unmeasured["observed"]) == ("fail", "not measured")
    assert status_of(nic.firmware_checks("h1", [broken]), "firmware.cx4.psid") == "fail"


def test_firmware_skipped_loop_item_adds_nothing():
    assert nic.firmware_checks("h1", [{"skipped": True, "item": {}}]) == []


@pytest.mark.parametrize(
    ("current", "next_boot", "status", "message"),
    [
        ("eth", "eth", "pass", "as intended"),
        ("ib", "ib", "fail", "expected ETH current and next boot, observed current IB"),
        ("ib", "eth", "fail", "set for next boot, activation pending"),
    ],
)
def test_link_type(current, next_boot, status, message):
    check = by_id(nic.link_type_checks("h1", [link_type_result(current, next_boot)]))[
        "link_type.cx4.p1"
    ]
    assert check["status"] == status
    assert check["message"].startswith(message)
    assert check["observed"] == f"current {current.upper()}, next boot {next_boot.upper()}"


# ---------------------------------------------------------------- links, MTU, probes


def test_link_down_fails_with_operstate_and_carrier():
    facts = healthy_facts()
    facts["netdevs"]["ens1f0"].update(operstate="lowerlayerdown", carrier=0)
    check = by_id(verify_host.link_checks("h1", structured(host_intent()), facts))["link.ens1f0.up"]
    assert check["status"] == "fail"
    assert check["observed"] == "operstate lowerlayerdown, carrier 0"


def test_link_speed_wrong_fails_unknown_skips_with_driver():
    facts = healthy_facts()
    facts["netdevs"]["ens1f0"]["speed_mbps"] = 40000
    facts["netdevs"]["ens1f1"].update(speed_mbps=None, driver="virtio_net")
    found = by_id(verify_host.link_checks("h1", structured(host_intent()), facts))
    assert (found["link.ens1f0.speed"]["status"], found["link.ens1f0.speed"]["observed"]) == (
        "fail",
        "40 Gb/s",
    )
    assert found["link.ens1f1.speed"]["status"] == "skip"
    assert "virtio_net" in found["link.ens1f1.speed"]["message"]


def test_missing_interface_fails():
    facts = healthy_facts()
    facts["netdevs"]["ens1f1"] = {"exists": False}
    assert (
        status_of(verify_host.link_checks("h1", structured(host_intent()), facts), "link.ens1f1.up")
        == "fail"
    )


def test_mtu_mismatch_and_missing_interface_fail():
    facts = healthy_facts()
    facts["mtus"]["bond0.20"] = 1500
    del facts["mtus"]["bond0.30"]
    found = by_id(verify_host.mtu_checks("h1", structured(host_intent())["network"], facts))
    assert (found["mtu.bond0.20"]["status"], found["mtu.bond0.20"]["observed"]) == ("fail", "1500")
    assert found["mtu.bond0.30"]["observed"] == "missing"
    assert found["mtu.bond0"]["status"] == "pass"


def test_probe_failure_skip_and_pass():
    probes = [
        {
            "id": "a",
            "address": "12.0.10.2",
            "interface": "bond0.10",
            "size": 8972,
            "mtu": 9000,
            "skip": "",
            "ok": False,
            "error": "no reply to 3 x 9000-byte DF packets",
        },
        {
            "id": "b",
            "address": "12.0.10.1",
            "interface": "bond0.10",
            "size": 8972,
            "mtu": 9000,
            "skip": "gateway probes are off",
        },
        {
            "id": "c",
            "address": "12.0.20.2",
            "interface": "bond0.20",
            "size": 8972,
            "mtu": 9000,
            "skip": "",
            "ok": True,
        },
    ]
    found = by_id(verify_host.probe_checks("h1", probes))
    assert found["a"]["status"] == "fail"
    assert found["a"]["observed"] == "no reply to 3 x 9000-byte DF packets"
    assert "9000-byte packets with DF" in found["a"]["expected"]
    assert (found["b"]["status"], found["b"]["message"]) == ("skip", "gateway probes are off")
    assert found["c"]["status"] == "pass"


def test_probes_target_rack_peers_and_gateways_at_the_vlan_mtu():
    hosts = {"h1": host_intent(1), "h2": host_intent(2), "h3": host_intent(3)}
    hosts["h2"]["vlans"] = [v for v in hosts["h2"]["vlans"] if v["id"] != 20]
    hosts["h3"]["bond"]["switch_pair"] = "another-rack"
    vlans = [
        {"id": 10, "mtu": 9000, "gateway": {"mode": "magp", "virtual_ip": "12.0.10.254"}},
        {"id": 20, "mtu": 9000, "gateway": {}},
    ]
    fabric = {"hosts": hosts, "vlans": vlans}
    network = structured(hosts["h1"])["network"]
    probes = {p["id"]: p for p in host_structured.probes_section(fabric, "h1", network)}
    assert set(probes) == {"mtu.path.vlan10.h2", "mtu.gateway.vlan10", "mtu.path.vlan30.h2"}
    assert probes["mtu.path.vlan10.h2"]["address"] == "12.0.10.2"
    assert probes["mtu.path.vlan10.h2"]["size"] == 8972
    assert probes["mtu.path.vlan10.h2"]["interface"] == "bond0.10"
    assert probes["mtu.gateway.vlan10"]["kind"] == "gateway"


# ---------------------------------------------------------------- QoS intent on the host


def test_egress_map_removed_fails_with_the_observed_map():
    facts = healthy_facts()
    facts["vlans"]["bond0.20"]["egress_qos_map"] = {}
    check = by_id(verify_host.egress_checks("h1", structured(host_intent())["network"], facts))[
        "qos.egress.bond0.20"
    ]
    assert check["status"] == "fail"
    assert check["expected"] == "0:3 1:3 2:3 3:3 4:3 5:3 6:3 7:3"
    assert check["observed"] == "0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0"


def test_egress_map_partial_fails_and_missing_vlan_fails():
    facts = healthy_facts()
    facts["vlans"]["bond0.10"]["egress_qos_map"] = {0: 1, 1: 1}
    facts["vlans"]["bond0.30"] = {"exists": False}
    found = by_id(verify_host.egress_checks("h1", structured(host_intent())["network"], facts))
    assert found["qos.egress.bond0.10"]["observed"].startswith("0:1 1:1 2:0")
    assert found["qos.egress.bond0.30"]["observed"] == "interface missing"
    assert found["qos.egress.bond0.20"]["status"] == "pass"


def test_qos_readback_differences_fail_module_error_fails():
    result = host_data()["qos"]
    result["ports"]["ens1f1"] = {"backend": "tc", "differences_before": ["TC0 rate 0 != 1000"]}
    found = by_id(qos.qos_readback_checks("h1", result))
    assert found["qos.readback.ens1f0"]["status"] == "pass"
    assert found["qos.readback.ens1f1"]["observed"] == "TC0 rate 0 != 1000"
    assert "TC0 1000 Mb/s" in found["qos.readback.ens1f1"]["expected"]
    error = qos.qos_readback_checks("h1", {"failed": True, "msg": "bond0.10 does not exist"})
    assert (error[0]["status"], error[0]["message"]) == ("fail", "bond0.10 does not exist")


def test_network_drift_lists_the_actions():
    found = nic.drift_check("h1", {"actions": ["set ens1f1 up", "add 12.0.0.1/24 to bond0"]})
    assert found[0]["status"] == "fail"
    assert found[0]["observed"] == "set ens1f1 up; add 12.0.0.1/24 to bond0"
    assert nic.drift_check("h1", {"skipped": True}) == []


# ---------------------------------------------------------------- IRQ affinity


def irq_check_of_ens1f0(irqs: list[dict]) -> dict:
    """The irq.ens1f0 check when ens1f0's MSI-X IRQs read back as `irqs`."""
    facts = healthy_facts()
    facts["netdevs"]["ens1f0"]["irqs"] = irqs
    return by_id(verify_host.irq_checks("h1", structured(host_intent()), facts))["irq.ens1f0"]


def test_irqs_on_the_far_node_fail_with_their_cpus():
    check = irq_check_of_ens1f0(
        [
            {"irq": 42, "requested": "0", "effective": "0"},
            {"irq": 43, "requested": "3", "effective": "3"},
        ]
    )
    assert check["status"] == "fail"
    assert check["observed"] == "IRQ 42->0, 43->3"
    assert check["message"] == "IRQ 42 outside 2-3"
    assert "NUMA node 1" in check["expected"]


def test_irq_requested_far_but_not_yet_moved_still_fails():
    check = irq_check_of_ens1f0([{"irq": 42, "requested": "0", "effective": "2"}])
    assert check["status"] == "fail"
    assert check["observed"] == "IRQ 42->0 (now 2)"


def test_irq_pinned_near_but_not_fired_since_passes_and_says_so():
    check = irq_check_of_ens1f0(
        [
            {"irq": 42, "requested": "2", "effective": "2"},
            {"irq": 43, "requested": "3", "effective": "0"},
        ]
    )
    assert check["status"] == "pass"
    assert check["observed"] == "IRQ 42->2, 43->3 (now 0)"
    assert check["message"] == "IRQ 43 move at their next interrupt (none since pinned)"


def test_irq_policy_off_and_unknown_numa_node_skip():
    facts = healthy_facts()
    facts["netdevs"]["ens1f0"]["numa_node"] = -1
    host = host_intent()
    found = by_id(verify_host.irq_checks("h1", structured(host), facts))
    assert found["irq.ens1f0"]["status"] == "skip"
    assert "no NUMA node" in found["irq.ens1f0"]["message"]
    assert found["irq.ens1f1"]["status"] == "pass"
    off = host_intent(irq_affinity={"policy": "off"})
    assert {c["status"] for c in verify_host.irq_checks("h1", structured(off), facts)} == {"skip"}


def test_irq_cpulist_policy_and_no_irq():
    facts = healthy_facts()
    facts["netdevs"]["ens1f1"]["irqs"] = []
    host = host_intent(irq_affinity={"policy": "cpulist", "cpus": "3"})
    found = by_id(verify_host.irq_checks("h1", structured(host), facts))
    assert found["irq.ens1f0"]["status"] == "fail"  # IRQ 42 sits on CPU 2
    assert found["irq.ens1f1"]["observed"] == "no MSI-X IRQ found"


# ---------------------------------------------------------------- bond and RDMA


def test_bond_member_cut_fails_with_mii_status():
    facts = healthy_facts()
    facts["bond"]["members"]["ens1f0"] = {"mii_status": "down", "aggregator": 2}
    check = by_id(verify_host.bond_checks("h1", structured(host_intent())["network"], facts))[
        "bond.bond0.ens1f0"
    ]
    assert check["status"] == "fail"
    assert check["observed"] == "MII Status: down, aggregator 2 (active 1)"


def test_bond_member_up_in_another_aggregator_fails_and_missing_member_fails():
    facts = healthy_facts()
    facts["bond"]["members"]["ens1f0"]["aggregator"] = 2
    del facts["bond"]["members"]["ens1f1"]
    found = by_id(verify_host.bond_checks("h1", structured(host_intent())["network"], facts))
    assert found["bond.bond0.ens1f0"]["status"] == "fail"
    assert found["bond.bond0.ens1f1"]["observed"] == "not enslaved"


def test_bond_wrong_mode_and_missing_bond():
    facts = healthy_facts()
    facts["bond"]["mode"] = "fault-tolerance (active-backup)"
    assert (
        status_of(
            verify_host.bond_checks("h1", structured(host_intent())["network"], facts),
            "bond.bond0.mode",
        )
        == "fail"
    )
    facts["bond"] = {"exists": False}
    assert (
        verify_host.bond_checks("h1", structured(host_intent())["network"], facts)[0]["observed"]
        == "bond missing"
    )


def test_rdma_device_down_or_missing_fails():
    facts = healthy_facts()
    facts["rdma"]["rxe0"]["state"] = "1: DOWN"
    check = verify_host.rdma_checks("h1", structured(host_intent()), facts)[0]
    assert check["status"] == "fail"
    assert check["observed"].startswith("1: DOWN")
    facts["rdma"] = {}
    assert (
        verify_host.rdma_checks("h1", structured(host_intent()), facts)[0]["observed"]
        == "device missing"
    )


# ---------------------------------------------------------------- switches


def test_switch_checks_pass_through_and_module_error():
    health = {
        "checks": [
            {
                "id": "mlag.system_mac",
                "target": "sw-a",
                "category": "mlag",
                "scope": "local",
                "status": "fail",
                "expected": "System-mac: 00:00:5E:00:01:5D",
                "observed": "System-mac: 00:00:5E:00:01:99",
                "message": "m",
            },
        ]
    }
    found = checks.switch_checks({"sw-a": health, "sw-b": {"skipped": True}})
    assert len(found) == 1
    assert "scope" not in found[0]
    assert found[0]["observed"] == "System-mac: 00:00:5E:00:01:99"
    broken = checks.switch_checks({"sw-a": {"failed": True, "msg": "netmiko missing"}})
    assert (broken[0]["id"], broken[0]["status"]) == ("switch.health", "fail")


def test_merge_keeps_the_worst_duplicate():
    ok = {"id": "x", "target": "t", "status": "pass"}
    bad = {"id": "x", "target": "t", "status": "fail"}
    assert checks.merge([ok, bad]) == [bad]
    assert checks.merge([bad, ok]) == [bad]
