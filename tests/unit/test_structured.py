"""Structured config of every device: golden files, and what hosts derive from the fabric."""

import os

import pytest
from cxfab.structured import build_all, hosts, public_fabric
from cxfab.structured.files import dump, write_structured
from cxfab.structured.switch import gateways_of
from onyx_helpers import GOLDEN, REPO, example_fabric, inventory_fabric

INVENTORIES = ["example", "lab"]


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_structured_configs_match_the_golden_files(inventory):
    """Set CXFAB_UPDATE_GOLDEN=1 to rewrite them after an intended change (review the diff)."""
    devices = build_all(inventory_fabric(REPO / "inventories" / inventory))
    directory = GOLDEN / inventory / "structured"
    if os.environ.get("CXFAB_UPDATE_GOLDEN"):
        write_structured(str(directory), devices)
    assert sorted(p.stem for p in directory.glob("*.yml")) == sorted(devices)
    for name, structured in devices.items():
        golden = directory / f"{name}.yml"
        assert dump(structured) == golden.read_text(), f"{golden} drifted from the derivation"


def test_every_switch_and_host_gets_one_and_no_credentials():
    fabric = example_fabric()
    devices = build_all(fabric)
    assert sorted(devices) == ["apricot", "cardamine", "sw-a", "sw-b"]
    password = fabric["switch_pairs"][0]["credentials"]["password"]
    assert password and all(password not in dump(sc) for sc in devices.values())
    assert public_fabric(fabric)["switch_pairs"][0]["credentials"] == {}


def test_host_bond_vlans_and_egress_maps_come_from_the_fabric():
    sc = hosts.build(example_fabric(), "cardamine")
    bond = sc["network"]["bond"]
    assert (bond["name"], bond["members"]) == ("bond0", ["enp23s0f0", "enp23s0f1"])
    assert (bond["mode"], bond["lacp_rate"], bond["mtu"]) == ("802.3ad", "fast", 9000)
    assert sc["network"]["members"] == [
        {"name": "enp23s0f0", "mtu": 9000},
        {"name": "enp23s0f1", "mtu": 9000},
    ]
    vlans = {v["id"]: v for v in sc["network"]["vlans"]}
    assert [v["name"] for v in sc["network"]["vlans"]] == ["bond0.10", "bond0.20", "bond0.30"]
    # Seed 001: every socket priority of a VLAN goes to that VLAN's PCP.
    assert vlans[10]["egress_qos_map"] == dict.fromkeys(range(8), 1)
    assert vlans[30]["egress_qos_map"] == dict.fromkeys(range(8), 5)


def test_qos_plan_has_the_seed_mlnx_qos_layout():
    qos = hosts.build(example_fabric(), "cardamine")["qos"]
    assert qos["ports"] == ["enp23s0f0", "enp23s0f1"]
    assert qos["prio_tc"] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [t["rate_limit_mbps"] for t in qos["tcs"][:3]] == [1000, 5000, None]


def test_active_backup_bond_drops_lacp_rate_and_hash_policy():
    fabric = example_fabric()
    fabric["hosts"]["cardamine"]["bond"].update(mode="active-backup", xmit_hash_policy="layer3+4")
    sc = hosts.build(fabric, "cardamine")
    bond = sc["network"]["bond"]
    assert (bond["lacp_rate"], bond["xmit_hash_policy"]) == ("slow", "layer2")
    netdev = sc["networkd"]["60-cxfab-bond0.netdev"]
    assert "Mode=active-backup" in netdev and "LACPTransmitRate" not in netdev


def test_networkd_files_rebuild_the_network_at_boot():
    files = hosts.build(example_fabric(), "cardamine")["networkd"]
    assert sorted(files) == sorted(
        f"60-cxfab-{name}"
        for name in (
            "bond0.netdev", "bond0.network", "enp23s0f0.network", "enp23s0f1.network",
            "bond0.10.netdev", "bond0.10.network", "bond0.20.netdev", "bond0.20.network",
            "bond0.30.netdev", "bond0.30.network", "ibp59s0.network",
        )
    )  # fmt: skip
    assert "EgressQOSMaps=0-3 1-3 2-3 3-3 4-3 5-3 6-3 7-3" in files["60-cxfab-bond0.20.netdev"]
    assert "Bond=bond0" in files["60-cxfab-enp23s0f0.network"]
    assert "VLAN=bond0.10" in files["60-cxfab-bond0.network"]
    assert "Address=12.0.20.23/24" in files["60-cxfab-bond0.20.network"]


