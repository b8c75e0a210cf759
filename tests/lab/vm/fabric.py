"""The fabric guest: where the emulated switch pair forwards the hosts' frames.

Pure builders, run by lab.py: the guest's QEMU options, the script that cables it
(one network namespace per switch, the NICs moved in as swp<N>, the IPL as veth
pairs), and the controller's tc wires between host taps and fabric taps.

Two wirings of the host taps (lab.py `wire`):
- fabric: each host port reaches its switch port (the product's topology; default);
- direct: host 1's port meets host 2's port on the same side, no switch between (the
  lab's own tests of the guests' kernels: bonds, LACP and VLAN tags end to end).
"""

from __future__ import annotations

import shlex

from tests.lab.onyx import lldp
from tests.lab.onyx.dataplane import namespace_setup, port_ifname
from tests.lab.vm.topology import (
    CABLES,
    DATA_SPEED_MBPS,
    FABRIC,
    GUESTS,
    IPL_PORTS,
    SIDES,
    SWITCHES,
    Cable,
    cabled_ports,
)

WIRINGS = ("fabric", "direct")
# A port's MTU in the namespace before the switch config sets one (Onyx's own maximum):
# the hosts' 9000-byte frames must pass a blank switch's ports too.
PORT_MTU = 9216


def fabric_qemu_nics() -> list[str]:
    """One virtio NIC per cable, on a tap of its own, reporting a 100G full-duplex link."""
    return [
        f"-netdev tap,id=n_{cable.device_id},ifname={cable.fabric_tap},script=no,"
        f"downscript=no,vhost=off "
        f"-device virtio-net-pci,id={cable.device_id},netdev=n_{cable.device_id},"
        f"mac={cable.fabric_mac},speed={DATA_SPEED_MBPS},duplex=full,bus=pcie.0"
        for cable in CABLES
    ]


def fabric_init_args() -> list[str]:
    """guest-init.sh's MAC arguments for the fabric guest: management, then every cable."""
    return [FABRIC.mgmt_mac, *(cable.fabric_mac for cable in CABLES)]


def cabling_script(port_id=lldp.onyx_port_id) -> str:
    """Shell run once in the fresh fabric guest: namespaces, ports, IPL links.

    Idempotent enough to run twice (`ip netns add` of an existing namespace fails and
    stops it): lab.py runs it once per boot.
    """
    lines = [
        "set -eu",
        "modprobe bonding; modprobe 8021q; modprobe nft_meta_bridge || true",
        # The MLAG rule on the IPL is an nftables bridge table: without nft it never
        # lands and each switch's agent retries it every round (a full read each time).
        "command -v nft >/dev/null || { echo 'lab-fabric: no nft (apt package nftables,"
        " requirements-apt.txt): the MLAG IPL rule cannot be set' >&2; exit 1; }",
    ]
    for switch in SWITCHES:
        lines += [shlex.join(argv) for argv in namespace_setup(switch)]
    lines.append(
        'dev_of() { for d in /sys/class/net/*; do [ "$(cat "$d/address")" = "$1" ] && '
        '{ basename "$d"; return 0; }; done; return 1; }'
    )
    for cable in CABLES:
        swp = port_ifname(cable.port)
        lines += [
            f"dev=$(dev_of {cable.fabric_mac})",
            f'ip link set "$dev" down && ip link set "$dev" netns {cable.switch} name {swp}',
            f"ip -n {cable.switch} link set {swp} mtu {PORT_MTU} up",
        ]
    first, second = SWITCHES
    for port in IPL_PORTS:
        swp = port_ifname(port)
        lines += [
            f"ip link add {swp} netns {first} mtu {PORT_MTU} type veth "
            f"peer name {swp} netns {second} mtu {PORT_MTU}",
            f"ip -n {first} link set {swp} up",
            f"ip -n {second} link set {swp} up",
        ]
    # LLDP as on a Spectrum switch: each namespace's own lldpd names its switch and
    # advertises each cabled port as its OS does (Onyx Eth1/N, which the emulator's
    # `show lldp` reads back; Cumulus swpN: lldp.cumulus_port_id).
    lines.append("command -v lldpd >/dev/null || { echo 'lab-fabric: no lldpd (apt package"
                 " lldpd, requirements-apt.txt)' >&2; exit 1; }")  # fmt: skip
    for switch in SWITCHES:
        lines += lldp.start_script(switch, switch, cabled_ports(switch), port_id).splitlines()
    lines.append("echo cabled")
    return "\n".join(lines) + "\n"


def host_side(cable: Cable, swapped: frozenset[str] | set[str] = frozenset()) -> str:
    """The side of the host port that `cable`'s switch port reaches: its own side, or the
    other one while the host's two cables are swapped (lab fault `swap HOST`)."""
    if cable.host.name not in swapped:
        return cable.side
    return SIDES[1 - SIDES.index(cable.side)]


def wire_commands(wiring: str, swapped: frozenset[str] | set[str] = frozenset()) -> list[list[str]]:
    """tc commands on the controller that make `wiring` (after the taps' qdiscs are gone).

    tc mirred redirects every frame, LACPDUs and VLAN tags included, which a Linux
    bridge on the controller would not do for LACP. `swapped`: hosts whose two cables
    are plugged into each other's switch port (fabric wiring only): port 1 then reaches
    the side-B switch's port, port 2 the side-A one.
    """
    if wiring not in WIRINGS:
        raise ValueError(f"wiring must be one of {', '.join(WIRINGS)}, not {wiring!r}")
    pairs: list[tuple[str, str]] = []
    if wiring == "direct":
        for side in SIDES:
            one, other = (guest.tap(side) for guest in GUESTS)
            pairs += [(one, other), (other, one)]
    else:
        for cable in CABLES:
            host_tap = cable.host.tap(host_side(cable, swapped))
            pairs += [(host_tap, cable.fabric_tap), (cable.fabric_tap, host_tap)]
    commands = []
    for src, dst in pairs:
        commands.append(["tc", "qdisc", "add", "dev", src, "ingress"])
        commands.append(
            [
                "tc", "filter", "add", "dev", src, "parent", "ffff:", "protocol", "all",
                "u32", "match", "u32", "0", "0",
                "action", "mirred", "egress", "redirect", "dev", dst,
            ]
        )  # fmt: skip
    return commands


def all_taps() -> list[str]:
    return [g.tap(side) for g in GUESTS for side in SIDES] + [c.fabric_tap for c in CABLES]


def switch_cables(switch: str) -> list[Cable]:
    return [cable for cable in CABLES if cable.switch == switch]
