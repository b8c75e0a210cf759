"""Bring the lab up and down: host guests under QEMU/TCG, the switch pair, their wiring.

usage: python -m tests.lab.vm.lab {up|down|status|wire MODE|fail WHAT|heal [WHAT]}

up      boot lab-host1, lab-host2 and lab-fabric (virtme-ng, TCG), cable every host port
        to its switch port in lab-fabric, start the emulated Onyx pair (SWITCH_OS=cumulus:
        the NVUE pair, tests/lab/vm/switch_os.py; either keeps the
        fabric's namespaces converged to its config), wait for SSH, write
        inventories/lab/hosts.yml
down    stop everything `up` started: guests, switch emulators, taps, sockets
status  what is running, reachable, how the hosts are wired and what is failed
wire    fabric: host ports reach their switch ports (default); direct: host 1 meets
        host 2 on each side with no switch between (the lab's own kernel tests)
fail    switch a|b   the switch dies: its emulator is killed, its ports go dark (the
                     hosts' ports cabled to it lose carrier), its IPL ends go down
        ipl          the IPL is cut while both switches live (Onyx: the secondary
                     shuts its MPOs)
        port HOST:N  the cable of HOST's data port N (1 = side a, 2 = side b) is pulled
        side a|b     both hosts' ports on that side lose carrier (also: fail a|b)
        swap HOST    HOST's two cables are swapped at the switches: its port 1 reaches
                     lab-sw-b's port, its port 2 lab-sw-a's (unplugged, then replugged:
                     all four ends lose carrier for a moment)
heal    the same words restore one fault; without any, every fault is healed

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

from tests.lab.vm import fabric, host_stack, kernel, switch_os
from tests.lab.vm.qmp import Qmp, QmpError
from tests.lab.vm.topology import (
    CXEMU_BIN,
    DATA_DEVICE_IDS,
    DATA_QUEUES,
    DATA_SPEED_MBPS,
    DATA_VECTORS,
    FABRIC,
    FABRIC_CPUS,
    FABRIC_MEMORY_MB,
    GUEST_CPUS,
    GUEST_INIT,
    GUEST_MEMORY_MB,
    GUESTS,
    HOSTS_FILE,
    INVENTORY_DIR,
    KNOWN_HOSTS_FILE,
    REPO_ROOT,
    RUN_DIR,
    SIDES,
    SSH_DIR,
    SSH_KEY,
    SWITCHES,
    SWITCHES_KNOWN_HOSTS_FILE,
    Guest,
    cable_of,
    cabled_ports,
    guest_by_name,
    node_cpulist,
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
# The image the lab intent points at (inventories/lab/host_vars/*/cxfab.yml): the
# emulated ConnectX-4's matching 12.28.1002 image; deterministic, so its sha256 is
# committed in the intent like a real operator's download checksum.
# Beside the inventory that names it (files/firmware/...): an image path may not leave
# the inventory with `..`.
FIRMWARE_IMAGE = (
    INVENTORY_DIR / "files" / "firmware" / "fw-ConnectX4-rel-12_28_1002-LNV2190110032.bin"
)
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


# ---------------------------------------------------------------- wiring
def wire_up() -> None:
    """One tap per host data port and per fabric NIC, then the fabric wiring."""
    for guest in GUESTS:
        for side in SIDES:
            tap = guest.tap(side)
            run("ip", "tuntap", "add", "dev", tap, "mode", "tap", "multi_queue")
            run("ip", "link", "set", tap, "mtu", str(TAP_MTU), "up")
    for tap in fabric.all_taps()[len(GUESTS) * len(SIDES) :]:
        run("ip", "tuntap", "add", "dev", tap, "mode", "tap")
        run("ip", "link", "set", tap, "mtu", str(fabric.PORT_MTU), "up")
    wire("fabric")


def wiring() -> str:
    try:
        return WIRING_FILE.read_text().strip()
    except OSError:
        return "fabric"


def wire(mode: str) -> None:
    """Join the host taps to the fabric's (fabric) or to each other (direct)."""
    commands = fabric.wire_commands(mode, swapped_hosts())
    for tap in fabric.all_taps():
        run("tc", "qdisc", "del", "dev", tap, "ingress", check=False, quiet=True)
    for argv in commands:
        run(*argv)
    WIRING_FILE.write_text(mode + "\n")


