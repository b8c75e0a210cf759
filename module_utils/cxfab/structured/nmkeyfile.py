"""NetworkManager keyfiles from the structured config's network + ipoib sections, and back.

One connection profile per interface, /etc/NetworkManager/system-connections/
cxfab-<interface>.nmconnection, mode 0600 (NetworkManager ignores a keyfile readable by
anyone but root: nm-settings-keyfile(5)). Keys, checked against NetworkManager's
nm-settings-keyfile(5) and nm-settings(5), its keyfile test data and the properties
linux-system-roles/network sets (docs/host-network-backends.md lists the sources):

    [connection] id, uuid, type (bond | ethernet | vlan | infiniband), interface-name,
                 master + slave-type=bond on a bond port
    [ethernet]   mtu (bond, port and VLAN: the wired setting carries their MTU)
    [bond]       one key per bonding option: mode, miimon, lacp_rate, xmit_hash_policy
    [vlan]       id, parent, egress-priority-map ("from:to" entries; a keyfile list is
                 separated by ';')
    [infiniband] transport-mode (datagram | connected), mtu
    [ipv4]       method=manual + address1..N, or method=disabled
    [ipv6]       method=disabled (networkd's LinkLocalAddressing=no)

`read_keyfiles` parses such files back into persisted.comparable's form. Pure Python,
no NetworkManager needed; the D-Bus API is not used (docs/host-network-backends.md says why).
"""

from __future__ import annotations

import configparser
import uuid

from . import persisted

KEYFILE_DIR = "/etc/NetworkManager/system-connections"
KEYFILE_MODE = 0o600
SUFFIX = ".nmconnection"
# uuid5 namespace of cxfab's profiles: a profile's uuid follows from its id alone, so a
# re-render writes the same file and NetworkManager sees the same connection.
UUID_NAMESPACE = uuid.UUID("6f1c3a52-2b8e-5d0a-9c57-63786661622e")
HEADER = "# Written by cxfab from build/structured/<host>.yml; do not edit."
# keyfile aliases (nm-settings-keyfile(5), "Name aliases") and the pre-1.46 port keys.
WIRED = ("ethernet", "802-3-ethernet")
CONTROLLER_KEYS = ("master", "controller")


def connection_id(interface: str) -> str:
    return f"{persisted.FILE_PREFIX}-{interface}"


def _keyfile(interface: str, kind: str, *sections, port_of: str | None = None) -> str:
    cid = connection_id(interface)
    head = [
        f"id={cid}",
        f"uuid={uuid.uuid5(UUID_NAMESPACE, cid)}",
        f"type={kind}",
        f"interface-name={interface}",
    ]
    if port_of:
        head += [f"master={port_of}", "slave-type=bond"]
    lines = [HEADER]
    for title, body in (("connection", head), *sections):
        lines += ["", f"[{title}]", *body]
    return "\n".join(lines) + "\n"


def _ip(addresses: list[str]):
    ipv4 = ["method=manual", *(f"address{n}={a}" for n, a in enumerate(addresses, 1))]
    return [
        ("ipv4", ipv4 if addresses else ["method=disabled"]),
        ("ipv6", ["method=disabled"]),
    ]


