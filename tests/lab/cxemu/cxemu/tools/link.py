"""mlxlink / mstlink (cxfab lab emulator): port state, speed, cable troubleshooting.

``mlxlink -d <dev> [-m] [-c]`` (MFT) and ``mstlink -d <dev> [-m] [-c]`` (mstflint): the port
is the PCI function the name designates (``.1`` = port 2). ``-m`` adds Module Info (the
cable EEPROM), ``-c`` the counters and BER; mstlink colours its values and orders the BER
rows the mstflint way (see render.mlxlink).
A genuine cable links up at the card's speed for the port's Current link type (100GbE or
IB-EDR); a third-party cable gives the seed 000 "wrong module type" answer; a port whose
mapped lab netdev has no carrier (a cut switch side) shows Polling.
"""

import argparse

from .. import render, sysfs
from ..state import Store
from .common import MFT_VERSION, MSTFLINT_VERSION, banner, out, resolve_or_say


def main(argv: list[str], flavour: str = "mft") -> int:
    prog = "mlxlink" if flavour == "mft" else "mstlink"
    version = MFT_VERSION if flavour == "mft" else MSTFLINT_VERSION
    parser = argparse.ArgumentParser(
        formatter_class=argparse.RawTextHelpFormatter,
        prog=prog,
        description=f"Link diagnostics ({banner(prog, version)}).",
    )
    parser.add_argument("-d", "--device", required=True)
    parser.add_argument("-c", "--show_counters", action="store_true", help="counters and BER")
    parser.add_argument("-m", "--show_module", action="store_true")
    parser.add_argument("-e", "--show_eye", action="store_true")
    parser.add_argument("-v", "--version", action="version", version=banner(prog, version))
    args = parser.parse_args(argv)
    with Store() as store:
        not_found = f"-E- Failed to open device: {args.device}, No such file or directory\n"
        target = resolve_or_say(store, args.device, not_found)
        if target is None:
            return 1
        netdev = (target.card.get("netdevs") or [""] * 8)[target.port]
        carrier = sysfs.carrier(netdev) if netdev else None
        out(
            render.mlxlink(
                target.card, target.port, carrier, args.show_counters, args.show_module, flavour
            )
        )
        return 0
