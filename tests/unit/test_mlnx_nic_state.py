"""One read per host names the NICs the serial rollout can skip."""

import pytest
from cxfab.host.mlnx.nic_state import NicStateError, read_nics
from test_mlnx_activation import CX4, TOOLS, FakeCards


def nic(version="12.28.1002", psid="LNV2190110032", link_types=("eth", "eth")):
    entry = {"pci": CX4, "name": "cx4", "firmware": {"version": version, "psid": psid}}
    entry["ports"] = [
        {"port": n, "link_type": lt, "netdev": f"ens1f{n - 1}"}
        for n, lt in enumerate(link_types, start=1)
    ]
    return entry


def read(fake, nics):
    return read_nics(nics, fake, lambda: TOOLS, lambda: "mstconfig", "/nonexistent")


def settled_card():
    fake = FakeCards()
    fake.cards[CX4] = {
        "flash": "12.28.1002",
        "running": "12.28.1002",
        "ports": {1: [2, 2], 2: [2, 2]},
        "params": {"SRIOV_EN": [1, 1]},
    }
    return fake


def test_a_card_as_wanted_is_settled_for_both_roles():
    result = read(settled_card(), [nic()])
    assert result["settled_firmware"] == [CX4] and result["settled_link_type"] == [CX4]
    assert not result["changes_needed"]
    assert result["msg"] == "every NIC runs its firmware and port protocols"


def test_a_pending_activation_is_not_settled():
    fake = FakeCards()  # 12.28.1002 in flash, 12.23.1020 running; port 2 waits for a reset
    result = read(fake, [nic()])
    assert result["settled_firmware"] == [] and result["settled_link_type"] == []
    assert "activation pending: 12.28.1002 in flash, running 12.23.1020" in result["msg"]
    assert "LINK_TYPE_P2 activate" in result["msg"]


def test_another_version_a_psid_or_a_protocol_to_set_is_named():
    fake = settled_card()
    result = read(fake, [nic(version="12.30.1004", link_types=("eth", "ib"))])
    assert result["changes_needed"]
    assert "firmware 12.28.1002 in flash, 12.30.1004 wanted" in result["msg"]
    assert "LINK_TYPE_P2 set" in result["msg"]
    other_psid = read(settled_card(), [nic(psid="MT_2190110032")])
    assert "PSID LNV2190110032 differs from the inventory's MT_2190110032" in other_psid["msg"]


def test_a_card_that_cannot_be_read_fails_and_nothing_is_settled():
    def broken(argv):
        return 3, "", "-E- Cannot open Device: 0000:65:00.0. No such file or directory\n"

    with pytest.raises(NicStateError, match=r"cannot query the firmware of 0000:65:00\.0"):
        read(broken, [nic()])


def test_a_nic_without_pins_needs_no_tool():
    calls = []

    def no_tools():
        calls.append("resolved")
        raise AssertionError("no tool should be needed")

    result = read_nics([{"pci": CX4, "ports": [{"port": 1}]}], None, no_tools, no_tools)
    assert result["nics"][0]["firmware"] is None and result["nics"][0]["link_type"] is None
    assert calls == [] and not result["changes_needed"]


def test_a_pinned_parameter_keeps_a_card_unsettled_until_it_runs():
    fake = settled_card()
    pinned = {**nic(), "nv_config": {"SRIOV_EN": "True"}}
    assert read(fake, [pinned])["settled_link_type"] == [CX4]
    fake.cards[CX4]["params"]["SRIOV_EN"] = [0, 1]
    result = read(fake, [pinned])
    assert result["settled_link_type"] == [] and "SRIOV_EN activate" in result["msg"]
    fake.cards[CX4]["params"]["SRIOV_EN"] = [0, 0]
    assert "SRIOV_EN set" in read(fake, [pinned])["msg"]


def test_a_parameter_whose_next_boot_differs_is_named_as_pending_activation():
    fake = settled_card()
    fake.cards[CX4]["params"]["ATS_ENABLED"] = [1, 0]  # set by hand, no reset since
    result = read(fake, [nic()])
    # Not pinned, so the rollout has nothing to do, but the card still waits.
    assert result["settled_link_type"] == [CX4]
    assert result["pending_activation"] == {
        CX4: "ATS_ENABLED (current True(1), next boot False(0))"
    }
    waiting = result["nics"][0]["link_type"]["pending_reboot"]
    assert waiting == [{"param": "ATS_ENABLED", "current": "True(1)", "next_boot": "False(0)"}]
    assert read(settled_card(), [nic()])["pending_activation"] == {}


def test_firmware_waiting_in_flash_and_a_parameter_are_one_pending_line():
    fake = FakeCards()  # 12.28.1002 in flash, 12.23.1020 running; port 2 waits for a reset
    line = read(fake, [nic()])["pending_activation"][CX4]
    assert line.startswith("activation pending: 12.28.1002 in flash, running 12.23.1020; ")
    assert "LINK_TYPE_P2 (current IB(1), next boot ETH(2))" in line
