"""Assemble the fabric document from inventory variables, fill defaults, normalise.

The fabric document is the one source of truth every stage reads:

    {fabric_name, switch_pairs, vlans, hosts: {<inventory_hostname>: cxfab_host}, workloads,
     supported_cables, roce}

Its pieces come from these inventory variables (see docs/data-model.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import runstamp, schema
from .ipoib import max_mtu as ipoib_max_mtu

# Top-level key of the fabric document -> inventory variable (group_vars/all).
FABRIC_VARS = {
    "fabric_name": "cxfab_fabric_name",
    "switch_pairs": "cxfab_switch_pairs",
    "vlans": "cxfab_vlans",
    "workloads": "cxfab_workloads",
    "supported_cables": "cxfab_supported_cables",
    "roce": "cxfab_roce",
}
# The per-host variable (host_vars/<host>/) that becomes hosts.<host>.
HOST_VAR = "cxfab_host"
# Other cxfab_* variables a user may set: run settings, not fabric intent
# (documented in docs/switches.md, docs/verify.md), and the validated fabric fact.
RUN_SETTINGS = (
    "cxfab_switch_prune",
    "cxfab_build_dir",
    "cxfab_backup_dir",
    "cxfab_reports_dir",
    "cxfab_switch_health_wait",
    "cxfab_fabric",
    "cxfab_nic_local_cpus",
    "cxfab_structured",
    runstamp.FABRIC_STAMP_FACT,
    runstamp.STRUCTURED_STAMP_FACT,
    "cxfab_switch_known_hosts",
    "cxfab_switch_host_key_checking",
    # cumulus pairs: the NVUE API's certificates and the apply's confirm timer
    "cxfab_switch_tls_ca",
    "cxfab_switch_tls_fingerprints",
    "cxfab_switch_confirm_timeout",
    "cxfab_switch_repair",
    "cxfab_switch_snapshot_dir",
    "cxfab_verify_dataplane",
    # playbooks/drill.yml (opt-in failover drill)
    "cxfab_drill_confirm",
    "cxfab_drill_switch",
    "cxfab_drill_interval",
    "cxfab_drill_down_seconds",
    "cxfab_drill_settle_seconds",
    "cxfab_drill_fail_command",
    "cxfab_drill_restore_command",
)
NVUE_API_PORT = 8765
HOSTS_GROUP = "hosts"
SWITCHES_GROUP = "switches"

# VRRP priorities filled in when none are given (see normalise_vrrp).
VRRP_MASTER_PRIORITY = 110
VRRP_BACKUP_PRIORITY = 100


def plain(value: Any) -> Any:
    """A copy made of builtin types only (inventory values may be str/dict subclasses)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def assemble(fabric_vars: Mapping[str, Any], host_vars: Mapping[str, Any]) -> dict:
    """The raw fabric document (validation converts and checks it).

    fabric_vars: the inventory variables of FABRIC_VARS (absent ones are left out);
    host_vars: inventory hostname -> its cxfab_host value (None when undefined).
    """
    document: dict[str, Any] = {}
    for key, var in FABRIC_VARS.items():
        if var in fabric_vars:  # a null is kept: the schema names it
            document[key] = plain(fabric_vars[var])
    document["hosts"] = {name: plain(value) for name, value in host_vars.items()}
    return {key: document[key] for key in schema.TOP_LEVEL_KEYS if key in document}


def with_defaults(document: dict) -> dict:
    """A copy of a schema-valid document with every default filled in."""
    return schema.fill_defaults(schema.document_schema(), document)


