"""The Onyx VRRP CLI dialect, in one place. UNCONFIRMED on a real switch.

No public Onyx VRRP command reference or `show vrrp` capture was found (MAGP,
by contrast, follows NVIDIA's documentation and the mellanox.onyx onyx_magp
module). Every VRRP line cxfab sends or reads back is written from FORMS:

  set     the line that sets a slot; roles/switch_fabric/templates/vrrp.j2
          renders the same lines (tests/unit/test_onyx_render.py fails if a
          rendered line matches no `set` form);
  remove  the line that removes it (statements.py builds removals from it);
  read    the pattern that reads the slot back from the rest of an
          `interface vlan N <rest>` running-config line (parser.py).

Removal follows the MAGP form that is documented (`interface vlan N magp M
no ip virtual-router address`): `no` after the instance prefix. Correct a form
here against a device. A line the switch refuses is reverted by the deploy
transaction, never left half applied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Form:
    set: str  # placeholders: {vlan} {vrid} {value}
    remove: str  # placeholders: {vlan} {vrid}
    read: re.Pattern  # group 1: vrid; group 2: the value, where there is one


_INSTANCE = "interface vlan {vlan} vrrp {vrid}"

FORMS: dict[str, Form] = {
    "vrrp": Form(_INSTANCE, "interface vlan {vlan} no vrrp {vrid}", re.compile(r"^vrrp (\d+)$")),
    "vrrp_address": Form(
        _INSTANCE + " address {value}",
        _INSTANCE + " no address",
        re.compile(r"^vrrp (\d+) address (\S+)$"),
    ),
    "vrrp_priority": Form(
        _INSTANCE + " priority {value}",
        _INSTANCE + " no priority",
        re.compile(r"^vrrp (\d+) priority (\d+)$"),
    ),
    "vrrp_interval": Form(
        _INSTANCE + " advertisement-interval {value}",
        _INSTANCE + " no advertisement-interval",
        re.compile(r"^vrrp (\d+) advertisement-interval (\d+)$"),
    ),
    # Preemption is on by default; only its absence is printed, as a negation
    # (`no interface vlan N vrrp V preempt` reads as `interface vlan N no vrrp V preempt`).
    "vrrp_no_preempt": Form(
        "interface vlan {vlan} no vrrp {vrid} preempt",
        _INSTANCE + " preempt",
        re.compile(r"^no vrrp (\d+) preempt$"),
    ),
}


def removal(kind: str, vlan: int, vrid: int) -> str:
    return FORMS[kind].remove.format(vlan=vlan, vrid=vrid)


def set_line(kind: str, vlan: int, vrid: int, value=None) -> str:
    return FORMS[kind].set.format(vlan=vlan, vrid=vrid, value=value)
