"""Verification checks (module_utils/cxfab/verify/checks.py): pass and fail, with values."""

from __future__ import annotations

import copy

import pytest
from cxfab.host.mlnx.pcie import usable_gbps
from cxfab.structured import hosts as host_structured
from cxfab.verify import checks, nic, perf, qos
from cxfab.verify import host as verify_host

FIRMWARE = {"version": "12.28.1002", "psid": "LNV2190110032", "image": "fw.bin", "sha256": "0" * 64}


def structured(host: dict) -> dict:
    """The host's structured config (the sections that do not need its peers)."""
    return host_structured.sections(host)


def host_intent(index: int = 1, **overrides) -> dict:
    host = {
        "mgmt_interface": "eno1",
        "nics": [
            {
                "name": "cx4",
                "pci": "0000:65:00.0",
                "model": "ConnectX-4",
                "ports": [
                    {"port": 1, "netdev": "ens1f0", "link_type": "eth", "speed_gbps": 100},
                    {"port": 2, "netdev": "ens1f1", "link_type": "eth", "speed_gbps": 100},
                ],
                "firmware": dict(FIRMWARE),
            }
        ],
        "bond": {
            "name": "bond0",
            "members": ["ens1f0", "ens1f1"],
            "mode": "802.3ad",
            "lacp_rate": "fast",
            "mtu": 9000,
            "switch_pair": "lab",
            "mpo": index,
            "address": f"12.0.0.{index}/24",
        },
        "vlans": [{"id": v, "address": f"12.0.{v}.{index}/24", "mtu": 9000} for v in (10, 20, 30)],
        "qos": [
            {
                "vlan": v,
                "user_priority": up,
                "traffic_class": tc,
                "tsa": "strict",
                "bandwidth_percent": 0,
                **({"rate_limit_mbps": rate} if rate else {}),
            }
            for v, up, tc, rate in ((10, 1, 0, 1000), (20, 3, 1, 5000), (30, 5, 2, None))
        ],
        "irq_affinity": {"policy": "numa-local"},
        "rdma": {"devices": [{"name": "rxe0", "netdev": "bond0.30", "type": "rxe"}]},
    }
    host.update(overrides)
    return host


def netdev(**overrides) -> dict:
    info = {
        "exists": True,
        "operstate": "up",
        "carrier": 1,
        "speed_mbps": 100000,
        "driver": "mlx5_core",
        "pci": "0000:65:00.0",
        "numa_node": 1,
        "node_cpus": "2-3",
        "pcie_gbps": 63.008,
        "irqs": [
            {"irq": 42, "requested": "2", "effective": "2"},
            {"irq": 43, "requested": "3", "effective": "3"},
        ],
    }
    info.update(overrides)
    return info


def healthy_facts() -> dict:
    egress = {
        "bond0.10": dict.fromkeys(range(8), 1),
        "bond0.20": dict.fromkeys(range(8), 3),
        "bond0.30": dict.fromkeys(range(8), 5),
    }
    return {
        "netdevs": {"ens1f0": netdev(), "ens1f1": netdev(pci="0000:65:00.1")},
        "mtus": {"bond0": 9000, "ens1f0": 9000, "ens1f1": 9000}
        | {f"bond0.{v}": 9000 for v in (10, 20, 30)},
        "vlans": {
            name: {"exists": True, "vlan_id": int(name.split(".")[1]), "egress_qos_map": m}
            for name, m in egress.items()
        },
        "bond": {
            "exists": True,
            "mode": "IEEE 802.3ad Dynamic link aggregation",
            "mii_status": "up",
            "active_aggregator": 1,
            "members": {
                "ens1f0": {"mii_status": "up", "aggregator": 1},
                "ens1f1": {"mii_status": "up", "aggregator": 1},
            },
        },
        "rdma": {
            "rxe0": {
                "state": "4: ACTIVE",
                "rate": "100 Gb/sec (4X EDR)",
                "netdev": "bond0.30",
                "software": True,
            }
        },
        "probes": [
            {
                "id": "mtu.path.vlan10.h2",
                "address": "12.0.10.2",
                "interface": "bond0.10",
                "size": 8972,
                "mtu": 9000,
                "skip": "",
                "ok": True,
                "error": "",
            }
        ],
        "nic_local_cpus": "2-3",
    }


