#!/usr/bin/python
"""Ansible module: probe the fabric's dataplane from a host (pings, gateway ARP, LACP partner)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_dataplane_probe
short_description: Ping VLAN gateways and peers, read the gateway ARP entry and LACP partner
description:
  - Read-only (sends ICMP echo only). For each VLAN of C(targets) - pings the gateway
    virtual IP and every peer host from the VLAN interface, pings each peer with DF set
    at the VLAN MTU (C(ping -M do -s <mtu-28>)), then reads C(ip -j neigh show
    <gateway> dev <interface>); reads C(/proc/net/bonding/<bond>).
  - Returns the raw outputs; verify's checks (module_utils/cxfab/verify/dataplane.py) judge
    them on the controller, so an unreadable output becomes a failed check naming it.
version_added: "0.2.0"
options:
  count:
    description: Echo requests per ping.
    type: int
    default: 3
  interval:
    description: Seconds between echo requests (iputils accepts 0.2 and above unprivileged).
    type: float
    default: 0.2
  timeout:
    description: Seconds to wait for each reply (C(-W)).
    type: int
    default: 1
  root:
    description: Prefix of /proc (tests point it at a copied tree).
    type: str
    default: /
extends_documentation_fragment: [cxfab_dataplane_targets]
author: cxfab
"""

EXAMPLES = r"""
- name: Probe the dataplane
  cxfab_dataplane_probe:
    targets: >-
      {{ hostvars['localhost'].cxfab_structured | cxfab_dataplane_targets(inventory_hostname) }}
  register: verify_dataplane
"""

RETURN = r"""
pings: {description: "[{id, cmd, rc, stdout, stderr}] per ping.", type: list, returned: always}
neigh: {description: VLAN id -> ip -j neigh output for its gateway., type: dict, returned: always}
bonding:
  description: Text of /proc/net/bonding/<bond> (null when absent).
  type: str
  returned: always
"""

import os  # noqa: E402
import re  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.verify.dataplane import ping_id  # noqa: E402

IFNAME = re.compile(r"^[A-Za-z0-9_.:-]{1,15}$")
IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")


def _checked(module, vlan):
    """Every value that reaches a command line has a strict format (fail on anything else)."""
    where = f"targets.vlans[vlan {vlan.get('vlan')}]"
    if not IFNAME.match(str(vlan.get("interface", ""))):
        module.fail_json(msg=f"{where}.interface: not an interface name: {vlan.get('interface')!r}")
    addresses = [p.get("address") for p in vlan.get("peers") or []]
    addresses += [(vlan.get("gateway") or {}).get("address")] if vlan.get("gateway") else []
    for address in addresses:
        if not IPV4.match(str(address)):
            module.fail_json(msg=f"{where}: not an IPv4 address: {address!r}")
    if not isinstance(vlan.get("size"), int) or not 0 <= vlan["size"] <= 65507:
        module.fail_json(msg=f"{where}.size: not a payload size: {vlan.get('size')!r}")


def _ping(module, check_id, vlan, address, extra=()):
    p = module.params
    cmd = ["ping", "-n", "-c", str(p["count"]), "-i", str(p["interval"]), "-W", str(p["timeout"]),
           "-I", vlan["interface"], *extra, address]  # fmt: skip
    rc, out, err = module.run_command(cmd)
    return {"id": check_id, "cmd": cmd, "rc": rc, "stdout": out, "stderr": err}


def main():
    module = AnsibleModule(
        argument_spec={
            "targets": {"type": "dict", "required": True},
            "count": {"type": "int", "default": 3},
            "interval": {"type": "float", "default": 0.2},
            "timeout": {"type": "int", "default": 1},
            "root": {"type": "str", "default": "/"},
        },
        supports_check_mode=True,
    )
    targets = module.params["targets"]
    pings, neigh = [], {}
    for vlan in targets.get("vlans") or []:
        _checked(module, vlan)
        gateway = vlan.get("gateway")
        if gateway:
            pings.append(_ping(module, ping_id("gateway", vlan), vlan, gateway["address"]))
            cmd = ["ip", "-j", "neigh", "show", gateway["address"], "dev", vlan["interface"]]
            rc, out, err = module.run_command(cmd)
            neigh[str(vlan["vlan"])] = out if rc == 0 else f"rc {rc}: {err or out}"
        for peer in vlan.get("peers") or []:
            pings.append(_ping(module, ping_id("peer", vlan, peer), vlan, peer["address"]))
            df = ("-M", "do", "-s", str(vlan["size"]))
            pings.append(_ping(module, ping_id("jumbo", vlan, peer), vlan, peer["address"], df))
    bonding = None
    bond = targets.get("bond")
    if bond:
        if not IFNAME.match(str(bond.get("name", ""))):
            module.fail_json(msg=f"targets.bond.name: not an interface name: {bond.get('name')!r}")
        path = os.path.join(module.params["root"], "proc/net/bonding", bond["name"])
        try:
            with open(path, encoding="ascii", errors="replace") as handle:
                bonding = handle.read()
        except OSError:
            bonding = None
    module.exit_json(changed=False, pings=pings, neigh=neigh, bonding=bonding)


if __name__ == "__main__":
    main()
