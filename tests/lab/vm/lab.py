"""Bring the lab up and down: two host guests under QEMU/TCG, their wiring, the switches.

usage: python -m tests.lab.vm.lab {up|down|status|fail SIDE|heal [SIDE]}

up      wire the two switch sides, boot lab-host1 and lab-host2 (virtme-ng, TCG), start
        the emulated Onyx pair when present, wait for SSH, write inventories/lab/hosts.yml
down    stop everything `up` started: guests, switch emulators, taps, sockets
status  what is running, reachable and which switch sides are cut
fail    cut switch side a or b: both hosts' ports on that side lose carrier (QMP set_link)
heal    restore one side, or both when SIDE is omitted

Exit status 77 from `up` means the lab cannot run on this machine at all (reason
printed and kept in tests/lab/run/unavailable for the lab tests to report).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.lab.vm import kernel
from tests.lab.vm.qmp import Qmp, QmpError
from tests.lab.vm.topology import (
    CXEMU_BIN,
    DATA_DEVICE_IDS,
    DATA_QUEUES,
    DATA_SPEED_MBPS,
    DATA_VECTORS,
    GUEST_CPUS,
    GUEST_INIT,
    GUEST_MEMORY_MB,
    GUESTS,
    HOSTS_FILE,
    KNOWN_HOSTS_FILE,
    ONYX_PAIR,
    ONYX_RUN_DIR,
    REPO_ROOT,
    RUN_DIR,
    SIDES,
    SSH_DIR,
    SSH_KEY,
    SWITCHES,
    SWITCHES_KNOWN_HOSTS_FILE,
    Guest,
    node_cpulist,
)

UNAVAILABLE = 77
UNAVAILABLE_FILE = RUN_DIR / "unavailable"
LINKS_FILE = RUN_DIR / "links.json"
BOOT_TIMEOUT_S = 300
TAP_MTU = 9000
# The image the lab intent points at (inventories/lab/host_vars/*/cxfab.yml): the
# emulated ConnectX-4's matching 12.28.1002 image; deterministic, so its sha256 is
# committed in the intent like a real operator's download checksum.
FIRMWARE_IMAGE = RUN_DIR / "firmware" / "fw-ConnectX4-rel-12_28_1002-LNV2190110032.bin"
FIRMWARE_PSID, FIRMWARE_VERSION = "LNV2190110032", "12.28.1002"


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


# ---------------------------------------------------------------- preflight
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


# ---------------------------------------------------------------- ssh keys
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
    return [
        "ssh",
        "-i",
        str(SSH_KEY),
        "-p",
        str(guest.ssh_port),
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "LogLevel=ERROR",
        "-o",
        "ConnectTimeout=5",
        "root@127.0.0.1",
        *command,
    ]


def ssh_ok(guest: Guest) -> bool:
    result = subprocess.run(ssh_argv(guest, "true"), capture_output=True, timeout=30, check=False)
    return result.returncode == 0


# ---------------------------------------------------------------- wiring
def wire_up() -> None:
    """One tap per data port; each switch side is a transparent wire between two taps.

    tc mirred redirects every frame (LACPDUs and VLAN tags included) from one host's
    tap to the other's, which a Linux bridge would not do for LACP.
    """
    for guest in GUESTS:
        for side in SIDES:
            tap = guest.tap(side)
            run("ip", "tuntap", "add", "dev", tap, "mode", "tap", "multi_queue")
            run("ip", "link", "set", tap, "mtu", str(TAP_MTU), "up")
    for side in SIDES:
        one, other = (guest.tap(side) for guest in GUESTS)
        for src, dst in ((one, other), (other, one)):
            run("tc", "qdisc", "add", "dev", src, "ingress")
            run(
                "tc", "filter", "add", "dev", src, "parent", "ffff:", "protocol", "all",
                "u32", "match", "u32", "0", "0",
                "action", "mirred", "egress", "redirect", "dev", dst,
            )  # fmt: skip


def wire_down() -> None:
    for guest in GUESTS:
        for side in SIDES:
            tap = guest.tap(side)
            if Path("/sys/class/net", tap).exists():
                run("ip", "link", "del", tap, check=False)


# ---------------------------------------------------------------- guests
def qemu_opts(guest: Guest) -> str:
    mgmt = (
        f"-netdev user,id=mgmt,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:{guest.ssh_port}-10.0.2.15:22 "
        f"-device virtio-net-pci,netdev=mgmt,mac={guest.mgmt_mac},bus=pcie.0,addr=0x10"
    )
    # The data NIC: one dual-function PCI device behind a PCIe expander on NUMA node 1,
    # like a dual-port ConnectX in a slot of the second socket.
    data = [
        "-device pxb-pcie,id=pcie.1,bus_nr=100,numa_node=1,bus=pcie.0",
        "-device pcie-root-port,id=rp1,bus=pcie.1,chassis=10,slot=1",
    ]
    for function, side in enumerate(SIDES):
        multifunction = ",multifunction=on" if function == 0 else ""
        data.append(
            f"-netdev tap,id=net_{side},ifname={guest.tap(side)},script=no,downscript=no,"
            f"queues={DATA_QUEUES},vhost=off "
            f"-device virtio-net-pci,id={DATA_DEVICE_IDS[side]},netdev=net_{side},bus=rp1,"
            f"addr=0.{function}{multifunction},mq=on,vectors={DATA_VECTORS},"
            f"mac={guest.data_mac(side)},speed={DATA_SPEED_MBPS},duplex=full"
        )
    # /usr and the ConnectX tool emulator again, read-only, for the guest's cached
    # mounts of them (guest-init.sh).
    cached = [
        f"-fsdev local,id={tag},path={path},security_model=none,readonly=on "
        f"-device virtio-9p-pci,fsdev={tag},mount_tag={tag},bus=pcie.0"
        for tag, path in (("cxfab_usr", "/usr"), ("cxfab_emu", CXEMU_BIN.parent))
    ]
    control = f"-qmp unix:{guest.qmp_socket},server=on,wait=off -pidfile {guest.pid_file}"
    return " ".join([mgmt, *data, *cached, control])


def start_guest(guest: Guest, info: dict) -> subprocess.Popen:
    guest.run_dir.mkdir(parents=True, exist_ok=True)
    half = GUEST_MEMORY_MB // 2
    init = " ".join(
        [
            str(GUEST_INIT),
            str(SSH_DIR),
            str(CXEMU_BIN),
            guest.mgmt_mac,
            *(guest.data_mac(side) for side in SIDES),
        ]
    )
    argv = [
        "vng",
        "--run",
        info["vmlinuz"],
        "--disable-kvm",
        "--force-9p",
        "--disable-monitor",
        "--verbose",
        "--name",
        guest.name,
        "--cpus",
        str(GUEST_CPUS),
        "--memory",
        f"{GUEST_MEMORY_MB}M",
        "--numa",
        f"{half}M,cpus={node_cpulist(0)}",
        "--numa",
        f"{half}M,cpus={node_cpulist(1)}",
        f"--qemu-opts={qemu_opts(guest)}",
        "--exec",
        init,
    ]
    if guest.console_log.exists():  # keep the previous boot's console for post-mortems
        guest.console_log.replace(guest.console_log.with_suffix(".log.prev"))
    console = guest.console_log.open("w")
    (guest.run_dir / "vng.argv").write_text(json.dumps(argv, indent=1) + "\n")
    return subprocess.Popen(
        argv,
        cwd=REPO_ROOT,
        env=tool_env(),
        stdin=subprocess.DEVNULL,
        stdout=console,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def guest_pid(guest: Guest) -> int | None:
    try:
        pid = int(guest.pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


def group_alive(group: int, name: str) -> bool:
    """Whether a live (not zombie) process of group `group` runs for guest `name`.

    The name check keeps a recycled process group id from ever being mistaken for ours.
    """
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z" and name.encode() in cmdline:
            return True
    return False


def stop_guest(guest: Guest) -> None:
    pid = guest_pid(guest)
    if pid is not None:
        try:
            with Qmp(guest.qmp_socket, timeout=5) as qmp:
                qmp.execute("quit")
        except (OSError, QmpError):
            pass
        for _ in range(50):
            if guest_pid(guest) is None:
                break
            time.sleep(0.1)
    # vng, virtme-run and QEMU share one process group (start_new_session): wait for all
    # of it to end, then kill whatever remains.
    session = guest.run_dir / "session"
    try:
        group = int(session.read_text())
    except (OSError, ValueError):
        group = None
    if group is not None:
        for _ in range(50):
            if not group_alive(group, guest.name):
                break
            time.sleep(0.1)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
    if pid is not None and guest_pid(guest) is not None:
        os.kill(pid, signal.SIGKILL)
    for leftover in (guest.qmp_socket, guest.pid_file, session):
        leftover.unlink(missing_ok=True)


# ---------------------------------------------------------------- switches
def onyx(action: str, *extra: str, wait: bool = True):
    # CXFAB_LAB_SWITCHES=off runs the host guests alone (e.g. while 2201/2202 are taken).
    if not ONYX_PAIR.exists() or os.environ.get("CXFAB_LAB_SWITCHES", "on") == "off":
        return None
    argv = [venv_python(), "-m", "tests.lab.onyx.pair", action, "--run-dir", str(ONYX_RUN_DIR)]
    argv.extend(extra)
    if wait:
        return subprocess.run(argv, cwd=REPO_ROOT, check=False)
    return subprocess.Popen(argv, cwd=REPO_ROOT)


# ---------------------------------------------------------------- inventory
def write_inventory() -> None:
    lines = [
        "---",
        "# Written by `make lab-up` (tests/lab/vm/lab.py): where the lab's devices answer.",
        "# The lab's intent is in group_vars/ and host_vars/ beside this file.",
        "all:",
        "  children:",
        "    hosts:",
        "      hosts:",
    ]
    for guest in GUESTS:
        lines += [
            f"        {guest.name}:",
            "          ansible_host: 127.0.0.1",
            f"          ansible_port: {guest.ssh_port}",
        ]
    lines += [
        "      vars:",
        "        ansible_user: root",
        f"        ansible_ssh_private_key_file: {SSH_KEY}",
        "        ansible_python_interpreter: /usr/bin/python3",
        "    switches:",
        "      hosts:",
    ]
    for name, switch in SWITCHES.items():
        lines += [
            f"        {name}:",
            "          ansible_host: 127.0.0.1",
            f"          ansible_port: {switch['port']}",
        ]
    lines += [
        "      vars:",
        "        # Switch roles run on the controller and reach the switch CLI over SSH.",
        "        ansible_connection: local",
        f"        ansible_python_interpreter: {venv_python()}",
    ]
    HOSTS_FILE.write_text("\n".join(lines) + "\n")
    write_known_hosts()
    # The switches' host keys, checked by the switch roles (cxfab_switch_known_hosts).
    onyx("known-hosts", "--known-hosts", str(SWITCHES_KNOWN_HOSTS_FILE))


def write_known_hosts() -> None:
    """The guests' host key, as ssh looks it up for a forwarded port ([127.0.0.1]:2221).

    The lab inventory checks hosts against this file (StrictHostKeyChecking=yes).
    """
    key_type, key = (SSH_DIR / "host_ed25519.pub").read_text().split()[:2]
    lines = [
        "# Written by `make lab-up` (tests/lab/vm/lab.py): the lab guests' host key.",
        *(f"[127.0.0.1]:{guest.ssh_port} {key_type} {key}" for guest in GUESTS),
    ]
    KNOWN_HOSTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    KNOWN_HOSTS_FILE.write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------- links
def link_states() -> dict[str, bool]:
    try:
        return json.loads(LINKS_FILE.read_text())
    except (OSError, ValueError):
        return dict.fromkeys(SIDES, True)


def set_side(side: str, up: bool) -> None:
    """A switch going down drops the carrier of every host port cabled to it."""
    if side not in SIDES:
        raise SystemExit(f"lab: SIDE must be one of {', '.join(SIDES)}, not {side!r}")
    for guest in GUESTS:
        with Qmp(guest.qmp_socket) as qmp:
            qmp.execute("set_link", name=DATA_DEVICE_IDS[side], up=up)
    states = link_states()
    states[side] = up
    LINKS_FILE.write_text(json.dumps(states) + "\n")
    log(f"switch side {side} {'restored' if up else 'cut'} for {', '.join(g.name for g in GUESTS)}")


def make_firmware_image() -> None:
    """Write the emulated card's firmware image the lab intent references."""
    FIRMWARE_IMAGE.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            str(CXEMU_BIN / "cxemu-admin"),
            "make-image",
            "--psid",
            FIRMWARE_PSID,
            "--version",
            FIRMWARE_VERSION,
            "--out",
            str(FIRMWARE_IMAGE),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def compile_guest_python() -> None:
    """Byte-compile the NIC tool emulator for the guests' interpreter.

    The guests see this tree read-only, and the controller may run with
    PYTHONDONTWRITEBYTECODE (no __pycache__ is ever written): then every emulated
    mlnx_qos/mlxlink call compiled ~2,700 lines under TCG, 5-6 s of its ~7 s.
    compileall writes the .pyc files whatever that variable says.
    """
    python = shutil.which("python3", path="/usr/bin") or sys.executable
    subprocess.run(
        [python, "-m", "compileall", "-q", str(CXEMU_BIN.parent / "cxemu")],
        check=True,
        stdout=subprocess.DEVNULL,
    )


