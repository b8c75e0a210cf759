"""The host agent: re-applies at boot and link-up what the kernel forgets.

QoS settings, IRQ affinity, a port's ECN knobs and its SR-IOV VFs do not survive a
reboot (and the first three not a port going down and up); on NetworkManager hosts
neither do whole VLAN egress maps (net/nmegress.py: NetworkManager 1.42/1.44 programs one
entry). The QoS, IRQ, NIC runtime and (NetworkManager) network modules install this
package's own code on the host (`/usr/local/lib/cxfab/cxfab/host/net/`), a launcher,
one systemd unit, a networkd-dispatcher hook and, where NetworkManager is installed,
a NetworkManager dispatcher script, and write their section of one JSON file. At boot
and on every link-up the launcher runs `main()`, which re-applies each section with
the same functions the modules used (irq.pin; the QoS back end's commands;
sriov.apply, ecn_enable; `ip link set ... egress-qos-map`).

Interface names never reach a shell: the hook passes `$IFACE` as an argument
and `main()` compares it with the names in the JSON file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

LIBRARY_DIR = "/usr/local/lib/cxfab"
LAUNCHER = "/usr/local/sbin/cxfab-host-apply"
CONFIG = "/etc/cxfab/host-apply.json"
UNIT_NAME = "cxfab-host-apply.service"
UNIT = f"/etc/systemd/system/{UNIT_NAME}"
HOOK_DIRS = ("/etc/networkd-dispatcher/carrier.d", "/etc/networkd-dispatcher/configured.d")
HOOK_NAME = "50-cxfab-host-apply"
# NetworkManager-dispatcher(8) runs the executables of this directory, owned by root and
# not writable by group or other, with the interface and the action as arguments.
NM_DIR = "/etc/NetworkManager"
NM_HOOK = f"{NM_DIR}/dispatcher.d/{HOOK_NAME}"
# Package files the agent needs, relative to LIBRARY_DIR.
PACKAGE_FILES = (
    "cxfab/__init__.py",
    "cxfab/host/__init__.py",
    "cxfab/host/net/__init__.py",
    "cxfab/host/net/cpulist.py",
    "cxfab/host/net/irq.py",
    "cxfab/host/net/sriov.py",
    "cxfab/host/net/agent.py",
)

_LAUNCHER_TEXT = f"""#!/usr/bin/python3
# Installed by cxfab: re-applies QoS, IRQ affinity and NIC runtime settings ({CONFIG}).
import sys

sys.path.insert(0, {LIBRARY_DIR!r})
from cxfab.host.net.agent import main

sys.exit(main())
"""

_UNIT_TEXT = f"""# Installed by cxfab.
[Unit]
Description=cxfab: re-apply QoS, IRQ affinity, ECN and SR-IOV VFs of the data ports
After=systemd-networkd.service network.target
Wants=network.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart={LAUNCHER}

