"""Set up SMC-R on a Linux host through the kernel's own generic netlink families.

Issue 30 asks why seed 002's SMC run fell back to TCP (decline 0x03030000, "no SMC
device found") and for a run over SMC for real. The kernel (net/smc, Linux 6.1) picks
the RoCE device for a connection from the route's *base* net device: for a VLAN on a
bond (the lab's bond0.30) `pnet_find_base_ndev` walks down to a bond member (ens1f0),
while soft-RoCE's device sits on bond0, so without a pnet ID naming both nothing
matches. Soft-RoCE also has RoCE v2 GIDs only, so only SMC-Rv2 can use it, and a client
proposes v2 only with a user EID (UEID) in its table (s390 has a system EID; x86 none).

smc-tools (`smc_pnet`, `smcr ueid`) is not packaged for this Debian; this tool sends the
same requests (uapi linux/smc.h) with the standard library only, so it runs on the lab
guests' system Python:

  python3 smc_netlink.py ueid-add CXFAB-LAB          # on both hosts
  python3 smc_netlink.py pnet-add CXFABNET --eth ens1f0 --eth ens1f1 --ib rxe0
  python3 smc_netlink.py show

Every request is acknowledged or the kernel's errno is raised (exit 1, the request
named), so a host whose smc module lacks a family says so instead of running on.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 3, 1, 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3

# include/uapi/linux/smc.h (Linux 6.1)
PNETID_FAMILY = "SMC_PNETID"
PNETID_ADD, PNETID_GET = 2, 1
PNETID_NAME, PNETID_ETHNAME, PNETID_IBNAME, PNETID_IBPORT = 1, 2, 3, 4
GEN_FAMILY = "SMC_GEN_NETLINK"
DUMP_UEID, ADD_UEID = 9, 10
EID_TABLE_ENTRY = 1
MAX_EID_LEN = 32
MAX_PNETID_LEN = 16


def attr(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("HH", length, kind) + payload + b"\0" * (-length % 4)


def text(kind: int, value: str) -> bytes:
    return attr(kind, value.encode() + b"\0")


def attrs(data: bytes) -> list[tuple[int, bytes]]:
    found, at = [], 0
    while at + 4 <= len(data):
        length, kind = struct.unpack_from("HH", data, at)
        if length < 4:
            break
        found.append((kind & 0x3FFF, data[at + 4 : at + length]))
        at += length + (-length % 4)
    return found


class Genl:
    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.sock.bind((0, 0))
        self.seq = 0

    def request(self, family: int, cmd: int, body: bytes, flags: int, what: str) -> list[bytes]:
        """Send one request; return the payloads of the answers (after the genl header).

        The read ends at the kernel's ack (NLM_F_ACK) or a dump's NLMSG_DONE, so a
        request must ask for one of them."""
        self.seq += 1
        header = struct.pack("BBH", cmd, 1, 0)
        message = header + body
        self.sock.send(
            struct.pack("IHHII", 16 + len(message), family, flags, self.seq, os.getpid()) + message
        )
        answers = []
        while True:
            data = self.sock.recv(65536)
            at = 0
            while at < len(data):
                length, kind, _, _, _ = struct.unpack_from("IHHII", data, at)
                payload = data[at + 16 : at + length]
                at += length + (-length % 4)
                if kind == NLMSG_ERROR:
                    (code,) = struct.unpack_from("i", payload)
                    if code:
                        raise OSError(-code, f"{what}: {os.strerror(-code)}")
                    return answers
                if kind == NLMSG_DONE:
                    return answers
                answers.append(payload[4:])

    def family(self, name: str) -> int:
        try:
            (answer,) = self.request(
                GENL_ID_CTRL,
                CTRL_CMD_GETFAMILY,
                text(CTRL_ATTR_FAMILY_NAME, name),
                NLM_F_REQUEST | NLM_F_ACK,  # the answer, then the ack that ends the read
                f"generic netlink family {name}",
            )
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                raise SystemExit(f"{name}: no such family (is the smc module loaded?)") from exc
            raise
        return next(struct.unpack("H", v[:2])[0] for k, v in attrs(answer) if k == 1)


def ueid(value: str) -> bytes:
    """A UEID as the kernel takes it: 32 characters, blank-padded, upper case, digits,
    '.' and '-' (smc_clc_ueid_valid), then a NUL (the attribute is 33 bytes)."""
    if not value or len(value) > MAX_EID_LEN or not value[0].isalnum():
        raise SystemExit(f"UEID {value!r}: 1-32 characters, the first a letter or digit")
    if any(not (c.isdigit() or c.isupper() or c in ".-") for c in value):
        raise SystemExit(f"UEID {value!r}: only A-Z, 0-9, '.' and '-'")
    return value.ljust(MAX_EID_LEN).encode() + b"\0"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_ueid = sub.add_parser("ueid-add")
    add_ueid.add_argument("ueid")
    pnet = sub.add_parser("pnet-add")
    pnet.add_argument("pnetid")
    pnet.add_argument("--eth", action="append", default=[])
    pnet.add_argument("--ib", action="append", default=[])
    pnet.add_argument("--port", type=int, default=1)
    sub.add_parser("show")
    args = parser.parse_args(argv)
    genl = Genl()
    ack = NLM_F_REQUEST | NLM_F_ACK
    if args.command == "ueid-add":
        family = genl.family(GEN_FAMILY)
        body = attr(EID_TABLE_ENTRY, ueid(args.ueid))
        try:
            genl.request(family, ADD_UEID, body, ack, f"add UEID {args.ueid}")
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise
        print(f"UEID {args.ueid}: in the table")
    elif args.command == "pnet-add":
        if len(args.pnetid) > MAX_PNETID_LEN or not args.pnetid.isalnum():
            raise SystemExit(f"pnet ID {args.pnetid!r}: 1-16 letters or digits")
        family = genl.family(PNETID_FAMILY)
        name = args.pnetid.upper()
        for eth in args.eth:
            body = text(PNETID_NAME, name) + text(PNETID_ETHNAME, eth)
            genl.request(family, PNETID_ADD, body, ack, f"pnet {name} for {eth}")
        for ib in args.ib:
            body = text(PNETID_NAME, name) + text(PNETID_IBNAME, ib)
            body += attr(PNETID_IBPORT, struct.pack("B", args.port))
            genl.request(family, PNETID_ADD, body, ack, f"pnet {name} for {ib} port {args.port}")
        print(f"pnet {name}: {', '.join(args.eth + args.ib)}")
    else:
        family = genl.family(GEN_FAMILY)
        eids = genl.request(family, DUMP_UEID, b"", NLM_F_REQUEST | NLM_F_DUMP, "dump UEIDs")
        for answer in eids:
            for kind, value in attrs(answer):
                if kind == EID_TABLE_ENTRY:
                    print("ueid", value.rstrip(b"\0").decode().rstrip())
        family = genl.family(PNETID_FAMILY)
        rows = genl.request(family, PNETID_GET, b"", NLM_F_REQUEST | NLM_F_DUMP, "dump pnet")
        for answer in rows:
            found = {k: v.rstrip(b"\0") for k, v in attrs(answer)}
            print(
                "pnet",
                found.get(PNETID_NAME, b"").decode(),
                found.get(PNETID_ETHNAME, b"").decode() or "-",
                found.get(PNETID_IBNAME, b"").decode() or "-",
                found.get(PNETID_IBPORT, b"\0")[0],
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
