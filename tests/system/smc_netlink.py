"""Configure the kernel's SMC pnet table and user EIDs over generic netlink (run on a guest).

Debian 12 ships no smc-tools (smc_pnet, smcr ueid), so the lab's SMC-R attempt talks to
the kernel itself: families SMC_PNETID (pnet table: a network interface and an RDMA
device port with one pnet ID are paired) and SMC_GEN_NETLINK (user EIDs, which SMC-Rv2
needs; soft-RoCE has RoCE v2 GIDs only, so SMC-Rv1 cannot pair with it). Numbers from
<linux/smc.h> and <linux/genetlink.h>. Standard library only: the guests run it with the
system python3, e.g. `python3 smc_netlink.py pnet-eth CXFAB ens1f0`.

Commands: pnet-eth NAME ETH | pnet-ib NAME IB PORT | pnet-flush | pnet-count
          ueid-add EID | ueid-flush | ueid-count
"""

from __future__ import annotations

import os
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3

SMC_PNETID_FAMILY = "SMC_PNETID"
SMC_PNETID_GET, SMC_PNETID_ADD, SMC_PNETID_FLUSH = 1, 2, 4
SMC_PNETID_NAME, SMC_PNETID_ETHNAME, SMC_PNETID_IBNAME, SMC_PNETID_IBPORT = 1, 2, 3, 4
SMC_GENL_FAMILY = "SMC_GEN_NETLINK"
SMC_NETLINK_DUMP_UEID, SMC_NETLINK_ADD_UEID, SMC_NETLINK_FLUSH_UEID = 9, 10, 12
SMC_NLA_EID_TABLE_ENTRY = 1
SMC_MAX_EID_LEN = 32


def attr(kind: int, payload: bytes) -> bytes:
    raw = struct.pack("HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def string(kind: int, text: str) -> bytes:
    return attr(kind, text.encode() + b"\0")


def parse_attrs(data: bytes) -> dict[int, bytes]:
    out, at = {}, 0
    while at + 4 <= len(data):
        length, kind = struct.unpack_from("HH", data, at)
        if length < 4:
            break
        out[kind & 0x3FFF] = data[at + 4 : at + length]
        at += (length + 3) & ~3
    return out


class GenlSocket:
    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.sock.bind((0, 0))
        self.seq = 0

    def _send(self, family: int, cmd: int, attrs: bytes, flags: int) -> None:
        self.seq += 1
        body = struct.pack("BBH", cmd, 1, 0) + attrs
        header = struct.pack("IHHII", 16 + len(body), family, NLM_F_REQUEST | flags, self.seq, 0)
        self.sock.send(header + body)

    def _replies(self):
        """(type, payload) of every message answering the last request."""
        while True:
            data = self.sock.recv(65536)
            at = 0
            while at + 16 <= len(data):
                length, kind, _, seq, _ = struct.unpack_from("IHHII", data, at)
                payload = data[at + 16 : at + length]
                at += (length + 3) & ~3
                if seq != self.seq:
                    continue
                if kind == NLMSG_ERROR:
                    (error,) = struct.unpack_from("i", payload)
                    if error:
                        raise OSError(-error, os.strerror(-error))
                yield kind, payload

    def request(self, family: int, cmd: int, attrs: bytes) -> bytes:
        """One acknowledged request; returns the payload of its reply, if any."""
        self._send(family, cmd, attrs, NLM_F_ACK)
        reply = b""
        for kind, payload in self._replies():
            if kind == NLMSG_ERROR:  # the acknowledgement (error 0)
                return reply
            reply = reply or payload
        return reply

    def dump(self, family: int, cmd: int) -> list[bytes]:
        """Every entry a dump request lists."""
        self._send(family, cmd, b"", NLM_F_DUMP)
        entries = []
        for kind, payload in self._replies():
            if kind in (NLMSG_DONE, NLMSG_ERROR):
                return entries
            entries.append(payload)
        return entries

    def family(self, name: str) -> int:
        payload = self.request(
            GENL_ID_CTRL, CTRL_CMD_GETFAMILY, string(CTRL_ATTR_FAMILY_NAME, name)
        )
        return struct.unpack("H", parse_attrs(payload[4:])[CTRL_ATTR_FAMILY_ID][:2])[0]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    genl = GenlSocket()
    command, args = argv[0], argv[1:]
    try:
        if command == "pnet-eth":
            name, eth = args
            family = genl.family(SMC_PNETID_FAMILY)
            attrs = string(SMC_PNETID_NAME, name) + string(SMC_PNETID_ETHNAME, eth)
            genl.request(family, SMC_PNETID_ADD, attrs)
        elif command == "pnet-ib":
            name, ib, port = args
            attrs = string(SMC_PNETID_NAME, name) + string(SMC_PNETID_IBNAME, ib)
            attrs += attr(SMC_PNETID_IBPORT, struct.pack("B", int(port)))
            genl.request(genl.family(SMC_PNETID_FAMILY), SMC_PNETID_ADD, attrs)
        elif command == "pnet-flush":
            genl.request(genl.family(SMC_PNETID_FAMILY), SMC_PNETID_FLUSH, b"")
        elif command == "pnet-count":
            print(len(genl.dump(genl.family(SMC_PNETID_FAMILY), SMC_PNETID_GET)))
        elif command == "ueid-add":
            # The kernel wants exactly 32 characters (blank-padded) and the NUL.
            (eid,) = args
            entry = eid.upper().ljust(SMC_MAX_EID_LEN)[:SMC_MAX_EID_LEN]
            attrs = string(SMC_NLA_EID_TABLE_ENTRY, entry)
            genl.request(genl.family(SMC_GENL_FAMILY), SMC_NETLINK_ADD_UEID, attrs)
        elif command == "ueid-flush":
            genl.request(genl.family(SMC_GENL_FAMILY), SMC_NETLINK_FLUSH_UEID, b"")
        elif command == "ueid-count":
            print(len(genl.dump(genl.family(SMC_GENL_FAMILY), SMC_NETLINK_DUMP_UEID)))
        else:
            print(f"unknown command {command!r}", file=sys.stderr)
            return 2
    except (OSError, KeyError, ValueError) as exc:
        print(f"smc_netlink {command}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
