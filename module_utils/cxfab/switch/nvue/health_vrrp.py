"""The VRRP checks of a Cumulus Linux switch and of its pair, from `nv show ... -o json`.

The ids and texts are the Onyx driver's (switch/onyx/health.py): vrrp.<vlan>.<vrid>.config
(local: `address A, priority P` as intended) and vrrp.<vlan>.<vrid>.master (pair: exactly
one Master over both peers), so verify and the pair transaction judge both OSes alike.

The read is `nv show interface vlan<N> ip vrrp virtual-router -o json`, whose shape is
the one NVIDIA prints (Cumulus Linux user guide, "Virtual Router Redundancy Protocol -
VRRP", "Show VRRP Configuration"; NVUE command reference, Show Commands, VRRP):

    {"44": {"priority": 254, "preempt": "on", "advertisement-interval": 5000, ...,
            "address-family": {"ipv4": {"status": "Master", "priority": 254,
                                        "virtual-addresses": {"10.0.0.1": {}}, ...}}}}

Fail closed, as the rest of health.py: an output that is missing, not JSON, lacks the
VRID or one of these fields fails the checks built on it, never passes.
"""

from __future__ import annotations

from ...common.checks import check, judged, one_master
from . import names
from .show_json import Unreadable, field, read


def show_vrrp(vlan: int) -> str:
    return f"nv show interface {names.svi(vlan)} ip vrrp virtual-router -o json"


def needed_shows(structured: dict) -> list[str]:
    return sorted({show_vrrp(g["vlan"]) for g in structured.get("vrrp") or []})


def _expected(gateway: dict) -> str:
    return f"address {gateway['virtual_ip']}, priority {gateway['priority']}"


def _router(outputs: dict, gateway: dict) -> dict:
    routers = read(outputs, show_vrrp(gateway["vlan"]))
    return field(routers, str(gateway["vrid"]))


def _ipv4(router: dict) -> dict:
    ipv4 = field(router, "address-family", "ipv4")
    if not isinstance(ipv4, dict):
        raise Unreadable("address-family.ipv4 is not an object")
    return ipv4


def switch_checks(structured: dict, outputs: dict) -> list[dict]:
    """vrrp.<vlan>.<vrid>.config of this switch."""
    name, checks = structured["switch"], []
    for gateway in structured.get("vrrp") or []:
        check_id = f"vrrp.{gateway['vlan']}.{gateway['vrid']}.config"
        expected = _expected(gateway)
        try:
            router = _router(outputs, gateway)
            addresses = field(_ipv4(router), "virtual-addresses")
            priority = field(router, "priority")
            if not isinstance(addresses, dict | list):
                raise Unreadable("virtual-addresses is not a set of addresses")
            shown = ",".join(sorted(str(a).split("/")[0] for a in addresses)) or "none"
            observed = f"address {shown}, priority {priority}"
            checks.append(judged(check_id, name, observed == expected, expected, observed,
                                 scope="local"))  # fmt: skip
        except Unreadable as exc:
            checks.append(check(check_id, name, "fail", expected, f"unreadable: {exc}",
                                scope="local"))  # fmt: skip
    return checks


def pair_checks(pair: str, structured: dict[str, dict], outputs: dict[str, dict]) -> list[dict]:
    """vrrp.<vlan>.<vrid>.master: exactly one peer shows Master; a peer that could not be
    read fails the check (it is not "no master there")."""
    switches = sorted(structured)
    checks = []
    for gateway in structured[switches[0]].get("vrrp") or []:
        states, unread = {}, []
        for switch in switches:
            try:
                status = field(_ipv4(_router(outputs.get(switch) or {}, gateway)), "status")
                states[switch] = str(status)
            except Unreadable as exc:
                states[switch] = f"unreadable: {exc}"
                unread.append(switch)
        checks.append(one_master(gateway["vlan"], gateway["vrid"], pair, states, unread))
    return checks
