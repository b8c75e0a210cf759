"""The emulated switch's dataplane agent: reads fail closed, converges only on change."""

from __future__ import annotations

import threading

import pytest

from tests.lab.onyx import dataplane_agent
from tests.lab.onyx.dataplane import DataplaneError
from tests.lab.onyx.switch import Identity, Switch
from tests.unit.test_lab_dataplane import CABLED, CONVERGED, lab_switch

FILES = {"link": "link", "vlan": "vlan", "addr": "addr", "fdb": "fdb", "nft": "nft"}


def reads_text(status: dict | None = None, **override) -> str:
    status = status or {}
    parts = []
    for key, _ in dataplane_agent.READS:
        out = override.get(key, (CONVERGED / f"{FILES[key]}.json").read_text())
        parts.append(f"{dataplane_agent.MARK} {key} {status.get(key, 0)}\n{out}")
    return "\n".join(parts) + "\n"


def test_the_read_script_runs_every_read_in_the_namespace():
    script = dataplane_agent.read_script("lab-sw-a")
    assert script.startswith("ip netns exec lab-sw-a sh -c ")
    for _, command in dataplane_agent.READS:
        assert f"out=$({command} 2>&1)" in script
    assert "bridge -j vlan" not in dataplane_agent.read_script("lab-sw-a", ("link",))


def test_reads_split_and_parse_to_the_converged_state():
    current = dataplane_agent.current_from_reads(dataplane_agent.split_reads(reads_text()))
    assert "mpo1" in current.links and current.nft["elements"] == {"mpo1", "mpo2"}


def test_a_missing_read_fails_closed():
    text = reads_text().split(f"{dataplane_agent.MARK} addr")[0]
    with pytest.raises(DataplaneError, match="no output for addr, fdb, nft"):
        dataplane_agent.split_reads(text)


def test_a_failed_read_fails_closed_naming_the_command():
    text = reads_text({"vlan": 1}, vlan="Error: something")
    with pytest.raises(DataplaneError, match="bridge -j vlan show: exit 1"):
        dataplane_agent.current_from_reads(dataplane_agent.split_reads(text))


def test_a_blank_namespace_has_no_fdb_nor_nft_to_read():
    errors = {"fdb": 'Cannot find device "br0"', "nft": "Error: No such file or directory"}
    text = reads_text({"fdb": 1, "nft": 1}, link="[]", vlan="[]", addr="[]", **errors)
    current = dataplane_agent.current_from_reads(dataplane_agent.split_reads(text))
    assert current.links == {} and current.fdb == set() and current.nft is None


class FakeGuest:
    def __init__(self, text: str):
        self.text = text
        self.scripts: list[str] = []

    def __call__(self, script: str, execs: int = 0) -> str:
        self.scripts.append(script)
        return self.text if f"{dataplane_agent.MARK} link" in script else ""


def agent_on(switch: Switch, guest: FakeGuest) -> dataplane_agent.DataplaneAgent:
    target = dataplane_agent.Target(ssh=["false"], namespace="lab-sw-a", cabled=list(CABLED))
    agent = dataplane_agent.DataplaneAgent(switch, target)
    agent._ssh = guest
    return agent


def test_a_converged_switch_costs_one_read_then_links_only_at_refresh():
    switch = Switch(Identity("lab-sw-a", "3.10.2002", "7C:FE:90:11:00:0A", "127.0.0.1"))
    switch.cfg = lab_switch()
    switch.lag_states = {}
    guest = FakeGuest(reads_text())
    agent = agent_on(switch, guest)
    agent.wanted = lambda: dataplane_agent.plan(switch.cfg, CABLED, None)  # peer not heard yet
    first = agent.step()
    # Without the peer, no MPO is dual-connected: the set is emptied, then read again.
    assert first == [["nft", "delete", "element", "bridge", "cxfab_mlag", "dual_connected",
                      "{ mpo1, mpo2 }"]]  # fmt: skip
    assert switch.lag_states["mpo1"]["members"] == {"swp1": "P"}
    calls = len(guest.scripts)
    assert agent.step() == [] and len(guest.scripts) == calls  # nothing changed: no SSH
    agent.read_at -= dataplane_agent.REFRESH + 1
    switch.lag_states = {}
    assert agent.step() == [] and len(guest.scripts) == calls + 1
    assert "bridge -j vlan" not in guest.scripts[-1]  # the bonds' links only
    assert switch.lag_states["mpo1"]["members"] == {"swp1": "P"}