def wire_down() -> None:
    for tap in fabric.all_taps():
        if Path("/sys/class/net", tap).exists():
            run("ip", "link", "del", tap, check=False)
    WIRING_FILE.unlink(missing_ok=True)


# ---------------------------------------------------------------- guests
def qemu_opts(guest: Guest) -> str:
    mgmt = (
        f"-netdev user,id=mgmt,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:{guest.ssh_port}-10.0.2.15:22 "
        f"-device virtio-net-pci,netdev=mgmt,mac={guest.mgmt_mac},bus=pcie.0,addr=0x10"
    )
    control = f"-qmp unix:{guest.qmp_socket},server=on,wait=off -pidfile {guest.pid_file}"
    # One host thread per guest runs all its vCPUs in turn (QEMU's default for x86 is a
    # thread per vCPU). Five vCPUs on the controller's two cores: the extra threads
    # bought no parallelism and cost time (why is not traced: likely a guest lock
    # holder's thread descheduled while the other vCPU spins, and cross-thread IPIs).
    # Measured on the lab, one thread per vCPU vs one per guest: lab up 124 vs 96 s,
    # site.yml 282 vs 219 s, a second site.yml 49-52 vs 31-33 s, verify.yml 199 vs 187 s.
    control += " -accel tcg,thread=single"
    # An x86-64-v2 CPU instead of vng's `-cpu max`: with `max` the guest sees AVX/AVX2
    # and XSAVE, which TCG emulates with helpers, so the kernel saves the wider state on
    # every switch and glibc's string functions take the AVX2 paths. Measured on the
    # lab, `max` vs this model, the same code one after the other: lab up 94 vs 62 s,
    # site.yml from blank 185-219 vs 160 s, verify.yml 164-187 vs 150 s (every check
    # passing in both), `import ansible.module_utils.basic` in a guest 3.8-5.5 vs
    # 2.7-3.6 s. No guest program needs more: Debian builds for x86-64 and native/
    # picks its stencil kernel from CPUID at run time.
    control += " -cpu qemu64,+ssse3,+sse4.1,+sse4.2,+popcnt,+cx16"
    usr = (
        "-fsdev local,id=cxfab_usr,path=/usr,security_model=none,readonly=on "
        "-device virtio-9p-pci,fsdev=cxfab_usr,mount_tag=cxfab_usr,bus=pcie.0"
    )
    if guest == FABRIC:
        return " ".join([mgmt, *fabric.fabric_qemu_nics(), usr, control])
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
    emulator = (
        f"-fsdev local,id=cxfab_emu,path={CXEMU_BIN.parent},security_model=none,readonly=on "
        "-device virtio-9p-pci,fsdev=cxfab_emu,mount_tag=cxfab_emu,bus=pcie.0"
    )
    return " ".join([mgmt, *data, usr, emulator, control])


