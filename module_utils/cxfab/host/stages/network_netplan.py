"""cxfab's boot files on the netplan backend (host_network_backend: netplan).

The links are applied over netlink exactly as on networkd (network.py); only what
brings them back at boot differs: cxfab's own netplan file, rendered from the
structured config (structured/netplan.py: /etc/netplan/60-cxfab.yaml, 0600), and the
VLANs' egress-map drop-ins beside what netplan generates
(<networkd_dir>/10-netplan-<vlan>.netdev.d/60-cxfab-egress-qos.conf, 0644), never a
file written over one of netplan's. After writing them the module runs `netplan
generate` (netplan renders its networkd files into /run/systemd/network) and, where
systemd is the init, `networkctl reload`: the live state is already right, networkd
only adopts the files. `netplan apply` is not used: it also restarts networkd and
replugs devices, which the netlink step has made needless.

Why cxfab's own revert timer and not `netplan try`: netplan 0.106's try refuses any
bond with parameters ("reverting custom parameters for bridges and bonds is not
supported", `is_revertable` in netplan/cli/commands/try_command.py) and waits for a
keypress on a terminal; every cxfab bond has parameters. The watchdog of rollback.py
restores the links and these files, then runs `netplan generate` again.

Paths are absolute everywhere here: the rollback record's file snapshot keys them so,
and rollback.restore_files joins them to a directory, which leaves an absolute path
as it is.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from ...structured import netplan

NETPLAN_MODE = netplan.NETPLAN_MODE
DROPIN_MODE = 0o644
GENERATE = ["netplan", "generate"]
# cxfab's networkd backend's files: on a netplan host they would define the same links
# a second time, so the netplan backend removes them (and restores them on a revert).
NETWORKD_PREFIX = "60-cxfab-"


def wanted(structured: dict, netplan_dir: str, networkd_dir: str) -> dict[str, tuple[str, int]]:
    """{absolute path: (text, mode)} of cxfab's netplan file and drop-ins."""
    files = {}
    rendered = netplan.render_netplan(structured["network"], structured.get("ipoib"))
    for path, text in rendered.items():
        if path == netplan.NETPLAN_FILE:
            files[os.path.join(netplan_dir, os.path.basename(path))] = (text, NETPLAN_MODE)
        else:
            relative = os.path.relpath(path, netplan.NETWORKD_DIR)
            files[os.path.join(networkd_dir, relative)] = (text, DROPIN_MODE)
    return files


def owned(netplan_dir: str, networkd_dir: str) -> list[str]:
    """cxfab's files present now: its netplan file, its drop-ins, its networkd files."""
    found = []
    own = os.path.join(netplan_dir, os.path.basename(netplan.NETPLAN_FILE))
    if os.path.lexists(own):
        found.append(own)
    if os.path.isdir(networkd_dir):
        for name in sorted(os.listdir(networkd_dir)):
            path = os.path.join(networkd_dir, name)
            if name.startswith(NETWORKD_PREFIX) and not name.endswith(".cxfab-new"):
                found.append(path)
            elif name.startswith("10-netplan-") and name.endswith(".netdev.d"):
                dropin = os.path.join(path, netplan.DROPIN)
                if os.path.lexists(dropin):
                    found.append(dropin)
    return found


def leftover(netplan_dir: str, networkd_dir: str) -> list[str]:
    """On the networkd backend: cxfab's netplan file and drop-ins from an earlier netplan
    run. netplan would render them again at every boot into /run/systemd/network, whose
    10-netplan-* .network files networkd takes before cxfab's 60-cxfab-* ones (the first
    matching file in alphanumeric order applies: systemd.network(5); for .netdev files
    unconfirmed), so the old definition would come back."""
    networkd_files = os.path.join(networkd_dir, NETWORKD_PREFIX)
    return [p for p in owned(netplan_dir, networkd_dir) if not p.startswith(networkd_files)]


def remove_leftover(paths: list[str], run) -> None:
    """Remove them and have netplan render its output without them (no netplan installed:
    nothing renders them, so removing is enough)."""
    for path in paths:
        os.unlink(path)
    status, out, err = run(GENERATE)
    if status not in (0, 127):
        raise RuntimeError(f"netplan generate failed (rc={status}): {(err or out).strip()[:400]}")


def _differs(path: str, text: str, mode: int) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            same = handle.read() == text
        return not same or os.stat(path).st_mode & 0o7777 != mode
    except FileNotFoundError:
        return True


def changes(files: dict[str, tuple[str, int]], present: list[str]) -> list[str]:
    """`write <path>` for each file whose text or mode differs, `remove <path>` for the rest."""
    result = [f"write {path}" for path, (text, mode) in files.items() if _differs(path, text, mode)]
    return result + [f"remove {path}" for path in present if path not in files]


def write(files: dict[str, tuple[str, int]], present: list[str]) -> None:
    """Make cxfab's files exactly `files`: each written atomically with its mode."""
    for path, (text, mode) in files.items():
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        temporary = path + ".cxfab-new"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    for path in present:
        if path not in files:
            os.unlink(path)  # an emptied drop-in directory stays: a revert writes into it


def accepted(run, files: dict[str, tuple[str, int]], netplan_dir: str) -> str:
    """netplan's own verdict on cxfab's file, before anything changes: '' or its error.

    `netplan generate --root-dir` on a scratch root holding only cxfab's file: a file
    netplan would refuse at boot is refused here, with netplan's words.
    """
    own = os.path.join(netplan_dir, os.path.basename(netplan.NETPLAN_FILE))
    scratch = tempfile.mkdtemp(prefix="cxfab-netplan-")
    try:
        target = os.path.join(scratch, "etc/netplan")
        os.makedirs(target)
        path = os.path.join(target, os.path.basename(own))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, NETPLAN_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(files[own][0])
        status, out, err = run([*GENERATE, "--root-dir", scratch])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if status == 127:
        return "the netplan command is not installed (package netplan.io)"
    if status != 0:
        return f"netplan generate refused cxfab's file (rc={status}): {(err or out).strip()[:400]}"
    return ""


def generate(run) -> None:
    """`netplan generate` for real; a refusal raises, so the change is restored."""
    status, out, err = run(GENERATE)
    if status != 0:
        raise RuntimeError(f"netplan generate failed (rc={status}): {(err or out).strip()[:400]}")


def snapshot(files: dict[str, tuple[str, int]], present: list[str]) -> list[str]:
    """The paths the revert timer must hold: every file written or removed."""
    return sorted(set(files) | set(present))
