"""Intended vs current statements -> the lines to send, in a safe order.

- Only missing or different statements are sent; equal ones never are.
- Everything about a kind (removal line, rank, parent, owner, section) comes
  from its row in the statement table (statements.py); a planner call can be
  given another table (`table=`).
- Removals go first, in teardown order (the rows' ranks); a removal
  implied by its parent's removal is not sent (no `no vlan 30 name` when
  `no vlan 30` is sent).
- Additions follow in the order of the intended config, which the assembler
  renders in NVIDIA's build order.
- A value that cannot be overwritten (LACP mode of a member port) is removed
  and added again.
- Scope: a current statement the intent does not have is removed only when
  its owner object is managed (Scope.manages: one rule per owner, an unknown
  owner raises); protocols MLAG/MAGP/VRRP are switched off only when no
  statement of theirs is left (their rows' `held_by`).
- Unmanaged lines protect their object: a VLAN, SVI or MPO that still carries
  a line cxfab does not parse (OSPF, an ACL, anything unknown) is not removed
  or stripped; the plan names it in `warnings` and goes on.
- The same planner computes a revert (restore=True): the snapshot is the
  intent, every object is in scope, and lacp/ip routing/global PFC may go.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ...common.addressing import AddressError, expand_ids, natural_key
from .parser import ParsedConfig
from .statements import TABLE, Context, Statement, Table
from .table import OWNERS, SECTIONS, UnknownKind

__all__ = ["SECTIONS", "Plan", "Scope", "make_plan", "only_sections", "section_of"]


@dataclass
class Scope:
    """Which objects found on the switch cxfab may change or remove.

    prune=True: every VLAN, SVI, MPO, MAGP/VRRP instance and the MLAG belong to
    the fabric; those it does not describe are removed.
    prune=False: only objects the fabric names (present or `state: absent`)
    are touched; anything else on the switch is left alone.
    Lossless lines on an IPL member port are never cxfab's (it renders none there).
    """

    prune: bool = True
    everything: bool = False
    vlans: frozenset = frozenset()
    mlag_port_channels: frozenset = frozenset()
    port_channels: frozenset = frozenset()
    mlag: bool = False
    lossless: bool = False
    lossless_ports: frozenset = frozenset()
    ipl_members: frozenset = frozenset()

    @classmethod
    def from_structured(cls, structured: dict) -> Scope:
        scope = structured.get("scope", {})
        ipl = (structured.get("mlag") or {}).get("peer_link") or {}
        return cls(
            prune=bool(scope.get("prune", True)),
            vlans=frozenset(scope.get("vlans", [])),
            mlag_port_channels=frozenset(scope.get("mlag_bonds", [])),
            port_channels=frozenset(scope.get("peer_link_bonds", [])),
            mlag=bool(scope.get("mlag", False)),
            lossless=bool(scope.get("lossless", False)),
            lossless_ports=frozenset(scope.get("lossless_ports", [])),
            ipl_members=frozenset(ipl.get("members", [])),
        )

    @classmethod
    def all(cls) -> Scope:
        """Every object cxfab can parse (a revert to a snapshot)."""
        return cls(everything=True)

    def manages(self, owner_key: tuple, current: ParsedConfig) -> bool:
        """Whether cxfab may change or remove what `owner_key` owns; an unknown owner raises."""
        rule = _OWNER_RULES.get(owner_key[0])
        if rule is None:
            raise UnknownKind(f"no scope rule for the owner {owner_key!r} (owners: {OWNERS})")
        return self.everything or rule(self, owner_key, current)

    def _protocol(self, _owner: tuple, _current: ParsedConfig) -> bool:
        return True  # kept protocols are guarded by their rows (`kept`), the others by `held_by`

    def _vlan(self, owner: tuple, _current: ParsedConfig) -> bool:
        return self.prune or owner[1] in self.vlans

    def _mpo(self, owner: tuple, _current: ParsedConfig) -> bool:
        return self.prune or owner[1] in self.mlag_port_channels

    def _mlag(self, _owner: tuple, _current: ParsedConfig) -> bool:
        return self.prune or self.mlag

    def _lossless(self, owner: tuple, _current: ParsedConfig) -> bool:
        # The PFC priority is the fabric's; a port's lines are ours on the pair's ports.
        if len(owner) == 1:
            return self.prune or self.lossless
        # cxfab renders no lossless line on an IPL member; NVIDIA puts PFC there for a
        # lossless IPL (`interface ethernet 1/7-1/8 dcb priority-flow-control mode on
        # force` next to the port-channel's), so it is not cxfab's to remove, prune or not.
        if owner[1] in self.ipl_members:
            return False
        return self.prune or owner[1] in self.lossless_ports

    def _po(self, owner: tuple, current: ParsedConfig) -> bool:
        if owner[1] in self.port_channels:
            return True
        carries_ipl = ("po_ipl", owner[1]) in current.statements
        return carries_ipl and (self.prune or self.mlag)


_OWNER_RULES = {
    "protocol": Scope._protocol,
    "vlan": Scope._vlan,
    "mpo": Scope._mpo,
    "mlag": Scope._mlag,
    "lossless": Scope._lossless,
    "po": Scope._po,
}
if set(_OWNER_RULES) != set(OWNERS):
    raise UnknownKind(f"scope rules {sorted(_OWNER_RULES)} differ from the owners {OWNERS}")


@dataclass
class Plan:
    removals: list[Statement] = field(default_factory=list)
    additions: list[Statement] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    before: str = ""
    after: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.lines)


def _dedupe(lines):
    seen, out = set(), []
    for line in lines:
        if line and line not in seen:
            seen.add(line)
            out.append(line)
    return out


_UNMANAGED_OWNER = re.compile(r"^(?:no )?(?:interface (vlan|mlag-port-channel) (\d+)|vlan (\d+)) ")
# A port cxfab does not manage (an ethernet port, another port-channel) that carries
# VLANs: `interface ethernet 1/9 switchport hybrid allowed-vlan add 77`.
_UNMANAGED_MEMBERSHIP = re.compile(
    r"^interface (?:ethernet|port-channel) \S+ switchport "
    r"(?:(?:hybrid|trunk) allowed-vlan (?:add )?([\d,\-]+)|access vlan (\d+))$"
)


def unmanaged_owners(current: ParsedConfig) -> dict[tuple, list[str]]:
    """(vlan, N) / (mpo, N) -> the unknown lines that belong to (or use) that object."""
    owners: dict[tuple, list[str]] = {}
    for line in current.unknown:
        match = _UNMANAGED_OWNER.match(line)
        if match:
            if match.group(1) == "mlag-port-channel":
                key = ("mpo", int(match.group(2)))
            else:
                key = ("vlan", int(match.group(2) or match.group(3)))
            owners.setdefault(key, []).append(line)
            continue
        member = _UNMANAGED_MEMBERSHIP.match(line)
        if member:
            try:
                vlans = expand_ids(member.group(1) or member.group(2))
            except AddressError:
                continue  # no VLAN list a switch would print: nothing it protects
            for vlan in vlans:
                owners.setdefault(("vlan", vlan), []).append(line)
    return owners


def make_plan(
    intended: ParsedConfig,
    current: ParsedConfig,
    scope: Scope,
    restore: bool = False,
    table: Table = TABLE,
) -> Plan:
    plan = Plan()
    owner = table.owner
    protected = {} if restore else unmanaged_owners(current)
    replaced: set[tuple] = set()
    for key, statement in intended.statements.items():
        present = current.statements.get(key)
        if present is None:
            plan.additions.append(statement)
        elif present.value != statement.value:
            if table.needs_replace(statement):
                plan.removals.append(present)
                replaced.add(key)
            plan.additions.append(statement)

    # Changing the switchport mode clears the allowed VLANs: add them again.
    remoded = {
        st.key[1] for st in plan.additions if st.kind == "mpo_mode" and st.key in current.statements
    }
    for key, statement in intended.statements.items():
        if key[0] == "mpo_allowed" and key[1] in remoded and statement not in plan.additions:
            plan.additions.append(statement)

    held = set()
    for key, present in current.statements.items():
        if key in intended.statements:
            continue
        if not scope.manages(owner(present), current):
            continue
        if owner(present) in protected:
            held.add(owner(present))
            continue
        plan.removals.append(present)
    for key in sorted(held, key=lambda k: natural_key(" ".join(map(str, k)))):
        label = "interface mlag-port-channel" if key[0] == "mpo" else "vlan/interface vlan"
        plan.warnings.append(
            f"{label} {key[1]} is not pruned: it carries lines cxfab does not manage: "
            + "; ".join(protected[key][:3])
        )

    gone = {st.key for st in plan.removals if st.key not in replaced}
    kept_kinds = {
        key[0]
        for key in list(intended.statements) + [k for k in current.statements if k not in gone]
    }
    removals = []
    for statement in plan.removals:
        parent = table.parent_key(statement.key)
        if parent is not None and parent in gone:
            continue
        if any(kind in kept_kinds for kind in table.held_by(statement)):
            continue
        removals.append(statement)
    removals.sort(key=lambda st: (table.removal_rank(st), natural_key(" ".join(map(str, st.key)))))
    plan.removals = removals

    context = Context(current=current.statements, restore=restore)
    removal_lines = [table.removal_line(st, context) for st in removals]
    plan.lines = _dedupe(removal_lines + [st.line for st in plan.additions])

    in_scope = [st for st in current.statements.values() if scope.manages(owner(st), current)]
    # Unchanged statements show in the intended spelling on both sides, so the
    # diff holds only real changes (not `/24` versus `255.255.255.0`).
    before = _dedupe(
        intended.statements[st.key].line
        if st.key in intended.statements and intended.statements[st.key].value == st.value
        else st.line
        for st in in_scope
    )
    # Both sides in one stable order so that only real changes show.
    before = sorted(before, key=natural_key)
    plan.before = "\n".join(before) + ("\n" if before else "")
    kept = [st for st in in_scope if st.key not in gone and st.key not in intended.statements]
    after = _dedupe([st.line for st in intended.statements.values()] + [st.line for st in kept])
    after = sorted(after, key=natural_key)
    plan.after = "\n".join(after) + ("\n" if after else "")
    return plan


# ------------------------------------------------------------------ sections
def section_of(statement: Statement, ipl_vlans: frozenset, table: Table = TABLE) -> str:
    """mlag | vlans | gateway: the template group (and tag) a statement belongs to."""
    return table.section(statement, ipl_vlans)


def only_sections(parsed: ParsedConfig, sections, ipl_vlans, table: Table = TABLE) -> ParsedConfig:
    """`parsed` with the statements of the given sections only (all sections: unchanged)."""
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise UnknownKind(f"sections {sorted(unknown)} are not among {SECTIONS}")
    if set(sections) >= set(SECTIONS):
        return parsed
    kept = {
        key: st
        for key, st in parsed.statements.items()
        if table.section(st, frozenset(ipl_vlans)) in sections
    }
    return replace(parsed, statements=kept)
