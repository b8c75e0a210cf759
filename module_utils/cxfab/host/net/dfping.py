"""A DF ping: one ICMP echo of a given size that must not be fragmented.

It proves a path's MTU end to end: the kernel refuses to send a packet larger than
the interface MTU (EMSGSIZE), and a router with a smaller MTU answers
"fragmentation needed". Needs root (a raw socket).
"""

from __future__ import annotations

import errno
import os
import select
import socket
import struct
import time

IP_MTU_DISCOVER, IP_PMTUDISC_DO = 10, 2  # <linux/in.h>: never fragment, fail on EMSGSIZE


def _checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def df_ping(address, size, interface, count, timeout):
    """ICMP echo with DF at `size` bytes of payload; {ok, error}. Needs root (raw socket)."""
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    except OSError as exc:
        return {"ok": False, "error": f"raw ICMP socket refused: {exc.strerror}"}
    ident = os.getpid() & 0xFFFF
    with sock:
        sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
        if interface:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
            except OSError as exc:
                return {"ok": False, "error": f"cannot send on {interface}: {exc.strerror}"}
        for seq in range(1, count + 1):
            payload = bytes((seq + i) & 0xFF for i in range(size))
            header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
            header = struct.pack("!BBHHH", 8, 0, _checksum(header + payload), ident, seq)
            try:
                sock.sendto(header + payload, (address, 0))
            except OSError as exc:
                if exc.errno == errno.EMSGSIZE:
                    return {
                        "ok": False,
                        "error": f"message too long: {interface} MTU below {size + 28} bytes",
                    }
                return {"ok": False, "error": f"send failed: {exc.strerror}"}
            reply = _await_reply(sock, address, ident, seq, timeout)
            if reply is not None:
                return reply
    return {"ok": False, "error": f"no reply to {count} x {size + 28}-byte DF packets"}


def _await_reply(sock, address, ident, seq, timeout):
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([sock], [], [], left)[0]:
            return None
        packet, (source, _) = sock.recvfrom(65535)
        offset = (packet[0] & 0x0F) * 4
        kind, code = packet[offset], packet[offset + 1]
        if kind == 0 and source == address:
            got_ident, got_seq = struct.unpack("!HH", packet[offset + 4 : offset + 8])
            if (got_ident, got_seq) == (ident, seq):
                return {"ok": True, "error": ""}
        elif kind == 3 and code == 4:  # fragmentation needed: a smaller MTU on the path
            mtu = struct.unpack("!H", packet[offset + 6 : offset + 8])[0]
            return {"ok": False, "error": f"fragmentation needed at {source} (MTU {mtu})"}
    return None
