"""IPoIB interfaces: found from the adapter port through sysfs, planned, applied, read back.

The trees below copy the layout of a real /sys (Linux 6.1, ib_ipoib + mlx5_ib / mlx4_ib):
`class/infiniband/<dev>` and `class/net/<if>` are links into the PCI device's
directory, whose `infiniband/<dev>/device` points back at the PCI function and whose
`net/<if>` holds the IPoIB interface's `type` (32), `dev_port`, `mode` and `mtu`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cxfab.host.net import IntentError, ipoib


def _link(path: Path, target: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(os.path.relpath(target, path.parent))


def add_function(root: Path, function: str, device: str, ports: dict[int, str], **files) -> Path:
    """One PCI function with RDMA device `device` and, per IB port, its IPoIB netdev."""
    pci = root / "sys" / "devices" / "pci0000:3a" / "0000:3a:00.0" / function
    pci.mkdir(parents=True)
    _link(root / "sys" / "bus" / "pci" / "devices" / function, pci)
    rdma = pci / "infiniband" / device
    _link(rdma / "device", pci)
    _link(root / "sys" / "class" / "infiniband" / device, rdma)
    for ib_port, netdev in ports.items():
        port_dir = rdma / "ports" / str(ib_port)
        port_dir.mkdir(parents=True)
        (port_dir / "link_layer").write_text(files.get("link_layer", "InfiniBand") + "\n")
        if not netdev:
            continue
        net = pci / "net" / netdev
        net.mkdir(parents=True)
        (net / "type").write_text("32\n")
        (net / "dev_port").write_text(f"{ib_port - 1}\n")
        (net / "mode").write_text(files.get("mode", "datagram") + "\n")
        (net / "mtu").write_text(f"{files.get('mtu', 2044)}\n")
        _link(root / "sys" / "class" / "net" / netdev, net)
    return pci


def intent(name="ibp59s0", mode="connected", mtu=65520, port=1, pci="0000:3b:00.0"):
    return {
        "name": name, "nic": "cx5ib", "pci": pci, "port": port,
        "mode": mode, "mtu": mtu, "addresses": [],
    }  # fmt: skip


NICS = [{"name": "cx5ib", "pci": "0000:3b:00.0", "ports": [{"port": 1}, {"port": 2}]}]


def test_mlx5_port_two_is_port_one_of_the_next_function(tmp_path):
    add_function(tmp_path, "0000:3b:00.0", "mlx5_0", {1: "ibp59s0"})
    add_function(tmp_path, "0000:3b:00.1", "mlx5_1", {1: "ibp59s0f1"})
    found = ipoib.find_interface(str(tmp_path), "0000:3b:00.0", 2)
    assert found == {
        "name": "ibp59s0f1", "device": "mlx5_1", "ib_port": 1, "link_layer": "InfiniBand",
    }  # fmt: skip
    assert ipoib.find_interface(str(tmp_path), "0000:3b:00.0", 1)["name"] == "ibp59s0"


def test_mlx4_ports_share_one_function_and_dev_port_tells_them_apart(tmp_path):
    pci = add_function(tmp_path, "0000:3b:00.0", "mlx4_0", {1: "ibp59s0", 2: "ibp59s0d1"})
    # A P_Key child of port 1 (same dev_port, a `parent` file) is never the port's own.
    child = pci / "net" / "ibp59s0.8001"
    child.mkdir()
    (child / "type").write_text("32\n")
    (child / "dev_port").write_text("0\n")
    (child / "parent").write_text("ibp59s0\n")
    root = str(tmp_path)
    assert ipoib.find_interface(root, "0000:3b:00.0", 1)["name"] == "ibp59s0"
    found = ipoib.find_interface(root, "0000:3b:00.0", 2)
    assert (found["name"], found["device"], found["ib_port"]) == ("ibp59s0d1", "mlx4_0", 2)


def test_an_ethernet_port_or_a_missing_driver_fails_closed(tmp_path):
    add_function(tmp_path, "0000:3b:00.0", "mlx5_0", {1: ""}, link_layer="Ethernet")
    with pytest.raises(ipoib.IpoibError, match="link layer Ethernet, not InfiniBand"):
        ipoib.find_interface(str(tmp_path), "0000:3b:00.0", 1)
    with pytest.raises(ipoib.IpoibError, match="no RDMA device serves port 1 of the adapter at"):
        ipoib.find_interface(str(tmp_path), "0000:5e:00.0", 1)
    other = tmp_path / "other"
    add_function(other, "0000:3b:00.0", "mlx5_0", {1: ""})
    with pytest.raises(ipoib.IpoibError, match="is the ib_ipoib module loaded"):
        ipoib.find_interface(str(other), "0000:3b:00.0", 1)


def test_a_name_other_than_the_intent_names_the_inventory_key(tmp_path):
    add_function(tmp_path, "0000:3b:00.0", "mlx5_0", {1: "ib0"})
    with pytest.raises(IntentError) as raised:
        ipoib.resolve(str(tmp_path), [intent()], NICS)
    assert raised.value.path == "cxfab_host.nics[0].ports[0].netdev"
    assert "is IPoIB interface ib0 (mlx5_0 port 1), not ibp59s0" in str(raised.value)


def test_unreadable_mode_fails_closed(tmp_path):
    add_function(tmp_path, "0000:3b:00.0", "mlx5_0", {1: "ibp59s0"}, mode="")
    with pytest.raises(IntentError, match="cannot read the IPoIB mode"):
        ipoib.resolve(str(tmp_path), [intent()], NICS)


def test_plan_sets_mode_before_mtu_and_nothing_when_equal():
    have = {"ibp59s0": {"mode": "datagram", "mtu": 2044}}
    actions = ipoib.plan([intent()], have)
    assert actions == [
        ("set_ipoib_mode", "ibp59s0", {"mode": "connected"}),
        ("set_ipoib_mtu", "ibp59s0", {"mtu": 65520}),
    ]
    assert ipoib.simulate(have, actions) == {"ibp59s0": {"mode": "connected", "mtu": 65520}}
    assert ipoib.plan([intent(mode="datagram", mtu=2044)], have) == []
    assert ipoib.plan([intent(mode="datagram", mtu=1500)], have) == [
        ("set_ipoib_mtu", "ibp59s0", {"mtu": 1500})
    ]


def test_apply_writes_sysfs_and_a_second_plan_is_empty(tmp_path):
    add_function(tmp_path, "0000:3b:00.0", "mlx5_0", {1: "ibp59s0"})
    root = str(tmp_path)
    state = ipoib.resolve(root, [intent()], NICS)["ibp59s0"]["state"]
    actions = ipoib.plan([intent()], {"ibp59s0": state})
    ipoib.apply(root, actions)
    net = tmp_path / "sys" / "class" / "net" / "ibp59s0"
    assert (net / "mode").read_text() == "connected\n"
    assert (net / "mtu").read_text() == "65520\n"
    assert ipoib.verify(root, [intent()]) == {"ibp59s0": {"mode": "connected", "mtu": 65520}}
    again = ipoib.resolve(root, [intent()], NICS)["ibp59s0"]["state"]
    assert ipoib.plan([intent()], {"ibp59s0": again}) == []


def test_read_back_that_differs_fails(tmp_path):
    add_function(tmp_path, "0000:3b:00.0", "mlx5_0", {1: "ibp59s0"})
    with pytest.raises(ipoib.IpoibError, match="ibp59s0 is datagram MTU 2044, intended connected"):
        ipoib.verify(str(tmp_path), [intent()])


def test_a_refused_connected_mode_says_why(tmp_path, monkeypatch):
    def refuse(path, value):
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(ipoib, "_write", refuse)
    with pytest.raises(ipoib.IpoibError, match="enhanced IPoIB, which is datagram only"):
        ipoib.apply(str(tmp_path), [("set_ipoib_mode", "ibp59s0", {"mode": "connected"})])


def test_ipoib_addresses_and_up_state_are_planned_with_the_other_links():
    from cxfab.host.net import linkplan

    wanted = {**intent(), "addresses": ["12.0.100.25/24"], "path": "cxfab_host.nics[1]"}
    network = {"bond": None, "members": [], "vlans": [], "ipoib": [wanted]}
    links = {"ibp59s0": {"kind": None, "mtu": 65520, "up": False, "addresses": ["10.9.9.9/24"]}}
    assert linkplan.plan(network, links) == [
        ("add_address", "ibp59s0", {"address": "12.0.100.25/24"}),
        ("del_address", "ibp59s0", {"address": "10.9.9.9/24"}),
        ("set_up", "ibp59s0", {}),
    ]
    done = {"ibp59s0": {**links["ibp59s0"], "up": True, "addresses": ["12.0.100.25/24"]}}
    assert linkplan.plan(network, done) == []
    # The management interface is never an IPoIB interface cxfab changes.
    with pytest.raises(IntentError) as raised:
        linkplan.check_protected(network, done, {"ibp59s0": "is the management interface"})
    assert raised.value.path == "cxfab_host.nics[1]"
