"""mstconfig / mlxconfig (cxfab lab emulator): query and set non-volatile configuration.

``-d <dev> [-e] q [PARAM ...]`` prints Next Boot (with ``-e`` also Default and Current, ``*``
where Next Boot differs); ``-d <dev> [-y] set PARAM=VALUE ...`` writes Next Boot only;
``-d <dev> [-y] reset`` sets Next Boot back to Default. New values become Current after
``mstfwreset`` (or a reboot, which the lab emulates with mstfwreset). Exit codes follow
mlxconfig: 0 ok, 2 aborted, 3 error.
"""

from .. import render
from ..state import Store, Target, device_type, mst_name
from .common import MSTFLINT_VERSION, banner, confirmed, out, resolve_or_say

EXIT_ABORTED = 2
EXIT_ERROR = 3

USAGE = """\
    NAME:
        {tool}
    SYNOPSIS:
        {tool} [-d <device>] [-y] [-e] <q[uery]|set|reset> [PARAM[=VALUE] ...]

    DESCRIPTION:
        Allows the user to change some of the device configurations without having to
        create and burn a new firmware ({tag}).

    OPTIONS:
        -d|--dev <device>   Device: PCI BDF (0000:65:00.0) or /dev/mst/<name>.
        -e|--enable_verbosity  Show Default and Current configurations.
        -y|--yes            Answer yes in prompt.
        -h|--help           Display help message.
        -v|--version        Display version info.

    COMMANDS SUMMARY
        q|query             query supported configurations.
        r|reset             reset all configurations to their default value.
        s|set               set configurations to a specific device.
"""


class Args:
    def __init__(self) -> None:
        self.device = ""
        self.verbose = False
        self.yes = False
        self.command = ""
        self.words: list[str] = []


def _parse(tool: str, argv: list[str]) -> Args | int:
    args = Args()
    rest = list(argv)
    while rest:
        token = rest.pop(0)
        if token in ("-d", "--dev"):
            if not rest:
                out("-E- missing device argument\n")
                return EXIT_ERROR
            args.device = rest.pop(0)
        elif token in ("-e", "--enable_verbosity"):
            args.verbose = True
        elif token in ("-y", "--yes"):
            args.yes = True
        elif token in ("-h", "--help"):
            out(USAGE.format(tool=tool, tag=banner(tool, MSTFLINT_VERSION)))
            return 0
        elif token in ("-v", "--version"):
            out(banner(tool, MSTFLINT_VERSION) + "\n")
            return 0
        elif token.startswith("-"):
            out(f"-E- Unknown flag: {token}\n")
            return EXIT_ERROR
        elif not args.command:
            args.command = token
        else:
            args.words.append(token)
    return args


def _check_supported(target: Target) -> bool:
    if not device_type(target.card).mlxconfig_supported:
        out("-E- Unsupported device\n")
        return False
    return True


def _open_supported(store: Store, device: str) -> Target | None:
    """The named device when mlxconfig can configure it; None after saying why not."""
    target = resolve_or_say(store, device, "-E- Failed to open the device\n")
    return target if target is not None and _check_supported(target) else None


def _apply(store: Store, card: dict, next_values: dict[str, int]) -> int:
    """Stage the next values (they take effect at the next reboot), as mstconfig reports it."""
    out("Applying... ")
    for name, value in next_values.items():
        card["config"][name]["next"] = value
    store.mark(card)
    out("Done!\n")
    out("-I- Please reboot machine to load new configurations.\n")
    return 0


def _query_one(target: Target, device_name: str, index: int, args: Args) -> int:
    card = target.card
    kind = device_type(card)
    out(render.config_opening(card, device_name, index) + "\n")
    out(render.config_header(args.verbose, args.verbose, False))
    names = [word.upper() for word in args.words] or [param.name for param in kind.params]
    for name in names:
        if kind.param(name) is None:
            out(f"-E- Unknown Parameter: {name}\n")
            return EXIT_ERROR
    differs_any = False
    for name in names:
        line, differs = render.config_row(
            kind.param(name), card["config"][name], args.verbose, args.verbose
        )
        out(line)
        differs_any |= differs
    if differs_any:
        out("The '*' shows parameters with next value different from default/current value.\n")
    return 0


def _query(args: Args) -> int:
    with Store() as store:
        if args.device:
            target = _open_supported(store, args.device)
            if target is None:
                return EXIT_ERROR
            return _query_one(target, args.device, 1, args)
        cards = store.ordered_cards()
        if not cards:
            out("-E- No devices found.\n")
            return EXIT_ERROR
        status = 0
        for index, card in enumerate(cards, start=1):
            target = Target(card, 0, mst_name(card))
            if not _check_supported(target):
                status = EXIT_ERROR
                continue
            status = _query_one(target, card["functions"][0], index, args) or status
        return status


def _ask(question: str, args: Args) -> bool:
    if confirmed(f"\n {question} (y/n) [n] : ", args.yes):
        return True
    out("-E- Aborted by user.\n")
    return False


def _set(args: Args) -> int:
    if not args.device:
        out("-E- Please specify a device to set configurations on\n")
        return EXIT_ERROR
    requested: list[tuple[str, str]] = []
    for word in args.words:
        name, sep, value = word.partition("=")
        if not sep or not name or not value:
            out(f"-E- Invalid Configuration argument {word}\n")
            return EXIT_ERROR
        requested.append((name.upper(), value))
    if not requested:
        out("-E- No parameters to set\n")
        return EXIT_ERROR
    with Store(write=True) as store:
        target = _open_supported(store, args.device)
        if target is None:
            return EXIT_ERROR
        card = target.card
        kind = device_type(card)
        out(render.config_opening(card, args.device) + "\n")
        out(render.config_header(args.verbose, args.verbose, True))
        new_values: dict[str, int] = {}
        for name, text in requested:
            param = kind.param(name)
            if param is None:
                out(f"-E- Unknown Parameter: {name}\n")
                return EXIT_ERROR
            try:
                new_values[name] = param.parse(text)
            except ValueError as exc:
                out(f"-E- Cannot set the value {text} for the parameter {name}: {exc}\n")
                return EXIT_ERROR
        differs_any = False
        for name, value in new_values.items():
            line, differs = render.config_row(
                kind.param(name), card["config"][name], args.verbose, args.verbose, value
            )
            out(line)
            differs_any |= differs
        if differs_any:
            out("The '*' shows parameters with next value different from default/current value.\n")
        if not _ask("Apply new Configuration?", args):
            return EXIT_ABORTED
        return _apply(store, card, new_values)


def _reset(args: Args) -> int:
    with Store(write=True) as store:
        target = _open_supported(store, args.device)
        if target is None:
            return EXIT_ERROR
        if not _ask(f"Reset configuration for device {args.device}?", args):
            return EXIT_ABORTED
        defaults = {name: entry["default"] for name, entry in target.card["config"].items()}
        return _apply(store, target.card, defaults)


def main(argv: list[str], tool: str = "mstconfig") -> int:
    args = _parse(tool, argv)
    if isinstance(args, int):
        return args
    if args.command in ("q", "query"):
        return _query(args)
    if args.command in ("s", "set"):
        return _set(args)
    if args.command in ("r", "reset"):
        if not args.device:
            out("-E- Please specify a device\n")
            return EXIT_ERROR
        return _reset(args)
    out(f"-E- Invalid command: {args.command or '(none)'}\n")
    out(USAGE.format(tool=tool, tag=banner(tool, MSTFLINT_VERSION)))
    return EXIT_ERROR