[Install]
WantedBy=multi-user.target
"""

# networkd-dispatcher exports IFACE; it is handed over as one argument, never parsed.
_HOOK_TEXT = f"""#!/bin/sh
# Installed by cxfab: a link came (back) up; the agent decides whether it is ours.
exec {LAUNCHER} --interface "${{IFACE:-}}"
"""

# NetworkManager-dispatcher(8): $1 is the interface, $2 the action; "up" = activated.
_NM_HOOK_TEXT = f"""#!/bin/sh
# Installed by cxfab: NetworkManager activated a device; the agent decides whether it is ours.
[ "${{2:-}}" = up ] || exit 0
exec {LAUNCHER} --interface "${{1:-}}"
"""


def _path(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/"))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write(path: str, text: str, mode: int) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.cxfab-new"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(temporary, mode)
    os.replace(temporary, path)


def wanted_files(
    sources: dict[str, str], config: dict, networkmanager: bool = False
) -> dict[str, tuple[str, int]]:
    """Absolute path -> (text, mode) of everything the agent consists of.

    networkmanager: NetworkManager is installed (its dispatcher script joins the hooks:
    networkd-dispatcher never sees a link NetworkManager brings up)."""
    files = {os.path.join(LIBRARY_DIR, rel): (text, 0o644) for rel, text in sources.items()}
    files[LAUNCHER] = (_LAUNCHER_TEXT, 0o755)
    files[UNIT] = (_UNIT_TEXT, 0o644)
    for directory in HOOK_DIRS:
        files[os.path.join(directory, HOOK_NAME)] = (_HOOK_TEXT, 0o755)
    if networkmanager:
        files[NM_HOOK] = (_NM_HOOK_TEXT, 0o755)
    files[CONFIG] = (json.dumps(config, indent=1, sort_keys=True) + "\n", 0o644)
    return files


def install(
    section: str, data: dict | None, sources: dict[str, str], root: str = "/", apply=True
) -> list[str]:
    """Put the agent on the host with `section` of its config set to `data` (None: removed).

    Other sections (written by the other module) are kept. Returns the paths that
    changed (or would, with apply=False).
    """
    current = _read(_path(root, CONFIG))
    try:
        config = json.loads(current) if current else {}
    except ValueError:
        config = {}  # a damaged file is rewritten whole
    if data is None:
        config.pop(section, None)
    else:
        config[section] = data
    changed = []
    networkmanager = os.path.isdir(_path(root, NM_DIR))
    for path, (text, mode) in wanted_files(sources, config, networkmanager).items():
        target = _path(root, path)
        if _read(target) == text and (os.stat(target).st_mode & 0o777) == mode:
            continue
        changed.append(path)
        if apply:
            _write(target, text, mode)
    return changed


# ---------------------------------------------------------------- on the host
def _apply_irq(section: dict) -> list[str]:
    from .irq import IrqError, pin

    try:
        pin("/", section["interfaces"], section["policy"], section.get("cpus", ""))
    except IrqError as exc:
        return [f"irq: {exc}"]
    return []


def _run(label: str, commands: dict[str, list[list[str]]]) -> list[str]:
    """Each port's argument lists in turn; the failures, one each."""
    errors = []
    for port, argvs in commands.items():
        for argv in argvs:
            result = subprocess.run(argv, capture_output=True, text=True, check=False)
            # Removing a root qdisc that is not there fails harmlessly.
            if result.returncode != 0 and argv[1:3] != ["qdisc", "del"]:
                errors.append(f"{label} {port}: {' '.join(argv)}: {result.stderr.strip()}")
    return errors


def _apply_qos(section: dict) -> list[str]:
    errors = _run("qos", section.get("commands", {}))
    # Lossless RoCE: the ECN knobs (sysfs files the driver resets with the port).
    for port, paths in section.get("ecn", {}).items():
        errors.extend(f"ecn {port}: {error}" for error in ecn_enable(paths))
    return errors


def _apply_nic_runtime(section: dict, interface: str | None = None) -> list[str]:
    """The VFs (at boot; on a link-up only the port's, a no-op when they exist) and the
    DCQCN knobs and the trust commands of the NIC profiles (cxfab_nic_runtime)."""
    from .sriov import apply as sriov_apply

    root = section.get("root", "/")
    wanted = section.get("sriov") or {}
    ecn = section.get("ecn") or {}
    if interface is not None:
        wanted = {k: v for k, v in wanted.items() if k == interface}
        ecn = {k: v for k, v in ecn.items() if k == interface}
    errors = [f"sriov: {error}" for error in sriov_apply(root, wanted)] if wanted else []
    commands = section.get("commands") or {}
    if interface is not None:
        commands = {k: v for k, v in commands.items() if k == interface}
    errors += _run("trust", commands)
    for port, paths in sorted(ecn.items()):
        errors.extend(f"dcqcn {port}: {error}" for error in ecn_enable(paths))
    return errors


def _apply_vlan_egress(section: dict, interface: str | None = None) -> list[str]:
    """Each VLAN's `ip link set ... egress-qos-map` command (iproute2 types every entry
    as the kernel expects). A VLAN that does not exist yet - at boot, before
    NetworkManager built it - is left to its own `up` event."""
    root = section.get("root", "/")
    commands = section.get("commands") or {}
    if interface is not None:
        commands = {k: v for k, v in commands.items() if k == interface}
    present = {
        vlan: argvs
        for vlan, argvs in commands.items()
        if os.path.exists(os.path.join(root, "sys/class/net", vlan))
    }
    return _run("egress", present)


