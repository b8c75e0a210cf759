"""cxfab's own netplan file from the structured config's network + ipoib sections, and back.

/etc/netplan/60-cxfab.yaml, mode 0600 (netplan warns about group/world-readable files).
Keys from netplan's reference (doc/netplan-yaml.md of canonical/netplan):

    ethernets: {<port>: {mtu}}, IPoIB ports also {infiniband-mode, addresses}
    bonds:     {<bond>: {interfaces, mtu, addresses,
                         parameters: {mode, mii-monitor-interval, lacp-rate,
                                      transmit-hash-policy}}}
    vlans:     {<vlan>: {id, link, mtu, addresses}}

every definition with `renderer: networkd` and `link-local: []` (networkd's
LinkLocalAddressing=no, as cxfab's own networkd files say).

netplan has no key for a VLAN's egress QoS map (its vlans take id and link only; the
`networkmanager: passthrough` escape hatch reaches NetworkManager alone). netplan's
networkd back end writes /run/systemd/network/10-netplan-<id>.netdev, and systemd-networkd
merges a drop-in directory <file>.netdev.d/*.conf of the same name found in any of
its search paths: cxfab writes /etc/systemd/network/10-netplan-<vlan>.netdev.d/
60-cxfab-egress-qos.conf with [VLAN] EgressQOSMaps=, which is why the definitions
force `renderer: networkd`. `read_netplan` reads the YAML and those drop-ins back
into persisted.comparable's form.
"""

from __future__ import annotations

import yaml

from . import persisted

NETPLAN_FILE = "/etc/netplan/60-cxfab.yaml"
NETPLAN_MODE = 0o600
NETWORKD_DIR = "/etc/systemd/network"
# netplan's networkd back end names its files 10-netplan-<netplan id> (src/networkd.c).
NETPLAN_NETDEV = "10-netplan-{name}.netdev"
DROPIN = "60-cxfab-egress-qos.conf"
HEADER = "# Written by cxfab from build/structured/<host>.yml; do not edit.\n"


def _common() -> dict:
    # a fresh list each time: yaml would write one shared list as an anchor and aliases
    return {"renderer": "networkd", "link-local": []}


def _addresses(addresses):
    return {"addresses": list(addresses)} if addresses else {}


def netplan_document(network: dict, ipoib: list[dict] | None = None) -> dict:
    """The netplan YAML document (a dict) of the network."""
    ethernets: dict = {}
    bonds: dict = {}
    vlans: dict = {}
    bond = network["bond"]
    if bond:
        for member in network["members"]:
            ethernets[member["name"]] = {"renderer": "networkd", "mtu": member["mtu"]}
        options = persisted.bond_options(bond)
        parameters = {"mode": options["mode"], "mii-monitor-interval": f"{bond['miimon']}ms"}
        if "lacp_rate" in options:
            parameters["lacp-rate"] = options["lacp_rate"]
        if "xmit_hash_policy" in options:
            parameters["transmit-hash-policy"] = options["xmit_hash_policy"]
        bonds[bond["name"]] = {
            **_common(),
            "interfaces": list(bond["members"]),
            "mtu": bond["mtu"],
            **_addresses(bond["addresses"]),
            "parameters": parameters,
        }
    for interface in ipoib or []:
        ethernets[interface["name"]] = {
            **_common(),
            "mtu": interface["mtu"],
            "infiniband-mode": interface["mode"],
            **_addresses(interface["addresses"]),
        }
    for vlan in network["vlans"]:
        vlans[vlan["name"]] = {
            **_common(),
            "id": vlan["id"],
            "link": vlan["link"],
            "mtu": vlan["mtu"],
            **_addresses(vlan["addresses"]),
        }
    body: dict = {"version": 2}
    for key, value in (("ethernets", ethernets), ("bonds", bonds), ("vlans", vlans)):
        if value:
            body[key] = dict(sorted(value.items()))
    return {"network": body}


def render_netplan(network: dict, ipoib: list[dict] | None = None) -> dict[str, str]:
    """{absolute path: text}: the netplan file and the VLANs' egress QoS drop-ins."""
    files = {
        NETPLAN_FILE: HEADER
        + yaml.safe_dump(
            netplan_document(network, ipoib), sort_keys=False, default_flow_style=False
        )
    }
    for vlan in network["vlans"]:
        if vlan.get("egress_qos_map"):
            pairs = " ".join(f"{p}-{up}" for p, up in sorted(vlan["egress_qos_map"].items()))
            path = f"{NETWORKD_DIR}/{NETPLAN_NETDEV.format(name=vlan['name'])}.d/{DROPIN}"
            files[path] = f"{HEADER}\n[VLAN]\nEgressQOSMaps={pairs}\n"
    return files


# ------------------------------------------------------------------------ reading
def _miimon(value) -> int | None:
    """mii-monitor-interval: "100ms", "1s" or a bare number of milliseconds."""
    if value is None:
        return None
    text = str(value)
    if text.endswith("ms"):
        return int(text[:-2])
    if text.endswith("s"):
        return int(float(text[:-1]) * 1000)
    return int(text)


def _dropin_map(text: str) -> dict[int, int] | None:
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "EgressQOSMaps":
            return persisted.qos_map(dict(pair.split("-") for pair in value.split()))
    return None


def read_netplan(files: dict[str, str]) -> dict:
    """persisted.comparable's form of cxfab's netplan file and drop-ins among `files`."""
    text = files.get(NETPLAN_FILE, "")
    network = (yaml.safe_load(text) or {}).get("network") or {}
    maps = {}
    for path, body in files.items():
        if path.endswith(f".netdev.d/{DROPIN}"):
            netdev = path.rsplit("/", 2)[-2][: -len(".netdev.d")]
            maps[netdev.removeprefix("10-netplan-")] = _dropin_map(body)
    ethernets = network.get("ethernets") or {}
    bond = None
    members = []
    for name, spec in (network.get("bonds") or {}).items():
        params = spec.get("parameters") or {}
        options = {
            "mode": params.get("mode"),
            "miimon": _miimon(params.get("mii-monitor-interval")),
            **({"lacp_rate": params["lacp-rate"]} if "lacp-rate" in params else {}),
            **(
                {"xmit_hash_policy": params["transmit-hash-policy"]}
                if "transmit-hash-policy" in params
                else {}
            ),
        }
        ports = spec.get("interfaces") or []
        bond = persisted.read_bond(
            name, ports, options, spec.get("mtu"), spec.get("addresses") or []
        )
        members += [{"name": p, "mtu": (ethernets.get(p) or {}).get("mtu")} for p in ports]
    ipoib = [
        {"name": name, "mode": spec["infiniband-mode"], "mtu": spec.get("mtu"),
         "addresses": list(spec.get("addresses") or [])}
        for name, spec in ethernets.items()
        if "infiniband-mode" in spec
    ]  # fmt: skip
    vlans = [
        {
            "name": name,
            "id": spec.get("id"),
            "link": spec.get("link"),
            "mtu": spec.get("mtu"),
            "addresses": list(spec.get("addresses") or []),
            "egress_qos_map": maps.get(name),
        }
        for name, spec in (network.get("vlans") or {}).items()
    ]
    return persisted.assemble(bond, members, vlans, ipoib)