def render_keyfiles(network: dict, ipoib: list[dict] | None = None) -> dict[str, str]:
    """{file name: text} of every cxfab profile, file names relative to KEYFILE_DIR."""
    files: dict[str, str] = {}

    def put(interface, text):
        files[f"{connection_id(interface)}{SUFFIX}"] = text

    bond = network["bond"]
    if bond:
        options = [f"{k}={v}" for k, v in persisted.bond_options(bond).items()]
        put(
            bond["name"],
            _keyfile(
                bond["name"],
                "bond",
                ("ethernet", [f"mtu={bond['mtu']}"]),
                ("bond", options),
                *_ip(bond["addresses"]),
            ),
        )
        for member in network["members"]:
            put(
                member["name"],
                _keyfile(
                    member["name"],
                    "ethernet",
                    ("ethernet", [f"mtu={member['mtu']}"]),
                    port_of=bond["name"],
                ),
            )
    for vlan in network["vlans"]:
        params = [f"id={vlan['id']}", f"parent={vlan['link']}"]
        if vlan.get("egress_qos_map"):
            pairs = "".join(f"{p}:{up};" for p, up in sorted(vlan["egress_qos_map"].items()))
            params.append(f"egress-priority-map={pairs}")
        put(
            vlan["name"],
            _keyfile(
                vlan["name"],
                "vlan",
                ("ethernet", [f"mtu={vlan['mtu']}"]),
                ("vlan", params),
                *_ip(vlan["addresses"]),
            ),
        )
    for interface in ipoib or []:
        put(
            interface["name"],
            _keyfile(
                interface["name"],
                "infiniband",
                ("infiniband", [f"transport-mode={interface['mode']}", f"mtu={interface['mtu']}"]),
                *_ip(interface["addresses"]),
            ),
        )
    return dict(sorted(files.items()))


# ------------------------------------------------------------------------ reading
def _parse(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # keys are case-sensitive in a keyfile
    parser.read_string(text)
    return parser


def _get(parser, sections, key):
    for section in (sections,) if isinstance(sections, str) else sections:
        if parser.has_option(section, key):
            return parser.get(section, key)
    return None


def _list(value: str | None) -> list[str]:
    return [item for item in (value or "").split(";") if item.strip()]


def _addresses(parser) -> list[str]:
    if _get(parser, "ipv4", "method") != "manual":
        return []
    keys = [k for k in parser.options("ipv4") if k.startswith("address") and k[7:].isdigit()]
    # address1=1.2.3.4/24[,gateway]: the gateway part is not cxfab's
    return [parser.get("ipv4", k).split(",")[0] for k in sorted(keys, key=lambda k: int(k[7:]))]


def _int(value):
    return int(value) if value is not None else None


def read_keyfiles(files: dict[str, str]) -> dict:
    """persisted.comparable's form of the cxfab profiles among `files` ({name: text})."""
    profiles = {}
    for name, text in files.items():
        if name.rsplit("/", 1)[-1].startswith(f"{persisted.FILE_PREFIX}-"):
            parser = _parse(text)
            profiles[_get(parser, "connection", "interface-name")] = parser
    # A port names its bond by interface name (as cxfab writes) or by profile uuid.
    by_uuid = {_get(p, "connection", "uuid"): name for name, p in profiles.items()}
    bond, members, vlans, ipoib, ports = None, [], [], [], {}
    for interface, parser in profiles.items():
        kind = _get(parser, "connection", "type")
        mtu = _int(_get(parser, WIRED, "mtu"))
        controller = next(
            (v for k in CONTROLLER_KEYS if (v := _get(parser, "connection", k))), None
        )
        controller = by_uuid.get(controller, controller)
        if kind in WIRED and controller:
            members.append({"name": interface, "mtu": mtu})
            ports.setdefault(controller, []).append(interface)
        elif kind == "vlan":
            qos = dict(
                pair.split(":") for pair in _list(_get(parser, "vlan", "egress-priority-map"))
            )
            vlans.append(
                {
                    "name": interface,
                    "id": _int(_get(parser, "vlan", "id")),
                    "link": _get(parser, "vlan", "parent"),
                    "mtu": mtu,
                    "addresses": _addresses(parser),
                    "egress_qos_map": persisted.qos_map(qos),
                }
            )
        elif kind == "infiniband":
            ipoib.append(
                {
                    "name": interface,
                    "mode": _get(parser, "infiniband", "transport-mode"),
                    "mtu": _int(_get(parser, "infiniband", "mtu")),
                    "addresses": _addresses(parser),
                }
            )
    for interface, parser in profiles.items():
        if _get(parser, "connection", "type") == "bond":
            options = dict(parser.items("bond")) if parser.has_section("bond") else {}
            bond = persisted.read_bond(
                interface,
                ports.get(interface, []),
                options,
                _get(parser, WIRED, "mtu"),
                _addresses(parser),
            )
    return persisted.assemble(bond, members, vlans, ipoib)
