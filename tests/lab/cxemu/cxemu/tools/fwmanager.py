"""mlxfwmanager (cxfab lab emulator): query firmware against an image bundle, update it.

The "bundle" is the emulator catalog (``cxemu-admin catalog``), keyed by PSID, or the
image given with ``-i``. ``--query`` prints the text of seed 000, ``--query-format XML``
the XML of the real tool, ``-u [-y]`` burns the matching image (never one of another PSID)
and leaves activation to mstfwreset/reboot. ``--online`` uses the same catalog.

As in MFT's mlxfwmanager, ``-u`` burns only an image newer than the flash: an older or
equal one is ``Up to date``, left alone with exit status 0. ``-f`` (``--force``) marks it
``Forced update required`` and burns it without asking.
"""

import argparse

from .. import image, render
from ..state import Store, device_type, mst_name
from .common import MFT_VERSION, banner, confirmed, out, resolve_or_say

ERR_CODE_IMG_NOT_FOUND = 9


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        formatter_class=argparse.RawTextHelpFormatter,
        prog="mlxfwmanager",
        description=f"Firmware manager ({banner('mlxfwmanager', MFT_VERSION)}).",
    )
    parser.add_argument("-d", "--dev", dest="device")
    parser.add_argument("-i", "--image-file", dest="image")
    parser.add_argument("-u", "--update", action="store_true")
    parser.add_argument("-y", "--yes", action="store_true")
    parser.add_argument("-f", "--force", action="store_true")
    parser.add_argument("--online", action="store_true")
    parser.add_argument("--query", action="store_true")
    parser.add_argument("--query-format", choices=("XML", "Text", "xml", "text"))
    parser.add_argument(
        "-v", "--version", action="version", version=banner("mlxfwmanager", MFT_VERSION)
    )
    return parser


def _available(card: dict, store: Store, image_path: str | None) -> dict | None:
    """The image the bundle offers for this card: same PSID and device, else None."""
    if image_path:
        try:
            img = image.load(image_path)
        except image.ImageError:
            return None
        if img.psid != card["psid"] or img.device_id != device_type(card).device_id:
            return None
        return {"fw": img.fw, "pxe": img.pxe, "uefi": img.uefi, "path": image_path}
    return store.catalog.get(card["psid"])


def _burn(card: dict, offer: dict) -> None:
    card["firmware"]["flash"] = offer["fw"]
    card["firmware"]["pxe"] = offer.get("pxe") or card["firmware"]["pxe"]
    card["firmware"]["uefi"] = offer.get("uefi") or card["firmware"]["uefi"]


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    xml = (args.query_format or "").lower() == "xml"
    query_only = args.query or bool(args.query_format)
    with Store(write=args.update and not query_only) as store:
        if args.device:
            target = resolve_or_say(
                store, args.device, f"-E- Failed to open device: {args.device}\n"
            )
            if target is None:
                return 1
            devices = [(target.card, args.device)]
        else:
            devices = [(card, mst_name(card)) for card in store.ordered_cards()]
        if args.image and not _path_exists(args.image):
            out(f"-E- Can't find file {args.image}\n")
            return 1
        rows = []
        for card, devname in devices:
            offer = _available(card, store, args.image)
            rows.append((card, devname, offer, render.fwmanager_status(card, offer, args.force)))
        if xml:
            body = "\n".join(render.fwmanager_xml_device(*row) for row in rows)
            out(f"<Devices>\n{body}\n</Devices>\n")
            return 0
        out("Querying Mellanox devices firmware ...\n\n")
        for index, row in enumerate(rows, start=1):
            out(render.fwmanager_text(index, *row))
        if query_only:
            return 0
        need = [row for row in rows if row[3] in ("Update required", "Forced update required")]
        missing = [row for row in rows if row[2] is None]
        if not args.update:
            out("---------\n")
            if need:
                out(
                    f"Found {len(need)} device(s) requiring firmware update. "
                    "Please use -u flag to perform the update.\n"
                )
            if missing and args.image:
                out(f"-E- Could not find matching firmware images for {len(missing)} device(s).\n")
                return ERR_CODE_IMG_NOT_FOUND
            return 0
        if not need:
            out("\n")
            if missing:
                out(f"-E- Could not find matching firmware images for {len(missing)} device(s).\n")
                return ERR_CODE_IMG_NOT_FOUND
            if args.image:
                out("---------\nAll listed device(s) firmware images are up to date.\n")
            return 0
        out(f"---------\nFound {len(need)} device(s) requiring firmware update...\n\n")
        # The real tool asks only for updates it chose itself.
        if not args.force and not confirmed("Perform FW update? [y/N]: ", args.yes):
            out("No updates performed\n")
            return 0
        for index, (card, _devname, offer, status) in enumerate(rows, start=1):
            if status not in ("Update required", "Forced update required"):
                continue
            prefix = f"Device #{index}: " if len(rows) > 1 else ""
            out(f"{prefix}Updating FW ...     \n")
            for step in (0, 20, 40, 60, 80, 99):
                out(f"\b\b\b\b{step:3d}%")
            _burn(card, offer)
            store.mark(card)
            out("\b\b\b\bDone\n")
        out("\nRestart needed for updates to take effect.\n")
        return 0


def _path_exists(path: str) -> bool:
    try:
        with open(path, "rb"):
            return True
    except OSError:
        return False
