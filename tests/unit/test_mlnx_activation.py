"""One activation per host: requests merged per card, live reset, read-back, bond wait."""

from pathlib import Path

import pytest
from cxfab.host.mlnx.activation import ActivationError, Options, activate
from cxfab.host.mlnx.firmware import Toolset

CX4 = "0000:65:00.0"
CX3 = "0000:17:00.0"
TOOLS = Toolset(flint="mstflint", fwmanager=None, query_with="flint", fwreset="mstfwreset")
ENUM = {1: "IB(1)", 2: "ETH(2)"}
BOND = {"name": "bond0", "members": ["ens1f0", "ens1f1"], "mode": "802.3ad"}


class FakeCards:
    """mstflint q, mstconfig -e q and mstfwreset -y reset over cards in memory.

    A reset moves flash -> running and Next Boot -> Current, unless the card is
    stubborn (the reset "succeeds" but nothing changes) or the reset fails.
    """

    def __init__(self):
        self.cards = {
            CX4: {
                "flash": "12.28.1002",
                "running": "12.23.1020",
                "ports": {1: [2, 2], 2: [1, 2]},
                "params": {"SRIOV_EN": [0, 0]},  # current, next boot (False(0) / True(1))
            },
        }
        self.calls = []
        self.stubborn = set()
        self.reset_fails = set()

    def resets(self):
        return [c[2] for c in self.calls if c[-1] == "reset"]

    def __call__(self, argv):
        self.calls.append(argv)
        tool, device = argv[0], argv[2]
        card = self.cards[device]
        if tool == "mstfwreset" and argv[-1] == "reset":
            if device in self.reset_fails:
                return 1, "", "-E- Failed to reset the device\n"
            if device not in self.stubborn:
                card["running"] = card["flash"]
                for state in [*card["ports"].values(), *card.get("params", {}).values()]:
                    state[0] = state[1]
            return 0, "Reset done\n", ""
        if tool == "mstflint" and argv[-1] == "q":
            running = f"FW Version(Running):   {card['running']}\n"
            text = (
                f"Image type:            FS3\nFW Version:            {card['flash']}\n"
                + (running if card["running"] != card["flash"] else "")
                + "PSID:                  LNV2190110032\n"
            )
            return 0, text, ""
        if tool == "mstconfig" and argv[3:5] == ["-e", "q"]:
            rows = [
                f"*        LINK_TYPE_P{port:<24}ETH(2)          {ENUM[cur]:<16}{ENUM[nxt]}"
                for port, (cur, nxt) in sorted(card["ports"].items())
            ]
            booleans = {0: "False(0)", 1: "True(1)"}
            rows += [
                f"*        {name:<36}False(0)        {booleans[cur]:<16}{booleans[nxt]}"
                for name, (cur, nxt) in sorted(card.get("params", {}).items())
            ]
            text = (
                "\nDevice #1:\n----------\n\nDevice type:    ConnectX4\nDevice:         x\n\n"
                "Configurations:                              Default         Current         "
                "Next Boot\n" + "\n".join(rows) + "\n"
            )
            return 0, text, ""
        raise AssertionError(f"unexpected call {argv}")


def firmware_request(device=CX4, live=True):
    return {
        "device": device,
        "fwreset": "mstfwreset",
        "fwreset_supported": live,
        "version": "12.28.1002",
        "source": "firmware",
    }


def link_type_request(device=CX4, live=True):
    return {
        "device": device,
        "fwreset": "mstfwreset",
        "fwreset_supported": live,
        "ports": [{"port": 1, "link_type": "eth"}, {"port": 2, "link_type": "eth"}],
        "source": "link_type",
    }


class Bond:
    """/proc/net/bonding/bond0 in a tmp dir, with the second member in or out of the
    active aggregator."""

    def __init__(self, tmp_path, exists=True, rejoin=True):
        self.dir = tmp_path
        self.path = tmp_path / "bond0"
        if exists:
            self.write(both_up=rejoin)

    def write(self, both_up):
        second = "1" if both_up else "2"
        self.path.write_text(
            "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\nMII Status: up\n"
            "802.3ad info\nActive Aggregator Info:\n\tAggregator ID: 1\n"
            "\nSlave Interface: ens1f0\nMII Status: up\nAggregator ID: 1\n"
            f"\nSlave Interface: ens1f1\nMII Status: up\nAggregator ID: {second}\n"
        )

    def options(self, **extra):
        defaults = {
            "use_fwreset": True,
            "allow_reboot": False,
            "bond": BOND,
            "bond_timeout": 3,
            "bond_proc_dir": str(self.dir),
        }
        return Options(**{**defaults, **extra})


class FakeTime:
    def __init__(self):
        self.now = 0.0

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def run(fake, requests, opts, check_mode=False):
    clock = FakeTime()
    return activate(
        requests,
        opts,
        fake,
        TOOLS,
        "mstconfig",
        bond_exists=lambda name: (Path(opts.bond_proc_dir) / name).exists(),
        check_mode=check_mode,
        clock=clock.clock,
        sleep=clock.sleep,
    )