def start_guest(guest: Guest, info: dict) -> subprocess.Popen:
    guest.run_dir.mkdir(parents=True, exist_ok=True)
    if guest == FABRIC:  # no emulated ConnectX, one small NUMA-less guest
        macs = fabric.fabric_init_args()
        init = " ".join([str(GUEST_INIT), str(SSH_DIR), "-", *macs])
        shape = ["--cpus", str(FABRIC_CPUS), "--memory", f"{FABRIC_MEMORY_MB}M"]
    else:
        macs = [guest.mgmt_mac, *(guest.data_mac(side) for side in SIDES)]
        init = " ".join([str(GUEST_INIT), str(SSH_DIR), str(CXEMU_BIN), *macs])
        half = GUEST_MEMORY_MB // 2
        shape = [
            "--cpus", str(GUEST_CPUS), "--memory", f"{GUEST_MEMORY_MB}M",
            "--numa", f"{half}M,cpus={node_cpulist(0)}",
            "--numa", f"{half}M,cpus={node_cpulist(1)}",
        ]  # fmt: skip
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
        *shape,
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
def switch_pair(action: str, *extra: str, wait: bool = True):
    """A verb of the running switch pair's CLI (tests/lab/vm/switch_os.py: Onyx or NVUE)."""
    chosen = switch_os.wanted() if action == "start" else switch_os.running()
    # CXFAB_LAB_SWITCHES=off runs the host guests alone (e.g. while 2201/2202 are taken).
    if not switch_os.pair_exists(chosen) or os.environ.get("CXFAB_LAB_SWITCHES", "on") == "off":
        return None
    argv = switch_os.pair_argv(venv_python(), action, chosen)
    argv.extend(extra)
    if wait:
        return subprocess.run(argv, cwd=REPO_ROOT, check=False)
    return subprocess.Popen(argv, cwd=REPO_ROOT)


# ---------------------------------------------------------------- inventory
def write_inventory() -> None:
    chosen = switch_os.running()
    all_vars, switch_vars = switch_os.inventory_lines(chosen, list(SWITCHES))
    lines = [
        "---",
        "# Written by `make lab-up` (tests/lab/vm/lab.py): where the lab's devices answer.",
        "# The lab's intent is in group_vars/ and host_vars/ beside this file.",
        "all:",
        "  vars:",
        *(line[4:] for line in all_vars),
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
        *switch_vars,
    ]
    HOSTS_FILE.write_text("\n".join(lines) + "\n")
    write_known_hosts()
    if chosen == "onyx":
        # The switches' host keys, checked by the switch roles (cxfab_switch_known_hosts).
        switch_pair("known-hosts", "--known-hosts", str(SWITCHES_KNOWN_HOSTS_FILE))


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


def write_dataplane_file() -> None:
    """What the emulated switches need to drive their namespaces in lab-fabric.

    One shared SSH connection into the guest (ControlMaster) serves both switch
    processes: a command then costs the guest one exec, not a new SSH handshake.
    """
    control = [
        "-o", "ControlMaster=auto", "-o", f"ControlPath={RUN_DIR / 'fabric.cm'}",
        "-o", "ControlPersist=600",
    ]  # fmt: skip
    ssh = ssh_argv(FABRIC)
    data = {
        "ssh": [ssh[0], *control, *ssh[1:]],
        "switches": {name: {"namespace": name, "cabled": cabled_ports(name)} for name in SWITCHES},
    }
    DATAPLANE_FILE.write_text(json.dumps(data, indent=1) + "\n")


# ---------------------------------------------------------------- faults
def faults() -> set[str]:
    try:
        return set(json.loads(FAULTS_FILE.read_text()))
    except (OSError, ValueError):
        return set()


def _record(fault: str, active: bool) -> None:
    now = faults()
    now = now | {fault} if active else now - {fault}
    FAULTS_FILE.write_text(json.dumps(sorted(now)) + "\n")


def swapped_hosts() -> set[str]:
    """Hosts whose two cables are swapped at the switches (fault `swap HOST`)."""
    return {fault.split(":", 1)[1] for fault in faults() if fault.startswith("swap:")}