def test_ipoib_interfaces_come_from_the_ib_ports():
    fabric = example_fabric()
    datagram = hosts.build(fabric, "cardamine")
    assert datagram["ipoib"] == [
        {
            "name": "ibp59s0", "nic": "cx5ib", "pci": "0000:3b:00.0", "port": 1,
            "mode": "datagram", "mtu": 2044, "addresses": ["12.0.100.23/24"],
        }
    ]  # fmt: skip
    text = datagram["networkd"]["60-cxfab-ibp59s0.network"]
    assert "[IPoIB]\nMode=datagram\n" in text and "MTUBytes=2044" in text
    assert "Address=12.0.100.23/24" in text
    connected = hosts.build(fabric, "apricot")
    assert (connected["ipoib"][0]["mode"], connected["ipoib"][0]["mtu"]) == ("connected", 65520)
    assert "Mode=connected" in connected["networkd"]["60-cxfab-ibp59s0.network"]
    # An Ethernet port never gets an IPoIB interface, and the ib ports stay out of
    # the bond, the QoS ports and the IRQ interfaces.
    assert "ibp59s0" not in connected["irq"]["interfaces"] + connected["qos"]["ports"]


def test_ipoib_mtu_defaults_to_the_largest_of_the_mode():
    from cxfab.intent import fabric as fabric_module

    document = example_fabric()
    port = document["hosts"]["cardamine"]["nics"][1]["ports"][0]
    for mode, ib_mtu, expected in (("datagram", 2048, 2044), ("datagram", 4096, 4092),
                                   ("connected", 2048, 65520)):  # fmt: skip
        port["ipoib"] = {"mode": mode, "ib_mtu": ib_mtu}
        assert (
            fabric_module.normalise(document)["hosts"]["cardamine"]["nics"][1]["ports"][0]["ipoib"][
                "mtu"
            ]
            == expected
        )


def test_irq_and_rdma_sections():
    sc = hosts.build(example_fabric(), "cardamine")
    assert sc["irq"] == {
        "interfaces": ["enp23s0f0", "enp23s0f1"],
        "policy": "numa-local",
        "cpus": "",
    }
    fabric = example_fabric()
    fabric["hosts"]["cardamine"]["irq_affinity"] = {"policy": "off"}
    assert hosts.build(fabric, "cardamine")["irq"] is None


def test_qos_measurement_targets_the_pair_server_per_vlan():
    fabric = inventory_fabric(REPO / "inventories" / "lab")
    measure = hosts.build(fabric, "lab-host1")["qos_measure"]
    assert measure["peer"] == "lab-host2"
    assert [(t["vlan"], t["address"], t["port"], t["limit_mbps"]) for t in measure["targets"]] == [
        (10, "12.0.10.12", 5301, 1000),
        (20, "12.0.20.12", 5302, 5000),
        (30, "12.0.30.12", 5303, None),
    ]
    assert hosts.build(fabric, "lab-host2")["qos_measure"] is None


def test_write_structured_rewrites_only_what_changed_and_removes_gone_devices(tmp_path):
    devices = {"a": {"x": 1}, "b": {"x": 2}}
    assert write_structured(str(tmp_path), devices) == (["a", "b"], [])
    assert write_structured(str(tmp_path), devices) == ([], [])
    assert write_structured(str(tmp_path), {"a": {"x": 3}}) == (["a"], ["b"])
    assert sorted(p.name for p in tmp_path.glob("*.yml")) == ["a.yml"]


def test_an_unchanged_device_is_not_dumped_again_but_a_touched_file_is(tmp_path, monkeypatch):
    from cxfab.structured import files

    devices = {"a": {"x": 1}, "b": {"x": [1, 2]}}
    write_structured(str(tmp_path), devices)
    dumped = []
    real_dump = files.dump
    monkeypatch.setattr(files, "dump", lambda sc: dumped.append(sc) or real_dump(sc))
    assert write_structured(str(tmp_path), devices) == ([], []) and dumped == []
    # A file edited by hand (its size changed) is written again from the data.
    (tmp_path / "b.yml").write_text("---\nx: edited by hand\n")
    assert write_structured(str(tmp_path), devices) == (["b"], [])
    assert (tmp_path / "b.yml").read_text() == real_dump({"x": [1, 2]})
    # Changed data is dumped whatever the index says.
    assert write_structured(str(tmp_path), {**devices, "a": {"x": 2}}) == (["a"], [])


