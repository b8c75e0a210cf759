#!/usr/bin/python
"""Ansible module: read, in one round trip, everything the host checks of verify.yml need."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_host_facts
short_description: Read link, MTU, VLAN, bond, NUMA, IRQ, RDMA and PCIe state of a host
description:
  - Read-only. For every adapter port of the host's C(cxfab_host) - operstate,
    carrier, speed, driver, the PCI function (the parent of a virtio child),
    its NUMA node and that node's CPUs, the effective affinity of each of its
    MSI-X IRQs and the PCIe C(current_link_speed) x C(current_link_width).
  - MTUs of the bond, its members and the VLAN interfaces; each VLAN's egress
    priority map from C(/proc/net/vlan/<if>); bond mode, members, MII status and
    LACP aggregators from C(/proc/net/bonding/<bond>); RDMA devices with port
    state, rate and netdev from C(/sys/class/infiniband).
  - Sends DF pings (ICMP echo, IP_PMTUDISC_DO) at each VLAN's MTU to the other
    hosts' VLAN addresses and to the VLAN gateway, so the MTU is proven end to end.
  - Returns the NIC-local CPU list as C(nic_local_cpus) for workload pinning.
  - With lossless RoCE (the structured C(lossless) section), C(roce) - the GID
    entries (device, port, index, type) of each RoCE VLAN interface and the
    wildcard C(memlock) limits of limits.conf and limits.d, as pam_limits reads them.
  - On a host with C(link_type) ib ports, C(ib) - per port the RDMA device found
    from the adapter's PCI address and C(ibstat <device> <port>) (state, physical
    state, rate, LIDs, link layer), and the IPoIB interfaces' sysfs C(mode) and
    C(mtu). A reading that fails carries the command and its output instead.
version_added: "0.1.0"
options:
  structured:
    description: >-
      This host's structured config (C(build/structured/<host>.yml)): the network,
      NICs, RDMA devices and the DF probes (peers and gateways) to send.
    type: dict
    required: true
  ping_gateway:
    description: Probe the VLAN gateways too (off where the gateway does not answer).
    type: bool
    default: true
  probe_count:
    description: Echo requests per probe before it counts as failed.
    type: int
    default: 3
  probe_timeout:
    description: Seconds to wait for each reply.
    type: float
    default: 1.0
  root:
    description: Prefix of /sys and /proc (tests point it at a copied tree).
    type: str
    default: /
  ibstat_path:
    description: ibstat to use on hosts with ib ports; default C(ibstat) when installed.
    type: str
author: cxfab
"""

EXAMPLES = r"""
- name: Read the host state the checks need
  cxfab_host_facts:
    name: "{{ inventory_hostname }}"
    host: "{{ cxfab_fabric.hosts[inventory_hostname] }}"
    hosts: "{{ cxfab_fabric.hosts }}"
    vlans: "{{ cxfab_fabric.vlans }}"
  register: host_facts
"""

RETURN = r"""
facts:
  description: >-
    netdevs, mtus, vlans, bond, rdma, probes, nic_local_cpus, roce (lossless RoCE only),
    ib (ib ports only).
  type: dict
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.host.facts import FactsError, Host, gather  # noqa: E402
from ansible.module_utils.cxfab.host.mlnx.runner import module_runner  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec={
            "structured": {"type": "dict", "required": True},
            "ping_gateway": {"type": "bool", "default": True},
            "probe_count": {"type": "int", "default": 3},
            "probe_timeout": {"type": "float", "default": 1.0},
            "root": {"type": "str", "default": "/"},
            "ibstat_path": {"type": "str"},
        },
        supports_check_mode=True,
    )
    params = module.params

    run = module_runner(module)
    host = Host(params["root"], params["structured"], params, run, module.get_bin_path)
    try:
        facts = gather(host)
    except FactsError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, facts=facts)


if __name__ == "__main__":
    main()
