"""The emulated Onyx pair, driven over real SSH with netmiko's mellanox_mlnxos driver.

One pair serves the tests of this module in order (blank -> MLAG built -> faults),
a second pair checks the 3.6 release started from the configs the first one saved.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable

import pytest
from cxfab.switch.onyx import health_json
from cxfab.switch.onyx import shows as onyx_shows
from cxfab.switch.onyx.version import release_from_show_version
from netmiko import ConnectHandler

from tests.lab.onyx import shows
from tests.lab.onyx.fixtures import onyx_pair
from tests.lab.onyx.switch import Identity, Switch

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

A, B = "lab-sw-a", "lab-sw-b"
IPL_ADDRESS = {A: ("192.168.255.253", "192.168.255.254"), B: ("192.168.255.254", "192.168.255.253")}
SVI_ADDRESS = {A: "10.0.10.2", B: "10.0.10.3"}


def reference_commands(name: str) -> list[str]:
    """The MLAG + MAGP build of reference.md section 2, addresses per peer."""
    local, peer = IPL_ADDRESS[name]
    return [
        "lacp",
        "ip routing",
        "protocol mlag",
        "dcb priority-flow-control enable force",
        "interface port-channel 100",
        "interface ethernet 1/13 channel-group 100 mode active",
        "interface port-channel 100 ipl 1",
        "interface port-channel 100 dcb priority-flow-control mode on force",
        "vlan 4000",
        "interface vlan 4000",
        f"interface vlan 4000 ip address {local}/30",
        f"interface vlan 4000 ipl 1 peer-address {peer}",
        "mlag-vip rack1-mlag ip 10.0.0.50 /24 force",
        "mlag system-mac 00:00:5E:00:01:5D",
        "no mlag shutdown",
        "interface mlag-port-channel 1",
        "interface ethernet 1/1 mlag-channel-group 1 mode active",
        "interface mlag-port-channel 1 switchport mode hybrid",
        "interface mlag-port-channel 1 switchport hybrid allowed-vlan add 10",
        "interface mlag-port-channel 1 no shutdown",
        "vlan 10",
        "vlan 10 name servers",
        "interface vlan 10",
        f"interface vlan 10 ip address {SVI_ADDRESS[name]}/24",
        "protocol magp",
        "interface vlan 10 magp 10",
        "interface vlan 10 magp 10 ip virtual-router address 10.0.10.1",
        "interface vlan 10 magp 10 ip virtual-router mac-address 00:00:5E:00:01:0A",
    ]


def wait_for(check: Callable[[], bool], timeout: float = 8.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.3)


def field(text: str, name: str) -> str:
    match = re.search(rf"^\s*{re.escape(name)}\s*:\s*(.*)$", text, re.M)
    assert match, f"{name!r} not in:\n{text}"
    return match.group(1).strip()


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    with onyx_pair(tmp_path_factory.mktemp("onyx")) as handle:
        yield handle


@pytest.fixture(scope="module")
def conns(pair):
    sessions = {name: ConnectHandler(**pair[name].netmiko()) for name in pair.names}
    yield sessions
    for conn in sessions.values():
        conn.disconnect()


def show(conn, command: str) -> str:
    return conn.send_command(command, read_timeout=10)


def test_prompts_modes_and_paging_follow_the_mlnxos_driver(conns):
    conn = conns[A]
    assert conn.find_prompt() == "lab-sw-a [standalone: master] >"
    assert "Unrecognized" in show(conn, "configure terminal")
    conn.enable()
    assert conn.find_prompt() == "lab-sw-a [standalone: master] #"
    conn.config_mode()
    assert conn.find_prompt() == "lab-sw-a [standalone: master] (config) #"
    conn.send_command("interface vlan 1", expect_string=r"#")
    assert conn.find_prompt() == "lab-sw-a [standalone: master] (config interface vlan 1) #"
    conn.exit_config_mode()
    assert conn.find_prompt().endswith("] #")
    assert "% Unrecognized command" in show(conn, "terminal length 0")
    conns[B].enable()


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("frobnicate now", '% Unrecognized command "frobnicate"'),
        ("vlan 4095", "% Invalid VLAN ID 4095"),
        ("interface vlan 1 ip address 10.0.0.300/24", "% Invalid IP address"),
        ("mlag-vip x ip 10.0.0.1 /24 force", '% Unrecognized command "mlag-vip"'),
        ("interface port-channel 7 mtu 9216 force", "% Interface port-channel 7 does not exist"),
        ("no vlan 1", "% Cannot delete default VLAN 1"),
    ],
)
def test_invalid_commands_answer_with_percent_errors(conns, command, message):
    output = conns[A].send_config_set([command])
    assert message in output
    assert "frobnicate" not in conns[A].send_command("show running-config")


def test_ipl_on_missing_port_channel_is_refused(conns):
    output = conns[A].send_config_set(["protocol mlag", "interface port-channel 9 ipl 1"])
    assert "% Interface port-channel 9 does not exist" in output
    conns[A].send_config_set(["no protocol mlag"])


def test_reference_build_brings_mlag_up_on_both_peers(conns):
    for name, conn in conns.items():
        output = conn.send_config_set(reference_commands(name))
        assert "%" not in output, output

    def both_up() -> bool:
        return all(
            field(show(c, "show mlag"), "Operational status") == "Up" for c in conns.values()
        )

    wait_for(both_up)
    mlag = show(conns[A], "show mlag")
    assert field(mlag, "System-mac") == "00:00:5E:00:01:5D"
    assert field(mlag, "Active-full") == "1"
    assert field(mlag, "Active-partial") == "0"
    assert re.search(
        r"^1\s+Po100\s+4000\s+Up\s+192\.168\.255\.253\s+192\.168\.255\.254", mlag, re.M
    )
    assert "Mpo1(U)" in show(conns[B], "show interfaces mlag-port-channel summary")
    vip = show(conns[B], "show mlag-vip")
    assert field(vip, "Active nodes") == "2"
    assert re.search(r"^lab-sw-a\s+master", vip, re.M)
    assert re.search(r"^lab-sw-b\s+standby", vip, re.M)
    assert conns[A].find_prompt() == "lab-sw-a [rack1-mlag: master] #"
    assert conns[B].find_prompt() == "lab-sw-b [rack1-mlag: standby] #"
    for conn in conns.values():
        conn.set_base_prompt()  # the prompt changed with mlag-vip, as on a real switch
    for conn in conns.values():
        assert field(show(conn, "show magp 10"), "State") == "Master"


def test_running_config_is_flat_with_ranges_and_sections(conns):
    conns[A].send_config_set(
        [
            "interface ethernet 1/1-1/2 mtu 9216 force",
            'interface mlag-port-channel 1 description "cardamine bond0"',
        ]
    )
    running = show(conns[A], "show running-config")
    assert '   interface mlag-port-channel 1 description "cardamine bond0"' in running
    assert "   interface ethernet 1/1-1/2 mtu 9216 force" in running
    assert "   interface vlan 10 ip address 10.0.10.2/24 primary" in running
    assert '   vlan 10 name "servers"' in running
    assert "\nno mlag shutdown\n" in running
    assert "   interface mlag-port-channel 1 switchport hybrid allowed-vlan add 10" in running
    titles = re.findall(r"^## (.+)$", running, re.M)
    order = [
        "Interface Ethernet configuration",
        "LAG configuration",
        "VLAN configuration",
        "L3 configuration",
        "DCBX PFC configuration",
        "MAGP configuration",
        "MLAG configurations",
    ]
    assert [t for t in titles if t in order] == order
    expanded = show(conns[A], "show running-config expanded")
    assert "interface ethernet 1/1 mtu 9216 force" in expanded
    assert "interface ethernet 1/2 mtu 9216 force" in expanded
    assert "1/1-1/2" not in expanded


def test_unsaved_changes_flag_is_cleared_by_configuration_write(conns):
    for conn in conns.values():
        assert field(show(conn, "show configuration files"), "Unsaved changes") == "yes"
        conn.save_config()
        assert field(show(conn, "show configuration files"), "Unsaved changes") == "no"
    conns[A].send_config_set(["vlan 30"])
    assert field(show(conns[A], "show configuration files"), "Unsaved changes") == "yes"
    conns[A].send_config_set(["no vlan 30"])
    assert field(show(conns[A], "show configuration files"), "Unsaved changes") == "no"


def test_json_print_uses_the_new_shape_on_3_10(conns):
    magp = json.loads(show(conns[A], "show magp | json-print"))
    assert magp == [
        {
            "MAGP 10": [
                {
                    "Interface vlan": "10",
                    "Admin state": "Enabled",
                    "State": "Master",
                    "Virtual IP": "10.0.10.1",
                    "Virtual MAC": "00:00:5E:00:01:0A",
                }
            ]
        }
    ]
    mlag = json.loads(show(conns[A], "show mlag | json-print"))
    assert mlag["Operational status"] == "Up"
    assert mlag["MLAG IPLs Summary"]["1"][0]["Operational State"] == "Up"
    version = show(conns[A], "show version | json-print")
    assert "Product release" not in json.loads(version)  # 3.10: the release is in the summary
    assert release_from_show_version(version) == "3.10.2002"
    mpo = json.loads(show(conns[A], "show interfaces mlag-port-channel summary | json-print"))
    summary = next(item for item in mpo if "MLAG Port-Channel Summary" in item)
    assert "1 Mpo1(U)" in summary["MLAG Port-Channel Summary"][0]
    vip = json.loads(show(conns[B], "show mlag-vip | json-print"))
    assert vip["MLAG-VIP"]["Active nodes"] == "2"


HEALTH_READS = ("files", "mlag", "mlag_vip", "mpo", "magp")


def _same_reads(from_json: dict, from_text: dict) -> None:
    for key in HEALTH_READS:
        if key == "mlag":  # the JSON has no members table; the checks do not use it
            from_text[key] = {**from_text[key], "members": []}
        assert from_json[key] == from_text[key], key


def test_health_reads_json_print_on_3_10_and_it_agrees_with_text(conns):
    for conn in conns.values():
        asked = {k: onyx_shows.show_command(k, "3.10.2002") for k in HEALTH_READS}
        assert all(command.endswith(" | json-print") for command in asked.values())
        from_json = {
            k: onyx_shows.parse(k, show(conn, asked[k]), "3.10.2002") for k in HEALTH_READS
        }
        from_text = {
            k: onyx_shows.parse(k, show(conn, onyx_shows.SHOW_COMMANDS[k]), None) for k in asked
        }
        _same_reads(from_json, from_text)
        assert from_json["mlag"]["active_full"] == 1 and from_json["magp"][10]["state"] == "Master"


def test_mpo_is_active_full_only_when_configured_on_both_peers(conns):
    mpo2 = [
        "interface mlag-port-channel 2",
        "interface ethernet 1/2 mlag-channel-group 2 mode on",
        "interface mlag-port-channel 2 no shutdown",
    ]
    conns[A].send_config_set(mpo2)
    wait_for(lambda: field(show(conns[A], "show mlag"), "Active-partial") == "1")
    assert field(show(conns[A], "show mlag"), "Active-full") == "1"
    conns[B].send_config_set(mpo2)
    wait_for(lambda: field(show(conns[A], "show mlag"), "Active-full") == "2")
    conns[A].send_config_set(["no interface mlag-port-channel 2"])
    conns[B].send_config_set(["no interface mlag-port-channel 2"])


def test_system_mac_mismatch_is_flagged_and_takes_mlag_down(pair, conns):
    pair.ctl(B, "set-system-mac", "00:00:5E:00:01:99")
    wait_for(lambda: "[Mismatched]" in field(show(conns[A], "show mlag"), "System-mac"))
    mlag = show(conns[A], "show mlag")
    assert field(mlag, "System-mac") == "00:00:5E:00:01:5D [Mismatched]"
    assert field(mlag, "Operational status") == "Down"
    assert field(show(conns[A], "show magp 10"), "State") == "Init"
    pair.ctl(B, "set-system-mac", "00:00:5E:00:01:5D")
    wait_for(lambda: field(show(conns[A], "show mlag"), "Operational status") == "Up")


def test_vrrp_elects_one_master_by_priority_with_preemption(conns):
    for name, conn in conns.items():
        ip = "10.0.20.2" if name == A else "10.0.20.3"
        prio = "110" if name == A else "100"
        commands = ["protocol vrrp", "vlan 20", "interface vlan 20"]
        commands += [f"interface vlan 20 ip address {ip}/24", "interface vlan 20 vrrp 20"]
        commands += ["interface vlan 20 vrrp 20 address 10.0.20.1"]
        commands += [f"interface vlan 20 vrrp 20 priority {prio}"]
        output = conn.send_config_set(commands)
        assert "%" not in output, output

    def states() -> tuple[str, str]:
        read = [onyx_shows.parse_show_vrrp(show(conns[n], "show vrrp")) for n in (A, B)]
        return tuple(r.get((20, 20), {}).get("state") for r in read)

    wait_for(lambda: states() == ("Master", "Backup"))
    conns[B].send_config_set(["interface vlan 20 vrrp 20 priority 120"])
    wait_for(lambda: states() == ("Backup", "Master"))
    # Without preemption a better backup does not take over from a running master, not
    # even once its master-down interval (3 x 1 s + 56/256 s at priority 200) has passed.
    conns[A].send_config_set(
        ["no interface vlan 20 vrrp 20 preempt", "interface vlan 20 vrrp 20 priority 200"]
    )
    time.sleep(4.5)
    assert states() == ("Backup", "Master")
    assert "no interface vlan 20 vrrp 20 preempt" in show(conns[A], "show running-config")


def test_cut_ipl_and_killed_peer_are_seen_by_the_survivor(pair, conns):
    pair.ctl(B, "cut-ipl")
    wait_for(lambda: field(show(conns[A], "show mlag"), "Operational status") == "Down")
    assert re.search(r"^1\s+Po100\s+4000\s+Down", show(conns[A], "show mlag"), re.M)
    assert field(show(conns[A], "show mlag-vip"), "Active nodes") == "2"
    pair.ctl(B, "heal-ipl")
    wait_for(lambda: field(show(conns[A], "show mlag"), "Operational status") == "Up")
    pair.ctl(B, "kill")
    wait_for(lambda: field(show(conns[A], "show mlag-vip"), "Active nodes") == "1")
    mlag = show(conns[A], "show mlag")
    assert field(mlag, "Operational status") == "Down"
    assert field(mlag, "Active-partial") == "1"
    pair.ctl(B, "revive")  # boots from the configuration it saved
    wait_for(lambda: field(show(conns[A], "show mlag"), "Operational status") == "Up")


@pytest.mark.parametrize(
    ("release", "new_shape"),
    [("3.6.5000", False), ("3.6.6000", True), ("3.6.8008", True), ("3.10.2002", True)],
)
def test_json_shape_changes_at_3_6_6000_compared_numerically(release, new_shape):
    switch = Switch(Identity(A, release, "7C:FE:90:11:00:0A", "127.0.0.1"))
    for command in (
        "protocol magp",
        "vlan 10",
        "interface vlan 10",
        "interface vlan 10 ip address 10.0.10.2/24",
        "interface vlan 10 magp 10",
    ):
        switch.cfg.apply(command)
    magp = json.loads(shows.dispatch(switch, ["magp"], json_print=True))
    assert (magp == [{"MAGP 10": [magp[0]["MAGP 10"][0]]}]) if new_shape else magp[0]["header"]
    # Both shapes read as the text does; the health reads ask for JSON only on the new one.
    text = onyx_shows.parse("magp", shows.dispatch(switch, ["magp"], json_print=False), None)
    assert health_json.parse_show_magp(json.dumps(magp), release) == text
    assert onyx_shows.show_command("magp", release).endswith("| json-print") is new_shape
    vlans = json.loads(shows.dispatch(switch, ["vlan"], json_print=True))
    assert isinstance(vlans["10"], list) is new_shape


def test_release_3_6_starts_from_saved_configs(pair, tmp_path):
    saved = [pair.run_dir / f"{name}.saved.cfg" for name in pair.names]
    assert "10.0.10.2/24 primary" in saved[0].read_text()
    with onyx_pair(tmp_path, version="3.6.5000", from_config=saved) as old:
        conn = ConnectHandler(**old[A].netmiko())
        try:
            conn.enable()
            running = show(conn, "show running-config")
            assert "interface vlan 10 ip address 10.0.10.2 255.255.255.0" in running
            assert "## Product release" not in running
            assert field(show(conn, "show configuration files"), "Unsaved changes") == "no"
            asked = onyx_shows.show_command("files", "3.6.5000")  # before json-print: text
            assert onyx_shows.parse("files", show(conn, asked), "3.6.5000")["unsaved"] is False
            assert field(show(conn, "show version"), "Product release") == "3.6.5000"
            wait_for(lambda: field(show(conn, "show mlag"), "Operational status") == "Up")
            magp = json.loads(show(conn, "show magp | json-print"))
            assert magp[0]["header"] == "MAGP 10"
            assert magp[0]["State"] == "Master"
        finally:
            conn.disconnect()


@pytest.mark.parametrize("release", ["3.6.5000", "3.6.8008", "3.10.2002"])
def test_each_release_prints_its_own_text_layouts_and_the_parsers_read_them(release):
    switch = Switch(Identity(A, release, "7C:FE:90:11:00:0A", "127.0.0.1"))
    for command in ("protocol mlag", "mlag-vip rack1-mlag ip 10.0.0.50 /24 force"):
        switch.cfg.apply(command)
    old = release.startswith("3.6")
    mlag_text = shows.dispatch(switch, ["mlag"], json_print=False)
    assert ("Peers state Summary:" in mlag_text) is old
    assert ("\nInactive: 0" in mlag_text) is old  # counters unindented before 3.9
    mlag = onyx_shows.parse_show_mlag(mlag_text)
    assert (mlag["admin"], mlag["inactive"], mlag["active_full"]) == ("Disabled", 0, 0)
    vip_text = shows.dispatch(switch, ["mlag-vip"], json_print=False)
    assert vip_text.startswith("MLAG VIP\n========\n") is old
    assert ("MLAG VIP address: 10.0.0.50 /24" in vip_text) is old
    vip = onyx_shows.parse_show_mlag_vip(vip_text)
    assert (vip["group"], vip["vip"], vip["active_nodes"]) == ("rack1-mlag", "10.0.0.50/24", 1)
    version = shows.dispatch(switch, ["version"], json_print=True)
    assert ('"Product release"' in version) is (release != "3.10.2002")
    assert release_from_show_version(version) == release
