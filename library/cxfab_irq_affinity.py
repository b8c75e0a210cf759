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

import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab import hostnet  # noqa: E402
from ansible.module_utils.cxfab.hostnet import agent, cpulist  # noqa: E402
from ansible.module_utils.cxfab.hostnet import irq as sysirq  # noqa: E402

IRQBALANCE = "/usr/sbin/irqbalance"
IRQBALANCE_DEFAULTS = "/etc/default/irqbalance"
IRQBALANCE_ARGS = f'IRQBALANCE_ARGS="--policyscript={agent.LAUNCHER}"'


def systemd_running(root: str) -> bool:
    return os.path.isdir(os.path.join(root, "run/systemd/system"))


def ban_line(text: str) -> str:
    """/etc/default/irqbalance with our policy script as IRQBALANCE_ARGS."""
    lines = [line for line in text.splitlines() if not line.startswith("IRQBALANCE_ARGS=")]
    return "\n".join([*lines, IRQBALANCE_ARGS]) + "\n"


def handle_irqbalance(module, mode: str, root: str) -> list[str]:
    """Keep irqbalance off the pinned IRQs; returns what changed."""
    if mode == "ignore" or not os.path.exists(os.path.join(root, IRQBALANCE.lstrip("/"))):
        return []
    systemd = systemd_running(root)
    if mode == "stop":
        if not systemd:
            return []
        active = module.run_command(["systemctl", "is-active", "irqbalance"])[0] == 0
        enabled = module.run_command(["systemctl", "is-enabled", "irqbalance"])[0] == 0
        if not (active or enabled):
            return []
        if not module.check_mode:
            module.run_command(["systemctl", "disable", "--now", "irqbalance"], check_rc=True)
        return ["irqbalance stopped and disabled"]
    path = os.path.join(root, IRQBALANCE_DEFAULTS.lstrip("/"))
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        text = ""
    if ban_line(text) == text:
        return []
    if not module.check_mode:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(ban_line(text))
        if systemd:
            module.run_command(["systemctl", "try-restart", "irqbalance"], check_rc=True)
    return [f"{IRQBALANCE_DEFAULTS}: irqbalance bans the NIC IRQs"]


def main():
    module = AnsibleModule(
        argument_spec={
            "structured": {"type": "dict", "required": True},
            "irqbalance": {
                "type": "str",
                "default": "ban",
                "choices": ["ban", "stop", "ignore"],
            },
            "persist": {"type": "bool", "default": True},
            "root": {"type": "str", "default": "/"},
        },
        supports_check_mode=True,
    )
    params = module.params
    section = params["structured"].get("irq")
    root = params["root"]
    if not section:
        module.exit_json(
            changed=False,
            cpus="",
            cpu_list=[],
            devices={},
            persisted=[],
            effective_pending=[],
            msg="irq_affinity policy off: nothing pinned",
        )
    try:
        result = sysirq.pin(
            root,
            section["interfaces"],
            section["policy"],
            section.get("cpus", ""),
            apply=not module.check_mode,
        )
    except sysirq.IrqError as exc:
        module.fail_json(msg=f"cxfab_host.irq_affinity: {exc}")
    actions = handle_irqbalance(module, params["irqbalance"], root)
    persisted = []
    if params["persist"]:
        pcis = sorted({d["pci"] for d in result["devices"].values()})
        sources = agent.package_sources([hostnet, cpulist, sysirq, agent])
        persisted = agent.install(
            "irq", {**section, "pci": pcis}, sources, root, apply=not module.check_mode
        )
        if persisted and systemd_running(root) and not module.check_mode:
            module.run_command(["systemctl", "daemon-reload"], check_rc=True)
            module.run_command(["systemctl", "enable", agent.UNIT_NAME], check_rc=True)
    module.exit_json(
        changed=bool(result.pop("changed") or actions or persisted),
        irqbalance=actions,
        persisted=persisted,
        **result,
    )


if __name__ == "__main__":
    main()
