"""One emulated switch at run time: its config, its saved database and the pair state.

The two switch processes exchange a JSON summary of their configuration over
UDP on 127.0.0.1 every KEEPALIVE_INTERVAL (the IPL keepalive of the lab). What a
switch reports (`show mlag`, MPO states, MAGP, VRRP, MLAG-VIP) is derived from
its own config plus the last summary heard from the peer:
- the peer is *reachable* while summaries keep arriving (timeout PEER_TIMEOUT);
- the IPL is Up when both ends have a consistent IPL (port-channel with members,
  IPL VLAN interface with addresses mirroring each other, same VLAN) and neither
  end's IPL has been cut through the control channel;
- MLAG is operationally Up when both are admin enabled (`no mlag shutdown`), the
  IPL is Up and the system MACs match (otherwise ` [Mismatched]`);
- MLAG-VIP role: the member with the lower host MAC is master; a lone member is
  master; VIP traffic uses the management network, so cutting the IPL keeps
  `Active nodes: 2` while killing the peer drops it to 1;
- VRRP (vrrp.py, RFC 3768 timers): a Master's advertisement is its state in the
  summary, heard only over the pair's L2 path (the IPL); a Backup takes over when
  none came for 3 x advertisement interval + skew, a better Master wins at once,
  a Backup that outranks the Master preempts when its timer runs out (`preempt`,
  on by default). With a dataplane, a Master advertises only once its agent has put
  the virtual IP in the namespace (_forwards_vip).
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from dataclasses import asdict, dataclass

from . import dataplane_show, vrrp
from .dataplane import vrrp_link as dataplane_vrrp_link
from .model import SwitchConfig
from .runcfg import render, version_tuple
from .vrrp import MASTER

KEEPALIVE_INTERVAL = 0.5
PEER_TIMEOUT = 3.0
JSON_SHAPE_CHANGE = (3, 6, 6000)
LOG = logging.getLogger("onyx.vrrp")


@dataclass
class Identity:
    hostname: str
    release: str
    host_mac: str
    mgmt_ip: str


class Switch:
    def __init__(self, identity: Identity, saved_path: str | None = None):
        self.identity = identity
        self.cfg = SwitchConfig(hostname=identity.hostname)
        self.lock = threading.RLock()
        self.started = time.time()
        self.saved_path = saved_path
        self.saved_text = render(self.cfg, identity.release, expanded=True, generated=0)
        self.ipl_cut = False
        self.peer_msg: dict | None = None
        self.peer_seen = 0.0
        self.vrrp: dict[str, vrrp.Instance] = {}  # "vlan:vrid" -> its election
        self.ipl_up_since: float | None = None
        self.ipl_toggles = 0
        self.events: list[str] = []
        # Config lines refused on demand (control `reject-line`), to test reverts.
        self.rejected_lines: set[str] = set()
        self.logins = 0
        # The bonds of this switch's dataplane namespace as last read (dataplane_agent);
        # None: the switch has no dataplane (MPO states then follow the config alone).
        self.lag_states: dict[str, dict] | None = None
        # Reads the neighbours this switch's lldpd received (lldp.LldpReader); None: the
        # switch has no dataplane, hence no LLDP neighbour.
        self.lldp_reader = None
        # The links the dataplane agent last applied in the namespace; None: no dataplane.
        # A Master's advertisement waits for its virtual-IP link there (see summary()).
        self.dataplane_links: frozenset[str] | None = None

    # ------------------------------------------------------------------ config database
    @property
    def new_json(self) -> bool:
        return version_tuple(self.identity.release) >= JSON_SHAPE_CHANGE

    def running_config(self, expanded: bool = False) -> str:
        with self.lock:
            return render(self.cfg, self.identity.release, expanded=expanded)

    def unsaved(self) -> bool:
        with self.lock:
            current = render(self.cfg, self.identity.release, expanded=True, generated=0)
            return current != self.saved_text

    def write(self) -> None:
        with self.lock:
            self.saved_text = render(self.cfg, self.identity.release, expanded=True, generated=0)
            if self.saved_path:
                with open(self.saved_path, "w", encoding="utf-8") as handle:
                    handle.write(self.running_config())

    def mark_saved(self) -> None:
        """After loading a saved file at boot, the running config equals the saved one."""
        with self.lock:
            self.saved_text = render(self.cfg, self.identity.release, expanded=True, generated=0)

    # ------------------------------------------------------------------ keepalive summary
    def summary(self) -> dict:
        with self.lock:
            cfg = self.cfg
            ipl = self._local_ipl()
            mpos = {str(i): self._mpo_local(i) for i in cfg.mpos}
            vrrp = {}
            for vlan, svi in cfg.svis.items():
                for vrid, inst in svi.vrrp.items():
                    key = f"{vlan}:{vrid}"
                    state = self.vrrp_state.get(key, "Init")
                    vrrp[key] = {
                        "eligible": self._vrrp_eligible(vlan, vrid),
                        "priority": inst.priority,
                        "ip": str(svi.ip.ip) if svi.ip else "0.0.0.0",
                        "state": state,
                        "advertising": state == MASTER and self._forwards_vip(vlan, vrid),
                    }
            ident = asdict(self.identity)
            ident["hostname"] = cfg.hostname
            return {
                "identity": ident,
                "mlag": "mlag" in cfg.protocols,
                "admin": "mlag" in cfg.protocols and not cfg.mlag_shutdown,
                "ipl": ipl,
                "ipl_cut": self.ipl_cut,
                "system_mac": self.system_mac(),
                "vip": list(cfg.vip) if cfg.vip else None,
                "mpos": mpos,
                "vrrp": vrrp,
            }

    def _forwards_vip(self, vlan: int, vrid: int) -> bool:
        """Whether this switch's dataplane holds the instance's virtual IP.

        A real Master sends its first advertisement as it takes the address, its
        forwarding programmed within milliseconds; the lab's agent needs seconds (a
        converge over SSH into the TCG fabric guest: 15 s seen under load). Were the
        advertisement sent at the election, a preempted Master would drop the address
        while the new one's agent had not yet added it (9-10 s lost at a return, seen
        on 2026-11-27); so a Master advertises once its agent applied the address."""
        if self.dataplane_links is None:
            return True
        return dataplane_vrrp_link(vlan, vrid) in self.dataplane_links

    def system_mac(self) -> str:
        return self.cfg.system_mac or self.identity.host_mac

    def _local_ipl(self) -> dict | None:
        cfg = self.cfg
        if "mlag" not in cfg.protocols or not cfg.ip_routing:
            return None
        po = next((p for p in cfg.port_channels.values() if p.ipl == 1), None)
        svi = next((s for s in cfg.svis.values() if s.ipl_peer and s.ipl_peer[0] == 1), None)
        if po is None or svi is None or svi.ip is None:
            return None
        members = [
            e.name
            for e in cfg.ethernets.values()
            if e.member and e.member.kind == "port-channel" and e.member.group == po.id
        ]
        return {
            "po": po.id,
            "vlan": svi.vlan,
            "local": str(svi.ip.ip),
            "peer": svi.ipl_peer[1],
            "usable": bool(members) and not po.shutdown and not svi.shutdown,
        }

    def _mpo_local(self, number: int) -> dict:
        if self.lag_states is not None:
            return dataplane_show.mpo_local(self.cfg, number, self.lag_states)
        mpo = self.cfg.mpos[number]
        members = [
            e
            for e in sorted(self.cfg.ethernets.values(), key=lambda e: int(e.name.split("/")[1]))
            if e.member and e.member.kind == "mlag-port-channel" and e.member.group == number
        ]
        up = [e.name for e in members if not e.shutdown]
        return {
            "active": bool(up) and not mpo.shutdown,
            "members": [e.name for e in members],
            "lacp": any(e.member.mode != "on" for e in members),
        }

    # ------------------------------------------------------------------ peer
    def receive(self, msg: dict) -> None:
        with self.lock:
            self.peer_msg = msg
            self.peer_seen = time.monotonic()

    def peer(self) -> dict | None:
        if self.peer_msg and time.monotonic() - self.peer_seen < PEER_TIMEOUT:
            return self.peer_msg
        return None

    def status(self) -> dict:
        """The MLAG view of this switch right now."""
        with self.lock:
            cfg = self.cfg
            peer = self.peer()
            ipl = self._local_ipl()
            admin = "mlag" in cfg.protocols and not cfg.mlag_shutdown
            peer_ipl = peer["ipl"] if peer else None
            ipl_up = bool(
                ipl
                and ipl["usable"]
                and peer_ipl
                and peer_ipl["usable"]
                and not self.ipl_cut
                and not peer["ipl_cut"]
                and peer_ipl["local"] == ipl["peer"]
                and peer_ipl["peer"] == ipl["local"]
                and peer_ipl["vlan"] == ipl["vlan"]
            )
            mismatched = bool(ipl_up and peer["system_mac"].upper() != self.system_mac().upper())
            oper = admin and ipl_up and peer["admin"] and not mismatched
            mpos = {}
            for number in sorted(cfg.mpos):
                local = self._mpo_local(number)
                remote = (peer or {}).get("mpos", {}).get(str(number)) if oper else None
                remote_active = bool(remote and remote["active"])
                if not admin or not (local["active"] or remote_active):
                    state, flag = "Inactive", "D"
                elif local["active"] and remote_active:
                    state, flag = "Active-full", "U"
                elif local["active"] and peer and ipl_up and not oper:
                    state, flag = "Inactive", "S"  # suspended until the pair is consistent
                else:
                    state, flag = "Active-partial", "P" if local["active"] else "D"
                mpos[number] = {
                    "state": state,
                    "flag": flag,
                    "local": local,
                    "remote": remote,
                    "shutdown": cfg.mpos[number].shutdown,
                }
            return {
                "admin": admin,
                "oper": oper,
                "ipl": ipl,
                "ipl_up": ipl_up,
                "mismatched": mismatched,
                "peer": peer,
                "mpos": mpos,
            }

    def mpos_suspended(self) -> bool:
        """Onyx's split-brain rule: the MLAG-VIP standby that lost the IPL while its peer
        still answers over management shuts its MPOs until the IPL is back."""
        with self.lock:
            status = self.status()
            vip = self.vip_view()
            return bool(
                status["ipl"] and not status["ipl_up"] and vip and vip["peer"]
                and vip["peer"].get("ipl") and vip["role"] == "standby"
            )  # fmt: skip

    def vip_view(self) -> dict | None:
        with self.lock:
            if not self.cfg.vip or "mlag" not in self.cfg.protocols:
                return None
            peer = self.peer()
            same = bool(peer and peer["vip"] and peer["vip"][0] == self.cfg.vip[0])
            mine = self.identity.host_mac.upper()
            role = "master"
            if same and peer["identity"]["host_mac"].upper() < mine:
                role = "standby"
            return {"domain": self.cfg.vip[0], "role": role, "peer": peer if same else None}

    def prompt_label(self) -> str:
        vip = self.vip_view()
        if vip:
            return f"{vip['domain']}: {vip['role']}"
        return "standalone: master"

    # ------------------------------------------------------------------ gateways
    def magp_states(self) -> dict[int, dict]:
        with self.lock:
            oper = self.status()["oper"]
            out = {}
            for vlan, svi in self.cfg.svis.items():
                for magp_id, inst in svi.magp.items():
                    ready = oper and inst.address and inst.mac and svi.ip and not svi.shutdown
                    out[magp_id] = {
                        "vlan": vlan,
                        "state": "Master" if ready else "Init",
                        "address": inst.address or "0.0.0.0",
                        "mac": inst.mac or "00:00:00:00:00:00",
                    }
            return out

    def _vrrp_eligible(self, vlan: int, vrid: int) -> bool:
        svi = self.cfg.svis[vlan]
        inst = svi.vrrp[vrid]
        return bool(
            "vrrp" in self.cfg.protocols
            and inst.address
            and svi.ip
            and not svi.shutdown
            and not inst.shutdown
        )

    def tick(self) -> None:
        """Advance the VRRP state machines and the IPL counters (called every 0.25 s)."""
        with self.lock:
            status = self.status()
            if status["ipl_up"] and self.ipl_up_since is None:
                self.ipl_up_since = time.time()
                self.ipl_toggles += 1
            elif not status["ipl_up"]:
                self.ipl_up_since = None
            # Advertisements travel the VLANs, over the IPL: none while it is cut.
            peer = status["peer"] if status["peer"] and not self.ipl_cut else None
            if peer and peer.get("ipl_cut"):
                peer = None
            now = time.monotonic()
            elections = {}
            for vlan, svi in self.cfg.svis.items():
                for vrid, inst in svi.vrrp.items():
                    key = f"{vlan}:{vrid}"
                    local = vrrp.Local(
                        eligible=self._vrrp_eligible(vlan, vrid),
                        rank=(inst.priority, _ip_key(str(svi.ip.ip)) if svi.ip else ()),
                        preempt=inst.preempt,
                        advertisement_interval=inst.advertisement_interval,
                    )
                    other = (peer or {}).get("vrrp", {}).get(key)
                    advert = None
                    if other and other["eligible"] and other["advertising"]:
                        advert = (other["priority"], _ip_key(other["ip"]))
                    before = self.vrrp.get(key, vrrp.Instance())
                    after = vrrp.step(before, local, advert, self.peer_seen, now)
                    if after.state != before.state:
                        LOG.info("vrrp vlan %s vrid %s: %s -> %s", vlan, vrid,
                                 before.state, after.state)  # fmt: skip
                    elections[key] = after
            self.vrrp = elections

    @property
    def vrrp_state(self) -> dict[str, str]:
        """Each instance ("vlan:vrid") -> Master, Backup or Init: what show vrrp and the
        dataplane follow."""
        with self.lock:
            return {key: election.state for key, election in self.vrrp.items()}

    def vrrp_view(self) -> list[dict]:
        with self.lock:
            out = []
            for vlan in sorted(self.cfg.svis):
                svi = self.cfg.svis[vlan]
                for vrid in sorted(svi.vrrp):
                    inst = svi.vrrp[vrid]
                    out.append(
                        {
                            "vlan": vlan,
                            "vrid": vrid,
                            "state": self.vrrp_state.get(f"{vlan}:{vrid}", "Init"),
                            "address": inst.address or "0.0.0.0",
                            "priority": inst.priority,
                            "preempt": inst.preempt,
                            "interval": inst.advertisement_interval,
                            "admin": not inst.shutdown,
                            "mac": f"00:00:5E:00:01:{vrid:02X}",
                        }
                    )
            return out


def _ip_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


class Keepalive:
    """UDP keepalive between the two switch processes (127.0.0.1 only)."""

    def __init__(self, switch: Switch, port: int, peer_port: int):
        self.switch = switch
        self.peer_addr = ("127.0.0.1", peer_port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(KEEPALIVE_INTERVAL)
        self.stopping = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._send_loop, daemon=True).start()
        threading.Thread(target=self._recv_loop, daemon=True).start()

    def _send_loop(self) -> None:
        while not self.stopping.is_set():
            self.switch.tick()
            try:
                payload = json.dumps(self.switch.summary()).encode()
                self.sock.sendto(payload, self.peer_addr)
            except OSError:
                pass  # the peer's port is closed while it is down: like a lost packet
            self.stopping.wait(KEEPALIVE_INTERVAL / 2)

    def _recv_loop(self) -> None:
        while not self.stopping.is_set():
            try:
                data, _ = self.sock.recvfrom(65536)
            except (TimeoutError, OSError):
                continue
            try:
                self.switch.receive(json.loads(data))
            except ValueError:
                continue
