"""The Onyx driver's reads fail closed: the running-config the deploy plans, snapshots
and reverts from, and the partner's health the gate relies on before the first line."""

from __future__ import annotations

import pytest
from onyx_helpers import FIXTURES

from module_utils.cxfab.switch.onyx.driver import OnyxDriver
from module_utils.cxfab.switch.onyx.session import SessionError
from module_utils.cxfab.switch.transaction import gate_problems

CORPUS = FIXTURES / "corpus"
RUNNING = (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
MLAG_OK = (FIXTURES / "show_mlag_healthy.txt").read_text()
VIP_OK = (CORPUS / "mlag_vip_3.10.txt").read_text()


class FakeSession:
    """Answers show commands from a table; a missing command fails as a `%` error would."""

    def __init__(self, replies: dict[str, str]):
        self.replies, self.asked = replies, []

    def show(self, command: str) -> str:
        self.asked.append(command)
        if command not in self.replies:
            raise SessionError(f"127.0.0.1:22: {command!r}: % Unrecognized command")
        return self.replies[command]

    def try_show(self, command: str):
        try:
            return self.show(command), None
        except SessionError as exc:
            return None, str(exc)


def peer(name: str, replies: dict[str, str] | None, release: str = "3.6.5000") -> OnyxDriver:
    driver = OnyxDriver(name, {}, session=None if replies is None else FakeSession(replies))
    driver.release = release
    if replies is None:
        driver.unreachable = "timed out"
    return driver


def partner(mlag: str | None = MLAG_OK, vip: str | None = VIP_OK, config: str = RUNNING):
    replies = {"show running-config": config}
    if mlag is not None:
        replies["show mlag"] = mlag
    if vip is not None:
        replies["show mlag-vip"] = vip
    return peer("sw-b", replies)


MINE = peer("sw-a", {"show running-config": RUNNING}).read_config()


@pytest.mark.parametrize(
    "reply",
    ["", "\n\n", "interface vlan 10\nvlan 10\n", RUNNING.split("## Running database")[1]],
    ids=["empty", "blank lines", "no header", "header cut off"],
)
def test_a_running_config_without_its_header_is_an_error_not_a_blank_switch(reply):
    with pytest.raises(SessionError, match=r"sw-a: could not read `show running-config`: no `##"):
        peer("sw-a", {"show running-config": reply}).read_config()


def test_a_real_running_config_is_read_with_its_statements():
    config = peer("sw-a", {"show running-config": RUNNING}).read_config()
    assert config.text == RUNNING and ("protocol", "mlag") in config.statements
    assert config.runs_mlag


def test_a_healthy_partner_lets_the_change_through():
    healthy = partner()
    assert gate_problems(healthy, MINE) == []
    assert healthy.session.asked == ["show running-config", "show mlag", "show mlag-vip"]


@pytest.mark.parametrize(
    ("mlag", "expected"),
    [
        (MLAG_OK.replace("Operational status: Up", "Operational status: Down"), "status Down"),
        (MLAG_OK.replace("4000       Up", "4000       Down"), "IPL not Up"),
        ((FIXTURES / "show_mlag_mismatched.txt").read_text(), "[Mismatched]"),
    ],
    ids=["mlag down", "ipl down", "mismatched"],
)
def test_an_unhealthy_partner_blocks_the_change(mlag, expected):
    problems = gate_problems(partner(mlag=mlag), MINE)
    assert len(problems) == 1 and problems[0].startswith("partner sw-b MLAG is not healthy")
    assert expected in problems[0]


def test_a_partner_vip_that_sees_one_node_blocks_the_change():
    one_node = VIP_OK.replace("Active nodes: 2", "Active nodes: 1").rsplit("\n", 2)[0]
    problems = gate_problems(partner(vip=one_node), MINE)
    assert problems == ["partner sw-b MLAG-VIP is not healthy: Active nodes 1, states master"]


@pytest.mark.parametrize(
    ("which", "reply", "expected"),
    [
        ("mlag", "", "could not read `show mlag`"),
        ("mlag", (CORPUS / "mlag_truncated.txt").read_text(), "could not read `show mlag`"),
        ("mlag", None, "'show mlag': % Unrecognized command"),
        ("vip", "garbage\n", "could not read `show mlag-vip`"),
        ("vip", None, "'show mlag-vip': % Unrecognized command"),
    ],
    ids=["mlag empty", "mlag truncated", "mlag refused", "vip junk", "vip refused"],
)
def test_an_unreadable_partner_blocks_the_change(which, reply, expected):
    replies = {"mlag": MLAG_OK, "vip": VIP_OK, which: reply}
    problems = gate_problems(partner(**replies), MINE)
    assert len(problems) == 1 and problems[0].startswith("partner sw-b")
    assert expected in problems[0]


def test_an_unreachable_or_blank_replying_partner_blocks_the_change():
    unreachable = gate_problems(peer("sw-b", None), MINE)
    assert unreachable == ["partner sw-b is unreachable: timed out"]
    blank = gate_problems(partner(config=""), MINE)
    assert len(blank) == 1 and "sw-b: running-config unreadable" in blank[0]


def test_without_mlag_on_both_sides_there_is_nothing_to_break():
    blank_partner = partner(config=RUNNING.replace("protocol mlag\n", ""))
    assert gate_problems(blank_partner, MINE) == []
