"""mget_temp / mstmget_temp (cxfab lab emulator): the ASIC temperature of a card.

NVIDIA's MFT manual ("mget_temp Utility", MFT 4.22-4.34) documents `mget_temp -d <dev>`
as reading the IC temperature and printing it in Celsius degrees; mstflint 4.31 and
later ships the same tool as `mstmget_temp`. The bare number on one line is how the
emulator prints it; the manual shows the call, not its output, so the exact layout
(and the error text for a device that is not there) is UNCONFIRMED (docs/lab-cxemu.md).
A card's temperature is `asic_temp_c` in its state (`cxemu-admin set -d <dev>
temperature=<C>`), DEFAULT_ASIC_TEMP_C until set.
"""

import argparse

from ..state import DeviceNotFound, Store
from .common import MFT_VERSION, banner, out

DEFAULT_ASIC_TEMP_C = 47


def main(argv: list[str], flavour: str = "mft") -> int:
    prog = "mget_temp" if flavour == "mft" else "mstmget_temp"
    parser = argparse.ArgumentParser(prog=prog, description="Read the IC temperature (Celsius).")
    parser.add_argument("-d", "--device", required=True, help="mst device name or PCI address")
    parser.add_argument("--version", action="version", version=banner(prog, MFT_VERSION))
    args = parser.parse_args(argv)
    with Store() as store:
        try:
            target = store.resolve(args.device)
        except DeviceNotFound:
            out(f"-E- Failed to open device: {args.device}\n")
            return 1
        out(f"{target.card.get('asic_temp_c', DEFAULT_ASIC_TEMP_C)}\n")
    return 0
