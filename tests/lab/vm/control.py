"""The lab controller's shared plumbing: its state files, logging, commands, the
SSH into the guests (the lab's own keys, checked host keys) and the switch pair's CLI.

Used by tests/lab/vm/lab.py (up, down, status), cabling.py and guests.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.lab.vm import kernel, switch_os
from tests.lab.vm.topology import (
    FABRIC,
    GUESTS,
    KNOWN_HOSTS_FILE,
    REPO_ROOT,
    RUN_DIR,
    SSH_DIR,
    SSH_KEY,
    Guest,
)

UNAVAILABLE = 77
UNAVAILABLE_FILE = RUN_DIR / "unavailable"
LINKS_FILE = RUN_DIR / "links.json"
FAULTS_FILE = RUN_DIR / "faults.json"
WIRING_FILE = RUN_DIR / "wiring"


# What the emulated switches need to drive their namespaces in lab-fabric (server.py
# --dataplane): the SSH command into the guest and each switch's cabled ports.
DATAPLANE_FILE = RUN_DIR / "dataplane.json"
ALL_GUESTS = (*GUESTS, FABRIC)
BOOT_TIMEOUT_S = 300
TAP_MTU = 9000


class LabUnavailable(Exception):
    """QEMU cannot run here at all: the lab tier is skipped with this reason."""


def log(message: str) -> None:
    print(f">> lab: {message}", flush=True)


def run(*argv: str, check: bool = True, quiet: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv,
        check=check,
        text=True,
        stdout=subprocess.PIPE if quiet else None,
        stderr=subprocess.PIPE if quiet else None,
    )


def venv_python() -> str:
    candidate = REPO_ROOT / ".venv" / "bin" / "python"
    return str(candidate) if candidate.exists() else sys.executable


def tool_env() -> dict[str, str]:
    """The controller's environment with the venv first (vng calls virtme-run by name)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(venv_python()).parent}:{env.get('PATH', '')}"
    return env


def preflight() -> dict:
    """Return the guest kernel or raise LabUnavailable naming what is missing."""
    if shutil.which("qemu-system-x86_64") is None:
        raise LabUnavailable("qemu-system-x86_64 is not installed (make setup installs it)")
    if shutil.which("vng", path=tool_env()["PATH"]) is None:
        raise LabUnavailable("virtme-ng (vng) is not in the venv (make setup-venv)")
    info = kernel.current()
    if info is None:
        raise LabUnavailable("the guest kernel is not fetched (make setup runs lab-kernel)")
    if os.geteuid() != 0:
        raise LabUnavailable("the data-port taps need root (CAP_NET_ADMIN) on the controller")
    try:
        with open("/dev/net/tun", "rb"):
            pass
    except OSError as exc:
        raise LabUnavailable(f"/dev/net/tun cannot be opened: {exc}") from exc
    return info


def ensure_ssh_keys() -> None:
    SSH_DIR.mkdir(parents=True, exist_ok=True)
    os.chmod(SSH_DIR, 0o700)
    host_key = SSH_DIR / "host_ed25519"
    for key, comment in ((SSH_KEY, "cxfab-lab"), (host_key, "cxfab-lab-host")):
        if not key.exists():
            run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(key))
    authorized = SSH_DIR / "authorized_keys"
    authorized.write_text(SSH_KEY.with_suffix(".pub").read_text())


def ssh_argv(guest: Guest, *command: str) -> list[str]:
    """ssh into a guest, its host key checked against the lab's known-hosts file.

    The key is the lab's own (ensure_ssh_keys, before any guest boots), so it is known
    whenever a guest can answer: a guest with another key is refused, never trusted.
    """
    if not KNOWN_HOSTS_FILE.exists() and (SSH_DIR / "host_ed25519.pub").exists():
        write_known_hosts()
    return [
        "ssh",
        "-i",
        str(SSH_KEY),
        "-p",
        str(guest.ssh_port),
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        f"UserKnownHostsFile={KNOWN_HOSTS_FILE}",
        "-o",
        "LogLevel=ERROR",
        "-o",
        # A TCG guest under load took 7-8 s to accept a connection (2026-11-26).
        "ConnectTimeout=15",
        "root@127.0.0.1",
        *command,
    ]


def ssh_ok(guest: Guest) -> bool:
    """Whether the guest answers SSH now. A login slower than 30 s (a booting guest on a
    loaded controller) is "not yet", like a refused one: the caller's deadline decides."""
    try:
        result = subprocess.run(
            ssh_argv(guest, "true"), capture_output=True, timeout=30, check=False
        )
    except subprocess.TimeoutExpired:
        return False
    return result.returncode == 0


def write_known_hosts() -> None:
    """The guests' host key, as ssh looks it up for a forwarded port ([127.0.0.1]:2221).

    The lab inventory checks hosts against this file (StrictHostKeyChecking=yes), and
    so does the lab harness (ssh_argv), the fabric guest included.
    """
    key_type, key = (SSH_DIR / "host_ed25519.pub").read_text().split()[:2]
    lines = [
        "# Written by `make lab-up` (tests/lab/vm/lab.py): the lab guests' host key.",
        *(f"[127.0.0.1]:{guest.ssh_port} {key_type} {key}" for guest in ALL_GUESTS),
    ]
    KNOWN_HOSTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    # Written whole and renamed: a concurrent ssh never reads half a file.
    partial = KNOWN_HOSTS_FILE.with_suffix(".cxfab-new")
    partial.write_text("\n".join(lines) + "\n")
    partial.replace(KNOWN_HOSTS_FILE)


def switch_pair(action: str, *extra: str, wait: bool = True, chosen: str | None = None):
    """A verb of the running switch pair's CLI (tests/lab/vm/switch_os.py: Onyx or NVUE);
    `chosen` names the pair instead (`lab pair OS` starts the other one)."""
    if chosen is None:
        chosen = switch_os.wanted() if action == "start" else switch_os.running()
    # CXFAB_LAB_SWITCHES=off runs the host guests alone (e.g. while 2201/2202 are taken).
    if not switch_os.pair_exists(chosen) or os.environ.get("CXFAB_LAB_SWITCHES", "on") == "off":
        return None
    argv = switch_os.pair_argv(venv_python(), action, chosen)
    argv.extend(extra)
    if wait:
        return subprocess.run(argv, cwd=REPO_ROOT, check=False)
    return subprocess.Popen(argv, cwd=REPO_ROOT)