def set_swap(host: str, swapped: bool) -> None:
    """Swap (or put back) the two cables of `host` at the switch end: its port 1 then
    reaches lab-sw-b's port and its port 2 lab-sw-a's, as after a recabling mistake.

    Like hands moving the plugs, every end loses carrier while the wires change."""
    try:
        guest = guest_by_name(host)
    except KeyError as exc:
        raise SystemExit(f"lab: SWAP must name a lab host ({exc})") from exc
    if (host in swapped_hosts()) == swapped:
        log(f"{host}: cables already {'swapped' if swapped else 'straight'}")
        return
    cables = [cable_of(host, n) for n in (1, 2)]
    devices = [(guest, DATA_DEVICE_IDS[side]) for side in SIDES]
    devices += [(FABRIC, c.device_id) for c in cables]
    _set_links(devices, up=False)
    _record(f"swap:{host}", swapped)
    if wiring() == "fabric":
        wire("fabric")
    time.sleep(1)  # a replug is not instant: both ends see the carrier drop
    _set_links(devices, up=True)
    a, b = cables
    where = (f"port 1 -> {b.switch} {b.port}, port 2 -> {a.switch} {a.port}" if swapped
             else f"port 1 -> {a.switch} {a.port}, port 2 -> {b.switch} {b.port}")  # fmt: skip
    log(f"{host}: cables {'swapped' if swapped else 'put back'}: {where}")


def _set_links(devices: list[tuple[Guest, str]], up: bool) -> None:
    for guest, device in devices:
        with Qmp(guest.qmp_socket) as qmp:
            qmp.execute("set_link", name=device, up=up)


def _ctl(name: str, *request: str) -> None:
    """A control request to one emulated switch; a refused one stops the fault command
    before the fault is recorded as done."""
    result = switch_pair("ctl", name, *request)
    if result is not None and result.returncode != 0:
        raise SystemExit(f"lab: {name} {' '.join(request)} failed (exit {result.returncode})")


def _switch_name(letter: str) -> str:
    name = f"lab-sw-{letter.lower()}"
    if name not in SWITCHES:
        raise SystemExit(f"lab: SWITCH must be one of {', '.join(SIDES)}, not {letter!r}")
    return name


def set_switch(letter: str, alive: bool) -> None:
    """A switch dies (its emulator killed, every port dark) or comes back."""
    name = _switch_name(letter)
    cables = fabric.switch_cables(name)
    swapped = swapped_hosts()
    devices = [(c.host, DATA_DEVICE_IDS[fabric.host_side(c, swapped)]) for c in cables]
    devices += [(FABRIC, c.device_id) for c in cables]
    if alive:
        _set_links(devices, up=True)
        _ctl(name, "revive")  # its dataplane agent brings the ports back up
    else:
        _ctl(name, "kill")  # the emulator also takes its namespace's ports down
        _set_links(devices, up=False)  # what the pair cannot do: the hosts lose carrier
    _record(f"switch:{name}", not alive)
    log(f"switch {name} {'back' if alive else 'dead: emulator killed, ports dark'}")


def set_ipl(cut: bool) -> None:
    """Cut the IPL with both switches alive: the first switch's agent downs its IPL ports."""
    name = next(iter(SWITCHES))
    _ctl(name, "cut-ipl" if cut else "heal-ipl")
    _record("ipl", cut)
    log(f"IPL {'cut' if cut else 'restored'} (at {name})")


def set_port(spec: str, up: bool) -> None:
    """Pull (or plug back) the cable of one host data port: HOST:N."""
    host, _, number = spec.partition(":")
    try:
        cable = cable_of(host, int(number))
    except (KeyError, ValueError) as exc:
        raise SystemExit(f"lab: PORT must be HOST:1 or HOST:2 of a lab host ({exc})") from exc
    # The host's port N reaches the other side's switch port while its cables are swapped.
    far = cable_of(host, 3 - int(number)) if host in swapped_hosts() else cable
    _set_links([(cable.host, DATA_DEVICE_IDS[cable.side]), (FABRIC, far.device_id)], up)
    _record(f"port:{host}:{number}", not up)
    log(f"cable {host}:{number} <-> {cable.switch} {cable.port} {'plugged' if up else 'pulled'}")


