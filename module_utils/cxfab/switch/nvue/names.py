"""cxfab's names for NVUE objects: ports, bonds, SVIs and the one bridge.

Ports are written in the Onyx notation in the intent (`1/N`, the Spectrum front
panel port N) and named `swpN` on Cumulus Linux (its front panel ports, Cumulus
Linux 5.9 user guide "Switch Port Attributes"). Split ports are refused by the
intent rule `cumulus-ports-unsplit` until their NVUE names are confirmed.
"""

from __future__ import annotations

import re

BRIDGE = "br_default"  # NVUE's default VLAN-aware bridge ("VLAN-aware Bridge Mode")
PEERLINK = "peerlink"  # the inter-chassis bond NVUE names by default (MLAG, step 5)
PEERLINK_VLAN = 4094  # its subinterface peerlink.4094 (MLAG, step 5)
PEERLINK_SUB = f"{PEERLINK}.{PEERLINK_VLAN}"

_WHOLE_PORT = re.compile(r"^1/([1-9][0-9]?)$")


class NvueNameError(ValueError):
    """A name cxfab cannot translate to NVUE (e.g. a split port)."""


def swp(port: str) -> str:
    """`1/7` -> `swp7`."""
    match = _WHOLE_PORT.match(str(port))
    if not match:
        raise NvueNameError(f"port {port!r}: only whole ports 1/N map to NVUE swpN")
    return f"swp{match.group(1)}"


def bond(mpo_id: int) -> str:
    """MLAG bond N is interface bondN (NVUE sets type bond for a `bond` name)."""
    return f"bond{mpo_id}"


def svi(vlan: int) -> str:
    return f"vlan{vlan}"


BOND_NAME = re.compile(r"^bond([0-9]+)$")
SVI_NAME = re.compile(r"^vlan([0-9]+)$")
