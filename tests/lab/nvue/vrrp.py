"""VRRP of an emulated NVUE switch: each virtual router's election and its `nv show`.

The configuration is the applied tree's `interface vlanN ip vrrp virtual-router <vrid>`
(priority, preempt, advertisement-interval in ms, address) under `router vrrp enable on`
(NVUE command reference, VRR-and-VRRP set commands). The election is the Onyx twin's
pure RFC 3768 state machine (tests/lab/onyx/vrrp.py): a peer's virtual router in state
Master is its advertisement, heard while the pair's L2 path (the peer link) carries it,
as the Onyx pair does over its IPL. A switch that runs alone (no keepalive) hears no
advertisement and becomes Master of every virtual router.

`show()` answers `nv show interface vlanN ip vrrp virtual-router -o json` in the shape
the Cumulus Linux user guide prints ("Virtual Router Redundancy Protocol - VRRP", "Show
VRRP Configuration"): the VRID's configured values, and under address-family.ipv4 its
status (Initialize/Backup/Master), priority and virtual addresses. The counters and
timers are the lab's own figures (only their names are NVIDIA's).
"""

from __future__ import annotations

import ipaddress

from tests.lab.onyx import vrrp as rfc

ON = "on"
STATUS = {rfc.INIT: "Initialize", rfc.BACKUP: "Backup", rfc.MASTER: "Master"}


def _ip_key(text: str) -> tuple:
    return tuple(int(part) for part in text.split("."))


def configured(tree: dict) -> dict[str, dict]:
    """Each "vlan:vrid" -> what the applied tree configures for that virtual router."""
    enabled = ((tree.get("router") or {}).get("vrrp") or {}).get("enable") == ON
    out = {}
    for name, iface in (tree.get("interface") or {}).items():
        if iface.get("type") != "svi":
            continue
        ip = iface.get("ip") or {}
        vrrp = ip.get("vrrp") or {}
        addresses = sorted(ip.get("address") or {})
        primary = str(ipaddress.IPv4Interface(addresses[0]).ip) if addresses else "0.0.0.0"
        for vrid, router in (vrrp.get("virtual-router") or {}).items():
            out[f"{iface.get('vlan')}:{vrid}"] = {
                "interface": name,
                "vrid": int(vrid),
                "eligible": enabled and vrrp.get("enable") == ON and bool(router.get("address")),
                "priority": int(router.get("priority", 100)),
                "preempt": router.get("preempt", ON) == ON,
                "interval_ms": int(router.get("advertisement-interval", 1000)),
                "addresses": sorted(router.get("address") or {}),
                "ip": primary,
            }
    return out


class Elections:
    """Every virtual router's election on one switch (called under the switch's lock)."""

    def __init__(self):
        self.instances: dict[str, rfc.Instance] = {}
        self.transitions: dict[str, int] = {}

    def summary(self, tree: dict) -> dict:
        """What the keepalive carries: each virtual router's rank and state."""
        return {
            key: {"eligible": c["eligible"], "priority": c["priority"], "ip": c["ip"],
                  "state": self.instances.get(key, rfc.Instance()).state}
            for key, c in configured(tree).items()
        }  # fmt: skip

    def tick(self, tree: dict, peer: dict | None, heard_at: float, now: float) -> None:
        """One step of every election; `peer` the partner's summary while its
        advertisements reach this switch (None: they do not)."""
        after = {}
        for key, c in configured(tree).items():
            local = rfc.Local(c["eligible"], (c["priority"], _ip_key(c["ip"])), c["preempt"],
                              c["interval_ms"] / 1000)  # fmt: skip
            other = ((peer or {}).get("vrrp") or {}).get(key)
            advert = None
            if other and other["eligible"] and other["state"] == rfc.MASTER:
                advert = (other["priority"], _ip_key(other["ip"]))
            before = self.instances.get(key, rfc.Instance())
            after[key] = rfc.step(before, local, advert, heard_at, now)
            if after[key].state != before.state:
                self.transitions[key] = self.transitions.get(key, 0) + 1
        self.instances = after

    def show(self, tree: dict, interface: str) -> dict:
        """`nv show interface <interface> ip vrrp virtual-router -o json`."""
        out = {}
        for key, c in configured(tree).items():
            if c["interface"] != interface:
                continue
            state = self.instances.get(key, rfc.Instance()).state if c["eligible"] else rfc.INIT
            skew_ms = int((256 - c["priority"]) / 256 * c["interval_ms"])
            out[str(c["vrid"])] = {
                "accept-mode": "on",
                "address-family": {"ipv4": {
                    "counters": {"adv-rx": 0, "adv-tx": 0, "garp-tx": int(state == rfc.MASTER),
                                 "state-transitions": self.transitions.get(key, 0)},
                    "down-interval": 3 * c["interval_ms"] + skew_ms,
                    "master-adv-interval": c["interval_ms"],
                    "primary-addr": c["ip"],
                    "priority": c["priority"],
                    "skew-time": skew_ms,
                    "status": STATUS[state],
                    "virtual-addresses": {a: {} for a in c["addresses"]},
                    "vmac": f"00:00:5e:00:01:{c['vrid']:02x}",
                    "vrrp-interface": f"vrrp4-{interface}-{c['vrid']}",
                }},
                "advertisement-interval": c["interval_ms"],
                "auto-config": "off",
                "interface": interface,
                "is-shutdown": "off",
                "preempt": ON if c["preempt"] else "off",
                "priority": c["priority"],
                "version": 3,
            }  # fmt: skip
        return out
