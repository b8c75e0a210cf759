"""The RDMA stage: kernel modules, soft-RoCE devices and the host's daemons (e.g.
lldpd), now and at every boot.

The module cxfab_rdma_stack runs it; cxfab_host_state runs it in check mode with the
host's other stages, in one call.
"""

from __future__ import annotations

import json
import os
import re

MODULES_LOAD = "/etc/modules-load.d/cxfab-rdma.conf"
UNIT_NAME = "cxfab-soft-roce.service"
UNIT = f"/etc/systemd/system/{UNIT_NAME}"


def modules_load_text(modules) -> str:
    return "# Written by cxfab: RDMA kernel modules.\n" + "".join(f"{m}\n" for m in modules)


def unit_quote(word: str) -> str:
    """One argument of a unit's Exec line, whatever it holds.

    systemd splits Exec lines at whitespace, removes quotes and backslashes, and
    expands `$VAR` and `%` specifiers. In double quotes, with backslashes and double
    quotes backslashed and `$`, `%` doubled, a word stays one argument, unchanged.
    The names come validated from the schema; this keeps the unit right should a
    format ever admit more. A control character cannot go on a unit line at all.
    """
    if any(ord(char) < 32 or ord(char) == 127 for char in word):
        raise ValueError(f"{word!r} holds a control character: it cannot go into a unit file")
    escaped = word.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("$", "$$").replace("%", "%%") + '"'


def unit_text(rdma_tool: str, modprobe: str, devices) -> str:
    """Boot unit re-creating the soft-RoCE devices, every pasted word quoted."""
    q = unit_quote
    lines = [
        "# Written by cxfab: soft-RoCE devices do not survive a reboot.",
        "[Unit]",
        "Description=cxfab soft-RoCE devices",
        "After=network-online.target systemd-networkd.service",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        f"ExecStartPre={q(modprobe)} rdma_rxe",
        *(
            f"ExecStart=-{q(rdma_tool)} link add {q(d['name'])} type rxe netdev {q(d['netdev'])}"
            for d in devices
        ),
        "",
        "[Install]",
        "WantedBy=multi-user.target",
    ]
    return "\n".join(lines) + "\n"


def write_if_different(module, path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return False
    except FileNotFoundError:
        pass
    if not module.check_mode:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(path, 0o644)
    return True


def read_links(module, rdma_tool: str) -> list[dict]:
    rc, out, err = module.run_command([rdma_tool, "-j", "link", "show"])
    if rc != 0:
        module.fail_json(msg=f"rdma -j link show failed (rc={rc}): {err.strip()}")
    try:
        return json.loads(out or "[]")
    except ValueError:
        module.fail_json(msg=f"rdma -j link show printed no JSON: {out[:200]!r}")
    return []


# A daemon's name goes on a command line and into paths: a plain word.
_DAEMON_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")


def running(name: str, proc: str = "/proc") -> bool:
    """A process whose command name is `name` runs (the kernel's /proc/<pid>/comm)."""
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        try:
            with open(os.path.join(proc, pid, "comm"), encoding="utf-8") as handle:
                if handle.read().strip() == name:
                    return True
        except OSError:
            continue
    return False


def ensure_daemons(module, names) -> list[str]:
    """Each daemon running now and at boot: systemd enables and starts its unit; a
    host without systemd (a container, a minimal VM) runs its init script, with the
    runtime directory the unit would have had (RuntimeDirectory=<name>)."""
    actions = []
    systemd = os.path.isdir("/run/systemd/system")
    for name in names:
        if not _DAEMON_NAME.match(name):
            module.fail_json(msg=f"daemons: {name!r} is not a daemon name ([a-z][a-z0-9_.-]*)")
        if systemd:
            active = module.run_command(["systemctl", "is-active", "--quiet", name])[0] == 0
            enabled = module.run_command(["systemctl", "is-enabled", "--quiet", name])[0] == 0
            if active and enabled:
                continue
            actions.append(f"systemctl enable --now {name}")
            if not module.check_mode:
                module.run_command(["systemctl", "enable", "--now", name], check_rc=True)
            continue
        if running(name):
            continue
        script = f"/etc/init.d/{name}"
        if not os.access(script, os.X_OK):
            module.fail_json(msg=f"daemons: cannot start {name}: no systemd and no {script}")
        actions.append(f"{script} start")
        if not module.check_mode:
            os.makedirs(f"/run/{name}", mode=0o755, exist_ok=True)
            module.run_command([script, "start"], check_rc=True)
    return actions


ARGUMENT_SPEC = {
    "structured": {"type": "dict", "required": True},
    "daemons": {"type": "list", "elements": "str", "default": []},
}


def run(module) -> dict:
    section = module.params["structured"]["rdma"]
    modprobe = module.get_bin_path("modprobe", required=True, opt_dirs=["/sbin", "/usr/sbin"])
    rdma_tool = module.get_bin_path("rdma", required=True, opt_dirs=["/sbin", "/usr/sbin"])
    actions = []
    if write_if_different(module, MODULES_LOAD, modules_load_text(section["modules"])):
        actions.append(f"write {MODULES_LOAD}")
    for name in section["modules"]:
        if os.path.exists(f"/sys/module/{name}"):
            continue
        actions.append(f"modprobe {name}")
        if not module.check_mode:
            module.run_command([modprobe, name], check_rc=True)
    soft = [d for d in section["devices"] if d["type"] == "rxe"]
    links = {link.get("ifname"): link for link in read_links(module, rdma_tool)} if soft else {}
    for device in soft:
        link = links.get(device["name"])
        if link is not None and link.get("netdev") == device["netdev"]:
            continue
        if link is not None:
            actions.append(f"rdma link delete {device['name']} (on {link.get('netdev')})")
            if not module.check_mode:
                module.run_command([rdma_tool, "link", "delete", device["name"]], check_rc=True)
        actions.append(f"rdma link add {device['name']} type rxe netdev {device['netdev']}")
        if not module.check_mode:
            argv = [rdma_tool, "link", "add", device["name"], "type", "rxe"]
            module.run_command([*argv, "netdev", device["netdev"]], check_rc=True)
    try:
        unit = unit_text(rdma_tool, modprobe, soft) if soft else ""
    except ValueError as exc:
        module.fail_json(msg=f"structured.rdma.devices: {exc}")
    if soft and write_if_different(module, UNIT, unit):
        actions.append(f"write {UNIT}")
        if os.path.isdir("/run/systemd/system") and not module.check_mode:
            module.run_command(["systemctl", "daemon-reload"], check_rc=True)
            module.run_command(["systemctl", "enable", UNIT_NAME], check_rc=True)
    actions += ensure_daemons(module, module.params.get("daemons") or [])
    after = (
        read_links(module, rdma_tool) if soft and not module.check_mode else list(links.values())
    )
    return {"changed": bool(actions), "actions": actions, "links": after}
