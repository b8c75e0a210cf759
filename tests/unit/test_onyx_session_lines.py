"""The switch session sends only single CLI lines, whatever produced them."""

from __future__ import annotations

import pytest

from module_utils.cxfab.switch.onyx.session import OnyxSession, SessionError


class FakeConnection:
    base_prompt = "sw-a"

    def __init__(self):
        self.sent: list[str] = []

    def config_mode(self):
        self.sent.append("<config>")

    def exit_config_mode(self):
        self.sent.append("<exit>")

    def send_command(self, line, **_kwargs):
        self.sent.append(line)
        return ""


def session() -> tuple[OnyxSession, FakeConnection]:
    cli = OnyxSession("10.0.0.51", 22, "admin", "pw", check_host_key=False)
    cli.conn = FakeConnection()
    return cli, cli.conn


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("interface mlag-port-channel 1 description x\nvlan 999", "a newline"),
        ("vlan 10 name a\rb", "a control character"),
        ("vlan 10 name a\x1bb", "a control character"),
        ("vlan 10 name a\u2028b", "a control character"),
        ('vlan 10 name "data', "an unbalanced quote"),
        ("", "an empty line"),
    ],
)
def test_a_line_outside_the_grammar_is_refused_before_anything_is_sent(line, reason):
    cli, conn = session()
    with pytest.raises(SessionError) as caught:
        cli.configure(["lacp", line, "ip routing"])
    message = str(caught.value)
    assert "10.0.0.51:22" in message and "line 2" in message and reason in message
    assert "\n" not in message
    assert conn.sent == [], "not even config mode may be entered"


def test_a_show_command_with_a_newline_is_refused():
    cli, conn = session()
    with pytest.raises(SessionError, match="a newline"):
        cli.show("show mlag\nconfiguration write")
    assert conn.sent == []


def test_plain_lines_are_sent_in_order():
    cli, conn = session()
    lines = ["lacp", 'vlan 10 name "data 10"', "interface vlan 10 mtu 9000"]
    assert cli.configure(lines) == 3
    assert conn.sent == ["<config>", *lines, "<exit>"]