def firmware_result(**overrides) -> dict:
    result = {
        "item": host_intent()["nics"][0],
        "psid": "LNV2190110032",
        "flash_version": "12.28.1002",
        "running_version": "12.28.1002",
        "target_in_flash": True,
        "target_running": True,
    }
    result.update(overrides)
    return result


def link_type_result(current="eth", next_boot="eth") -> dict:
    return {
        "item": host_intent()["nics"][0],
        "ports": [
            {"port": 1, "desired": "eth", "current": current, "next_boot": next_boot},
            {"port": 2, "desired": "eth", "current": "eth", "next_boot": "eth"},
        ],
    }


def host_data(facts=None, **overrides) -> dict:
    data = {
        "facts": {"facts": healthy_facts() if facts is None else facts},
        "firmware": [firmware_result()],
        "link_type": [link_type_result()],
        "network": {"changed": False, "actions": []},
        "qos": {
            "plan": {
                "prio_tc": [0, 0, 1, 1, 2, 2, 3, 3],
                "tcs": [{"tc": 0, "rate_limit_mbps": 1000}],
            },
            "ports": {"ens1f0": {"backend": "tc", "differences_before": []}},
        },
    }
    data.update(overrides)
    return data


def by_id(found: list[dict]) -> dict:
    return {c["id"]: c for c in found}


def status_of(found, check_id):
    return by_id(found)[check_id]["status"]


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


# ---------------------------------------------------------------- QoS measurement


def qos_rows(v10=1000.0, v20=5010.0, v30=37800.0):
    return {
        "results": [
            {"vlan": 10, "limit_mbps": 1000, "measured_mbps": v10},
            {"vlan": 20, "limit_mbps": 5000, "measured_mbps": v20},
            {"vlan": 30, "limit_mbps": None, "measured_mbps": v30},
        ]
    }


def test_qos_within_tolerance_passes_and_series_is_reported():
    found, series = qos.qos_checks({"h1": qos_rows()}, 0.1)
    assert {c["status"] for c in found} == {"pass"}
    assert series[0] == {"target": "h1", "vlan": 10, "limit_mbps": 1000, "measured_mbps": 1000.0}


def test_qos_limit_missed_fails_with_ratio():
    found, _ = qos.qos_checks({"h1": qos_rows(v10=1250.0)}, 0.1)
    check = by_id(found)["qos.vlan10.throughput"]
    assert check["status"] == "fail"
    assert check["observed"] == "1250 Mb/s (ratio 1.250)"


def test_qos_unlimited_vlan_must_exceed_every_limit():
    found, _ = qos.qos_checks({"h1": qos_rows(v30=5200.0)}, 0.1)
    check = by_id(found)["qos.vlan30.throughput"]
    assert check["status"] == "fail"
    assert check["expected"] == "> 5500 Mb/s (above every limit)"


def test_qos_scaled_limit_is_explained_and_failure_reported():
    rows = {
        "results": [
            {"vlan": 10, "limit_mbps": 10.0, "configured_limit_mbps": 1000, "measured_mbps": 9.6}
        ]
    }
    found, _ = qos.qos_checks({"h1": rows}, 0.1)
    assert found[0]["status"] == "pass"
    assert "configured 1000 Mb/s" in found[0]["expected"]
    failed, _ = qos.qos_checks({"h1": {"failed": True, "msg": "iperf3: refused"}}, 0.1)
    assert (failed[0]["id"], failed[0]["status"]) == ("qos.measure", "fail")


# ---------------------------------------------------------------- performance

WORKLOADS = {
    "pairs": [{"name": "p", "client": "h1", "server": "h2", "vlan": 30}],
    "thresholds": {
        "link_fraction": 0.9,
        "qos_tolerance": 0.1,
        "rdma_vs_ib_write_bw": 0.5,
        "tcp_vs_iperf3": 0.5,
    },
}


def workload_results(rdma=40e9, reference=50e9, tcp=30e9, iperf=40e9, sums=("c1", "c1", "c1")):
    rows = []
    for transport, bits, checksum in (
        ("tcp", tcp, sums[0]),
        ("rdma", rdma, sums[1]),
        ("shm", 80e9, sums[2]),
    ):
        rows.append(
            {
                "pair": "p",
                "tool": "pingpong",
                "transport": transport,
                "size_bytes": 65536,
                "bits_per_second": bits,
                "checksum": checksum,
            }
        )
    rows.append(
        {
            "pair": "p",
            "tool": "iperf3",
            "transport": "tcp",
            "size_bytes": None,
            "bits_per_second": iperf,
        }
    )
    rows.append(
        {
            "pair": "p",
            "tool": "ib_write_bw",
            "transport": "rdma",
            "size_bytes": 65536,
            "bits_per_second": reference,
        }
    )
    rows.append(
        {
            "pair": "p",
            "tool": "rcat-integrity",
            "transport": "rdma",
            "sent_sha256": "ab",
            "received_sha256": "ab",
        }
    )
    return rows


