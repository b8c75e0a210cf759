"""`show running-config` writer, in the flat format of the real releases.

Layout taken from public captures: a 3.6.5000 running-config (mellanox.onyx unit
fixture) and a 3.9.3210 one (HPE/Cray docs). Differences reproduced:
- 3.6: `ip address a.b.c.d 255.255.255.0`, no `Product release` header line,
  `Other IP configuration` (hostname, not indented) before the DCB section;
- 3.10: `ip address a.b.c.d/len primary`, `Product release` in the header,
  `Other IP configuration` after the MLAG section.
Lines starting with `no` are not indented. Some per-interface lines are written
as ranges (`interface ethernet 1/13-1/14 channel-group 100 mode active`); the
`switchport` and VLAN membership lines never are, as on the 3.9 capture.
The VRRP section is a best guess (no public reference exists).

Every line cxfab manages is printed from its row's set form in the product's
statement table (module_utils/cxfab/switch/onyx/statements.py), so a new row is
printed without an edit here; only what a release prints differently from the
set form is spelled here (`ip routing vrf default`, the SVI address per release,
quoted names and descriptions, `no interface vlan N vrrp V preempt`), and lines
cxfab does not manage (speed, port MTU, shutdown, descriptions of ports).
"""

from __future__ import annotations

import time

from module_utils.cxfab.switch.onyx.statements import TABLE, Statement

from .model import SwitchConfig

NEW_LAYOUT = (3, 9, 0)


