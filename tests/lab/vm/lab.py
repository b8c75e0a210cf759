"""Bring the lab up and down: host guests under QEMU/TCG, the switch pair, their wiring.

usage: python -m tests.lab.vm.lab {up|down|status|pair OS|wire MODE|fail WHAT|heal [WHAT]}

up      boot lab-host1, lab-host2 and lab-fabric (virtme-ng, TCG), cable every host port
        to its switch port in lab-fabric, start the emulated Onyx pair (SWITCH_OS=cumulus:
        the NVUE pair, tests/lab/vm/switch_os.py; either keeps the
        fabric's namespaces converged to its config), wait for SSH, write
        inventories/lab/hosts.yml
down    stop everything `up` started: guests, switch emulators, taps, sockets
status  what is running, reachable, how the hosts are wired and what is failed
pair    onyx|cumulus: the running lab gets that OS's switch pair, blank, in place of
        the one it runs (the same guests, cables and namespaces; its LLDP port names;
        hosts.yml rewritten); a pair with a fault planted is not swapped
wire    fabric: host ports reach their switch ports (default); direct: host 1 meets
        host 2 on each side with no switch between (the lab's own kernel tests)
fail    WHAT         plant one fault; heal [WHAT] restores it, or every fault without
                     WHAT (the words are tests/lab/vm/cabling.py's, printed below)

Exit status 77 from `up` means the lab cannot run on this machine at all (reason
printed and kept in tests/lab/run/unavailable for the lab tests to report).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

from tests.lab.onyx import lldp
from tests.lab.vm import cabling, fabric, host_stack, switch_os
from tests.lab.vm.cabling import (
    apply_fault,
    faults,
    link_states,
    set_side,
    set_swap,
    swapped_hosts,
    wire,
    wire_down,
    wire_up,
    wiring,
)
from tests.lab.vm.control import (
    ALL_GUESTS,
    BOOT_TIMEOUT_S,
    DATAPLANE_FILE,
    FAULTS_FILE,
    LINKS_FILE,
    UNAVAILABLE,
    UNAVAILABLE_FILE,
    LabUnavailable,
    ensure_ssh_keys,
    log,
    preflight,
    run,
    ssh_argv,
    ssh_ok,
    switch_pair,
    venv_python,
    write_known_hosts,
)
from tests.lab.vm.guests import (
    BOOT_RESTARTS,
    boot_trouble,
    boot_wedged,
    guest_pid,
    restart_guest,
    start_guest,
    stop_guest,
)
from tests.lab.vm.topology import (
    CXEMU_BIN,
    FABRIC,
    GUESTS,
    HOSTS_FILE,
    INVENTORY_DIR,
    REPO_ROOT,
    RUN_DIR,
    SIDES,
    SSH_KEY,
    SWITCHES,
    SWITCHES_KNOWN_HOSTS_FILE,
    cabled_ports,
)

# The controller's API for the lab tests (tests/system: `from tests.lab.vm import lab as
# labctl`), whichever module of tests/lab/vm holds each part.
__all__ = [
    "UNAVAILABLE_FILE",
    "apply_fault",
    "boot_wedged",
    "down",
    "guest_pid",
    "link_states",
    "restart_guest",
    "set_side",
    "set_swap",
    "ssh_argv",
    "ssh_ok",
    "status",
    "swapped_hosts",
    "up",
    "use_pair",
    "wire",
    "wiring",
]

# The image the lab intent points at (inventories/lab/host_vars/*/cxfab.yml): the
# emulated ConnectX-4's matching 12.28.1002 image; deterministic, so its sha256 is
# committed in the intent like a real operator's download checksum.
# Beside the inventory that names it (files/firmware/...): an image path may not leave
# the inventory with `..`.
FIRMWARE_IMAGE = (
    INVENTORY_DIR / "files" / "firmware" / "fw-ConnectX4-rel-12_28_1002-LNV2190110032.bin"
)


FIRMWARE_PSID, FIRMWARE_VERSION = "LNV2190110032", "12.28.1002"


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

    The guests see this tree read-only and look for bytecode in its __pycache__
    directories. The controller may keep its own elsewhere (PYTHONPYCACHEPREFIX, as
    make does) or none (PYTHONDONTWRITEBYTECODE): then every emulated mlnx_qos/mlxlink
    call compiled ~2,700 lines under TCG, 5-6 s of its ~7 s. compileall writes the .pyc
    files whatever PYTHONDONTWRITEBYTECODE says, and beside the sources once
    PYTHONPYCACHEPREFIX is gone from its environment.
    """
    python = shutil.which("python3", path="/usr/bin") or sys.executable
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    subprocess.run(
        [python, "-m", "compileall", "-q", str(CXEMU_BIN.parent / "cxemu")],
        check=True,
        stdout=subprocess.DEVNULL,
        env=env,
    )


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
    for guest in GUESTS:  # a fresh lab is a fresh install: every host on an empty disk
        shutil.rmtree(guest.disk_dir, ignore_errors=True)
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


def use_pair(chosen: str) -> int:
    """`pair OS`: stop the running switch pair and start `chosen`'s, blank, on the same
    ports and namespaces; its dataplane agents converge the namespaces to a blank switch
    (removing what the other pair built), and the switch roles then configure it."""
    if chosen not in switch_os.CHOICES:
        log(f"pair: one of {', '.join(switch_os.CHOICES)}, not {chosen!r}")
        return 2
    if not all(guest_pid(g) for g in ALL_GUESTS):
        log("pair: the lab is not up (make lab-up)")
        return 1
    if faults():
        log(f"pair: heal the planted faults first ({', '.join(sorted(faults()))})")
        return 1
    started = time.monotonic()
    was = switch_os.running()
    switch_pair("stop")
    switch_os.remember(chosen)
    ports = ",".join(str(switch["port"]) for switch in SWITCHES.values())
    done = switch_pair("start", "--ports", ports, "--dataplane", str(DATAPLANE_FILE), chosen=chosen)
    if done is None or done.returncode != 0:
        log(f"pair: the emulated {chosen} pair failed to start (the {was} pair is stopped)")
        return 1
    port_id = switch_os.lldp_port_id()
    script = "".join(lldp.relabel_script(s, cabled_ports(s), port_id) for s in SWITCHES)
    relabelled = subprocess.run(
        ssh_argv(FABRIC, "bash", "-s"), input="set -e\n" + script, text=True,
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    if relabelled.returncode != 0:
        log(f"pair: {FABRIC.name}'s lldpd refused the {chosen} port names: "
            f"{relabelled.stderr.strip()[-600:]}")  # fmt: skip
        return 1
    write_inventory()
    log(f"pair: {was} -> {chosen} in {time.monotonic() - started:.1f}s, blank; "
        f"inventory {HOSTS_FILE.relative_to(REPO_ROOT)}")  # fmt: skip
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


# The fault words live beside the faults (cabling.py): one text, printed with ours.
USAGE = f"{__doc__}\n{cabling.__doc__}"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    command, args = argv[0], argv[1:]
    if command == "up":
        return up()
    if command == "down":
        return down()
    if command == "status":
        return status()
    if command == "pair" and len(args) == 1:
        return use_pair(args[0])
    if command == "wire" and len(args) == 1 and args[0] in fabric.WIRINGS:
        wire(args[0])
        return 0
    if command in ("fail", "heal"):
        return apply_fault([a for a in args if a], active=command == "fail")
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