def hardware_facts(rate="100 Gb/sec (4X EDR)", pcie=63.008):
    facts = healthy_facts()
    facts["rdma"] = {
        "mlx5_0": {"state": "4: ACTIVE", "rate": rate, "netdev": "ens1f0", "software": False}
    }
    for info in facts["netdevs"].values():
        info["pcie_gbps"] = pcie
    return facts


def hardware_hosts():
    hosts = {name: host_intent(i, rdma={"devices": []}) for i, name in ((1, "h1"), (2, "h2"))}
    return hosts


def test_perf_all_pass_and_series_for_the_plot():
    facts = {"h1": hardware_facts(), "h2": hardware_facts()}
    found, series = perf.perf_checks(
        WORKLOADS, hardware_hosts(), workload_results(reference=58e9), facts
    )
    assert {c["id"]: c["status"] for c in found} == {
        "perf.rdma_vs_ib_write_bw.65536": "pass",
        "perf.tcp_vs_iperf3": "pass",
        "perf.link_fraction": "pass",
        "perf.checksum.65536": "pass",
        "perf.rcat.sha256": "pass",
    }
    assert {p["transport"] for p in series} == {"tcp", "rdma", "shm", "ib_write_bw (reference)"}


def test_perf_link_fraction_uses_the_pcie_ceiling():
    # Seed 000: 63.008 Gb/s of PCIe (8 GT/s x8) below a 100 Gb/s port: 90 % = 56.7 Gb/s.
    facts = {"h1": hardware_facts(), "h2": hardware_facts()}
    found, _ = perf.perf_checks(WORKLOADS, hardware_hosts(), workload_results(), facts)
    check = by_id(found)["perf.link_fraction"]
    assert check["status"] == "fail"
    assert "56.707 Gb/s" in check["expected"]
    assert check["observed"].startswith("50.000 Gb/s, ratio 0.794")


def test_perf_link_fraction_skips_on_soft_roce_and_without_facts():
    facts = {"h1": healthy_facts(), "h2": healthy_facts()}
    hosts = {"h1": host_intent(1), "h2": host_intent(2)}
    check = by_id(perf.perf_checks(WORKLOADS, hosts, workload_results(), facts)[0])[
        "perf.link_fraction"
    ]
    assert check["status"] == "skip"
    assert "soft-RoCE" in check["message"]
    check = by_id(perf.perf_checks(WORKLOADS, hosts, workload_results(), {})[0])[
        "perf.link_fraction"
    ]
    assert "not gathered" in check["message"]


def test_perf_relative_thresholds_fail_with_ratio():
    found, _ = perf.perf_checks(
        WORKLOADS, hardware_hosts(), workload_results(rdma=10e9, tcp=5e9), {}
    )
    rdma = by_id(found)["perf.rdma_vs_ib_write_bw.65536"]
    assert rdma["status"] == "fail"
    assert rdma["observed"] == "ratio 0.200 (10.000 Gb/s vs 50.000 Gb/s)"
    assert by_id(found)["perf.tcp_vs_iperf3"]["observed"].startswith("ratio 0.125")


def test_perf_threshold_absent_is_a_skip_with_the_key():
    workloads = copy.deepcopy(WORKLOADS)
    del workloads["thresholds"]["tcp_vs_iperf3"]
    check = by_id(perf.perf_checks(workloads, hardware_hosts(), workload_results(), {})[0])[
        "perf.tcp_vs_iperf3"
    ]
    assert check["status"] == "skip"
    assert "workloads.thresholds.tcp_vs_iperf3" in check["message"]


def test_perf_checksum_mismatch_and_rcat_corruption_fail():
    rows = workload_results(sums=("c1", "c2", "c1"))
    rows[-1]["received_sha256"] = "cd"
    found = by_id(perf.perf_checks(WORKLOADS, hardware_hosts(), rows, {})[0])
    assert found["perf.checksum.65536"]["status"] == "fail"
    assert found["perf.checksum.65536"]["observed"] == "rdma c2, shm c1, tcp c1"
    assert found["perf.rcat.sha256"]["observed"] == "received cd"


