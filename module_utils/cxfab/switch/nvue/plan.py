"""Applied NVUE tree vs desired tree -> the fewest set/unset operations, in cxfab's scope.

The applied tree is `nv config show -o json` (what the switch runs); the desired
one is render.render(structured). A `set` is a leaf of the desired tree the
applied one lacks or holds another value for; an `unset` is the topmost applied
node cxfab owns that the desired tree does not have. Nothing else is touched:

- inside an interface cxfab renders, only the parts it renders (MODELLED): an
  operator's `bond lacp-rate` or an swp's `link speed` stays;
- a whole bondN or vlanN interface, or a bridge VLAN, is removed only when the
  structured scope lists it (an MPO set `absent`, a VLAN of the pair) or, with
  `scope.prune`, when it is an MLAG bond, SVI or VLAN cxfab no longer intends;
- `mlag` keys only with `scope.mlag`, `qos roce` only with `scope.lossless`,
  `router vrr enable` and `router vrrp enable` only with `scope.prune`.

Equal trees give no operations: a second run sends nothing.
"""

from __future__ import annotations

import shlex

from . import names, render

# Interface subpaths cxfab renders (render.py); other subpaths are the operator's.
MODELLED = (
    ("type",),
    ("description",),
    ("base-interface",),
    ("vlan",),
    ("bond", "member"),
    ("bond", "mode"),
    ("bond", "mlag"),
    ("bridge", "domain", names.BRIDGE),
    ("link", "mtu"),
    ("ip", "address"),
    ("ip", "vrr"),
    ("ip", "vrrp"),
)
SWP_MODELLED = (("link", "mtu"),)
MLAG_MODELLED = ("enable", "mac-address", "backup", "peer-ip")


def leaves(tree: dict, path: tuple = ()) -> dict[tuple, object]:
    """path -> leaf value; an empty object (a keyed-set entry) is a leaf `{}`."""
    out: dict[tuple, object] = {}
    for key, value in tree.items():
        here = (*path, str(key))
        if isinstance(value, dict) and value:
            out.update(leaves(value, here))
        else:
            out[here] = value
    return out


def _lookup(tree, path: tuple):
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return _MISSING
        tree = tree[key]
    return tree


_MISSING = object()


def _number(text: str, pattern) -> int | None:
    match = pattern.match(text)
    return int(match.group(1)) if match else None


class Owner:
    """Which applied nodes are cxfab's to remove (see the module docstring)."""

    def __init__(self, structured: dict, desired: dict, applied: dict):
        scope = structured.get("scope") or {}
        self.prune = bool(scope.get("prune"))
        self.vlans = set(scope.get("vlans") or [])
        self.bonds = set(scope.get("mlag_bonds") or [])
        self.mlag = bool(scope.get("mlag"))
        self.lossless = bool(scope.get("lossless"))
        self.desired_interfaces = desired.get("interface") or {}
        self.applied_interfaces = applied.get("interface") or {}

    def _whole_interface(self, name: str) -> bool:
        bond = _number(name, names.BOND_NAME)
        if bond is not None:
            mlag_bond = "mlag" in ((self.applied_interfaces.get(name) or {}).get("bond") or {})
            return bond in self.bonds or (self.prune and mlag_bond)
        svi = _number(name, names.SVI_NAME)
        if svi is not None:
            return svi in self.vlans or self.prune
        return False

    def _in_interface(self, name: str, rest: tuple) -> bool:
        if name not in self.desired_interfaces:
            return False
        kind = self.desired_interfaces[name].get("type")
        modelled = SWP_MODELLED if kind == "swp" else MODELLED
        return any(rest[: len(prefix)] == prefix for prefix in modelled)

    def owns(self, path: tuple) -> bool:
        head, rest = path[0], path[1:]
        if head == "interface" and rest:
            if len(rest) == 1:
                return self._whole_interface(rest[0])
            return self._in_interface(rest[0], rest[1:])
        if head == "mlag":
            return self.mlag and len(rest) >= 1 and rest[0] in MLAG_MODELLED
        if head == "bridge" and path[:4] == ("bridge", "domain", names.BRIDGE, "vlan"):
            if len(path) < 5:
                return False
            return self.prune or (path[4].isdigit() and int(path[4]) in self.vlans)
        if head == "router":
            return self.prune and path[:3] in (
                ("router", "vrr", "enable"),
                ("router", "vrrp", "enable"),
            )
        if head == "qos":
            return self.lossless and path[:2] == ("qos", "roce")
        return False


def _unsets(applied: dict, desired, path: tuple, owner: Owner, ops: list) -> None:
    for key, value in applied.items():
        here = (*path, str(key))
        wanted = desired.get(key, _MISSING) if isinstance(desired, dict) else _MISSING
        if wanted is _MISSING:
            if owner.owns(here):
                ops.append({"op": "unset", "path": list(here)})
            elif isinstance(value, dict):
                _unsets(value, None, here, owner, ops)
        elif isinstance(value, dict) and isinstance(wanted, dict) and wanted:
            _unsets(value, wanted, here, owner, ops)


def plan(structured: dict, desired: dict, applied: dict) -> list[dict]:
    """[{op: set, path, value} | {op: unset, path}]: unsets first, then sets, each in
    tree order; [] when the applied tree already holds the desired one."""
    applied = applied or {}
    ops: list[dict] = []
    _unsets(applied, desired, (), Owner(structured, desired, applied), ops)
    for path, value in leaves(desired).items():
        if _lookup(applied, path) != value:
            ops.append({"op": "set", "path": list(path), "value": value})
    return ops


def body(ops: list[dict]) -> dict:
    """The tree of the `set` operations (what a PATCH would carry; unsets are the
    transport's, a later slice)."""
    tree: dict = {}
    for op in ops:
        if op["op"] != "set":
            continue
        node = tree
        for key in op["path"][:-1]:
            node = node.setdefault(key, {})
        node[op["path"][-1]] = op["value"]
    return tree


def cli_lines(ops: list[dict]) -> list[str]:
    """The operations as `nv set`/`nv unset` lines (what check mode and the diff show)."""
    lines = []
    for op in ops:
        words = " ".join(op["path"])
        if op["op"] == "unset":
            lines.append(f"nv unset {words}")
        elif op["value"] == {}:
            lines.append(f"nv set {words}")
        else:
            lines.append(f"nv set {words} {shlex.quote(str(op['value']))}")
    return lines


def intended_lines(structured: dict) -> list[str]:
    """The switch's whole intended config as `nv set` lines (build/configs/<switch>.cfg:
    what cxfab would set on a blank switch, for people and reviews; the deploy plans
    from the structured config itself)."""
    return cli_lines(plan(structured, render.render(structured), {}))
