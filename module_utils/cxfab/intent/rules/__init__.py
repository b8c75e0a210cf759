"""Semantic cross-device rules of the fabric (checked after the schema).

Each rule is a function registered with `@rule(id)`, its docstring the one-line
summary docs/data-model.md lists; it receives a FabricView of the normalised
fabric and yields (document path, reason) pairs.
The path is a tuple inside the fabric document, e.g. ("vlans", 2,
"svi_addresses", "sw-b"); validate.py turns it into the inventory key path.

Most rules look at one entry at a time (a host, a port, a QoS entry): `each`
and `within` walk the entries for them, so such a rule states only its logic.

To add a rule: write the function in the module of its section, decorate it,
and add a negative case under tests/unit/cases/ (a test fails for any rule
without one). docs/data-model.md lists the rules (regenerate with `make docs`).
"""

from __future__ import annotations

import functools
import importlib
import ipaddress
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Finding = tuple[tuple[Any, ...], str]
ANY = "*"  # a dropped entity whose identifier could not be read (schema/prune.py)


@dataclass(frozen=True)
class Rule:
    id: str
    summary: str
    section: str
    check: Callable[[FabricView], Iterable[Finding]]


RULES: list[Rule] = []


def rule(rule_id: str) -> Callable:
    """Register a rule; its summary is its docstring, its section the module it lives in."""

    def register(check: Callable[[FabricView], Iterable[Finding]]) -> Callable:
        if any(existing.id == rule_id for existing in RULES):
            raise ValueError(f"rule {rule_id} registered twice")
        # (No docstring under python -OO: the rule still runs, only its summary is empty.)
        summary = " ".join((check.__doc__ or "").split())
        section = check.__module__.rsplit(".", 1)[-1]
        RULES.append(Rule(rule_id, summary, section, check))
        return check

    return register


class FabricView:
    """Indexes over a normalised fabric, shared by the rules."""

    def __init__(
        self,
        fabric: dict,
        groups: Mapping[str, Iterable[str]] | None = None,
        host_settings: Mapping[str, Mapping[str, Any]] | None = None,
        dropped: Mapping[str, set] | None = None,
    ):
        self.fabric = fabric
        self.groups = {name: list(members) for name, members in (groups or {}).items()}
        # inventory host -> its ansible_host/ansible_port (and cxfab_* variable names)
        self.host_settings = dict(host_settings or {})
        # Entities left out because of a schema error (see schema/prune.py).
        self.dropped = {kind: set(idents) for kind, idents in (dropped or {}).items()}
        self.pairs = fabric["switch_pairs"]
        self.vlans = fabric["vlans"]
        self.hosts = fabric["hosts"]
        self.workloads = fabric["workloads"]
        self.pair_by_name = {pair["name"]: pair for pair in self.pairs}
        self.pair_index = {pair["name"]: i for i, pair in reversed(list(enumerate(self.pairs)))}
        self.peer_pair: dict[str, dict] = {}
        # peer name -> indexes of the pairs it is a peer of (several only in error)
        self._peer_pairs: dict[str, list[int]] = {}
        # (id() of the pair, MPO id) -> (index, MPO): its first present MPO with that id
        self._mpo_by_id: dict[tuple[int, int], tuple[int, dict]] = {}
        for p, pair in enumerate(self.pairs):
            for peer in pair["peers"]:
                self.peer_pair.setdefault(peer["name"], pair)
                self._peer_pairs.setdefault(peer["name"], []).append(p)
            for index, mpo in enumerate(pair["mpos"]):
                if mpo["state"] == "present":
                    self._mpo_by_id.setdefault((id(pair), mpo["id"]), (index, mpo))
        # Present VLANs by id (the first one when ids repeat).
        self.vlan_by_id: dict[int, dict] = {}
        self.vlan_index: dict[int, int] = {}
        for index, vlan in enumerate(self.vlans):
            if vlan["state"] == "present" and vlan["id"] not in self.vlan_by_id:
                self.vlan_by_id[vlan["id"]] = vlan
                self.vlan_index[vlan["id"]] = index

    def was_dropped(self, kind: str, ident: Any) -> bool:
        """True when `ident` may name an entity left out for a schema error.

        A reference to it is then neither confirmed nor reported as undefined.
        kind: pair, peer, mpo ((pair name, id)), vlan, host.
        """
        idents = self.dropped.get(kind)
        if not idents:
            return False
        if ANY in idents or ident in idents:
            return True
        return kind == "mpo" and (ident[0], ANY) in idents

    def peer_names(self, pair: dict) -> list[str]:
        return [peer["name"] for peer in pair["peers"]]

    def mlag_pairs(self) -> Iterator[tuple[int, dict, dict]]:
        """(index, pair, its mlag section) of every switch pair with MLAG."""
        for p, pair in enumerate(self.pairs):
            if "mlag" in pair:
                yield p, pair, pair["mlag"]

    def present_mpos(self, pair: dict) -> Iterator[tuple[int, dict]]:
        for index, mpo in enumerate(pair["mpos"]):
            if mpo["state"] == "present":
                yield index, mpo

    def mpo(self, pair: dict, mpo_id: int) -> tuple[int, dict] | tuple[None, None]:
        return self._mpo_by_id.get((id(pair), mpo_id), (None, None))

    def vlan_pairs(self, vlan: dict) -> list[dict]:
        """Switch pairs with at least one SVI of the VLAN, in pair order."""
        indexes = {p for name in vlan["svi_addresses"] for p in self._peer_pairs.get(name, ())}
        return [self.pairs[p] for p in sorted(indexes)]

    def host_bond_pair_mpo(self, host: dict) -> tuple[dict | None, dict | None]:
        """(switch pair, present MPO) the host's bond is cabled to, when both exist."""
        bond = host.get("bond")
        if not bond:
            return None, None
        pair = self.pair_by_name.get(bond["switch_pair"])
        if pair is None:
            return None, None
        return pair, self.mpo(pair, bond["mpo"])[1]

    def host_netdevs(self, host: dict) -> dict[str, tuple[Any, ...]]:
        """Every interface name the host config defines -> its path under the host."""
        names: dict[str, tuple[Any, ...]] = {}
        for n, nic in enumerate(host["nics"]):
            for p, port in enumerate(nic["ports"]):
                names.setdefault(port["netdev"], ("nics", n, "ports", p, "netdev"))
        bond = host.get("bond")
        if bond:
            names.setdefault(bond["name"], ("bond", "name"))
            for v, vlan in enumerate(host["vlans"]):
                names.setdefault(f"{bond['name']}.{vlan['id']}", ("vlans", v, "id"))
        return names