# ---------------------------------------------------------------- commands
# A TCG guest now and then boots into a wedge: one vCPU halts and its timer interrupt
# never comes (seen: "rcu_preempt kthread timer wakeup didn't happen ... idling at
# native_safe_halt", then every task blocked; the guest never answers SSH). Such a
# guest is started again, once; a healthy boot prints none of these lines.
BOOT_RESTARTS = 1
WEDGE_SIGNS = ("rcu_preempt kthread timer wakeup didn't happen", "rcu_preempt kthread starved")


def boot_wedged(guest: Guest) -> str:
    """The console line that shows `guest` wedged, or '' while it looks healthy."""
    try:
        text = guest.console_log.read_text(errors="replace")
    except OSError:
        return ""
    return next((sign for sign in WEDGE_SIGNS if sign in text), "")


def up() -> int:
    started = time.monotonic()
    try:
        info = preflight()
    except LabUnavailable as exc:
        RUN_DIR.mkdir(parents=True, exist_ok=True)
        UNAVAILABLE_FILE.write_text(f"{exc}\n")
        log(f"cannot run here: {exc}")
        return UNAVAILABLE
    UNAVAILABLE_FILE.unlink(missing_ok=True)
    if all(guest_pid(g) for g in GUESTS) and all(ssh_ok(g) for g in GUESTS):
        log("already up")
        make_firmware_image()
        write_inventory()
        return 0
    down(quiet=True)
    ensure_ssh_keys()
    compile_guest_python()
    wire_up()
    LINKS_FILE.write_text(json.dumps(dict.fromkeys(SIDES, True)) + "\n")
    procs = {}
    for guest in GUESTS:
        procs[guest.name] = start_guest(guest, info)
        (guest.run_dir / "session").write_text(f"{procs[guest.name].pid}\n")
    ports = ",".join(str(switch["port"]) for switch in SWITCHES.values())
    switches = onyx("start", "--ports", ports, wait=False)
    log(f"booting {', '.join(procs)} (kernel {info['version']}, TCG)")
    ready: dict[str, float] = {}
    deadlines = {guest.name: time.monotonic() + BOOT_TIMEOUT_S for guest in GUESTS}
    restarts = dict.fromkeys(deadlines, BOOT_RESTARTS)
    stuck = ""
    while len(ready) < len(GUESTS) and not stuck:
        for guest in GUESTS:
            if guest.name in ready:
                continue
            late = time.monotonic() >= deadlines[guest.name]
            why = boot_wedged(guest) or (f"no SSH after {BOOT_TIMEOUT_S}s" if late else "")
            if why and restarts[guest.name] > 0:
                restarts[guest.name] -= 1
                log(f"{guest.name} is stuck booting ({why}): starting it again")
                stop_guest(guest)
                procs[guest.name] = start_guest(guest, info)
                (guest.run_dir / "session").write_text(f"{procs[guest.name].pid}\n")
                deadlines[guest.name] = time.monotonic() + BOOT_TIMEOUT_S
                continue
            if why:
                stuck = f"{guest.name}: {why}"
                break
            if procs[guest.name].poll() is not None:
                tail = guest.console_log.read_text(errors="replace").splitlines()[-15:]
                log(f"{guest.name} exited early; console {guest.console_log} ends:")
                print("\n".join(tail), flush=True)
                down(quiet=True)
                return 1
            if ssh_ok(guest):
                ready[guest.name] = time.monotonic() - started
                log(f"{guest.name} answers SSH after {ready[guest.name]:.1f}s")
        time.sleep(1)
    if len(ready) < len(GUESTS):
        log(f"guests not reachable ({stuck}, restarted once); consoles under {RUN_DIR}")
        if switches is not None:
            switches.wait()
        down(quiet=True)
        return 1
    if switches is not None and switches.wait() != 0:
        log("the Onyx switch pair failed to start")
        down(quiet=True)
        return 1
    make_firmware_image()
    write_inventory()
    log(f"up in {time.monotonic() - started:.1f}s; inventory {HOSTS_FILE.relative_to(REPO_ROOT)}")
    return 0


