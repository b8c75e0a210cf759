"""ibstat (cxfab lab emulator): the InfiniBand port state of the emulated cards.

``ibstat`` lists every CA, ``ibstat <ca>`` one, ``ibstat <ca> <port>`` one port in
the layout of rdma-core's infiniband-diags (see cxemu.ib). A CA that does not exist
gets ibstat's own complaint on stderr and exit status 255.
"""

import argparse
import os
import sys

from .. import ib, sysfs
from ..state import Store
from .common import out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ibstat", description="emulated ibstat")
    parser.add_argument("ca", nargs="?")
    parser.add_argument("port", nargs="?", type=int)
    args = parser.parse_args(argv)
    with Store() as store:
        cards = store.ordered_cards()
        names = [ib.device_name(c, p) for c in cards for p in range(len(c["functions"]))]
        if args.ca and args.ca not in names:
            pid = os.getpid()
            print(f"ibpanic: [{pid}] main: '{args.ca}' IB device can't be found", file=sys.stderr)
            return 255
        if args.port is not None and args.port != 1:
            print(
                f"ibwarn: [{os.getpid()}] ca_stat: CA: '{args.ca}' has no port number "
                f"{args.port} - max (1)",
                file=sys.stderr,
            )
            print(
                f"ibpanic: [{os.getpid()}] main: stat of IB device '{args.ca}' failed",
                file=sys.stderr,
            )
            return 255
        out(ib.ibstat(cards, sysfs.carrier, args.ca, args.port))
    return 0
