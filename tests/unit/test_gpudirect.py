"""GPUDirect readiness on emulated sysfs topologies: the reading (host/mlnx/gpudirect.py
through host/facts.py) and the checks (verify/gpudirect.py), each failure with what
was read."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from cxfab.host import facts as host_facts
from cxfab.host.mlnx import gpudirect
from cxfab.structured import hosts
from cxfab.verify.gpudirect import gpudirect_checks
from onyx_helpers import example_fabric

NIC, GPU = "0000:17:00.0", "0000:18:00.0"  # apricot's cx4 and gpu0 (example inventory)


def config_space(acs: int | None = None, ats: bool | None = None, size: int = 4096) -> bytes:
    """A function's config space with an ACS and/or ATS extended capability at 0x100."""
    data = bytearray(4096)
    caps = [(gpudirect.ACS_CAP_ID, acs)] if acs is not None else []
    caps += [(gpudirect.ATS_CAP_ID, gpudirect.ATS_ENABLE if ats else 0)] if ats is not None else []
    for index, (cap_id, control) in enumerate(caps):
        offset = 0x100 + 0x40 * index
        following = offset + 0x40 if index + 1 < len(caps) else 0
        struct.pack_into("<IHH", data, offset, cap_id | (1 << 16) | (following << 20), 0, control)
    return bytes(data[:size])


def device(root: Path, parts: list[str], config: bytes | None = None) -> None:
    """/sys/devices/<parts...> and its /sys/bus/pci/devices/<bdf> link, as the kernel has."""
    path = root.joinpath("sys", "devices", *parts)
    path.mkdir(parents=True, exist_ok=True)
    (path / "config").write_bytes(config if config is not None else config_space())
    link = root / "sys" / "bus" / "pci" / "devices" / parts[-1]
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(path, link.parent))


def switch_tree(root: Path, gpu_port_acs: int = 0, nic_ats: bool = False) -> None:
    """Root port 00:01.0 > switch 01:00.0 > ports 02:08.0 (adapter) and 02:10.0 (GPU)."""
    up = ["pci0000:00", "0000:00:01.0", "0000:01:00.0"]
    device(root, up[:2])
    device(root, up)
    device(root, [*up, "0000:02:08.0"], config_space(acs=0))
    device(root, [*up, "0000:02:08.0", NIC], config_space(ats=nic_ats))
    device(root, [*up, "0000:02:10.0"], config_space(acs=gpu_port_acs))
    device(root, [*up, "0000:02:10.0", GPU])


def peer_memory(root: Path, name: str = "nvidia_peermem") -> None:
    (root / "sys" / "module" / name).mkdir(parents=True)


def checks(root: Path) -> dict[str, dict]:
    sc = hosts.build(example_fabric(), "apricot")
    host = host_facts.Host(str(root), sc)
    facts = host_facts.gather(host, readings=(("gpudirect", host_facts.read_gpudirect),))
    return {c["id"]: c for c in gpudirect_checks("apricot", sc, facts)}


def test_gpu_and_adapter_under_one_switch_pass(tmp_path):
    switch_tree(tmp_path)
    peer_memory(tmp_path)
    found = checks(tmp_path)
    assert sorted(found) == [
        "gpudirect.gpu0.acs", "gpudirect.gpu0.ats", "gpudirect.gpu0.topology",
        "gpudirect.peer_memory",
    ]  # fmt: skip
    assert {c["status"] for c in found.values()} == {"pass"}, found
    assert found["gpudirect.gpu0.topology"]["observed"].startswith("both under 0000:01:00.0")
    assert found["gpudirect.peer_memory"]["observed"] == "nvidia_peermem loaded"
    assert found["gpudirect.gpu0.acs"]["category"] == "PCIe"