def apply_fault(words: list[str], active: bool) -> int:
    """`fail`/`heal` with WHAT: switch X, ipl, port HOST:N, side X (or just X)."""
    if not words and not active:
        for fault in sorted(faults()):
            kind, _, arg = fault.partition(":")
            arg = arg.rsplit("-", 1)[-1] if kind == "switch" else arg
            apply_fault([kind, arg] if arg else [kind], False)
        for side in SIDES:
            set_side(side, up=True)
        return 0
    if len(words) == 1 and words[0].lower() in SIDES:
        words = ["side", words[0]]
    kind, args = (words[0].lower(), words[1:]) if words else ("", [])
    if kind == "switch" and len(args) == 1:
        set_switch(args[0], alive=not active)
    elif kind == "ipl" and not args:
        set_ipl(cut=active)
    elif kind == "port" and len(args) == 1:
        set_port(args[0], up=not active)
    elif kind == "swap" and len(args) == 1:
        set_swap(args[0], swapped=active)
    elif kind == "side" and len(args) == 1:
        set_side(args[0].lower(), up=not active)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


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
# native_safe_halt", then every task blocked; the guest never answers SSH). Its QEMU
# also crashed once mid-boot (CI, 2026-11-27: the kernel logged "qemu-system-x86 ...
# segfault" at PCI enumeration). Such a guest is started again, once, and the lab says
# why; a healthy boot shows neither.
BOOT_RESTARTS = 1
WEDGE_SIGNS = ("rcu_preempt kthread timer wakeup didn't happen", "rcu_preempt kthread starved")


def boot_wedged(guest: Guest) -> str:
    """The console line that shows `guest` wedged, or '' while it looks healthy."""
    try:
        text = guest.console_log.read_text(errors="replace")
    except OSError:
        return ""
    return next((sign for sign in WEDGE_SIGNS if sign in text), "")


def boot_trouble(guest: Guest, proc, deadline: float) -> str:
    """Why a booting guest will not answer without a fresh start, '' while it may: a
    wedge its console shows, its QEMU gone, or its boot time used up."""
    exited = proc.poll()
    if sign := boot_wedged(guest):
        return sign
    if exited is not None:
        return f"its QEMU exited with status {exited}"
    return f"no SSH after {BOOT_TIMEOUT_S}s" if time.monotonic() >= deadline else ""