def test_a_blank_switch_is_not_read_again_until_its_plan_changes():
    switch = Switch(Identity("lab-sw-a", "3.10.2002", "7C:FE:90:11:00:0A", "127.0.0.1"))
    switch.lag_states = {}
    blank = reads_text({"fdb": 1, "nft": 1}, link="[]", vlan="[]", addr="[]",
                       fdb="Cannot find device", nft="Error: No such file")  # fmt: skip
    guest = FakeGuest(blank)
    agent = agent_on(switch, guest)
    agent.wanted = lambda: dataplane_agent.Plan()
    agent.step()
    agent.read_at -= dataplane_agent.REFRESH + 1  # long ago
    calls = len(guest.scripts)
    assert agent.step() == [] and len(guest.scripts) == calls


def test_a_killed_switch_takes_every_cabled_port_down(tmp_path):
    sent = tmp_path / "script"
    spec = {
        "ssh": ["sh", "-c", f"cat > {sent}", "fake-ssh"],  # stands for `ssh lab-fabric`
        "switches": {"lab-sw-a": {"namespace": "lab-sw-a", "cabled": ["1/1", "1/2", "1/35"]}},
    }
    dataplane_agent.go_dark(spec, "lab-sw-a")
    assert sent.read_text().splitlines() == [
        f"ip -n lab-sw-a link set {port} down" for port in ("swp1", "swp2", "swp35")
    ]


def test_a_switch_that_cannot_go_dark_says_so():
    spec = {
        "ssh": ["false"],
        "switches": {"lab-sw-b": {"namespace": "lab-sw-b", "cabled": ["1/1"]}},
    }
    with pytest.raises(DataplaneError, match="lab-sw-b: its namespace's ports could not be taken"):
        dataplane_agent.go_dark(spec, "lab-sw-b")


def test_a_link_event_has_the_bonds_read_before_refresh():
    switch = Switch(Identity("lab-sw-a", "3.10.2002", "7C:FE:90:11:00:0A", "127.0.0.1"))
    switch.cfg = lab_switch()
    guest = FakeGuest(reads_text())
    agent = agent_on(switch, guest)
    agent.wanted = lambda: dataplane_agent.plan(switch.cfg, CABLED, None)
    agent.step()
    calls = len(guest.scripts)
    assert agent.step() == [] and len(guest.scripts) == calls  # no event, not due: no read
    agent.links_changed.set()  # e.g. LACP bundled a member
    switch.lag_states = {}
    assert agent.step() == [] and len(guest.scripts) == calls + 1
    assert "bridge -j vlan" not in guest.scripts[-1]  # the bonds' links only
    assert switch.lag_states["mpo1"]["members"] == {"swp1": "P"}
    assert not agent.links_changed.is_set()


def test_the_watch_follows_the_namespace_link_messages(tmp_path):
    asked = tmp_path / "command"
    # Stands for `ssh lab-fabric <command>`: records the command, prints one message, then
    # stays quiet for 3 s before chattering (so the event is the message, not the end).
    fake = f'echo "$0" > {asked}; echo "3: swp1: <NO-CARRIER>"; sleep 3; ' + (
        "while :; do echo more; sleep 0.1; done"
    )
    switch = Switch(Identity("lab-sw-a", "3.10.2002", "7C:FE:90:11:00:0A", "127.0.0.1"))
    target = dataplane_agent.Target(ssh=["sh", "-c", fake], namespace="lab-sw-a", cabled=[])
    agent = dataplane_agent.DataplaneAgent(switch, target)
    watcher = threading.Thread(target=agent.watch, daemon=True)
    watcher.start()
    try:
        assert agent.links_changed.wait(2.5)
        assert asked.read_text().strip() == "ip -n lab-sw-a monitor link"
    finally:
        agent.stopping.set()
        watcher.join(10)
    assert not watcher.is_alive()