def down(quiet: bool = False) -> int:
    onyx("stop")
    for guest in GUESTS:
        stop_guest(guest)
    wire_down()
    LINKS_FILE.unlink(missing_ok=True)
    if not quiet:
        log("down: guests stopped, taps removed")
    return 0


def status() -> int:
    healthy = True
    for guest in GUESTS:
        pid = guest_pid(guest)
        reachable = pid is not None and ssh_ok(guest)
        healthy &= reachable
        state = f"running (pid {pid})" if pid else "stopped"
        answer = "ok" if reachable else "-"
        print(f"{guest.name:10} {state:22} ssh 127.0.0.1:{guest.ssh_port} {answer}")
    if any(guest_pid(g) for g in GUESTS):
        sides = link_states()
        print("switch sides: " + ", ".join(f"{s}={'up' if sides[s] else 'CUT'}" for s in SIDES))
    result = onyx("status")
    if result is not None:
        healthy &= result.returncode == 0
    return 0 if healthy else 3


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    command, args = argv[0], argv[1:]
    if command == "up":
        return up()
    if command == "down":
        return down()
    if command == "status":
        return status()
    if command == "fail" and len(args) == 1:
        set_side(args[0].lower(), up=False)
        return 0
    if command == "heal" and len(args) <= 1:
        for side in [args[0].lower()] if args and args[0] else SIDES:
            set_side(side, up=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
