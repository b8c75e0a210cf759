"""The lab's fixed topology: guests, ports, wires and paths (one place to read it all).

Two host guests, each wired like a rack server: a management NIC (user-mode network,
SSH forwarded from 127.0.0.1) and a dual-port data NIC whose two PCI functions sit
behind a PCIe expander bound to NUMA node 1. Port A of every host meets port A of
the other host on the "switch A" wire, port B likewise on "switch B".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
RUN_DIR = REPO_ROOT / "tests" / "lab" / "run"
CACHE_DIR = REPO_ROOT / ".cache" / "lab"
KERNEL_INFO = CACHE_DIR / "kernel.json"
INVENTORY_DIR = REPO_ROOT / "inventories" / "lab"
HOSTS_FILE = INVENTORY_DIR / "hosts.yml"
# The guests' host key for the lab inventory (group_vars/hosts/lab.yml points ssh here).
KNOWN_HOSTS_FILE = INVENTORY_DIR / "files" / "known_hosts"
SWITCHES_KNOWN_HOSTS_FILE = INVENTORY_DIR / "files" / "switches_known_hosts"
CXEMU_BIN = REPO_ROOT / "tests" / "lab" / "cxemu" / "bin"
ONYX_PAIR = REPO_ROOT / "tests" / "lab" / "onyx" / "pair.py"
ONYX_RUN_DIR = RUN_DIR / "onyx"
GUEST_INIT = Path(__file__).resolve().parent / "guest-init.sh"

SSH_DIR = RUN_DIR / "ssh"
SSH_KEY = SSH_DIR / "id_ed25519"

# Inside the guest: where the ConnectX tool state lives (a tmpfs overlay of /var).
GUEST_CXEMU_STATE_DIR = "/var/lib/cxemu"
GUEST_MGMT_ADDRESS = "10.0.2.15/24"
GUEST_MGMT_GATEWAY = "10.0.2.2"

# Resources of one guest: 2 NUMA nodes of one vCPU each, memory split evenly. Every
# vCPU is a host thread under TCG: 2 guests x 4 vCPUs on the 2-core controller spent
# their time waiting for each other (lock holders descheduled, RCU stalls at boot).
GUEST_CPUS = 2
GUEST_MEMORY_MB = 1024
DATA_QUEUES = 4
# Reported link speed (a 100G ConnectX-4 port); 802.3ad needs a known speed and full duplex.
DATA_SPEED_MBPS = 100000
# MSI-X vectors: one per queue (rx+tx per pair) plus config and control.
DATA_VECTORS = 2 * DATA_QUEUES + 2

# Names the guest's udev gives the NICs (stable: they follow the PCI slots set below).
MGMT_NETDEV = "enp0s16"
DATA_NETDEVS = ("ens1f0", "ens1f1")
DATA_PCI = ("0000:65:00.0", "0000:65:00.1")
SIDES = ("a", "b")
DATA_DEVICE_IDS = {"a": "data_a", "b": "data_b"}


def node_cpulist(node: int) -> str:
    """The kernel's cpulist of NUMA node `node` (0 or 1) of a guest: "0", "2-3"..."""
    per_node = GUEST_CPUS // 2
    first, last = node * per_node, (node + 1) * per_node - 1
    return str(first) if first == last else f"{first}-{last}"


SWITCHES = {
    "lab-sw-a": {"port": 2201, "side": "a"},
    "lab-sw-b": {"port": 2202, "side": "b"},
}


@dataclass(frozen=True)
class Guest:
    """One host guest: its name, forwarded SSH port and the MACs of its NICs."""

    name: str
    index: int

    @property
    def ssh_port(self) -> int:
        return 2220 + self.index

    @property
    def run_dir(self) -> Path:
        return RUN_DIR / self.name

    @property
    def disk_dir(self) -> Path:
        """A host guest's own disk: what an installed host keeps across a reboot (its
        network profiles, cxfab's agent, the card's flash; guest-init.sh binds them from
        here). The fabric guest has none; `lab up` starts every host on an empty one."""
        return self.run_dir / "disk"

    @property
    def qmp_socket(self) -> Path:
        return self.run_dir / "qmp.sock"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / "qemu.pid"

    @property
    def console_log(self) -> Path:
        return self.run_dir / "console.log"

    @property
    def mgmt_mac(self) -> str:
        return f"52:54:00:a0:00:{self.index:02x}"

    def data_mac(self, side: str) -> str:
        return f"52:54:00:d{side}:00:{self.index:02x}"

    def tap(self, side: str) -> str:
        """Controller-side tap of this guest's data port on `side`."""
        return f"lab-h{self.index}{side}"


GUESTS = (Guest("lab-host1", 1), Guest("lab-host2", 2))

# The switch pair's dataplane twin: one more guest, "lab-fabric", with one network
# namespace per switch (named after the switch). Each host data port is cabled to a NIC
# of this guest, which the lab moves into its switch's namespace as swp<N> (Onyx port
# 1/N); the IPL is a veth pair between the namespaces. The emulated switches keep
# the namespaces converged to their config (tests/lab/onyx/dataplane_agent.py).
# Only the IPL's first member (1/35) is cabled: a blank switch bridges every port in
# VLAN 1 and the lab has no spanning tree, so two parallel links between two blank
# switches loop (seen: a broadcast storm held the fabric guest's vCPU). 1/36 stays
# configured in the intent, a member without a cable, as on a pair with one IPL link.
FABRIC = Guest("lab-fabric", 3)
FABRIC_CPUS = 1
FABRIC_MEMORY_MB = 512
IPL_PORTS = ("1/35",)


@dataclass(frozen=True)
class Cable:
    """A host data port (guest, side) and the switch port at its far end."""

    host: Guest
    side: str
    switch: str
    port: str  # Onyx 1/N

    @property
    def number(self) -> int:
        return int(self.port.split("/")[1])

    @property
    def fabric_mac(self) -> str:
        """MAC of the fabric guest's NIC for this cable (found by it inside the guest)."""
        return f"52:54:00:f{self.side}:00:{self.number:02x}"

    @property
    def fabric_tap(self) -> str:
        """Controller-side tap of the fabric guest's NIC for this cable."""
        return f"lab-s{self.side}{self.number}"

    @property
    def device_id(self) -> str:
        """QEMU id of the fabric guest's NIC (QMP set_link)."""
        return f"swp_{self.side}{self.number}"


# Host N's port on side a is switch A's port 1/N, side b switch B's (as in
# inventories/lab: host_vars peer/peer_port and the MPO members in fabric.yml).
SWITCH_OF_SIDE = {switch["side"]: name for name, switch in SWITCHES.items()}
CABLES = tuple(
    Cable(guest, side, SWITCH_OF_SIDE[side], f"1/{guest.index}")
    for side in SIDES
    for guest in GUESTS
)


def cabled_ports(switch: str) -> list[str]:
    """Every port of `switch` with a cable: the hosts' and the IPL members."""
    return [c.port for c in CABLES if c.switch == switch] + list(IPL_PORTS)


def guest_by_name(name: str) -> Guest:
    for guest in GUESTS:
        if guest.name == name:
            return guest
    raise KeyError(f"unknown lab guest {name!r} (known: {', '.join(g.name for g in GUESTS)})")


def cable_of(host: str, port: int) -> Cable:
    """The cable of `host`'s data port `port` (1 = side a, 2 = side b)."""
    guest = guest_by_name(host)
    if port not in (1, 2):
        raise KeyError(f"{host} has data ports 1 and 2, not {port}")
    side = SIDES[port - 1]
    return next(c for c in CABLES if c.host == guest and c.side == side)
