"""The schema-valid part of a fabric document, for the semantic rules.

The rules need well-typed data, but one schema error must not hide every other
error of the inventory. So each entity with a schema error - a switch pair, an
MPO, a VLAN, a host, a workload pair - is left out, whole; the rules run on the
rest. What was left out is recorded (`dropped`: pair and peer names, MPOs, VLAN
ids, host names) so that a rule does not report a reference to it as undefined,
and list positions are mapped back (`original_path`) so that every error names
the index the user sees in the inventory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Path = tuple[Any, ...]
ANY = "*"  # dropped identifier that could not be read: matches every reference

# Placeholders for top-level sections that are missing or unusable: the rules
# then see an empty section (its errors are already reported by the schema).
_EMPTY_SECTIONS = {"switch_pairs": [], "vlans": [], "hosts": {}, "workloads": {}}


@dataclass
class Pruned:
    document: dict
    dropped: dict[str, set] = field(default_factory=dict)
    # list path (original indices) -> original index of each kept entry
    kept: dict[Path, list[int]] = field(default_factory=dict)

    def original_path(self, path: Path) -> Path:
        """A path into the pruned document, as a path into the original one."""
        out: list[Any] = []
        for part in path:
            positions = self.kept.get(tuple(out))
            if positions is not None and isinstance(part, int) and part < len(positions):
                part = positions[part]
            out.append(part)
        return tuple(out)


def _unit(path: Path) -> Path:
    """The entity left out for an error at `path`."""
    head = path[:1]
    if not path or path[0] == "fabric_name":
        return head
    if path[0] == "switch_pairs" and len(path) >= 4 and path[2] == "mpos":
        return path[:4]
    if path[0] in ("switch_pairs", "vlans", "hosts"):
        return path[:2]
    if path[0] == "workloads" and len(path) >= 3 and path[1] == "pairs":
        return path[:3]
    return path[:2]


def _name(entity: Any, key: str) -> Any:
    value = entity.get(key) if isinstance(entity, dict) else None
    return value if isinstance(value, str | int) and not isinstance(value, bool) else ANY


def _record(pruned: Pruned, document: dict, unit: Path) -> None:
    add = pruned.dropped.setdefault
    if unit == ("switch_pairs",):
        for kind in ("pair", "peer", "mpo"):
            add(kind, set()).add(ANY)
    elif unit[0] == "switch_pairs" and len(unit) == 2:
        pair = document["switch_pairs"][unit[1]]
        add("pair", set()).add(_name(pair, "name"))
        add("mpo", set()).add((_name(pair, "name"), ANY))
        peers = pair.get("peers") if isinstance(pair, dict) else None
        names = [_name(peer, "name") for peer in peers] if isinstance(peers, list) else [ANY]
        add("peer", set()).update(names or [ANY])
    elif unit[0] == "switch_pairs":
        pair = document["switch_pairs"][unit[1]]
        mpo = pair["mpos"][unit[3]]
        add("mpo", set()).add((_name(pair, "name"), _name(mpo, "id")))
    elif unit == ("vlans",):
        add("vlan", set()).add(ANY)
    elif unit[0] == "vlans":
        add("vlan", set()).add(_name(document["vlans"][unit[1]], "id"))
    elif unit == ("hosts",):
        add("host", set()).add(ANY)
    elif unit[0] == "hosts":
        add("host", set()).add(unit[1])


def prune(document: dict, error_paths: Iterable[Path], undefined_hosts: Iterable[str]) -> Pruned:
    """The document without the entities that hold a schema error."""
    units = {_unit(tuple(path)) for path in error_paths}
    pruned = Pruned(document={})
    for host in undefined_hosts:
        pruned.dropped.setdefault("host", set()).add(host)
    units.discard(())
    for unit in units:
        _record(pruned, document, unit)
    doc = dict(document)
    for key in [unit[0] for unit in units if len(unit) == 1]:
        doc.pop(key, None)
    for section, empty in _EMPTY_SECTIONS.items():
        if not isinstance(doc.get(section), type(empty)):
            doc[section] = type(empty)()
    doc.setdefault("fabric_name", "")

    def drop_from_list(prefix: Path, values: list) -> list:
        """`values` (the list at original path `prefix`) without its dropped entries."""
        gone = {unit[len(prefix)] for unit in units if unit[:-1] == prefix}
        positions = [i for i in range(len(values)) if i not in gone]
        if gone:
            pruned.kept[prefix] = positions
        return [values[i] for i in positions]

    positions = list(range(len(doc["switch_pairs"])))
    pairs = drop_from_list(("switch_pairs",), doc["switch_pairs"])
    positions = pruned.kept.get(("switch_pairs",), positions)
    for k, (position, pair) in enumerate(zip(positions, pairs, strict=True)):
        if isinstance(pair, dict) and isinstance(pair.get("mpos"), list):
            mpos = drop_from_list(("switch_pairs", position, "mpos"), pair["mpos"])
            pairs[k] = {**pair, "mpos": mpos}
    doc["switch_pairs"] = pairs
    doc["vlans"] = drop_from_list(("vlans",), doc["vlans"])
    doc["hosts"] = {
        name: host for name, host in doc["hosts"].items() if ("hosts", name) not in units
    }
    workloads = doc["workloads"]
    if isinstance(workloads, dict):
        workloads = {k: v for k, v in workloads.items() if ("workloads", k) not in units}
        if isinstance(workloads.get("pairs"), list):
            workloads["pairs"] = drop_from_list(("workloads", "pairs"), workloads["pairs"])
        doc["workloads"] = workloads
    pruned.document = doc
    return pruned
