"""mlxcables (cxfab lab emulator): list the cables plugged into every emulated card.

``mlxcables`` lists all cables, ``mlxcables -d <cable name>`` one of them
(names as the real tool builds them: ``mt4115_pciconf0.1_cable_1``).
"""

import argparse

from .. import render
from ..state import Store
from .common import MFT_VERSION, banner, out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        formatter_class=argparse.RawTextHelpFormatter,
        prog="mlxcables",
        description=f"Cable info ({banner('mlxcables', MFT_VERSION)}).",
    )
    parser.add_argument("-d", "--device", help="cable name")
    parser.add_argument("-q", "--query", action="store_true")
    parser.add_argument(
        "-v", "--version", action="version", version=banner("mlxcables", MFT_VERSION)
    )
    args = parser.parse_args(argv)
    with Store() as store:
        plugged = [
            (card, port)
            for card in store.ordered_cards()
            for port in range(len(card["functions"]))
            if card["ports"][port].get("cable")
        ]
        if args.device:
            wanted = args.device.rsplit("/", 1)[-1]
            plugged = [item for item in plugged if render.cable_name(*item) == wanted]
            if not plugged:
                out(f"-E- Cable {args.device} was not found\n")
                return 1
        out("Querying Cables ....\n\n")
        if not plugged:
            out("-W- No cables were found\n")
            return 0
        for index, (card, port) in enumerate(plugged, start=1):
            out(render.mlxcables_block(index, card, port))
        return 0