def test_firmware_and_port_protocols_of_a_card_share_one_reset_then_both_are_read_back(tmp_path):
    fake, bond = FakeCards(), Bond(tmp_path)
    result = run(fake, [firmware_request(), link_type_request()], bond.options())
    assert fake.resets() == [CX4]
    (card,) = result["cards"]
    assert card["running_version"] == "12.28.1002"
    assert [p["current"] for p in card["ports"]] == ["eth", "eth"]
    assert result["bond"] == {
        "existed_before": True,
        "skipped_reason": None,
        "waited_seconds": 0.0,
        "members": result["bond"]["members"],
    }
    assert result["changed"] and "by live reset" in result["msg"]


def test_a_card_still_running_the_old_firmware_after_the_reset_fails_the_host(tmp_path):
    fake, bond = FakeCards(), Bond(tmp_path)
    fake.stubborn.add(CX4)
    with pytest.raises(ActivationError) as error:
        run(fake, [firmware_request(), link_type_request()], bond.options())
    message = str(error.value)
    assert "runs firmware 12.23.1020, not 12.28.1002" in message
    assert "port protocols or pinned parameters still pending" in message
    assert error.value.result["reset"] == [CX4]


def test_a_failed_reset_stops_before_any_read_back(tmp_path):
    fake, bond = FakeCards(), Bond(tmp_path)
    fake.reset_fails.add(CX4)
    with pytest.raises(ActivationError, match=r"live reset failed: .*Failed to reset"):
        run(fake, [firmware_request()], bond.options())
    assert not [c for c in fake.calls if c[0] == "mstflint"]


def test_a_card_without_live_reset_is_left_pending_and_named_when_reboots_are_not_allowed(
    tmp_path,
):
    fake, bond = FakeCards(), Bond(tmp_path)
    result = run(fake, [firmware_request(live=False)], bond.options())
    assert fake.calls == [] and not result["changed"]
    assert result["not_activated"] == [CX4] and result["cards"] == []
    assert "NOT activated" in result["msg"] and "nic_firmware_allow_reboot" in result["msg"]


def test_a_reboot_splits_the_activation_around_it(tmp_path):
    fake, bond = FakeCards(), Bond(tmp_path)
    requests = [firmware_request(live=False)]
    before = run(fake, requests, bond.options(allow_reboot=True))
    assert before["reboot_for"] == [CX4] and before["cards"] == [] and fake.calls == []
    assert before["bond"]["existed_before"] is True
    # The host reboots: the card runs what its flash holds.
    fake.cards[CX4]["running"] = fake.cards[CX4]["flash"]
    after = run(
        fake,
        requests,
        bond.options(allow_reboot=True, after_reboot=True, bond_existed_before=True),
    )
    assert after["cards"][0]["running_version"] == "12.28.1002"
    assert after["bond"]["waited_seconds"] == 0.0 and fake.resets() == []


def test_the_next_host_waits_for_the_bond_and_a_bond_that_stays_out_fails_with_its_members(
    tmp_path,
):
    fake, bond = FakeCards(), Bond(tmp_path, rejoin=False)
    with pytest.raises(ActivationError) as error:
        run(fake, [firmware_request()], bond.options())
    assert "bond bond0: members not back in the aggregator after 3.0 s" in str(error.value)
    assert "ens1f1: MII up, aggregator 2 (active 1) - not ready" in str(error.value)


def test_a_bond_built_later_in_the_run_is_not_waited_for(tmp_path):
    fake, bond = FakeCards(), Bond(tmp_path, exists=False)
    result = run(fake, [firmware_request()], bond.options())
    assert "did not exist before the activation" in result["bond"]["skipped_reason"]
    assert "no bond wait" in result["msg"]


def test_check_mode_runs_no_tool_and_says_what_it_would_activate(tmp_path):
    fake, bond = FakeCards(), Bond(tmp_path)
    result = run(fake, [firmware_request(), link_type_request()], bond.options(), check_mode=True)
    assert fake.calls == []
    assert result["changed"] and result["msg"].startswith(f"would activate {CX4} by live reset")


def test_a_request_without_a_device_is_refused(tmp_path):
    with pytest.raises(ActivationError, match=r"requests\[0\]: no device"):
        run(FakeCards(), [{"version": "1.2.3"}], Bond(tmp_path).options())


def test_a_pinned_parameter_is_read_back_after_the_reset(tmp_path):
    fake, bond = FakeCards(), Bond(tmp_path)
    fake.cards[CX4]["params"]["SRIOV_EN"] = [0, 1]  # set for next boot, not yet running
    request = {**link_type_request(), "nv_config": {"SRIOV_EN": "True"}}
    result = run(fake, [request], bond.options())
    (param,) = result["cards"][0]["params"]
    assert (param["param"], param["current"]) == ("SRIOV_EN", "True(1)")
    fake.cards[CX4]["params"]["SRIOV_EN"] = [0, 1]
    fake.stubborn.add(CX4)
    with pytest.raises(ActivationError, match="pinned parameters still pending"):
        run(fake, [request], bond.options())
