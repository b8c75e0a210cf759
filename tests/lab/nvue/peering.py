"""What an emulated NVUE switch knows of its MLAG peer in the lab pair (tests/lab/nvue/pair.py).

The two switch processes exchange summaries over UDP on 127.0.0.1 with the Onyx
pair's keepalive (tests/lab/onyx/switch.py Keepalive: it calls tick(), summary() and
receive() of the object it is given). A summary is what clagd learns of the peer: its
MLAG on, its peer link cut or not, its system MAC, and which MLAG bonds are up there.
From it (MLAG page of the Cumulus Linux 5.9 user guide, "Peer Link" and "Backup
Link" / "Check MLAG Status"):

- the peer is alive while summaries arrive and neither end's peer link is cut: clagd
  talks over peerlink.4094;
- the backup link answers while summaries arrive at all (the lab's keepalive plays the
  management network the backup address is reached over);
- a secondary whose peer link is down while the backup link still answers brings its
  MLAG bonds down (the page's split-brain rule: "the secondary switch ... brings down
  all MLAG bonds"); the lab's twin takes those bonds' links down;
- a bond is `dual` while the peer is alive and the peer's bond of the same MLAG id is up.

Simplified, UNCONFIRMED against a real pair: roles are fixed by the lab (lab-sw-a
primary) instead of the priority election; `backup-active` is read as "the backup link
answers".
"""

from __future__ import annotations

import time

from tests.lab.onyx.dataplane import local_mpo_active
from tests.lab.onyx.switch import PEER_TIMEOUT

from .dataplane import NvueTreeError, switch_config
from .vrrp import Elections


class Peering:
    """The peer as last heard; `enabled` False: the switch runs alone (no keepalive)."""

    def __init__(self, switch):
        self.switch = switch
        self.enabled = False
        self.msg: dict | None = None
        self.seen = 0.0
        self.ipl_cut = False  # the lab's `fail ipl`: this switch's peer-link cable is gone
        self.elections = Elections()  # VRRP (vrrp.py)

    # -------------------------------------------------- the Keepalive's interface
    def tick(self) -> None:
        """One step of the VRRP elections: the peer's advertisements cross the pair's L2
        path, so none is heard while either end's peer link is cut or the peer is silent."""
        with self.switch.lock:
            peer = self.peer()
            if peer and (self.ipl_cut or peer.get("ipl_cut")):
                peer = None
            self.elections.tick(self.switch.applied, peer, self.seen, time.monotonic())

    def summary(self) -> dict:
        with self.switch.lock:
            tree = self.switch.applied
            mlag = tree.get("mlag") or {}
            return {
                "mlag": mlag.get("enable") == "on",
                "ipl_cut": self.ipl_cut,
                "system_mac": str(mlag.get("mac-address", "")).lower(),
                "mpos": {str(n): {"active": up} for n, up in self.local_bonds().items()},
                "vrrp": self.elections.summary(tree),
            }

    def receive(self, msg: dict) -> None:
        with self.switch.lock:
            self.msg, self.seen = msg, time.monotonic()

    # -------------------------------------------------- what the switch shows
    def local_bonds(self) -> dict[int, bool]:
        """MLAG id -> the bond is up here by its config (link not down, a member not down)."""
        try:
            cfg, _ = switch_config(self.switch.applied, self.switch.name)
        except NvueTreeError:
            return {}
        return {n: local_mpo_active(cfg, n) for n in cfg.mpos}

    def peer(self) -> dict | None:
        """The peer's last summary while it keeps arriving (the backup link answers)."""
        if self.msg is not None and time.monotonic() - self.seen < PEER_TIMEOUT:
            return self.msg
        return None

    def peer_alive(self) -> bool:
        peer = self.peer()
        return bool(peer and peer["mlag"] and not self.ipl_cut and not peer["ipl_cut"])

    def bonds_suspended(self) -> bool:
        """The secondary that lost the peer link while the backup link answers."""
        return bool(
            self.switch.role == "secondary" and self.peer() is not None and not self.peer_alive()
        )

    def peer_bond_up(self, mlag_id: int) -> bool:
        peer = self.peer() if self.peer_alive() else None
        return bool(peer and (peer["mpos"].get(str(mlag_id)) or {}).get("active"))