def test_perf_no_result_fails_with_the_run_error():
    found, _ = perf.perf_checks(WORKLOADS, hardware_hosts(), [], {}, "ib_write_bw: timeout")
    assert [(c["id"], c["status"], c["message"]) for c in found] == [
        ("perf.results", "fail", "ib_write_bw: timeout")
    ]


def test_perf_missing_reference_fails():
    rows = [r for r in workload_results() if r["tool"] != "iperf3"]
    check = by_id(perf.perf_checks(WORKLOADS, hardware_hosts(), rows, {})[0])["perf.tcp_vs_iperf3"]
    assert (check["status"], check["observed"]) == ("fail", "iperf3: no result")


def test_perf_reference_that_averaged_zero_says_so():
    rows = workload_results()
    for row in rows:
        if row["tool"] == "iperf3":
            row["bits_per_second"] = 0.0
    check = by_id(perf.perf_checks(WORKLOADS, hardware_hosts(), rows, {})[0])["perf.tcp_vs_iperf3"]
    assert (check["status"], check["observed"]) == ("fail", "iperf3: averaged 0 b/s")


def test_perf_failed_run_shows_its_recorded_reason():
    rows = [r for r in workload_results() if r["tool"] != "iperf3"]
    reason = "Run the client: iperf3: unable to connect to server: Connection refused"
    rows.append({"pair": "p", "tool": "iperf3", "transport": "tcp", "error": reason})
    check = by_id(perf.perf_checks(WORKLOADS, hardware_hosts(), rows, {})[0])["perf.tcp_vs_iperf3"]
    assert (check["status"], check["observed"]) == ("fail", f"iperf3: {reason}")


# ---------------------------------------------------------------- helpers and all_checks


@pytest.mark.parametrize(
    ("speed", "width", "gbps"),
    [
        ("8.0 GT/s PCIe", "8", 63.008),
        ("16.0 GT/s PCIe", "16", 252.048),
        ("2.5 GT/s PCIe", "1", 2.0),
        ("Unknown", "8", None),
        ("8.0 GT/s", "", None),
    ],
)
def test_pcie_gbps(speed, width, gbps):
    assert usable_gbps(speed, width) == gbps


@pytest.mark.parametrize(
    ("text", "gbps"),
    [("100 Gb/sec (4X EDR)", 100.0), ("2.5 Gb/sec (1X SDR)", 2.5), ("", None), ("fast", None)],
)
def test_rdma_rate(text, gbps):
    assert perf.rdma_rate_gbps(text) == gbps


def test_all_checks_only_sections_that_ran():
    fabric = {
        "hosts": {"h1": host_intent(1)},
        "structured": {"h1": structured(host_intent(1))},
        "vlans": [],
        "workloads": WORKLOADS,
    }
    only_hosts = checks.all_checks(fabric, {"h1": host_data()}, {}, {}, [], ["hosts"])
    assert only_hosts["checks"]
    assert all(not c["id"].startswith(("perf.", "qos.vlan")) for c in only_hosts["checks"])
    everything = checks.all_checks(
        fabric,
        {"h1": host_data()},
        {},
        {"h1": qos_rows()},
        workload_results(),
        ["hosts", "qos", "perf", "switches"],
    )
    ids = {c["id"] for c in everything["checks"]}
    assert {"perf.tcp_vs_iperf3", "qos.vlan10.throughput", "irq.ens1f0"} <= ids
    assert everything["bandwidth"] and everything["qos"]


# ---------------------------------------------------------------- lossless RoCE
LOSSLESS = {
    "priority": 3,
    "ports": ["ens1f0"],
    "trust": "dscp",
    "pfc": [0, 0, 0, 1, 0, 0, 0, 0],
    "ecn_priorities": [3],
}


def qos_result(trust="dscp", pfc=None, knobs=None):
    """cxfab_host_qos in check mode, as verify runs it: `read` is what the port held,
    `observed` the planned state (check mode predicts it, it reads nothing after)."""
    read = {"prio_tc": [0] * 8, "tcs": {}, "trust": trust, "pfc": pfc or LOSSLESS["pfc"]}
    planned = {"prio_tc": [0] * 8, "tcs": {}, "trust": "dscp", "pfc": LOSSLESS["pfc"]}
    ecn = {"before": knobs if knobs is not None else {"roce_np/3": 1, "roce_rp/3": 1}}
    port = {"read": read, "observed": planned, "ecn": ecn}
    return {"changed": False, "plan": {}, "ports": {"ens1f0": port}}