def test_gpu_and_adapter_across_root_ports_fail_with_both_paths(tmp_path):
    device(tmp_path, ["pci0000:00", "0000:00:01.0"], config_space(acs=0))
    device(tmp_path, ["pci0000:00", "0000:00:01.0", NIC], config_space(ats=False))
    device(tmp_path, ["pci0000:00", "0000:00:03.0"], config_space(acs=0))
    device(tmp_path, ["pci0000:00", "0000:00:03.0", GPU])
    peer_memory(tmp_path, "ib_peer_mem")
    topology = checks(tmp_path)["gpudirect.gpu0.topology"]
    assert topology["status"] == "fail"
    assert topology["observed"] == (
        "only the host bridge pci0000:00 is shared (adapter pci0000:00 > 0000:00:01.0 > "
        f"{NIC}; GPU pci0000:00 > 0000:00:03.0 > {GPU})"
    )
    assert "PHB" in topology["message"]


def test_across_sockets_is_named_as_such(tmp_path):
    device(tmp_path, ["pci0000:00", "0000:00:01.0"])
    device(tmp_path, ["pci0000:00", "0000:00:01.0", NIC])
    device(tmp_path, ["pci0000:80", "0000:80:01.0"])
    device(tmp_path, ["pci0000:80", "0000:80:01.0", GPU])
    topology = checks(tmp_path)["gpudirect.gpu0.topology"]
    assert topology["status"] == "fail"
    assert topology["observed"].startswith("different host bridges (adapter pci0000:00")


def test_acs_redirection_on_a_switch_port_fails_naming_the_port_and_bits(tmp_path):
    switch_tree(tmp_path, gpu_port_acs=0x001D)
    peer_memory(tmp_path)
    acs = checks(tmp_path)["gpudirect.gpu0.acs"]
    assert acs["status"] == "fail"
    assert acs["observed"] == "0000:02:10.0 ACSCtl SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+"


def test_no_peer_memory_module_fails_naming_the_modules_looked_for(tmp_path):
    switch_tree(tmp_path)
    found = checks(tmp_path)
    assert found["gpudirect.peer_memory"]["status"] == "fail"
    assert found["gpudirect.peer_memory"]["observed"] == (
        "none of nvidia_peermem, ib_peer_mem in /sys/module"
    )
    assert found["gpudirect.gpu0.topology"]["status"] == "pass"


def test_ats_enabled_against_the_profile_fails(tmp_path):
    switch_tree(tmp_path, nic_ats=True)
    peer_memory(tmp_path)
    ats = checks(tmp_path)["gpudirect.gpu0.ats"]
    assert (ats["status"], ats["observed"]) == ("fail", "ATS enabled")


def test_a_config_space_read_without_root_fails_closed(tmp_path):
    switch_tree(tmp_path)
    peer_memory(tmp_path)
    short = tmp_path / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/config"
    short.write_bytes(config_space(acs=0x1D, size=64))  # what a non-root read returns
    acs = checks(tmp_path)["gpudirect.gpu0.acs"]
    assert (acs["status"], acs["observed"]) == ("fail", "unreadable")
    assert "64 bytes, the extended configuration space (4096) is not readable" in acs["message"]


def test_a_missing_gpu_fails_the_topology_with_its_path(tmp_path):
    switch_tree(tmp_path)
    (tmp_path / "sys/bus/pci/devices" / GPU).unlink()
    topology = checks(tmp_path)["gpudirect.gpu0.topology"]
    assert topology["observed"] == "unreadable"
    assert f"sys/bus/pci/devices/{GPU}: no such PCI device" in topology["message"]


@pytest.mark.parametrize("header", [0, 0xFFFFFFFF])
def test_an_empty_or_absent_capability_list_has_no_capability(header):
    data = bytearray(4096)
    struct.pack_into("<I", data, 0x100, header)
    assert gpudirect.extended_caps(bytes(data)) == {}


def test_a_capability_list_that_loops_ends():
    data = bytearray(4096)
    struct.pack_into("<I", data, 0x100, gpudirect.ACS_CAP_ID | (0x100 << 20))
    assert gpudirect.extended_caps(bytes(data)) == {gpudirect.ACS_CAP_ID: 0x100}


def test_a_host_without_gpus_reads_and_checks_nothing(tmp_path):
    sc = hosts.build(example_fabric(), "cardamine")
    host = host_facts.Host(str(tmp_path), sc)
    assert host_facts.read_gpudirect(host, {}) is None
    assert gpudirect_checks("cardamine", sc, {}) == []
