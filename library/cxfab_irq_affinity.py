#!/usr/bin/python
"""Ansible module: pin a host's NIC IRQs to NIC-local CPUs and keep them there."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_irq_affinity
short_description: Pin NIC interrupts to NIC-local CPUs, keep irqbalance off them, persist
description:
  - Reads the C(irq) section of the host's structured config (interfaces, policy,
    cpus). For each interface - PCI function (the virtio parent when the netdev sits
    on a virtio child), its NUMA node, the node's CPUs, the function's MSI-X IRQs.
  - Spreads the IRQs one CPU each, round robin, writes
    C(/proc/irq/<n>/smp_affinity_list) where it differs and reads it back.
  - Keeps irqbalance from moving them back (a policy script ban, or stop), and
    installs the host agent that re-pins at boot and link-up with this same code.
  - Returns the CPU list so workloads pin to NIC-local cores.
version_added: "0.1.0"
options:
  structured:
    description: The host's structured config (C(build/structured/<host>.yml)); C(irq) is read.
    type: dict
    required: true
  irqbalance:
    description: ban (policy script bans the NIC IRQs), stop (stop and disable it), ignore.
    type: str
    default: ban
    choices: [ban, stop, ignore]
  persist:
    description: Install the host agent (boot unit, link-up hook) that re-pins.
    type: bool
    default: true
  root:
    description: Prefix of /sys and /proc (for tests against a copied tree).
    type: str
    default: /
author: cxfab
"""

EXAMPLES = r"""
- name: Pin the data NIC IRQs
  cxfab_irq_affinity:
    structured: "{{ hostvars['localhost'].cxfab_structured | cxfab_device(inventory_hostname) }}"
"""

RETURN = r"""
cpus:
  description: CPUs the IRQs were spread over (kernel list form), for workload pinning.
  type: str
  returned: always
cpu_list:
  description: The same CPUs as integers.
  type: list
  elements: int
  returned: always
effective_pending:
  description: IRQs whose effective CPU still lies outside (moves at their next interrupt).
  type: list
  elements: int
  returned: always
devices:
  description: Per interface - pci, numa_node, irqs, affinity {irq - requested, effective}.
  type: dict
  returned: always
persisted:
  description: Agent files written (or that would be).
  type: list
  returned: always
"""

from ansible.module_utils.cxfab.host.stages import serve  # noqa: E402
from ansible.module_utils.cxfab.host.stages.irq import ARGUMENT_SPEC, run  # noqa: E402

if __name__ == "__main__":
    serve(ARGUMENT_SPEC, run)
