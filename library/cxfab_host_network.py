#!/usr/bin/python
"""Ansible module: bond, VLAN interfaces, MTUs, addresses and egress maps over netlink."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_host_network
short_description: Build the data bond and its VLAN interfaces over netlink (pyroute2)
description:
  - Reads the links over netlink, compares them with the C(network) section of
    the host's structured config and changes only what differs - bond (mode, miimon, LACP rate, hash
    policy), members, MTUs, VLAN interfaces with their egress-qos-map, IPv4
    addresses - then reads the links again; C(changed) comes from that before/after.
  - Refuses, before changing anything, an intent touching the management
    interface, the interface holding the address the Ansible connection came in
    on, or the interface routing back to the controller (and the devices under them).
version_added: "0.1.0"
  - Writes the systemd-networkd files of the structured config (C(networkd)) so
    the same state comes back at boot, removes cxfab's files that are no longer
    wanted and reloads networkd when a file changed (where systemd runs).
options:
  structured:
    description: The host's structured config (C(build/structured/<host>.yml)).
    type: dict
    required: true
  ssh_connection:
    description:
      - Value of C(SSH_CONNECTION) on the host (client ip, client port, server ip,
        server port). Empty - the module's environment, else that of the process
        that started it (sudo drops it).
    type: str
    default: ""
  protected_interfaces:
    description: More interfaces the module must never touch.
    type: list
    elements: str
    default: []
  purge_addresses:
    description: Remove IPv4 addresses of managed interfaces that the intent does not list.
    type: bool
    default: true
  persist:
    description: Write the systemd-networkd files.
    type: bool
    default: true
  networkd_dir:
    description: Directory of the systemd-networkd files.
    type: path
    default: /etc/systemd/network
author: cxfab
"""

EXAMPLES = r"""
- name: Build the data bond and VLANs
  cxfab_host_network:
    structured: "{{ hostvars['localhost'].cxfab_structured[inventory_hostname] }}"
"""

RETURN = r"""
actions:
  description: Changes applied (or, in check mode, that would be applied).
  type: list
  elements: str
  returned: always
protected:
  description: Interfaces never touched, with the reason.
  type: dict
  returned: always
links:
  description: Managed links after the run (kind, mtu, master, vlan, egress map, addresses).
  type: dict
  returned: always
intent:
  description: Desired bond, members and VLANs (the structured config's network section).
  type: dict
  returned: always
files:
  description: systemd-networkd files written or removed (or that would be).
  type: list
  elements: str
  returned: always
"""

import os  # noqa: E402
import socket  # noqa: E402

from ansible.module_utils.basic import AnsibleModule, missing_required_lib  # noqa: E402
from ansible.module_utils.cxfab.hostnet import IntentError  # noqa: E402
from ansible.module_utils.cxfab.hostnet.bonding import (  # noqa: E402
    BOND_MODES,
    LACP_RATES,
    XMIT_HASH_POLICIES,
)
from ansible.module_utils.cxfab.hostnet.linkplan import (  # noqa: E402
    check_protected,
    describe,
    plan,
    simulate,
    summary,
)

try:
    from pyroute2 import IPRoute
    from pyroute2.netlink.exceptions import NetlinkError

    PYROUTE2_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - reported through fail_json
    IPRoute = None
    NetlinkError = OSError
    PYROUTE2_IMPORT_ERROR = exc

IFF_UP = 0x1
# Every systemd-networkd file cxfab writes starts with this (build/structured networkd).
NETWORKD_PREFIX = "60-cxfab-"
MODE_NAMES = {v: k for k, v in BOND_MODES.items()}
LACP_NAMES = {v: k for k, v in LACP_RATES.items()}
HASH_NAMES = {v: k for k, v in XMIT_HASH_POLICIES.items()}


def _info(msg):
    linkinfo = msg.get_attr("IFLA_LINKINFO")
    if not linkinfo:
        return None, None
    return linkinfo.get_attr("IFLA_INFO_KIND"), linkinfo.get_attr("IFLA_INFO_DATA")


