"""Read a cxfab YAML inventory directory without Ansible, and patch it by key path.

Used by the tests (negative cases are a base inventory plus patches) and by the
docs generator. Only plain YAML is read: Jinja2 expressions stay strings.
"""

from __future__ import annotations

import copy
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = REPO_ROOT / "inventories" / "example"
FABRIC_FILE = Path("group_vars/all/fabric.yml")
HOST_FILE = "host_vars/{host}/cxfab.yml"

_PART_RE = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")


@dataclass
class Inventory:
    """Variables of an inventory: group_vars/all, per-host vars, and groups."""

    all_vars: dict[str, Any] = field(default_factory=dict)
    host_vars: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    hosts_file: dict[str, Any] = field(default_factory=dict)
    # Variables given inline in hosts.yml (ansible_host, ansible_port...), per host.
    inline_vars: dict[str, dict[str, Any]] = field(default_factory=dict)

    def fabric_vars(self) -> dict[str, Any]:
        return {k: v for k, v in self.all_vars.items() if k.startswith("cxfab_")}

    def host_settings(self) -> dict[str, dict[str, Any]]:
        """Per inventory host: ansible_host/ansible_port and its other cxfab_* variables."""
        names = dict.fromkeys(h for members in self.groups.values() for h in members)
        settings = {}
        for host in names:
            merged = {**self.inline_vars.get(host, {}), **self.host_vars.get(host, {})}
            settings[host] = {
                k: v
                for k, v in merged.items()
                if k in ("ansible_host", "ansible_port")
                or (k.startswith("cxfab_") and k != "cxfab_host")
            }
        return settings

    def cxfab_hosts(self) -> dict[str, Any]:
        return {
            h: self.host_vars.get(h, {}).get("cxfab_host") for h in self.groups.get("hosts", [])
        }


def _load_yaml_tree(path: Path) -> dict[str, Any]:
    """Variables of a group_vars/host_vars entry (a file or a directory of files)."""
    found: dict[str, Any] = {}
    files = sorted(path.rglob("*.yml")) if path.is_dir() else [path]
    for file in files:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        found.update(data)
    return found


def _collect_groups(
    name: str, node: dict, groups: dict[str, list[str]], inline: dict[str, dict[str, Any]]
) -> list[str]:
    hosts = (node or {}).get("hosts") or {}
    members = list(hosts)
    for host, host_vars in hosts.items():
        inline.setdefault(host, {}).update(host_vars or {})
    for child, child_node in ((node or {}).get("children") or {}).items():
        members += _collect_groups(child, child_node, groups, inline)
    groups[name] = list(dict.fromkeys(members))
    return groups[name]


def load(directory: Path = EXAMPLE) -> Inventory:
    directory = Path(directory)
    inventory = Inventory()
    hosts_path = directory / "hosts.yml"
    if hosts_path.exists():
        inventory.hosts_file = yaml.safe_load(hosts_path.read_text(encoding="utf-8")) or {}
        for name, node in inventory.hosts_file.items():
            _collect_groups(name, node, inventory.groups, inventory.inline_vars)
    for entry in sorted((directory / "group_vars").glob("all*")):
        inventory.all_vars.update(_load_yaml_tree(entry))
    host_vars_dir = directory / "host_vars"
    if host_vars_dir.is_dir():
        for entry in sorted(host_vars_dir.iterdir()):
            inventory.host_vars[entry.name.removesuffix(".yml")] = _load_yaml_tree(entry)
    if not hosts_path.exists():
        # No hosts file yet (the lab writes it at lab-up): the hosts are the
        # host_vars entries that define cxfab_host.
        inventory.groups["hosts"] = [h for h, v in inventory.host_vars.items() if "cxfab_host" in v]
    return inventory


def parse_path(path: str) -> list[str | int]:
    """`cxfab_vlans[2].svi_addresses.sw-b` -> ['cxfab_vlans', 2, 'svi_addresses', 'sw-b']."""
    parts: list[str | int] = []
    for name, index in _PART_RE.findall(path):
        parts.append(int(index) if index else name)
    return parts


def set_path(data: Any, path: str, patch: dict) -> None:
    """Apply one patch: {value: x} sets, {delete: true} removes, {append: x} appends."""
    parts = parse_path(path)
    parent = data
    for part in parts[:-1]:
        parent = parent[part]
    last = parts[-1]
    if patch.get("delete"):
        del parent[last]
    elif "append" in patch:
        parent[last].append(copy.deepcopy(patch["append"]))
    else:
        parent[last] = copy.deepcopy(patch["value"])


def apply(inventory: Inventory, patches: list[dict]) -> Inventory:
    """A patched copy. A patch with `host` edits that host's vars, else group_vars/all."""
    patched = copy.deepcopy(inventory)
    for patch in patches:
        host = patch.get("host")
        target = patched.host_vars.setdefault(host, {}) if host else patched.all_vars
        set_path(target, patch["path"], patch)
    return patched


def write_copy(source: Path, destination: Path, patches: list[dict]) -> Path:
    """Copy an inventory directory and apply patches to its YAML files."""
    shutil.copytree(source, destination)
    inventory = apply(load(source), patches)
    fabric_file = destination / FABRIC_FILE
    fabric = yaml.safe_load(fabric_file.read_text(encoding="utf-8"))
    fabric.update({k: v for k, v in inventory.all_vars.items() if k in fabric})
    fabric_file.write_text(yaml.safe_dump(fabric, sort_keys=False), encoding="utf-8")
    for host in {p["host"] for p in patches if p.get("host")}:
        host_file = destination / HOST_FILE.format(host=host)
        host_file.parent.mkdir(parents=True, exist_ok=True)
        host_file.write_text(
            yaml.safe_dump(inventory.host_vars[host], sort_keys=False), encoding="utf-8"
        )
    return destination