def test_lossless_host_section_enables_pfc_and_ecn_on_the_roce_priority_only():
    sc = hosts.build(example_fabric(), "cardamine")
    lossless = sc["lossless"]
    assert lossless["ports"] == ["enp23s0f0", "enp23s0f1"]
    assert (lossless["trust"], lossless["priority"]) == ("dscp", 3)
    assert lossless["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert lossless["ecn_priorities"] == [3]
    # The egress map of the RoCE VLAN writes the PFC priority (rule roce-egress-on-pfc-priority).
    vlan20 = next(v for v in sc["network"]["vlans"] if v["id"] == 20)
    assert set(vlan20["egress_qos_map"].values()) == {3}
    assert lossless["roce"] == {"vlans": [20], "dscp": 26, "tos": 104, "gid_type": "RoCE v2"}


def test_lossless_is_absent_when_off_or_when_the_host_carries_no_roce_vlan():
    assert hosts.build(example_fabric(lossless=False), "cardamine")["lossless"] is None
    fabric = example_fabric()
    fabric["hosts"]["cardamine"]["vlans"] = [
        v for v in fabric["hosts"]["cardamine"]["vlans"] if v["id"] != 20
    ]
    assert hosts.build(fabric, "cardamine")["lossless"] is None
    assert hosts.build(fabric, "apricot")["lossless"] is not None


def test_switch_lossless_covers_the_ports_of_mpos_carrying_roce_and_global_pfc():
    fabric = example_fabric()
    fabric["switch_pairs"][0]["mpos"][1]["allowed_vlans"] = [10, 30]
    sc = build_all(fabric)["sw-a"]
    assert sc["lossless"]["ports"] == ["1/1"]  # MPO 2 (port 1/2) no longer carries VLAN 20
    assert sc["lossless"]["ecn"] == {"traffic_class": 3, "min_kb": 150, "max_kb": 1500}
    assert sc["protocols"]["pfc"] is True
    assert sc["scope"]["lossless_ports"] == ["1/1", "1/2", "1/35", "1/36"]
    assert build_all(example_fabric(lossless=False))["sw-a"]["lossless"] is None


def test_many_devices_are_dumped_in_parallel_with_the_same_text(tmp_path, monkeypatch):
    from cxfab.structured import files

    devices = {f"h{i}": {"n": i, "files": {"a.network": "[Match]\nName=x\n"}} for i in range(9)}
    monkeypatch.setattr(files, "PARALLEL_FROM", 4)
    monkeypatch.setattr(files.os, "cpu_count", lambda: 2)
    written, _ = write_structured(str(tmp_path / "par"), devices)
    assert written == sorted(devices, key=lambda n: int(n[1:]))
    for name, structured in devices.items():
        assert (tmp_path / "par" / f"{name}.yml").read_text() == dump(structured)


def test_gateways_of_gives_neutral_rows_for_anycast_and_vrrp():
    sc = build_all(example_fabric())["sw-a"]
    assert sc["platform"] == "onyx"
    rows = gateways_of({**sc, "vrrp": [{"vlan": 40, "vrid": 7, "virtual_ip": "12.0.40.1"}]})
    assert rows[0] == {
        "vlan": 1,
        "mode": "anycast",
        "virtual_ip": sc["anycast_gateways"][0]["virtual_ip"],
        "virtual_mac": sc["anycast_gateways"][0]["virtual_mac"].upper(),
    }
    assert rows[-1] == {
        "vlan": 40,
        "mode": "vrrp",
        "virtual_ip": "12.0.40.1",
        "virtual_mac": "00:00:5E:00:01:07",
    }
    assert gateways_of({}) == []


def test_nic_profiles_merge_into_nv_config_with_the_runtime_they_imply():
    fabric = example_fabric()
    nic = fabric["hosts"]["cardamine"]["nics"][0]
    nic["profiles"] = {"sriov": {"num_vfs": 4}, "roce": {"cnp_dscp": 48, "cnp_priority": 6}}
    nic["nv_config"] = {"NUM_OF_VFS": "4", "CQE_COMPRESSION": "AGGRESSIVE"}
    fabric["roce"]["lossless"] = False  # no PFC priority: DCQCN on all eight (mask 255)
    got = hosts.build(fabric, "cardamine")["nics"][0]
    assert got["nv_config"] == {
        "SRIOV_EN": "True",
        "NUM_OF_VFS": "4",
        "ROCE_CC_PRIO_MASK_P1": "255",
        "CNP_DSCP_P1": "48",
        "CNP_802P_PRIO_P1": "6",
        "ROCE_CC_PRIO_MASK_P2": "255",
        "CNP_DSCP_P2": "48",
        "CNP_802P_PRIO_P2": "6",
        "CQE_COMPRESSION": "AGGRESSIVE",
    }
    assert got["runtime"] == {
        "sriov_numvfs": {"enp23s0f0": 4, "enp23s0f1": 4},
        "trust": "dscp",
        "dcqcn": {"netdevs": ["enp23s0f0", "enp23s0f1"], "priorities": list(range(8))},
    }
    # The adapter without profiles stays as the inventory gives it.
    assert "runtime" not in hosts.build(fabric, "cardamine")["nics"][1]