def ecn_enable(paths: list[str]) -> list[str]:
    """Write 1 to each ECN knob; the errors, one per failed path.

    The qos stage enables the knobs with it, and the agent again at every link-up."""
    errors = []
    for path in paths:
        try:
            with open(path, "w", encoding="ascii") as handle:
                handle.write("1\n")
        except OSError as exc:
            errors.append(f"{path}: {exc.strerror or exc}")
    return errors


def _irqbalance_bans(config: dict, device_path: str) -> bool:
    """irqbalance --policyscript: is this IRQ's device one of the pinned NIC functions?"""
    functions = (config.get("irq") or {}).get("pci") or []
    parts = device_path.rstrip("/").split("/")
    return any(pci in parts for pci in functions)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="cxfab-host-apply", description=__doc__.split("\n")[0])
    parser.add_argument("--interface", help="only act when this interface is one of ours")
    parser.add_argument("--config", default=CONFIG)
    parser.add_argument(
        "policy_args", nargs="*", help="irqbalance policy script call: <device path> <irq>"
    )
    args = parser.parse_args(argv)
    try:
        with open(args.config, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as exc:
        print(f"cxfab-host-apply: {args.config}: {exc}", file=sys.stderr)
        return 1
    if args.policy_args:
        print("ban=true" if _irqbalance_bans(config, args.policy_args[0]) else "ban=false")
        return 0
    irq, qos, runtime = config.get("irq"), config.get("qos"), config.get("nic_runtime")
    egress = config.get("vlan_egress")
    if args.interface is not None:
        ours = set((irq or {}).get("interfaces", [])) | set((qos or {}).get("commands", {}))
        ours |= set((egress or {}).get("commands") or {})
        for key in ("sriov", "ecn", "commands"):
            ours |= set((runtime or {}).get(key) or {})
        if args.interface not in ours:
            return 0
        # A port that came back up needs only its own QoS; IRQs are looked up again.
        if qos and args.interface in qos.get("commands", {}):
            qos = {
                "commands": {args.interface: qos["commands"][args.interface]},
                "ecn": {args.interface: (qos.get("ecn") or {}).get(args.interface, [])},
            }
        elif qos:
            qos = None
    errors = (_apply_irq(irq) if irq else []) + (_apply_qos(qos) if qos else [])
    if runtime:
        errors += _apply_nic_runtime(runtime, args.interface)
    if egress:
        errors += _apply_vlan_egress(egress, args.interface)
    for error in errors:
        print(f"cxfab-host-apply: {error}", file=sys.stderr)
    return 1 if errors else 0


def sources() -> dict[str, str]:
    """The agent's own package files, as every module that installs it ships them."""
    from .. import net
    from . import cpulist, irq, sriov

    return package_sources([net, cpulist, irq, sriov, sys.modules[__name__]])


def package_sources(modules, files=PACKAGE_FILES) -> dict[str, str]:
    """`files` (default: the agent's PACKAGE_FILES) -> source text, read from the modules.

    Inside an Ansible module the package is inside the module's zip payload, so the
    source comes from the module's loader (zipimport), with the file as fallback.
    """
    by_name = {}
    for module in modules:
        name = module.__name__.split("cxfab.", 1)[1]  # hostnet.irq, hostnet (package)
        is_package = hasattr(module, "__path__")
        rel = "cxfab/" + name.replace(".", "/") + ("/__init__.py" if is_package else ".py")
        loader = getattr(module, "__loader__", None)
        text = None
        if loader is not None and hasattr(loader, "get_source"):
            try:
                text = loader.get_source(module.__name__)
            except ImportError:
                text = None
        if text is None:
            with open(module.__file__, encoding="utf-8") as handle:
                text = handle.read()
        by_name[rel] = text
    # The parent packages hold no code the host runs: empty files make them packages.
    for parent in ("cxfab/__init__.py", "cxfab/host/__init__.py"):
        by_name.setdefault(parent, "")
    missing = set(files) - set(by_name)
    if missing:
        raise ValueError(f"package incomplete, missing {sorted(missing)}")
    return {rel: by_name[rel] for rel in files}