def read_links(ipr) -> dict:
    """Normalised view of every link (see module_utils linkplan for the shape)."""
    raw = list(ipr.get_links())
    names = {msg["index"]: msg.get_attr("IFLA_IFNAME") for msg in raw}
    links = {}
    for msg in raw:
        kind, data = _info(msg)
        entry = {
            "index": msg["index"],
            "kind": kind,
            "mtu": msg.get_attr("IFLA_MTU"),
            "master": names.get(msg.get_attr("IFLA_MASTER")),
            "link": names.get(msg.get_attr("IFLA_LINK")) if kind == "vlan" else None,
            "up": bool(msg["flags"] & IFF_UP),
            "addresses": [],
        }
        if kind == "vlan" and data is not None:
            entry["vlan_id"] = data.get_attr("IFLA_VLAN_ID")
            egress = data.get_attr("IFLA_VLAN_EGRESS_QOS")
            mappings = egress.get_attrs("IFLA_VLAN_QOS_MAPPING") if egress else []
            entry["egress_qos_map"] = {int(m["from"]): int(m["to"]) for m in mappings}
        if kind == "bond" and data is not None:
            entry["bond"] = {
                "mode": MODE_NAMES.get(data.get_attr("IFLA_BOND_MODE")),
                "miimon": data.get_attr("IFLA_BOND_MIIMON"),
                "lacp_rate": LACP_NAMES.get(data.get_attr("IFLA_BOND_AD_LACP_RATE")),
                "xmit_hash_policy": HASH_NAMES.get(data.get_attr("IFLA_BOND_XMIT_HASH_POLICY")),
            }
        links[msg.get_attr("IFLA_IFNAME")] = entry
    for msg in ipr.get_addr(family=socket.AF_INET):
        name = names.get(msg["index"])
        # Only global addresses are managed; host-scope (127/8) ones belong to lo.
        if name in links and msg["scope"] == 0:
            links[name]["addresses"].append(f"{msg.get_attr('IFA_ADDRESS')}/{msg['prefixlen']}")
    for entry in links.values():
        entry["addresses"].sort()
    return links


def connection_seeds(ipr, links: dict, mgmt: str, ssh_connection: str, extra) -> dict:
    """Interfaces never to touch, each with the reason shown in the refusal."""
    seeds = {}
    if mgmt:
        seeds[mgmt] = "is the management interface (cxfab_host.mgmt_interface)"
    for name in extra or []:
        seeds[name] = "is listed in protected_interfaces"
    fields = (ssh_connection or ssh_connection_of_session()).split()
    if len(fields) >= 3:
        controller, local = fields[0], fields[2]
        for name, info in links.items():
            if any(a.split("/")[0] == local for a in info["addresses"]):
                seeds.setdefault(name, f"holds {local}, the address the Ansible connection uses")
        try:
            family = socket.AF_INET6 if ":" in controller else socket.AF_INET
            for route in ipr.route("get", dst=controller, family=family):
                oif = route.get_attr("RTA_OIF")
                name = next((n for n, i in links.items() if i["index"] == oif), None)
                if name:
                    seeds.setdefault(
                        name, f"routes to the Ansible controller {controller} (the connection)"
                    )
        except (NetlinkError, OSError, ValueError):
            pass  # no route back: the address check above still protects the link
    return seeds


def ssh_connection_of_session(pid: int | None = None) -> str:
    """SSH_CONNECTION of this process or the nearest ancestor that has it.

    become (sudo) starts the module without it; the login shell above still has it.
    """
    pid = os.getpid() if pid is None else pid
    for _ in range(16):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return ""
        for entry in environ:
            if entry.startswith(b"SSH_CONNECTION="):
                return entry.split(b"=", 1)[1].decode("ascii", "replace")
        if parent <= 1:
            return ""
        pid = parent
    return ""


