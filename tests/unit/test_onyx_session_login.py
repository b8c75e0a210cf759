"""The first read after an Onyx login waits for the prompt, and falls back when it never
comes (module_utils/cxfab/switch/onyx/session.py, OnyxConnection)."""

from __future__ import annotations

import re

import pytest
from netmiko.exceptions import ReadTimeout

from module_utils.cxfab.switch.onyx import session as session_module
from module_utils.cxfab.switch.onyx.session import LOGIN_PROMPT

LOGIN = "\r\nNVIDIA Onyx Switch Management\r\n\r\nLast login: Sat Nov 28 from 127.0.0.1\r\n\r\n"


@pytest.mark.parametrize(
    "prompt",
    ["sw1 [standalone: master] > ", "sw1 [standalone: master] #", "sw1 [my-domain: standby] # "],
)
def test_the_prompt_after_the_banner_ends_the_read(prompt):
    assert re.search(LOGIN_PROMPT, LOGIN + prompt)


@pytest.mark.parametrize(
    "partial", [LOGIN, LOGIN + "sw1 [standalone: master]", "Mellanox Switch\r\n"]
)
def test_the_banner_alone_does_not(partial):
    assert not re.search(LOGIN_PROMPT, partial)


class Recorder:
    """The netmiko calls session_preparation makes, in order."""

    def __init__(self, prompt_seen: bool):
        self.prompt_seen, self.calls = prompt_seen, []

    def bind(self, connection):
        def read_until_pattern(pattern, read_timeout):
            self.calls.append(("read_until_pattern", pattern, read_timeout))
            if not self.prompt_seen:
                raise ReadTimeout("pattern not found")
            return "sw1 [standalone: master] > "

        connection.read_until_pattern = read_until_pattern
        for name in ("_test_channel_read", "set_base_prompt", "set_terminal_width",
                     "disable_paging"):  # fmt: skip
            setattr(connection, name, lambda *a, _name=name, **k: self.calls.append((_name,)))


@pytest.mark.parametrize("prompt_seen", [True, False])
def test_an_unmatched_prompt_is_read_the_generic_way_not_refused(prompt_seen):
    cls = session_module._connection_class()
    connection = cls.__new__(cls)  # no SSH: only session_preparation runs
    recorder = Recorder(prompt_seen)
    recorder.bind(connection)
    connection.session_preparation()
    wait = ("read_until_pattern", LOGIN_PROMPT, session_module.LOGIN_PROMPT_WAIT_S)
    fallback = [("_test_channel_read",)] if not prompt_seen else []
    assert recorder.calls == [
        wait, *fallback, ("set_base_prompt",), ("set_terminal_width",), ("disable_paging",)
    ]  # fmt: skip
