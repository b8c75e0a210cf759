"""VLAN egress maps NetworkManager left short, completed over netlink after activation.

Why: NetworkManager before 1.46.6 / 1.48.16 / 1.50.2 / 1.52.0 encodes each entry of
IFLA_VLAN_EGRESS_QOS (and _INGRESS_QOS) with its array index as the netlink attribute
type instead of IFLA_VLAN_QOS_MAPPING (= 1): NetworkManager/NetworkManager
src/libnm-platform/nm-linux-platform.c `_nl_msg_new_link_set_linkinfo_vlan`,
`NLA_PUT(msg, i, ...)`, fixed by commit 84bcc0eab97b "platform/vlan: fix incorrect type
for ingress/egress qos mappings" (Jan 2025; nm-1-42 and nm-1-44 never got it). Kernels
with Linux commit 6c21660fe221 "vlan: skip nested type that is not
IFLA_VLAN_QOS_MAPPING" (v6.8, backported to the stable series in 2024; the lab's Debian
12 kernel 6.1 behaves so) skip every entry whose type is not 1, so only the entry at index 1 of
NetworkManager's from-sorted map reaches the kernel: profile 0:5 ... 7:5 -> {1: 5}.

What: once NetworkManager has activated cxfab's profiles and every other difference from
the intent is gone, the VLANs whose egress map still differs get it set over netlink
(netlink.apply's `set_egress_map`, the networkd path's own call, which types the entries
correctly) and the links are read again. Anything else still differing is left to the
caller, which fails (not converged) and rolls back: this completes NetworkManager's
work, it never replaces it.

Lifetime: the map lives in the kernel only. NetworkManager writes the map only when it
activates the VLAN (nm-device-vlan.c act_stage1_prepare); a VLAN it creates again (a
reboot, the parent bond rebuilt) gets the short map again. So the stage also gives the
host agent (net/agent.py) a `vlan_egress` section, `agent_section()`: NetworkManager's
dispatcher runs the agent whenever it activates a device, and the agent sets the whole
map of that VLAN with iproute2 (`ip link set ... type vlan egress-qos-map`).
"""

from __future__ import annotations

from .linkplan import normalise_map, plan
from .netlink import apply as netlink_apply


def short_maps(intent: dict, links: dict, purge_addresses: bool) -> list[tuple]:
    """The `set_egress_map` actions left on cxfab's VLANs, if they are all that is left.

    Empty when the links converged, and empty too when anything else differs: a link
    NetworkManager did not build as the intent says is not this defect, and setting maps
    on it would only hide that.
    """
    vlans = {v["name"] for v in intent.get("vlans") or []}
    left = plan(intent, links, purge_addresses)
    maps = [a for a in left if a[0] == "set_egress_map" and a[1] in vlans]
    return maps if maps and len(maps) == len(left) else []


def complete(ipr, intent: dict, links: dict, purge_addresses: bool, read_links):
    """(links read again, steps) after setting the short maps; (links, []) when none."""
    actions = short_maps(intent, links, purge_addresses)
    if not actions:
        return links, []
    netlink_apply(ipr, actions, intent)
    steps = [
        f"set the egress map of {name} over netlink: NetworkManager left "
        f"{normalise_map(links[name].get('egress_qos_map'))}, "
        f"wanted {normalise_map(args['egress_qos_map'])}"
        for _action, name, args in actions
    ]
    return read_links(ipr), steps


def agent_section(intent: dict, root: str = "/") -> dict | None:
    """The host agent's `vlan_egress` section: per cxfab VLAN with a map, the iproute2
    command that sets the whole map (None: no VLAN has one, the section goes); `root`
    prefixes the /sys the agent looks in for the VLAN."""
    commands = {}
    for vlan in intent.get("vlans") or []:
        mapping = vlan.get("egress_qos_map")
        if not mapping:
            continue
        pairs = [f"{int(k)}:{int(v)}" for k, v in sorted(mapping.items(), key=lambda i: int(i[0]))]
        argv = ["ip", "link", "set", "dev", vlan["name"], "type", "vlan", "egress-qos-map"]
        commands[vlan["name"]] = [argv + pairs]
    return {"commands": commands, "root": root} if commands else None