# ------------------------------------------------------------------ walking helpers


def repeats(
    places: Iterable[tuple[tuple[Any, ...], Hashable, Any]],
) -> Iterator[tuple[tuple[Any, ...], Hashable, Any]]:
    """(path, key, label of its first owner) of each place whose key an earlier place has.

    `places` are (path, key, label) in report order; the first place of a key
    owns it, and every later one is the repeat a uniqueness rule reports.
    """
    owner: dict[Hashable, Any] = {}
    for path, key, label in places:
        if key in owner:
            yield path, key, owner[key]
        owner.setdefault(key, label)


def each(
    walk: Callable[..., Iterable[tuple]], *walk_args: Any, at: tuple[Any, ...] = ()
) -> Callable:
    """A rule's check of the whole fabric from the check of one entry.

    `walk(view, *walk_args)` yields (document path, entry, context...) of every entry;
    the decorated function gets (view, entry, context...) and returns why the value at
    (*path, *at) is wrong, or None when it is right. Findings come in the walk's order.
    """

    def check_all(check_one: Callable[..., str | None]) -> Callable[[FabricView], Iterator]:
        @functools.wraps(check_one)
        def check(view: FabricView) -> Iterator[Finding]:
            for path, *entry in walk(view, *walk_args):
                reason = check_one(view, *entry)
                if reason:
                    yield (*path, *at), reason

        return check

    return check_all


def within(walk: Callable[..., Iterable[tuple]], *walk_args: Any) -> Callable:
    """Like `each`, for a check with several findings in one entry (or none).

    The decorated function gets (view, entry, context...) and yields (key path inside
    the entry, reason) pairs; the rule reports each at (*path, *key path).
    """

    def check_all(check_one: Callable[..., Iterable[Finding]]) -> Callable[[FabricView], Iterator]:
        @functools.wraps(check_one)
        def check(view: FabricView) -> Iterator[Finding]:
            for path, *entry in walk(view, *walk_args):
                for inside, reason in check_one(view, *entry):
                    yield (*path, *inside), reason

        return check

    return check_all


# ------------------------------------------------------------------ address helpers


# Parsed once: the rules look at every address several times (and the objects
# are immutable, so sharing them is safe).
@functools.lru_cache(maxsize=65536)
def interface(text: str) -> ipaddress.IPv4Interface:
    return ipaddress.IPv4Interface(text)


@functools.lru_cache(maxsize=65536)
def network(text: str) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network(text, strict=True)


def is_host_address(iface: ipaddress.IPv4Interface) -> bool:
    """False for the network and broadcast address of subnets that have them."""
    net = iface.network
    if net.prefixlen >= 31:
        return True
    return iface.ip not in (net.network_address, net.broadcast_address)


def mac_problem(text: str) -> str | None:
    """Why a MAC cannot be a router/system MAC, or None."""
    octets = [int(part, 16) for part in text.split(":")]
    if not any(octets):
        return "is all-zero"
    if octets[0] & 1:
        return "is a multicast/broadcast MAC (first octet is odd); it must be unicast"
    return None


def unicast_mac_findings(path: tuple[Any, ...], mac: str | None) -> Iterator[Finding]:
    """The finding for a router/system MAC at `path` that cannot be one (none when unset)."""
    problem = mac and mac_problem(mac)
    if problem:
        yield path, f"{mac} {problem}"


# Register the rules: import the section modules in report order.
for _section in (
    "switch_pairs",
    "platforms",
    "vlans",
    "hosts",
    "host_network",
    "ipoib",
    "workloads",
    "roce",
    "inventory",
):
    importlib.import_module(f"{__name__}.{_section}")
