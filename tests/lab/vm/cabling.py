"""The lab's cables: the taps' wiring and the faults `lab fail` / `lab heal` plant.

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
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.lab.vm import fabric
from tests.lab.vm.control import (
    FAULTS_FILE,
    LINKS_FILE,
    TAP_MTU,
    WIRING_FILE,
    log,
    run,
    switch_pair,
)
from tests.lab.vm.qmp import Qmp
from tests.lab.vm.topology import (
    DATA_DEVICE_IDS,
    FABRIC,
    GUESTS,
    SIDES,
    SWITCHES,
    Guest,
    cable_of,
    guest_by_name,
)


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
