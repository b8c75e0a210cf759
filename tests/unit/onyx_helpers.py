"""Shared helpers of the Onyx unit tests: fabrics from inventories, rendering."""

from __future__ import annotations

from pathlib import Path

import yaml
from cxfab.intent import fabric as cxfab_fabric
from cxfab.structured import switch as structured
from cxfab.switch.onyx import render
from jinja2.nativetypes import NativeEnvironment

REPO = Path(__file__).resolve().parents[2]
ROLES = REPO / "roles"
FIXTURES = REPO / "tests" / "fixtures" / "onyx"
GOLDEN = REPO / "tests" / "golden"


def templated(value, variables: dict):
    """Jinja in the intent's values, rendered as Ansible does (native types): the lab's
    fabric.yml templates its pair's platform from lab_switch_os."""
    if isinstance(value, dict):
        return {k: templated(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [templated(v, variables) for v in value]
    if isinstance(value, str) and "{{" in value:
        return NativeEnvironment().from_string(value).render(**variables)
    return value


def inventory_fabric(inventory: Path, variables: dict | None = None) -> dict:
    """The normalised fabric of an inventory directory (what validate.yml publishes);
    `variables`: what the inventory's templates may read (e.g. lab_switch_os)."""
    return cxfab_fabric.normalise(inventory_document(inventory, variables))


def inventory_document(inventory: Path, variables: dict | None = None) -> dict:
    """The assembled (not yet validated) fabric document of an inventory directory."""
    group_vars: dict = {}
    for path in sorted((inventory / "group_vars" / "all").glob("*.yml")):
        group_vars.update(templated(yaml.safe_load(path.read_text()) or {}, variables or {}))
    host_vars = {}
    for host_dir in sorted((inventory / "host_vars").glob("*")):
        values: dict = {}
        for path in sorted(host_dir.glob("*.yml")):
            values.update(yaml.safe_load(path.read_text()) or {})
        if "cxfab_host" in values:
            host_vars[host_dir.name] = values["cxfab_host"]
    return cxfab_fabric.assemble(group_vars, host_vars)


def example_fabric(lossless: bool = True) -> dict:
    """The example fabric; lossless=False matches the real 3.6.5000 capture in FIXTURES,
    which was taken from a pair without lossless RoCE."""
    fabric = inventory_fabric(REPO / "inventories" / "example")
    fabric["roce"]["lossless"] = lossless
    return fabric


def captured_fabric(lossless: bool = False) -> dict:
    """The example fabric as the pair of the 3.6.5000 capture runs it: without lossless
    RoCE, with its IPL port-channel at the default MTU (1500) and without LLDP (off by
    default before 3.8.2000; the capture has no `lldp` line)."""
    fabric = example_fabric(lossless)
    for pair in fabric["switch_pairs"]:
        pair["mlag"]["ipl"]["mtu"] = 1500
        pair["lldp"] = False
    return fabric


def intended(fabric: dict, switch: str, prune: bool = True) -> tuple[dict, str]:
    """Structured and rendered config; a test's edits are normalised as validate.yml does."""
    sc = structured.build(cxfab_fabric.normalise(fabric), switch, prune=prune)
    return sc, render.render_config(ROLES, sc)


def every_kind_config(switch: str = "sw-a") -> str:
    """The intended config of `switch` with every statement kind cxfab manages: the
    example pair, lossless, VRRP (no preempt, interval 3) on two VLANs, MPO 1 in access mode."""
    fabric = example_fabric(lossless=True)
    for vlan in fabric["vlans"][:2]:
        vlan["gateway"] = {
            "mode": "vrrp",
            "virtual_ip": vlan["gateway"]["virtual_ip"],
            "vrrp": {"preempt": False, "advertisement_interval": 3},
        }
    pair = fabric["switch_pairs"][0]
    pair["mpos"][0].update(switchport_mode="access", access_vlan=10, allowed_vlans=[])
    return intended(fabric, switch)[1]
