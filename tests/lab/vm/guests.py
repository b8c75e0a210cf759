"""The lab's guests: their QEMU options, start (virtme-ng, TCG), stop, and the boot
wedges a TCG guest now and then shows (started again, once)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from tests.lab.vm import fabric, host_stack
from tests.lab.vm.control import BOOT_TIMEOUT_S, preflight, ssh_argv, ssh_ok, tool_env
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
    REPO_ROOT,
    SIDES,
    SSH_DIR,
    Guest,
    node_cpulist,
)


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
    # The guest's disk, read-write: unlike its tmpfs overlays it survives a reboot
    # (restart_guest). passthrough keeps owners and modes as the guest set them
    # (NetworkManager refuses a keyfile not owned by root with mode 0600).
    disk = (
        f"-fsdev local,id=cxfab_disk,path={guest.disk_dir},security_model=passthrough "
        "-device virtio-9p-pci,fsdev=cxfab_disk,mount_tag=cxfab_disk,bus=pcie.0"
    )
    return " ".join([mgmt, *data, usr, emulator, disk, control])


def start_guest(guest: Guest, info: dict) -> subprocess.Popen:
    guest.run_dir.mkdir(parents=True, exist_ok=True)
    if guest == FABRIC:  # no emulated ConnectX, one small NUMA-less guest
        macs = fabric.fabric_init_args()
        init = " ".join([str(GUEST_INIT), str(SSH_DIR), "-", *macs])
        shape = ["--cpus", str(FABRIC_CPUS), "--memory", f"{FABRIC_MEMORY_MB}M"]
    else:
        macs = [guest.mgmt_mac, *(guest.data_mac(side) for side in SIDES)]
        init = " ".join([str(GUEST_INIT), str(SSH_DIR), str(CXEMU_BIN), *macs])
        guest.disk_dir.mkdir(exist_ok=True)
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


def _boot_again(guest: Guest, info: dict) -> tuple[subprocess.Popen, float]:
    """The guest stopped and started; its QEMU and the time its boot has."""
    stop_guest(guest)
    proc = start_guest(guest, info)
    (guest.run_dir / "session").write_text(f"{proc.pid}\n")
    return proc, time.monotonic() + BOOT_TIMEOUT_S


def restart_guest(guest: Guest) -> float:
    """Start one guest again on a fresh boot, e.g. one found wedged mid-run or a reboot
    test's power cycle; seconds until it answers SSH. A boot that wedges or whose QEMU
    exits is started again, once, as at `up`. Its taps and their wiring are the
    controller's and stay; so does its disk."""
    started = time.monotonic()
    info = preflight()
    restarts = BOOT_RESTARTS
    proc, deadline = _boot_again(guest, info)
    while not ssh_ok(guest):
        why = boot_trouble(guest, proc, deadline)
        if why and restarts > 0:
            restarts -= 1
            proc, deadline = _boot_again(guest, info)
            continue
        if why:
            raise RuntimeError(
                f"{guest.name} did not come back ({why}, started again once);"
                f" console {guest.console_log}"
            )
        time.sleep(1)
    if guest in host_stack.networkmanager_guests():  # as `up` left it
        host_stack.start_networkmanager(guest, ssh_argv)
    return time.monotonic() - started