def normalise(document: dict) -> dict:
    """Defaults plus the derived values every stage would otherwise recompute.

    - MAC addresses in upper case (as Onyx prints them);
    - host VLAN interface MTU defaults to the VLAN's MTU (`cxfab_vlans[].mtu`; the
      rule host-mtu-fits bounds it by the bond MTU);
    - an IPoIB interface's MTU defaults to the largest its mode carries;
    - VRRP vrid defaults to the VLAN id (when <= 255) and priorities are spread
      so that masters alternate between the two peers (see normalise_vrrp);
    - a cumulus peer's `mgmt_port` not given is NVUE's REST API port, 8765 (Cumulus
      Linux 5.9 "NVUE API", "API Port and Listening Address"), not SSH's 22.
    """
    api_port = [
        (p, q)
        for p, pair in enumerate(document.get("switch_pairs") or [])
        if pair.get("platform") == "cumulus"
        for q, peer in enumerate(pair.get("peers") or [])
        if "mgmt_port" not in peer
    ]
    fabric = with_defaults(document)
    for p, q in api_port:
        fabric["switch_pairs"][p]["peers"][q]["mgmt_port"] = NVUE_API_PORT
    for pair in fabric["switch_pairs"]:
        if "mlag" in pair:
            pair["mlag"]["system_mac"] = pair["mlag"]["system_mac"].upper()
    for vlan in fabric["vlans"]:
        gateway = vlan["gateway"]
        if "virtual_mac" in gateway:
            gateway["virtual_mac"] = gateway["virtual_mac"].upper()
        if gateway["mode"] == "vrrp" and "vrid" not in gateway["vrrp"] and vlan["id"] <= 255:
            gateway["vrrp"]["vrid"] = vlan["id"]
    normalise_vrrp(fabric)
    vlan_mtu = {}
    for vlan in fabric["vlans"]:
        if vlan["state"] == "present":
            vlan_mtu.setdefault(vlan["id"], vlan["mtu"])
    for host in fabric["hosts"].values():
        bond_mtu = host.get("bond", {}).get("mtu")
        for vlan in host["vlans"]:
            # The VLAN's own MTU; a VLAN the fabric lacks (a rule names it) takes the bond's.
            if "mtu" not in vlan and (vlan["id"] in vlan_mtu or bond_mtu is not None):
                vlan["mtu"] = vlan_mtu.get(vlan["id"], bond_mtu)
        for nic in host["nics"]:
            for port in nic["ports"]:
                ipoib = port.get("ipoib")
                if ipoib is not None and "mtu" not in ipoib:
                    ipoib["mtu"] = ipoib_max_mtu(ipoib["mode"], ipoib["ib_mtu"])
    return fabric


def pair_of_vlan(fabric: dict, vlan: dict) -> dict | None:
    """The switch pair whose peers carry the VLAN's SVIs (None if none or ambiguous)."""
    owners = [
        pair
        for pair in fabric["switch_pairs"]
        if any(peer["name"] in vlan.get("svi_addresses", {}) for peer in pair["peers"])
    ]
    return owners[0] if len(owners) == 1 else None


def normalise_vrrp(fabric: dict) -> None:
    """Fill missing VRRP priorities so masters are spread evenly over the two peers.

    Per switch pair, the VRRP VLANs are taken in VLAN id order; the n-th one
    (counting from 0) gets VRRP_MASTER_PRIORITY on peers[n % 2] and
    VRRP_BACKUP_PRIORITY on the other peer. VLANs with explicit priorities keep
    them but still count, so adding priorities to one VLAN does not move others.
    """
    counters: dict[str, int] = {}
    vrrp_vlans = [
        vlan
        for vlan in fabric["vlans"]
        if vlan["gateway"]["mode"] == "vrrp" and vlan["state"] == "present"
    ]
    for vlan in sorted(vrrp_vlans, key=lambda v: v["id"]):
        pair = pair_of_vlan(fabric, vlan)
        if pair is None:
            continue
        index = counters.get(pair["name"], 0)
        counters[pair["name"]] = index + 1
        vrrp = vlan["gateway"]["vrrp"]
        if vrrp.get("priorities"):
            continue
        names = [peer["name"] for peer in pair["peers"]]
        master = names[index % 2]
        vrrp["priorities"] = {
            name: VRRP_MASTER_PRIORITY if name == master else VRRP_BACKUP_PRIORITY for name in names
        }
