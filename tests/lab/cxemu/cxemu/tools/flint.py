"""mstflint (cxfab lab emulator): query a device or image, burn an image.

Supported: ``mstflint -d <dev> q``, ``mstflint -i <img> q``,
``mstflint -d <dev> -i <img> [-y] [-allow_psid_change] burn``. Messages follow mstflint
4.21 (flint/err_msgs.h); errors print ``-E- ...`` on stdout and exit 1.
"""

from .. import catalog, image, render
from ..state import Store, device_type
from .common import MSTFLINT_VERSION, banner, confirmed, out, resolve_or_say

USAGE = """\
    NAME:
        mstflint
    SYNOPSIS:
        mstflint [switches...] <command> [parameters...]

    DESCRIPTION:
        Flash utility for NVIDIA network adapters ({tag}).

    SWITCHES:
        -d|--device <device>      Device name: PCI BDF (0000:65:00.0) or /dev/mst/<name>.
        -i|--image <image>        Binary image file.
        -y|--yes                  Non interactive mode - assume answer "yes" to all questions.
        -allow_psid_change        Allow burning a FW image with a different PSID.
        -h|--help                 Show this help.
        -v|--version              Version info.

    COMMANDS SUMMARY
        q[uery]  [full]           Query misc. flash/firmware characteristics.
        b[urn]                    Burn flash.
"""

PROGRESS_STEPS = (0, 10, 25, 40, 55, 70, 85, 99)
BURN_PREFIX = "Burning FW image without signatures - "
BURN_END = "Restoring signature                     - OK"


class Args:
    def __init__(self) -> None:
        self.device = ""
        self.image = ""
        self.yes = False
        self.allow_psid_change = False
        self.command = ""


def _parse(argv: list[str]) -> Args | int:
    args = Args()
    rest = list(argv)
    while rest:
        token = rest.pop(0)
        if token in ("-d", "--device", "-i", "--image"):
            if not rest:
                out(f'-E- Missing argument for flag "{token}".\n')
                return 1
            value = rest.pop(0)
            if token in ("-d", "--device"):
                args.device = value
            else:
                args.image = value
        elif token in ("-y", "--yes"):
            args.yes = True
        elif token in ("-allow_psid_change", "--allow_psid_change"):
            args.allow_psid_change = True
        elif token in ("-h", "--help"):
            out(USAGE.format(tag=banner("mstflint", MSTFLINT_VERSION)))
            return 0
        elif token in ("-v", "--version"):
            out(banner("mstflint", MSTFLINT_VERSION) + "\n")
            return 0
        elif token.startswith("-"):
            out(f'-E- Invalid switch "{token}" is specified.\n')
            return 1
        elif not args.command:
            args.command = token
        # further words ("full") are accepted and ignored
    return args


def _query_image(path: str) -> int:
    try:
        img = image.load(path)
    except image.ImageError as exc:
        out(f"-E- Cannot open Image: {path}. {exc}\n")
        return 1
    kind = next((k for k in catalog.DEVICE_TYPES.values() if k.device_id == img.device_id), None)
    lines = [f"{'Image type:':<23}{kind.image_type if kind else 'FS3'}"]
    lines.append(f"{'FW Version:':<23}{img.fw}")
    roms = []
    if img.uefi:
        roms.append(f"type=UEFI version={render.rom_version(img.uefi)} cpu=AMD64")
    if img.pxe:
        roms.append(f"type=PXE version={render.rom_version(img.pxe)} cpu=AMD64")
    for index, rom in enumerate(roms):
        lines.append(f"{'Rom Info:' if index == 0 else '':<23}{rom}")
    lines.append(f"{'Image VSD:':<23}N/A")
    lines.append(f"{'PSID:':<23}{img.psid}")
    out("\n".join(lines) + "\n")
    return 0


def _no_device(device: str) -> str:
    return f"-E- Cannot open Device: {device}. No such file or directory\n"


def _ask(args: Args) -> bool:
    return confirmed("\n Do you want to continue ? (y/n) [n] : ", args.yes)


def _burn(args: Args) -> int:
    if not args.device or not args.image:
        out('-E- Command "burn" requires both image and device to be specified.\n')
        return 1
    with Store(write=True) as store:
        target = resolve_or_say(store, args.device, _no_device(args.device))
        if target is None:
            return 1
        try:
            img = image.load(args.image)
        except image.ImageError as exc:
            out(f"-E- Cannot open Image: {args.image}. {exc}\n")
            return 1
        card = target.card
        kind = device_type(card)
        if img.device_id != kind.device_id:
            out(
                f"-E- Burning {kind.image_type} image failed: FW image file cannot be programmed "
                f"to device {kind.name}, it is intended for: {img.device_id} only\n"
            )
            return 1
        current = card["firmware"]["flash"]
        out(f"\n    Current FW version on flash:  {current}\n")
        out(f"    New FW version:               {img.fw}\n")
        if catalog.version_key(current) >= catalog.version_key(img.fw):
            relation = "the same as" if current == img.fw else "older than"
            out(f"\n    Note: The new FW version is {relation} the current FW version on flash.\n")
            if not _ask(args):
                return 1
        out("\n")
        if img.psid != card["psid"]:
            if not args.allow_psid_change:
                out(
                    f"\n-E- PSID mismatch. The PSID on flash ({card['psid']}) differs from the "
                    f"PSID in the given image ({img.psid}).\n"
                )
                return 1
            out(
                f'\n    You are about to replace current PSID on flash - "{card["psid"]}" with a '
                f'different PSID - "{img.psid}".\n'
                "    Note: It is highly recommended not to change the PSID.\n"
            )
            if not _ask(args):
                return 1
        for step in PROGRESS_STEPS:
            out(f"\r{BURN_PREFIX}{step:3d}%")
        out(f"\r{BURN_PREFIX}OK  \n")
        out(f"\r{BURN_END}\n")
        card["psid"] = img.psid
        card["firmware"]["flash"] = img.fw
        # an image without expansion ROMs keeps the ones already on flash
        card["firmware"]["pxe"] = img.pxe or card["firmware"]["pxe"]
        card["firmware"]["uefi"] = img.uefi or card["firmware"]["uefi"]
        store.mark(card)
        out("-I- To load new FW run mstfwreset or reboot machine.\n")
        return 0


def main(argv: list[str]) -> int:
    args = _parse(argv)
    if isinstance(args, int):
        return args
    command = args.command
    if command in ("q", "query"):
        if args.device:
            with Store() as store:
                target = resolve_or_say(store, args.device, _no_device(args.device))
                if target is None:
                    return 1
                out(render.flint_query(target.card))
                return 0
        if args.image:
            return _query_image(args.image)
        out("-E- Please specify either Device or Image.\n")
        return 1
    if command in ("b", "burn"):
        return _burn(args)
    if not command:
        out("-E- No command found. For more information please read the help message:\n")
        return 1
    out(f"-E- Invalid command: {command}\n")
    return 1