def persist_files(module, directory: str, files: dict, prefix: str) -> list[str]:
    """Make `directory` hold exactly `files` among the names starting with `prefix`."""
    changes = []
    existing = (
        sorted(n for n in os.listdir(directory) if n.startswith(prefix))
        if (os.path.isdir(directory))
        else []
    )
    for name, text in files.items():
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as handle:
                if handle.read() == text:
                    continue
        except FileNotFoundError:
            pass
        changes.append(f"write {path}")
        if not module.check_mode:
            os.makedirs(directory, mode=0o755, exist_ok=True)
            with open(path + ".cxfab-new", "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(path + ".cxfab-new", 0o644)
            os.replace(path + ".cxfab-new", path)
    for name in existing:
        if name not in files:
            changes.append(f"remove {os.path.join(directory, name)}")
            if not module.check_mode:
                os.unlink(os.path.join(directory, name))
    return changes


def qos_attrs(mapping: dict) -> dict:
    """IFLA_VLAN_EGRESS_QOS payload; unlisted priorities are reset to 0."""
    mapping = {int(k): int(v) for k, v in (mapping or {}).items()}
    return {
        "attrs": [
            ("IFLA_VLAN_QOS_MAPPING", {"from": prio, "to": mapping.get(prio, 0)})
            for prio in range(8)
        ]
    }


def _bond_params(params: dict) -> dict:
    out = {"bond_mode": BOND_MODES[params["mode"]], "bond_miimon": params["miimon"]}
    if params["mode"] == "802.3ad":
        out["bond_ad_lacp_rate"] = LACP_RATES[params["lacp_rate"]]
    if params["mode"] in ("802.3ad", "balance-xor", "balance-tlb"):
        out["bond_xmit_hash_policy"] = XMIT_HASH_POLICIES[params["xmit_hash_policy"]]
    return out


def apply(ipr, actions, intent):
    def index(name):
        found = ipr.link_lookup(ifname=name)
        if not found:
            raise RuntimeError(f"{name} vanished during the run")
        return found[0]

    bond = intent.get("bond") or {}
    for action, name, args in actions:
        if action == "create_bond":
            ipr.link("add", ifname=name, kind="bond", **_bond_params(args))
        elif action == "set_bond":
            if args["release"]:
                for slave in ipr.link_lookup(master=index(name)):
                    ipr.link("set", index=slave, master=0)
            if args["down"]:
                ipr.link("set", index=index(name), state="down")
            ipr.link("set", index=index(name), kind="bond", **_bond_params(bond))
            ipr.link("set", index=index(name), state="up")
        elif action == "enslave":
            ipr.link("set", index=index(name), state="down")
            if args.get("old") and args["old"] != args["master"]:
                ipr.link("set", index=index(name), master=0)
            ipr.link("set", index=index(name), master=index(args["master"]))
            ipr.link("set", index=index(name), state="up")
        elif action == "set_mtu":
            ipr.link("set", index=index(name), mtu=args["mtu"])
        elif action == "create_vlan":
            extra = {}
            if args.get("egress_qos_map"):
                extra["vlan_egress_qos"] = qos_attrs(args["egress_qos_map"])
            ipr.link(
                "add",
                ifname=name,
                kind="vlan",
                link=index(args["link"]),
                vlan_id=args["id"],
                **extra,
            )
        elif action == "set_egress_map":
            ipr.link(
                "set",
                index=index(name),
                kind="vlan",
                vlan_egress_qos=qos_attrs(args["egress_qos_map"]),
            )
        elif action in ("add_address", "del_address"):
            address, prefix = args["address"].split("/")
            verb = "add" if action == "add_address" else "del"
            ipr.addr(verb, index=index(name), address=address, prefixlen=int(prefix))
        elif action == "set_up":
            ipr.link("set", index=index(name), state="up")
        elif action == "delete":
            ipr.link("del", index=index(name))


def _view(intent, links):
    """Diff-friendly slice: drop ifindex, which changes on every re-creation."""
    return {
        name: ({k: v for k, v in info.items() if k != "index"} if info else None)
        for name, info in summary(intent, links).items()
    }


def main():
    module = AnsibleModule(
        argument_spec={
            "structured": {"type": "dict", "required": True},
            "ssh_connection": {"type": "str", "default": ""},
            "protected_interfaces": {"type": "list", "elements": "str", "default": []},
            "purge_addresses": {"type": "bool", "default": True},
            "persist": {"type": "bool", "default": True},
            "networkd_dir": {"type": "path", "default": "/etc/systemd/network"},
        },
        supports_check_mode=True,
    )
    if PYROUTE2_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib("pyroute2"), exception=str(PYROUTE2_IMPORT_ERROR))
    structured = module.params["structured"]
    intent = structured["network"]

    with IPRoute() as ipr:
        links = read_links(ipr)
        seeds = connection_seeds(
            ipr,
            links,
            structured.get("mgmt_interface"),
            module.params["ssh_connection"],
            module.params["protected_interfaces"],
        )
        try:
            protected = check_protected(intent, links, seeds)
            actions = plan(intent, links, module.params["purge_addresses"])
        except IntentError as exc:
            module.fail_json(msg=str(exc), path=exc.path, protected=seeds, changed=False)
        before = _view(intent, links)
        if module.check_mode:
            after = _view(intent, simulate(links, actions))
        else:
            try:
                apply(ipr, actions, intent)
            except (NetlinkError, OSError, RuntimeError) as exc:
                module.fail_json(
                    msg=f"netlink refused a change: {exc}",
                    actions=[describe(a) for a in actions],
                    changed=True,
                )
            links = read_links(ipr)
            after = _view(intent, links)
            left = plan(intent, links, module.params["purge_addresses"])
            if left:
                module.fail_json(
                    msg="links did not converge: " + "; ".join(describe(a) for a in left),
                    changed=before != after,
                )
    files = []
    if module.params["persist"]:
        files = persist_files(
            module, module.params["networkd_dir"], structured.get("networkd") or {}, NETWORKD_PREFIX
        )
        if files and not module.check_mode and os.path.isdir("/run/systemd/system"):
            # The live state is already applied over netlink: networkd only adopts the files.
            rc, _, err = module.run_command(["networkctl", "reload"])
            if rc != 0:
                module.warn(f"networkctl reload failed (rc={rc}): {err.strip()}")
    module.exit_json(
        changed=before != after or bool(files),
        actions=[describe(a) for a in actions],
        protected=protected,
        links=after,
        intent=intent,
        files=files,
        diff={"before": before, "after": after},
    )


if __name__ == "__main__":
    main()
