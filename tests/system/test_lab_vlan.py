"""A tagged VLAN with an egress-qos-map carries traffic between the lab hosts.

The frames are also read off the "switch A" wire on the controller (the tap of the
receiving host): they carry the VLAN ID and the priority (PCP) the map asked for.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from tests.lab.vm.topology import DATA_NETDEVS, GUESTS

pytestmark = pytest.mark.lab

PORT = DATA_NETDEVS[0]
VLAN_ID = 10
PRIORITY = 5  # every socket priority maps to this PCP
ADDRESSES = {"lab-host1": "10.250.10.1", "lab-host2": "10.250.10.2"}

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_8021Q = 0x8100
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 1 << 4


def capture_vlan_tags(ifname: str, seconds: float, found: list) -> None:
    """Append (vid, pcp, ethertype) of every tagged frame seen on `ifname`.

    The kernel may hold the tag outside the frame (PACKET_AUXDATA) or leave it inline.
    """
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.bind((ifname, 0))
    sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    sock.settimeout(0.5)
    end = time.monotonic() + seconds
    with sock:
        while time.monotonic() < end:
            try:
                frame, ancillary, _, _ = sock.recvmsg(65535, 1024)
            except TimeoutError:
                continue
            ethertype = struct.unpack("!H", frame[12:14])[0]
            for level, kind, data in ancillary:
                if level == SOL_PACKET and kind == PACKET_AUXDATA:
                    status, *_, tci, _tpid = struct.unpack("IIIHHHH", data[:20])
                    if status & TP_STATUS_VLAN_VALID:
                        found.append((tci & 0xFFF, tci >> 13, ethertype))
            if ethertype == ETH_P_8021Q:
                tci, inner = struct.unpack("!HH", frame[14:18])
                found.append((tci & 0xFFF, tci >> 13, inner))


def test_vlan_with_egress_qos_map_carries_tagged_traffic(clean_lab, host1, host2):
    vlan_if = f"lt{PORT[-3:]}.{VLAN_ID}"
    qos_map = " ".join(f"{prio}:{PRIORITY}" for prio in range(8))
    for host in (host1, host2):
        host.run(
            f"modprobe 8021q && ip link set {PORT} up && "
            f"ip link add link {PORT} name {vlan_if} type vlan id {VLAN_ID} "
            f"egress-qos-map {qos_map} && "
            f"ip address add {ADDRESSES[host.name]}/24 dev {vlan_if} && ip link set {vlan_if} up"
        )
    proc_vlan = host1.run(f"cat /proc/net/vlan/{vlan_if}")
    assert f"VID: {VLAN_ID}" in proc_vlan
    assert f"0:{PRIORITY}" in proc_vlan.split("EGRESS priority mappings:")[1]
    # The untagged port has no address: only the VLAN interface can carry the pings.
    assert "inet " not in host1.run(f"ip -4 -o address show dev {PORT}")

    seen: list = []
    wire = GUESTS[1].tap("a")  # frames host1 sends arrive on host2's side-A tap
    sniffer = threading.Thread(target=capture_vlan_tags, args=(wire, 12, seen))
    sniffer.start()
    time.sleep(1)
    out = host1.run(f"busybox ping -c 5 -W 3 {ADDRESSES['lab-host2']}", check=False)
    sniffer.join()
    assert " 0% packet loss" in out, out
    ipv4 = [(vid, pcp) for vid, pcp, ethertype in seen if ethertype == ETH_P_IP]
    assert ipv4, f"no tagged IPv4 frame seen on {wire}: {seen}"
    assert set(ipv4) == {(VLAN_ID, PRIORITY)}
