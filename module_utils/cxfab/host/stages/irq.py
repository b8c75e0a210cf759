"""The IRQ stage: pin a host's NIC IRQs to NIC-local CPUs and keep them there.

The module cxfab_irq_affinity runs it; cxfab_host_state runs it in check mode with the
host's other stages, in one call.
"""

from __future__ import annotations

import os

from ..net import agent
from ..net import irq as sysirq

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


ARGUMENT_SPEC = {
    "structured": {"type": "dict", "required": True},
    "irqbalance": {"type": "str", "default": "ban", "choices": ["ban", "stop", "ignore"]},
    "persist": {"type": "bool", "default": True},
    "root": {"type": "str", "default": "/"},
}


def run(module) -> dict:
    params = module.params
    section = params["structured"].get("irq")
    root = params["root"]
    if not section:
        return {
            "changed": False,
            "cpus": "",
            "cpu_list": [],
            "devices": {},
            "persisted": [],
            "effective_pending": [],
            "msg": "irq_affinity policy off: nothing pinned",
        }
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
        sources = agent.sources()
        persisted = agent.install(
            "irq", {**section, "pci": pcis}, sources, root, apply=not module.check_mode
        )
        if persisted and systemd_running(root) and not module.check_mode:
            module.run_command(["systemctl", "daemon-reload"], check_rc=True)
            module.run_command(["systemctl", "enable", agent.UNIT_NAME], check_rc=True)
    return {
        "changed": bool(result.pop("changed") or actions or persisted),
        "irqbalance": actions,
        "persisted": persisted,
        **result,
    }
