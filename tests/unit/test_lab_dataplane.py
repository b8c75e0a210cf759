"""The lab switch's dataplane twin: plan from the emulator's config, converge from read-back JSON.

The converged state of lab-sw-a (tests/unit/outputs/dataplane/lab-sw-a-converged/) is in
the JSON layouts of iproute2 6.1 and nft 1.0.6 (see SOURCES.md there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lab.onyx import dataplane, dataplane_converge, dataplane_show
from tests.lab.onyx.dataplane import Link, plan
from tests.lab.onyx.dataplane_converge import Current, converge, read_current
from tests.lab.onyx.model import SwitchConfig

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "unit" / "outputs" / "dataplane"
CONVERGED = OUT / "lab-sw-a-converged"
CABLED = {"1/1": "lab-host1:ens1f0", "1/2": "lab-host2:ens1f0", "1/35": "lab-sw-b:1/35"}
PEER_BOTH_UP = {"mpos": {"1": {"active": True}, "2": {"active": True}}}


def lab_switch(name: str = "lab-sw-a") -> SwitchConfig:
    cfg = SwitchConfig(name)
    for line in (REPO / "tests" / "golden" / "lab" / f"{name}.cfg").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            cfg.apply(line.strip())
    return cfg


def converged(**replace) -> Current:
    texts = {
        f: (CONVERGED / f"{f}.json").read_text() for f in ("link", "vlan", "addr", "fdb", "nft")
    }
    texts.update(replace)
    return read_current(texts["link"], texts["vlan"], texts["addr"], texts["fdb"], texts["nft"])


def commands(cfg: SwitchConfig, current: Current, peer=PEER_BOTH_UP, vrrp=None) -> list[str]:
    return [" ".join(c) for c in converge(plan(cfg, CABLED, peer, vrrp), current)]


# ---------------------------------------------------------------- the plan
def test_plan_follows_the_mlag_design():
    got = plan(lab_switch(), CABLED, PEER_BOTH_UP)
    mpo = got.links["mpo1"]
    assert (mpo.kind, mpo.master, mpo.mtu) == ("bond", "br0", 9216)
    assert mpo.options["mode"] == "802.3ad"
    assert mpo.options["ad_actor_system"] == "00:00:5e:00:01:5d"  # the MLAG system MAC
    assert "ad_actor_system" not in got.links["po100"].options  # the IPL is the pair's own
    assert got.links["swp1"].master == "mpo1" and got.links["swp35"].master == "po100"
    # hybrid MPO: access VLAN 1 untagged (PVID), allowed VLANs tagged
    assert got.vlans["mpo1"] == {1: (True, True), 10: (False, False), 20: (False, False),
                                 30: (False, False)}  # fmt: skip
    # the IPL carries every VLAN of the switch, the IPL VLAN too
    assert set(got.vlans["po100"]) == {1, 10, 20, 30, 4000}
    assert got.addresses["vlan10"] == {"12.0.10.252/24"}
    magp = got.links["vlan10-m10"]
    assert (magp.kind, magp.lower, magp.address) == ("macvlan", "vlan10", "00:00:5e:00:01:0a")
    assert got.addresses["vlan10-m10"] == {"12.0.10.1/32"}
    assert ("00:00:5e:00:01:0a", 10) in got.fdb
    assert got.ipl == "po100" and got.dual_connected == {"mpo1", "mpo2"}


def test_magp_is_active_active_the_same_gateway_on_both_peers():
    a, b = plan(lab_switch("lab-sw-a"), CABLED), plan(lab_switch("lab-sw-b"), CABLED)
    assert a.addresses["vlan20-m20"] == b.addresses["vlan20-m20"] == {"12.0.20.1/32"}
    assert a.links["vlan20-m20"].address == b.links["vlan20-m20"].address
    assert a.addresses["vlan20"] != b.addresses["vlan20"]  # each SVI its own address


def test_the_ipl_rule_only_blocks_mpos_up_on_both_peers():
    cfg = lab_switch()
    # peer's leg of MPO 2 down: traffic for host2 must cross the IPL and leave by mpo2 here
    peer = {"mpos": {"1": {"active": True}, "2": {"active": False}}}
    assert plan(cfg, CABLED, peer).dual_connected == {"mpo1"}
    assert plan(cfg, CABLED, None).dual_connected == set()  # peer unreachable
    cfg.apply("interface ethernet 1/1 shutdown")  # our own leg of MPO 1 down
    assert plan(cfg, CABLED, PEER_BOTH_UP).dual_connected == {"mpo2"}


def test_vrrp_vip_only_on_the_elected_master():
    cfg = lab_switch()
    cfg.apply("protocol vrrp")
    cfg.apply("interface vlan 30 vrrp 7")
    cfg.apply("interface vlan 30 vrrp 7 address 12.0.30.254")
    master = plan(cfg, CABLED, None, {"30:7": "Master"})
    assert master.links["vlan30-v7"].address == "00:00:5e:00:01:07"
    assert master.addresses["vlan30-v7"] == {"12.0.30.254/32"}
    backup = plan(cfg, CABLED, None, {"30:7": "Backup"})
    assert "vlan30-v7" not in backup.links and ("00:00:5e:00:01:07", 30) not in backup.fdb


def test_mpo_without_system_mac_gets_no_shared_actor_system():
    cfg = lab_switch()
    cfg.apply("no mlag system-mac")
    assert "ad_actor_system" not in plan(cfg, CABLED).links["mpo1"].options


def test_a_static_lag_is_balance_xor():
    cfg = lab_switch()
    cfg.apply("interface ethernet 1/1 no mlag-channel-group")
    cfg.apply("interface ethernet 1/1 mlag-channel-group 1 mode on")
    assert plan(cfg, CABLED).links["mpo1"].options == {"mode": "balance-xor", "miimon": 100}


def test_cabling_a_port_the_switch_lacks_is_refused():
    with pytest.raises(ValueError, match="1/99"):
        plan(lab_switch(), {"1/99": "x"})


# ---------------------------------------------------------------- converge
def test_converged_state_needs_no_command():
    assert commands(lab_switch(), converged()) == []


def test_blank_namespace_is_built_in_dependency_order():
    ports = {n: Link(n, "port", up=False, mtu=1500) for n in ("swp1", "swp2", "swp35")}
    got = commands(lab_switch(), Current(links=ports))
    index = {cmd: i for i, cmd in enumerate(got)}
    bridge = index["ip link add br0 type bridge vlan_filtering 1 vlan_default_pvid 0"]
    bond = index["ip link add mpo1 type bond mode 802.3ad miimon 100 lacp_rate fast "
                 "ad_actor_system 00:00:5e:00:01:5d"]  # fmt: skip
    assert bridge < bond < index["ip link set swp1 master mpo1"]
    macvlan = "ip link add link vlan10 name vlan10-m10 address 00:00:5e:00:01:0a type macvlan"
    assert (
        index["ip link add link br0 name vlan10 type vlan id 10"] < index[f"{macvlan} mode private"]
    )
    assert (
        index["bridge vlan add vid 10 dev br0 self"]
        < index["bridge fdb add 00:00:5e:00:01:0a dev br0 vlan 10 self local"]
    )
    assert got[-1] == "nft add element bridge cxfab_mlag dual_connected { mpo1, mpo2 }"
    rule = "nft add rule bridge cxfab_mlag forward iifname po100 oifname @dual_connected drop"
    assert rule in got


def test_vlan_added_to_an_mpo_is_one_bridge_vlan_add():
    cfg = lab_switch()
    cfg.apply("vlan 40")
    cfg.apply("interface mlag-port-channel 1 switchport hybrid allowed-vlan add 40")
    # VLAN 40 is also new on the IPL (it carries every VLAN): one more add there
    assert commands(cfg, converged()) == [
        "bridge vlan add vid 40 dev mpo1",
        "bridge vlan add vid 40 dev po100",
    ]


def test_vlan_added_to_an_mpo_when_the_ipl_has_it_already():
    cfg = lab_switch()
    cfg.apply("interface mlag-port-channel 2 switchport hybrid allowed-vlan remove 30")
    current = converged()
    assert commands(cfg, current) == ["bridge vlan del vid 30 dev mpo2"]
    cfg.apply("interface mlag-port-channel 2 switchport hybrid allowed-vlan add 30")
    assert commands(cfg, current) == []


def test_vlan_missing_from_the_ipl_is_put_back():
    vlans = json.loads((CONVERGED / "vlan.json").read_text())
    for entry in vlans:
        if entry["ifname"] == "po100":
            entry["vlans"] = [v for v in entry["vlans"] if v["vlan"] != 20]
    assert commands(lab_switch(), converged(vlan=json.dumps(vlans))) == [
        "bridge vlan add vid 20 dev po100"
    ]


def test_vlan_removed_from_the_switch_leaves_the_ipl_and_the_mpos():
    cfg = lab_switch()
    cfg.apply("interface vlan 30 no magp 30")
    cfg.apply("no interface vlan 30")
    cfg.apply("no vlan 30")
    got = commands(cfg, converged())
    assert "bridge vlan del vid 30 dev po100" in got
    assert "bridge vlan del vid 30 dev mpo1" in got and "bridge vlan del vid 30 dev mpo2" in got
    assert "ip link del vlan30-m30" in got and "ip link del vlan30" in got
    # leaves first: the macvlan before the VLAN device it sits on, the fdb entry too
    assert got.index("ip link del vlan30-m30") < got.index("ip link del vlan30")
    assert "bridge fdb del 00:00:5e:00:01:1e dev br0 vlan 30 self" in got
    assert not [c for c in got if " add " in f" {c} "]


def test_magp_vip_changed_replaces_the_address_only():
    cfg = lab_switch()
    cfg.apply("interface vlan 10 magp 10 ip virtual-router address 12.0.10.254")
    assert commands(cfg, converged()) == [
        "ip addr del 12.0.10.1/32 dev vlan10-m10",
        "ip addr add 12.0.10.254/32 dev vlan10-m10",
    ]


def test_magp_mac_changed_moves_the_fdb_entry():
    cfg = lab_switch()
    cfg.apply("interface vlan 10 magp 10 ip virtual-router mac-address 00:00:5E:00:01:AA")
    assert commands(cfg, converged()) == [
        "bridge fdb del 00:00:5e:00:01:0a dev br0 vlan 10 self",
        "ip link set vlan10-m10 address 00:00:5e:00:01:aa",
        "bridge fdb add 00:00:5e:00:01:aa dev br0 vlan 10 self local",
    ]


def test_mpo_shutdown_and_system_mac_change():
    cfg = lab_switch()
    cfg.apply("interface mlag-port-channel 2 shutdown")
    cfg.apply("mlag system-mac 00:00:5E:00:01:5E")
    got = commands(cfg, converged())
    assert "ip link set mpo2 down" in got
    assert "ip link set mpo1 type bond ad_actor_system 00:00:5e:00:01:5e" in got
    assert "nft delete element bridge cxfab_mlag dual_connected { mpo2 }" in got


def test_member_moved_to_another_mpo_is_released_first():
    cfg = lab_switch()
    cfg.apply("interface ethernet 1/2 no mlag-channel-group")
    cfg.apply("interface ethernet 1/2 mlag-channel-group 1 mode active")
    got = commands(cfg, converged())
    # MPO 2 lost its only member: no longer dual-connected, then swp2 leaves it
    assert got[:2] == [
        "nft delete element bridge cxfab_mlag dual_connected { mpo2 }",
        "ip link set swp2 nomaster",
    ]
    assert got.index("ip link set swp2 down") < got.index("ip link set swp2 master mpo1")


def test_bond_mode_change_rebuilds_the_bond():
    cfg = lab_switch()
    cfg.apply("interface ethernet 1/1 no mlag-channel-group")
    cfg.apply("interface ethernet 1/1 mlag-channel-group 1 mode on")
    got = commands(cfg, converged())
    assert got.index("ip link del mpo1") < got.index(
        "ip link add mpo1 type bond mode balance-xor miimon 100"
    )
    assert "ip link set swp1 master mpo1" in got and "bridge vlan add vid 10 dev mpo1" in got


def test_ipl_lost_its_peer_empties_the_set_but_keeps_the_rule():
    got = commands(lab_switch(), converged(), peer=None)
    assert got == ["nft delete element bridge cxfab_mlag dual_connected { mpo1, mpo2 }"]


def test_kernel_own_fdb_entries_are_not_touched():
    fdb = json.loads((CONVERGED / "fdb.json").read_text())
    assert any(e.get("vlan") == 4000 for e in fdb)  # br0's own MAC, added by the kernel
    assert commands(lab_switch(), converged()) == []


@pytest.mark.parametrize(
    ("reader", "text", "message"),
    [
        (dataplane_converge.parse_links, "Cannot find device", "ip -j -d link show: not JSON"),
        (dataplane_converge.parse_vlans, '{"a": 1}', "bridge -j vlan show: expected a JSON list"),
        (dataplane_converge.parse_addresses, '[{"ifname": "x"}]', "no ifname/addr_info"),
        (dataplane_converge.parse_nft, '{"x": []}', "no 'nftables' list"),
    ],
)
def test_unreadable_state_fails_closed_naming_the_command(reader, text, message):
    with pytest.raises(dataplane.DataplaneError, match=message):
        reader(text)


def test_a_cabled_port_missing_from_the_namespace_is_an_error():
    links = [e for e in json.loads((CONVERGED / "link.json").read_text()) if e["ifname"] != "swp2"]
    with pytest.raises(dataplane.DataplaneError, match="swp2 is cabled"):
        commands(lab_switch(), converged(link=json.dumps(links)))


def test_real_captures_parse():
    """Entries captured with iproute2 6.1 / nft 1.0.6 on the dev machine (SOURCES.md)."""
    links = dataplane_converge.parse_links((OUT / "capture_link_bridge_nofilter.json").read_text())
    assert links["br0"].kind == "bridge" and links["br0"].options == {"vlan_filtering": 0}
    assert links["mv0"].kind == "macvlan" and links["mv0"].lower == "br0"
    assert links["swp1"].master == "br0" and links["swp1"].kind == "port"
    fdb = dataplane_converge.parse_fdb((OUT / "capture_fdb.json").read_text())
    assert fdb == {("00:00:5e:00:01:0a", 0)}  # the bridge entry, not the device's own list
    nft = dataplane_converge.parse_nft((OUT / "capture_nft.json").read_text())
    assert nft["rule_ipl"] == "po100" and nft["elements"] == {"mpo1", "mpo2"}
    addresses = dataplane_converge.parse_addresses((OUT / "capture_addr.json").read_text())
    assert addresses["br0"] == {"12.0.10.252/24"} and addresses["mv0"] == {"12.0.10.1/32"}


# ---------------------------------------------------------------- show side
def _links_with(port: str, **slave) -> str:
    links = json.loads((CONVERGED / "link.json").read_text())
    for entry in links:
        if entry["ifname"] == port:
            entry["linkinfo"]["info_slave_data"].update(slave)
    return json.dumps(links)


def test_show_bundled_members_and_partner():
    states = dataplane_show.lag_states((CONVERGED / "link.json").read_text())
    local = dataplane_show.mpo_local(lab_switch(), 1, states)
    assert local["active"] and local["flags"] == {"1/1": "P"}
    assert local["partner"] == "52:54:00:da:00:01"  # lab-host1 bond0
    assert dataplane_show.summary_ports(local) == "Eth1/1(P)"
    assert states["po100"]["members"] == {"swp35": "P"}


@pytest.mark.parametrize(
    ("slave", "flag"),
    [
        ({"mii_status": "DOWN"}, "D"),
        # LACP never heard from the host: the member is up but not in the aggregator
        ({"ad_aggregator_id": 2, "ad_actor_oper_port_state": 71}, "I"),
        ({"ad_partner_oper_port_state": 1}, "I"),
    ],
    ids=["link-down", "other-aggregator", "partner-out-of-sync"],
)
def test_show_member_not_bundled_makes_the_mpo_inactive(slave, flag):
    states = dataplane_show.lag_states(_links_with("swp1", **slave))
    local = dataplane_show.mpo_local(lab_switch(), 1, states)
    assert local["flags"] == {"1/1": flag} and not local["active"]


def test_show_bond_without_mode_fails_closed():
    links = json.loads((CONVERGED / "link.json").read_text())
    for entry in links:
        if entry["ifname"] == "mpo1":
            del entry["linkinfo"]["info_data"]["mode"]
    with pytest.raises(dataplane.DataplaneError, match=r"bond mpo1 has no info_data\.mode"):
        dataplane_show.lag_states(json.dumps(links))


def test_the_ipl_does_not_learn_so_unicast_never_detours_over_it():
    want = plan(lab_switch(), CABLED, PEER_BOTH_UP)
    assert want.links["po100"].learning is False
    assert all(link.learning is None for name, link in want.links.items() if name != "po100")
    learning_on = converged(link=(CONVERGED / "link.json").read_text().replace(
        '"learning":false', '"learning":true'))  # fmt: skip
    assert commands(lab_switch(), learning_on) == ["bridge link set dev po100 learning off"]


def test_a_cut_ipl_downs_its_members_and_a_suspended_secondary_its_mpos():
    want = plan(lab_switch(), CABLED, PEER_BOTH_UP)
    cut = dataplane.pair_state(want, ipl_cut=True)
    assert not cut.links["swp35"].up and cut.links["mpo1"].up and cut.dual_connected == set()
    suspended = dataplane.pair_state(want, mpos_suspended=True)
    assert not suspended.links["mpo1"].up and not suspended.links["mpo2"].up
    assert suspended.links["po100"].up and suspended.links["swp35"].up
    assert commands(lab_switch(), converged()) == []
    got = [" ".join(c) for c in converge(suspended, converged())]
    assert got == ["ip link set mpo1 down", "ip link set mpo2 down"]
