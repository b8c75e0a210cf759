"""verify's read-back of the sriov profile's VFs (host facts `sriov`, check sriov.<if>.vfs)."""

from __future__ import annotations

from cxfab.host import facts as host_facts
from cxfab.structured import hosts
from cxfab.verify.nic import sriov_checks
from onyx_helpers import example_fabric


def _checks(root, numvfs: dict[str, str]) -> dict[str, dict]:
    sc = hosts.build(example_fabric(), "apricot")  # cx4: sriov num_vfs 8 on both ports
    for netdev, text in numvfs.items():
        device = root / "sys/class/net" / netdev / "device"
        device.mkdir(parents=True)
        (device / "sriov_numvfs").write_text(text)
        (device / "sriov_totalvfs").write_text("8\n")
    host = host_facts.Host(str(root), sc)
    facts = host_facts.gather(host, readings=(("sriov", host_facts.read_sriov),))
    return {c["id"]: c for c in sriov_checks("apricot", sc, facts)}


def test_the_profiles_vfs_present_pass_and_missing_ones_fail_with_the_count(tmp_path):
    found = _checks(tmp_path, {"enp23s0f0": "8\n", "enp23s0f1": "0\n"})
    assert found["sriov.enp23s0f0.vfs"]["status"] == "pass"
    short = found["sriov.enp23s0f1.vfs"]
    assert (short["status"], short["observed"]) == ("fail", "0 VFs (of 8)")
    assert short["expected"] == "8 VFs (sriov_numvfs)"


def test_a_function_without_sriov_files_fails_closed(tmp_path):
    found = _checks(tmp_path, {"enp23s0f0": "8\n"})
    missing = found["sriov.enp23s0f1.vfs"]
    assert (missing["status"], missing["observed"]) == ("fail", "unreadable")
    assert "sriov_numvfs: unreadable (None)" in missing["message"]


def test_a_host_without_the_profile_reads_nothing(tmp_path):
    sc = hosts.build(example_fabric(), "cardamine")
    assert host_facts.read_sriov(host_facts.Host(str(tmp_path), sc), {}) is None
    assert sriov_checks("cardamine", sc, {}) == []