def lossless_by_id(result, plan=LOSSLESS):
    return {c["id"]: c for c in qos.lossless_checks("h1", {"lossless": plan}, result)}


def test_lossless_host_checks_pass_on_what_was_read():
    found = lossless_by_id(qos_result())
    assert {c["status"] for c in found.values()} == {"pass"}
    assert found["pfc.ens1f0"]["observed"] == "PFC on priorities [3]"
    assert found["ecn.ens1f0"]["observed"] == "roce_np/3 1, roce_rp/3 1"


def test_a_removed_pfc_setting_or_pcp_trust_fails_with_the_value_read():
    found = lossless_by_id(qos_result(trust="pcp", pfc=[0] * 8))
    assert found["trust.ens1f0"]["status"] == "fail"
    assert found["trust.ens1f0"]["observed"] == "trust pcp"
    assert (found["pfc.ens1f0"]["status"], found["pfc.ens1f0"]["observed"]) == (
        "fail",
        "PFC on priorities []",
    )


def test_a_result_without_what_was_read_fails_closed():
    # The lab caught it: the checks judged check mode's planned state and passed a
    # PFC removed by hand. Without a `read` state nothing passes.
    result = qos_result(trust="pcp", pfc=[0] * 8)
    del result["ports"]["ens1f0"]["read"]
    found = lossless_by_id(result)
    assert found["pfc.ens1f0"]["status"] == "fail"
    assert found["pfc.ens1f0"]["observed"] == "not read"
    assert found["trust.ens1f0"]["status"] == "fail"


def test_ecn_off_fails_and_a_missing_knob_warns_by_name():
    off = lossless_by_id(qos_result(knobs={"roce_np/3": 1, "roce_rp/3": 0}))["ecn.ens1f0"]
    assert off["status"] == "fail" and off["message"] == "ECN off: roce_rp/3"
    bare = lossless_by_id(qos_result(knobs={"roce_np/3": None, "roce_rp/3": None}))["ecn.ens1f0"]
    assert bare["status"] == "warn" and "roce_np/3, roce_rp/3" in bare["message"]


def test_lossless_checks_fail_on_an_unreadable_result_and_skip_when_off():
    failed = lossless_by_id({"failed": True, "msg": "mlnx_qos -i ens1f0: no trust state"})
    assert {c["status"] for c in failed.values()} == {"fail"}
    assert set(failed) == {"trust.ens1f0", "pfc.ens1f0", "ecn.ens1f0"}
    off = lossless_by_id(qos_result(), plan=None)
    assert list(off) == ["lossless.host"] and off["lossless.host"]["status"] == "skip"
    assert off["lossless.host"]["message"].startswith("not configured")


# ---------------------------------------------------------------- one NIC reading


def nic_state_reading(**firmware) -> dict:
    nic = host_intent()["nics"][0]
    state = {k: v for k, v in firmware_result(**firmware).items() if k != "item"}
    return {
        "changed": False,
        "nics": [
            {
                "pci": nic["pci"],
                "firmware": state,
                "link_type": {"ports": link_type_result()["ports"]},
            }
        ],
    }


def test_one_nic_state_reading_gives_the_firmware_and_port_checks():
    data = host_data(nic_state=nic_state_reading(running_version="12.23.1020",
                                                 target_running=False))  # fmt: skip
    found = by_id(verify_host.host_checks("h1", structured(host_intent()), data))
    assert found["firmware.cx4.version"]["status"] == "fail"
    assert found["firmware.cx4.version"]["observed"] == "flash 12.28.1002, running 12.23.1020"
    assert found["link_type.cx4.p1"]["status"] == "pass"