def version_tuple(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


def _eth_key(name: str) -> tuple[int, int]:
    module, port = name.split("/")
    return int(module), int(port)


class _Lines:
    """Per-interface lines, optionally folded into ranges of consecutive interfaces."""

    def __init__(self, compress: bool):
        self.compress = compress
        self.out: list[str] = []

    def add(self, kind: str, items: list[tuple[str | int, str]], fold: bool = True) -> None:
        """items: (interface id, suffix) in output order."""
        run: list[str | int] = []
        suffix = ""

        def flush() -> None:
            if run:
                self.out.append(f"interface {kind} {_range(kind, run)}{suffix}")

        for ident, text in items:
            text = f" {text}" if text else ""
            if self.compress and fold and run and text == suffix and _next(kind, run[-1]) == ident:
                run.append(ident)
                continue
            flush()
            run, suffix = [ident], text
        flush()


def _set(*key, value=True) -> str:
    """The line of one managed statement: its row's set form."""
    return TABLE.set_line(Statement(tuple(key), value))


def _suffix(*key, value=True) -> str:
    """The set form of a per-interface statement without its `interface <kind> <id>` head."""
    line = _set(*key, value=value)
    kind, ident = line.split(" ")[1:3]
    return line.removeprefix(f"interface {kind} {ident}").strip()


def _next(kind: str, ident: str | int) -> str | int:
    if kind == "ethernet":
        module, port = _eth_key(str(ident))
        return f"{module}/{port + 1}"
    return int(ident) + 1


def _range(kind: str, run: list[str | int]) -> str:
    if len(run) == 1:
        return str(run[0])
    return f"{run[0]}-{run[-1]}"


def _svi_ip(svi, new: bool) -> str:
    if new:
        return f"{svi.ip.ip}/{svi.ip.network.prefixlen} primary"
    return f"{svi.ip.ip} {svi.ip.netmask}"


def render(
    cfg: SwitchConfig,
    release: str,
    expanded: bool = False,
    generated: float | None = None,
) -> str:
    new = version_tuple(release) >= NEW_LAYOUT
    compress = not expanded
    stamp = time.strftime(
        "%Y/%m/%d %H:%M:%S +0000", time.gmtime(time.time() if generated is None else generated)
    )
    header = ["##", '## Running database "initial"', f"## Generated at {stamp}"]
    header.append(f"## Hostname: {cfg.hostname}")
    if new:
        header.append(f"## Product release: {release}")
    header.append("##")

    sections: list[tuple[str, list[str]]] = []
    sections.append(
        ("Running-config temporary prefix mode setting", ["no cli default prefix-modes enable"])
    )
    mlag = [_set("protocol", "mlag")] if "mlag" in cfg.protocols else []
    sections.append(("MLAG protocol", mlag))
    sections.append(("Interface Ethernet configuration", _interfaces(cfg, compress)))
    sections.append(("LAG configuration", _lag(cfg, compress)))
    sections.append(("LLDP configuration", [_set("protocol", "lldp")] if cfg.lldp else []))
    sections.append(("VLAN configuration", _vlans(cfg)))
    sections.append(("L3 configuration", _l3(cfg, new)))
    hostname = ("   " if new else "") + f"hostname {cfg.hostname}"
    if not new:
        sections.append(("Other IP configuration", [hostname]))
    sections.append(("DCBX PFC configuration", _pfc(cfg, compress)))
    sections.append(("MAGP configuration", _magp(cfg)))
    sections.append(("VRRP configuration", _vrrp(cfg)))
    sections.append(("MLAG configurations", _mlag(cfg)))
    if new:
        sections.append(("Other IP configuration", [hostname]))
    sections.append(("Persistent prefix mode setting", ["cli default prefix-modes enable"]))

    out = list(header)
    for title, lines in sections:
        if not lines:
            continue
        out += ["", "##", f"## {title}", "##"]
        out += [_indent(line) for line in lines]
    return "\n".join(out) + "\n"


def _indent(line: str) -> str:
    if line.startswith(("no ", "cli ", "hostname ")) or line.startswith("   "):
        return line
    return "   " + line


def _interfaces(cfg: SwitchConfig, compress: bool) -> list[str]:
    lines = _Lines(compress)
    eths = sorted(cfg.ethernets.values(), key=lambda e: _eth_key(e.name))
    mpos = sorted(cfg.mpos.values(), key=lambda m: m.id)
    pos = sorted(cfg.port_channels.values(), key=lambda p: p.id)
    lines.add("mlag-port-channel", [(m.id, _suffix("mpo", m.id)) for m in mpos])
    lines.add("port-channel", [(p.id, _suffix("po", p.id)) for p in pos])
    lines.add("ethernet", [(e.name, f"speed {e.speed} force") for e in eths if e.speed])
    lines.add("ethernet", [(e.name, f"mtu {e.mtu} force") for e in eths if e.mtu != 1500])
    # Lossless RoCE: trust and ECN per port (placement in this section is a best guess).
    trust = [(e.name, _suffix("eth_trust", e.name, value=e.trust)) for e in eths if e.trust != "L2"]
    lines.add("ethernet", trust)
    ecn = [
        (e.name, _suffix("eth_ecn", e.name, tc, value=marks))
        for e in eths
        for tc, marks in sorted(e.ecn.items())
    ]
    lines.add("ethernet", ecn)
    po_mtu = [(p.id, _suffix("po_mtu", p.id, value=p.mtu)) for p in pos if p.mtu != 1500]
    lines.add("port-channel", po_mtu)
    mpo_mtu = [(m.id, _suffix("mpo_mtu", m.id, value=m.mtu)) for m in mpos if m.mtu != 1500]
    lines.add("mlag-port-channel", mpo_mtu)
    members = []
    for eth in eths:
        if eth.member:
            member = (eth.member.kind, eth.member.group, eth.member.mode)
            members.append((eth.name, _suffix("eth_channel", eth.name, value=member)))
    lines.add("ethernet", members)
    for kind, lags in (("mlag-port-channel", mpos), ("port-channel", pos)):
        # cxfab manages the MPOs' switchport mode; the IPL port-channel's is the switch's.
        modes = [(x.id, f"switchport mode {x.switchport.mode}") for x in lags]
        lines.add(
            kind,
            [m for m, x in zip(modes, lags, strict=True) if x.switchport.mode != "access"],
            fold=False,
        )
    lines.add(
        "ethernet",
        [(e.name, f'description "{e.description}"') for e in eths if e.description],
        fold=False,
    )
    for kind, lags in (("port-channel", pos), ("mlag-port-channel", mpos)):
        lines.add(
            kind,
            [(x.id, f'description "{x.description}"') for x in lags if x.description],
            fold=False,
        )
    lines.add("ethernet", [(e.name, "shutdown") for e in eths if e.shutdown])
    lines.add("port-channel", [(p.id, "shutdown") for p in pos if p.shutdown])
    enabled = [(m.id, _suffix("mpo_enabled", m.id)) for m in mpos if not m.shutdown]
    lines.add("mlag-port-channel", enabled)
    return lines.out


def _lag(cfg: SwitchConfig, compress: bool) -> list[str]:
    lines = _Lines(compress)
    if cfg.lacp:
        lines.out.append(_set("protocol", "lacp"))
    mpos = sorted(cfg.mpos.values(), key=lambda m: m.id)
    lines.add(
        "mlag-port-channel",
        [(m.id, "lacp-individual enable force") for m in mpos if m.lacp_individual],
    )
    return lines.out


def _vlans(cfg: SwitchConfig) -> list[str]:
    out = [_set("vlan", vlan) for vlan in sorted(cfg.vlans) if vlan != 1]
    # Names print quoted, spaces or not (the set form quotes only names with spaces).
    out += [f'vlan {vlan} name "{name}"' for vlan, name in sorted(cfg.vlans.items()) if name]
    lags = [("port-channel", p) for p in sorted(cfg.port_channels.values(), key=lambda p: p.id)]
    lags += [("mlag-port-channel", m) for m in sorted(cfg.mpos.values(), key=lambda m: m.id)]
    for kind, lag in lags:
        sp = lag.switchport
        if sp.mode != "trunk" and sp.access_vlan != 1:
            out.append(f"interface {kind} {lag.id} switchport access vlan {sp.access_vlan}")
    for kind, lag in lags:
        sp = lag.switchport
        for vlan in sorted(sp.allowed):
            out.append(f"interface {kind} {lag.id} switchport {sp.mode} allowed-vlan add {vlan}")
    return out


def _l3(cfg: SwitchConfig, new: bool) -> list[str]:
    out = ["ip routing vrf default"] if cfg.ip_routing else []
    svis = [cfg.svis[v] for v in sorted(cfg.svis)]
    out += [_set("svi", s.vlan) for s in svis]
    out += [f"interface vlan {s.vlan} ip address {_svi_ip(s, new)}" for s in svis if s.ip]
    out += [_set("svi_mtu", s.vlan, value=s.mtu) for s in svis if s.mtu != 1500]
    out += [f"interface vlan {s.vlan} shutdown" for s in svis if s.shutdown]
    return out


def _pfc(cfg: SwitchConfig, compress: bool) -> list[str]:
    lines = _Lines(compress)
    if cfg.pfc_global:
        lines.out.append(_set("protocol", "dcb pfc"))
    lines.out += [_set("pfc_priority", p) for p in sorted(cfg.pfc_priorities)]
    eths = sorted(cfg.ethernets.values(), key=lambda e: _eth_key(e.name))
    lines.add("ethernet", [(e.name, _suffix("eth_pfc", e.name)) for e in eths if e.pfc])
    pos = sorted(cfg.port_channels.values(), key=lambda p: p.id)
    lines.add("port-channel", [(p.id, _suffix("po_pfc", p.id)) for p in pos if p.pfc])
    return lines.out


def _magp(cfg: SwitchConfig) -> list[str]:
    out = [_set("protocol", "magp")] if "magp" in cfg.protocols else []
    for vlan in sorted(cfg.svis):
        for inst in sorted(cfg.svis[vlan].magp.values(), key=lambda m: m.id):
            out.append(_set("magp", vlan, inst.id))
            if inst.address:
                out.append(_set("magp_vip", vlan, inst.id, value=inst.address))
            if inst.mac:
                out.append(_set("magp_vmac", vlan, inst.id, value=inst.mac))
    return out


def _vrrp(cfg: SwitchConfig) -> list[str]:
    out = [_set("protocol", "vrrp")] if "vrrp" in cfg.protocols else []
    for vlan in sorted(cfg.svis):
        for inst in sorted(cfg.svis[vlan].vrrp.values(), key=lambda v: v.vrid):
            base = _set("vrrp", vlan, inst.vrid)
            out.append(base)
            if inst.address:
                out.append(_set("vrrp_address", vlan, inst.vrid, value=inst.address))
            if inst.priority != 100:
                out.append(_set("vrrp_priority", vlan, inst.vrid, value=inst.priority))
            if inst.advertisement_interval != 1:
                interval = inst.advertisement_interval
                out.append(_set("vrrp_interval", vlan, inst.vrid, value=interval))
            if not inst.preempt:  # printed as a negation of the whole line
                out.append(f"no {base} preempt")
            if inst.shutdown:
                out.append(f"{base} shutdown")
    return out


def _mlag(cfg: SwitchConfig) -> list[str]:
    if "mlag" not in cfg.protocols:
        return []
    out = []
    if cfg.vip:
        domain, address, prefix = cfg.vip
        out.append(_set("mlag_vip", value=(domain, f"{address}/{prefix}")))
    if not cfg.mlag_shutdown:
        out.append(_set("mlag_enabled"))
    if cfg.system_mac:
        out.append(_set("mlag_system_mac", value=cfg.system_mac))
    for po in sorted(cfg.port_channels.values(), key=lambda p: p.id):
        if po.ipl is not None:
            out.append(_set("po_ipl", po.id, value=po.ipl))
    for vlan in sorted(cfg.svis):
        svi = cfg.svis[vlan]
        if svi.ipl_peer:
            out.append(_set("svi_ipl_peer", vlan, value=svi.ipl_peer))
    return out


def config_lines(text: str) -> list[str]:
    """The commands of a saved running-config, in order (comments and mode lines dropped)."""
    lines = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line in ("no cli default prefix-modes enable", "cli default prefix-modes enable"):
            continue
        lines.append(line)
    return lines
