#!/usr/bin/python
"""Ansible module: pin a NIC's IRQs to CPUs of the NIC's NUMA node (or a CPU list)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_irq_affinity
short_description: Pin NIC interrupts to NIC-local CPUs and report those CPUs
description:
  - For each interface - PCI function (the virtio parent when the netdev sits
    on a virtio child), its NUMA node, the node's CPUs, the function's MSI-X
    IRQs (C(msi_irqs), else C(/proc/interrupts) names).
  - Spreads the IRQs one CPU each, round robin, writes
    C(/proc/irq/<n>/smp_affinity_list) where it differs and reads back
    C(effective_affinity_list), which must lie inside the wanted CPUs.
  - Returns the CPU list so workloads pin to NIC-local cores.
version_added: "0.1.0"
options:
  interfaces:
    description: Network interfaces whose PCI functions' IRQs are pinned.
    type: list
    elements: str
    required: true
  policy:
    description: numa-local (node CPUs), cpulist (C(cpus)), off (only report).
    type: str
    default: numa-local
    choices: [numa-local, cpulist, "off"]
  cpus:
    description: CPU list for policy cpulist (C(0-3,8)).
    type: str
    default: ""
  root:
    description: Prefix of /sys and /proc (for tests against a copied tree).
    type: str
    default: /
author: cxfab
"""

EXAMPLES = r"""
- name: Pin the data NIC IRQs
  cxfab_irq_affinity:
    interfaces: [ens1f0, ens1f1]
    policy: numa-local
"""

RETURN = r"""
cpus:
  description: CPUs the IRQs were spread over (kernel list form), for workload pinning.
  type: str
  returned: always
effective_pending:
  description: IRQs whose effective CPU still lies outside (moves at their next interrupt).
  type: list
  elements: int
  returned: always
cpu_list:
  description: The same CPUs as integers.
  type: list
  elements: int
  returned: always
devices:
  description: Per interface - pci, numa_node, irqs {irq - requested, effective}.
  type: dict
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.hostnet import IntentError  # noqa: E402
from ansible.module_utils.cxfab.hostnet import irq as sysirq  # noqa: E402
from ansible.module_utils.cxfab.hostnet.cpulist import (  # noqa: E402
    format_cpulist,
    parse_cpulist,
    spread,
)


def discover(root, interfaces):
    """Interface -> {pci, numa_node, irqs}; IRQs shared by two ports count once."""
    devices, seen = {}, set()
    for name in interfaces:
        pci_dir = sysirq.pci_device(root, name)
        irqs = [n for n in sysirq.device_irqs(root, pci_dir, name) if n not in seen]
        seen.update(irqs)
        devices[name] = {
            "pci": pci_dir.rsplit("/", 1)[-1],
            "numa_node": sysirq.numa_node(pci_dir),
            "irqs": irqs,
        }
    return devices


def main():
    module = AnsibleModule(
        argument_spec={
            "interfaces": {"type": "list", "elements": "str", "required": True},
            "policy": {
                "type": "str",
                "default": "numa-local",
                "choices": ["numa-local", "cpulist", "off"],
            },
            "cpus": {"type": "str", "default": ""},
            "root": {"type": "str", "default": "/"},
        },
        supports_check_mode=True,
    )
    params = module.params
    root = params["root"]
    try:
        devices = discover(root, params["interfaces"])
    except sysirq.IrqError as exc:
        module.fail_json(msg=f"interfaces: {exc}")
    nodes = sorted({d["numa_node"] for d in devices.values()})
    if params["policy"] == "cpulist":
        try:
            cpus = parse_cpulist(params["cpus"], "cxfab_host.irq_affinity.cpus")
        except IntentError as exc:
            module.fail_json(msg=str(exc), path=exc.path)
        online = set(sysirq.node_cpus(root, -1))
        if not cpus or not set(cpus) <= online:
            module.fail_json(
                msg=f"cxfab_host.irq_affinity.cpus: {params['cpus']!r} is not a subset of the "
                f"online CPUs {format_cpulist(online)}",
                path="cxfab_host.irq_affinity.cpus",
            )
    else:
        cpus = sorted({cpu for node in nodes for cpu in sysirq.node_cpus(root, node)})
    all_irqs = [irq for d in devices.values() for irq in d["irqs"]]
    if params["policy"] != "off" and not all_irqs:
        module.fail_json(msg=f"interfaces: no MSI-X IRQ found for {params['interfaces']}")
    wanted = spread(all_irqs, cpus) if params["policy"] != "off" and cpus else {}

    before, after, pending = {}, {}, []
    for name, device in devices.items():
        for irq in device["irqs"]:
            state = sysirq.read_affinity(root, irq)
            before[irq] = format_cpulist(state["requested"])
            target = wanted.get(irq)
            if target is not None and state["requested"] != [target] and not module.check_mode:
                try:
                    sysirq.write_affinity(root, irq, str(target))
                except OSError as exc:
                    # Managed IRQs (spread by the kernel) refuse user affinity with EIO.
                    module.fail_json(
                        msg=f"{name}: IRQ {irq}: writing smp_affinity_list refused: "
                        f"{exc.strerror or exc}",
                        changed=before != after,
                    )
                state = sysirq.read_affinity(root, irq)
            elif target is not None and module.check_mode:
                state = {"requested": [target], "effective": state["effective"]}
            after[irq] = format_cpulist(state["requested"])
            device.setdefault("affinity", {})[irq] = {
                "requested": format_cpulist(state["requested"]),
                "effective": None
                if state["effective"] is None
                else format_cpulist(state["effective"]),
            }
            if target is None or module.check_mode:
                continue
            if state["requested"] != [target]:
                module.fail_json(
                    msg=f"{name}: IRQ {irq} reads back {format_cpulist(state['requested'])}, "
                    f"wanted {target}",
                    devices=devices,
                    changed=before != after,
                )
            if state["effective"] is not None and not set(state["effective"]) <= set(cpus):
                # x86 without interrupt remapping moves an MSI at its next interrupt:
                # an idle queue keeps its old effective CPU until it fires.
                pending.append(irq)
    module.exit_json(
        changed=before != after,
        cpus=format_cpulist(cpus),
        cpu_list=cpus,
        numa_nodes=nodes,
        devices=devices,
        assignment={str(k): v for k, v in wanted.items()},
        effective_pending=pending,
        diff={"before": before, "after": after},
    )


if __name__ == "__main__":
    main()