def test_a_card_waiting_for_an_activation_is_named_with_its_parameters():
    reading = nic_state_reading()
    pci = reading["nics"][0]["pci"]
    words = "SRIOV_EN (current False(0), next boot True(1))"
    reading["pending_activation"] = {pci: words}
    found = by_id(
        verify_host.host_checks("h1", structured(host_intent()), host_data(nic_state=reading))
    )
    assert found["activation.cx4"]["status"] == "fail"
    assert found["activation.cx4"]["observed"] == words
    assert found["activation.cx4"]["category"] == "firmware"
    reading["pending_activation"] = {}
    found = by_id(
        verify_host.host_checks("h1", structured(host_intent()), host_data(nic_state=reading))
    )
    assert found["activation.cx4"]["status"] == "pass"


def test_a_nic_state_reading_that_failed_fails_every_nic_check_with_its_message():
    failed = {"failed": True, "msg": "cannot query the firmware of 0000:65:00.0: rc 3"}
    found = by_id(
        verify_host.host_checks("h1", structured(host_intent()), host_data(nic_state=failed))
    )
    assert found["firmware.cx4.version"]["observed"] == "unreadable"
    assert "rc 3" in found["firmware.cx4.version"]["message"]
    assert found["link_type.cx4.p1"]["status"] == "fail"
    missing = nic.nic_state_results(structured(host_intent()), {"changed": False, "nics": []})
    assert all(r["failed"] for r in missing[0] + missing[1])


# ---------------------------------------------------------------- cabling (LLDP)


def _cabled():
    host = host_intent()
    for port, switch in zip(host["nics"][0]["ports"], ("sw-a", "sw-b"), strict=True):
        port.update(peer=switch, peer_port="1/3")
    return structured(host)


def _neighbours(first, second):
    return {"lldp": {"neighbours": {"ens1f0": [first], "ens1f1": [second]}}}


def test_each_cabled_port_reaches_its_switch_port():
    facts = _neighbours(
        {"sysname": "sw-a.example.net", "port_id": "Eth1/3"},
        {"sysname": "sw-b", "port_id": "ethernet 1/3"},
    )
    found = by_id(verify_host.cabling_checks("h1", _cabled(), facts))
    assert found["link.ens1f0.neighbour"]["status"] == "pass"
    assert found["link.ens1f1.neighbour"]["status"] == "pass"
    assert found["link.ens1f0.neighbour"]["category"] == "link/cable"


def test_a_cumulus_switch_port_name_is_its_intent_port():
    facts = _neighbours(
        {"sysname": "sw-a", "port_id": "swp3"}, {"sysname": "sw-b", "port_id": "swp4"}
    )
    found = by_id(verify_host.cabling_checks("h1", _cabled(), facts))
    assert found["link.ens1f0.neighbour"]["status"] == "pass"  # swp3 is 1/3
    assert found["link.ens1f1.neighbour"]["status"] == "fail"  # swp4 is not


def test_swapped_cables_fail_naming_both_ends():
    facts = _neighbours(
        {"sysname": "sw-b", "port_id": "Eth1/3"}, {"sysname": "sw-a", "port_id": "Eth1/3"}
    )
    found = by_id(verify_host.cabling_checks("h1", _cabled(), facts))
    check = found["link.ens1f0.neighbour"]
    assert check["status"] == "fail" and check["observed"] == "sw-b Eth1/3"
    assert check["message"] == "h1 ens1f0 reaches sw-b Eth1/3; the intent cables it to sw-a Eth1/3"
    wrong_port = _neighbours(
        {"sysname": "sw-a", "port_id": "Eth1/4"}, {"sysname": "sw-b", "port_id": "Eth1/3"}
    )
    assert (
        status_of(verify_host.cabling_checks("h1", _cabled(), wrong_port), "link.ens1f0.neighbour")
        == "fail"
    )


def test_no_neighbour_or_no_reading_fails():
    silent = {"lldp": {"neighbours": {"ens1f0": [], "ens1f1": []}}}
    found = by_id(verify_host.cabling_checks("h1", _cabled(), silent))
    assert found["link.ens1f1.neighbour"]["observed"] == "no neighbour"
    broken = by_id(
        verify_host.cabling_checks("h1", _cabled(), {"lldp": {"error": "lldpcli not found"}})
    )
    assert broken["link.ens1f0.neighbour"]["status"] == "fail"
    assert broken["link.ens1f0.neighbour"]["message"] == "lldpcli not found"
    unread = verify_host.cabling_checks("h1", _cabled(), {})
    assert [c["status"] for c in unread] == ["fail", "fail"]


def test_a_port_the_intent_does_not_cable_has_no_cabling_check():
    assert verify_host.cabling_checks("h1", structured(host_intent()), {}) == []