def restart_guest(guest: Guest) -> float:
    """Start one guest again on a fresh boot, e.g. one found wedged mid-run; seconds
    until it answers SSH. Its taps and their wiring are the controller's and stay."""
    started = time.monotonic()
    info = preflight()
    stop_guest(guest)
    proc = start_guest(guest, info)
    (guest.run_dir / "session").write_text(f"{proc.pid}\n")
    deadline = started + BOOT_TIMEOUT_S
    while not ssh_ok(guest):
        why = boot_wedged(guest) or ("exited" if proc.poll() is not None else "")
        if why or time.monotonic() > deadline:
            raise RuntimeError(
                f"{guest.name} did not come back ({why or f'no SSH after {BOOT_TIMEOUT_S}s'});"
                f" console {guest.console_log}"
            )
        time.sleep(1)
    if guest in host_stack.networkmanager_guests():  # as `up` left it
        host_stack.start_networkmanager(guest, ssh_argv)
    return time.monotonic() - started


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
    if all(guest_pid(g) for g in ALL_GUESTS) and all(ssh_ok(g) for g in ALL_GUESTS):
        log("already up")
        make_firmware_image()
        write_inventory()
        return 0
    down(quiet=True)
    ensure_ssh_keys()
    write_known_hosts()  # before the boot: the harness's own ssh checks the key too
    compile_guest_python()
    wire_up()
    LINKS_FILE.write_text(json.dumps(dict.fromkeys(SIDES, True)) + "\n")
    procs = {}
    for guest in ALL_GUESTS:
        procs[guest.name] = start_guest(guest, info)
        (guest.run_dir / "session").write_text(f"{procs[guest.name].pid}\n")
    ports = ",".join(str(switch["port"]) for switch in SWITCHES.values())
    write_dataplane_file()
    switch_os.remember(switch_os.wanted())
    switches = switch_pair(
        "start", "--ports", ports, "--dataplane", str(DATAPLANE_FILE), wait=False
    )
    log(f"booting {', '.join(procs)} (kernel {info['version']}, TCG)")
    ready: dict[str, float] = {}
    deadlines = {guest.name: time.monotonic() + BOOT_TIMEOUT_S for guest in ALL_GUESTS}
    restarts = dict.fromkeys(deadlines, BOOT_RESTARTS)
    stuck = ""
    while len(ready) < len(ALL_GUESTS) and not stuck:
        for guest in ALL_GUESTS:
            if guest.name in ready:
                continue
            why = boot_trouble(guest, procs[guest.name], deadlines[guest.name])
            if procs[guest.name].poll() is not None:  # the console shows how far it got
                tail = guest.console_log.read_text(errors="replace").splitlines()[-15:]
                log(f"{guest.name} exited early; console {guest.console_log} ends:")
                print("\n".join(tail), flush=True)
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
            if ssh_ok(guest):
                ready[guest.name] = time.monotonic() - started
                log(f"{guest.name} answers SSH after {ready[guest.name]:.1f}s")
        time.sleep(1)
    if len(ready) < len(ALL_GUESTS):
        log(f"guests not reachable ({stuck}, restarted once); consoles under {RUN_DIR}")
        if switches is not None:
            switches.wait()
        down(quiet=True)
        return 1
    if switches is not None and switches.wait() != 0:
        log(f"the emulated {switch_os.running()} switch pair failed to start")
        down(quiet=True)
        return 1
    script = fabric.cabling_script(switch_os.lldp_port_id())
    cabled = subprocess.run(
        ssh_argv(FABRIC, "bash", "-s"), input=script, text=True,
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    if cabled.returncode != 0:
        log(f"cabling {FABRIC.name} failed: {cabled.stderr.strip()[-600:]}")
        down(quiet=True)
        return 1
    try:
        for guest in host_stack.networkmanager_guests():
            started_nm = host_stack.start_networkmanager(guest, ssh_argv)
            log(f"{guest.name}: NetworkManager runs its network ({started_nm['seconds']} s)")
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        log(str(exc))
        down(quiet=True)
        return 1
    make_firmware_image()
    write_inventory()
    log(f"up in {time.monotonic() - started:.1f}s; inventory {HOSTS_FILE.relative_to(REPO_ROOT)}")
    return 0


def down(quiet: bool = False) -> int:
    switch_pair("stop")
    switch_os.CHOICE_FILE.unlink(missing_ok=True)
    for guest in ALL_GUESTS:
        stop_guest(guest)
    wire_down()
    # The switches' shared SSH connection into lab-fabric (ControlPersist) ends too.
    control = RUN_DIR / "fabric.cm"
    if control.exists():
        run("ssh", "-O", "exit", "-o", f"ControlPath={control}", "lab-fabric",
            check=False, quiet=True)  # fmt: skip
    LINKS_FILE.unlink(missing_ok=True)
    FAULTS_FILE.unlink(missing_ok=True)
    DATAPLANE_FILE.unlink(missing_ok=True)
    if not quiet:
        log("down: guests stopped, taps removed")
    return 0


def status() -> int:
    healthy = True
    for guest in ALL_GUESTS:
        pid = guest_pid(guest)
        reachable = pid is not None and ssh_ok(guest)
        healthy &= reachable
        state = f"running (pid {pid})" if pid else "stopped"
        answer = "ok" if reachable else "-"
        print(f"{guest.name:10} {state:22} ssh 127.0.0.1:{guest.ssh_port} {answer}")
    if any(guest_pid(g) for g in ALL_GUESTS):
        sides = link_states()
        print("switch sides: " + ", ".join(f"{s}={'up' if sides[s] else 'CUT'}" for s in SIDES))
        print(f"wiring: {wiring()}; faults: {', '.join(sorted(faults())) or 'none'}")
    result = switch_pair("status")
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
    if command == "wire" and len(args) == 1 and args[0] in fabric.WIRINGS:
        wire(args[0])
        return 0
    if command in ("fail", "heal"):
        return apply_fault([a for a in args if a], active=command == "fail")
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
