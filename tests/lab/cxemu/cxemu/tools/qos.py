"""mlnx_qos (cxfab lab emulator): per-netdev ETS, priority->TC map and TC rate limits.

Options, validation messages and the printed block format follow mlnx-tools' mlnx_qos.
Rate limits are whole Gb/s per TC and read back quantised the way mlx5 stores them
(100 Mb/s units up to 25.5 Gb/s, 1 Gb/s units up to 255 Gb/s, 0 = unlimited). Setting a
limit also programs the guest kernel's shaper on that netdev (see ``cxemu.shaper``); when
that fails the driver error is reported like the real tool does and nothing changes.
"""

import sys
from optparse import OptionParser

from .. import EMULATOR_TAG, model, render, shaper
from ..state import Store
from .common import out

MLX5_100MB_KBPS = 100_000
MLX5_1GB_KBPS = 1_000_000
MAX_UNITS = 255
TSA_NAMES = ("strict", "ets", "vendor")


class DriverError(Exception):
    """What the mlx5 driver would answer with an errno."""


def quantize_kbps(kbps: int) -> int:
    """The rate mlx5 reads back for a requested rate (kbit/s), as mlx5e_dcbnl_ieee_setmaxrate."""
    if kbps <= 0:
        return 0
    if kbps <= MAX_UNITS * MLX5_100MB_KBPS:
        return max(1, kbps // MLX5_100MB_KBPS) * MLX5_100MB_KBPS
    if kbps <= MAX_UNITS * MLX5_1GB_KBPS:
        return (kbps // MLX5_1GB_KBPS) * MLX5_1GB_KBPS
    raise DriverError("[Errno 22] Invalid argument")


def _parser() -> OptionParser:
    parser = OptionParser(
        usage="%prog -i <interface> [options]", version=f"%prog 1.2 ({EMULATOR_TAG})"
    )
    parser.add_option("-f", "--pfc", dest="pfc", metavar="LIST")
    parser.add_option("-p", "--prio_tc", dest="prio_tc", metavar="LIST")
    parser.add_option("-s", "--tsa", dest="tsa", metavar="LIST")
    parser.add_option("-t", "--tcbw", dest="tc_bw", metavar="LIST")
    parser.add_option("-r", "--ratelimit", dest="ratelimit", metavar="LIST")
    parser.add_option("-d", "--dcbx", dest="dcbx")
    parser.add_option("--trust", dest="trust")
    parser.add_option("--cable_len", dest="cable_len")
    parser.add_option("--prio2buffer", dest="prio2buffer", metavar="LIST")
    parser.add_option("--buffer_size", dest="buffer_size", metavar="LIST")
    parser.add_option("-i", "--interface", dest="intf")
    parser.add_option("-a", action="store_true", dest="printall", default=False)
    return parser


class UsageExit(Exception):
    """Print the message (and maybe usage) and exit 1, as mlnx_qos does."""

    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.usage = usage


def _ints(text: str, low: int, high: int, what: str, too_many: str, count_msg: str) -> list[int]:
    values = []
    for item in text.split(","):
        if len(values) >= 8:
            raise UsageExit(too_many)
        try:
            value = int(item)
        except ValueError as exc:
            raise UsageExit(f"Bad value for {what}: {exc}", usage=True) from None
        if value < low or value > high:
            raise UsageExit(
                f"Bad value for {what}: {value} is not in the range {low}..{high}", usage=True
            )
        values.append(value)
    if len(values) != 8:
        raise UsageExit(count_msg)
    return values


def _apply_ratelimit(netdev: str, state: dict, text: str) -> None:
    requested = _ints(
        text, 0, 1000000, "ratelimit", "Too many items for ratelimit", "ratelimit must have 8 items"
    )
    try:
        rates = [quantize_kbps(gbps * MLX5_1GB_KBPS) for gbps in requested]
        shaper.apply(netdev, state["prio_tc"], rates, state.get("shaper_scale", 1.0))
    except (DriverError, shaper.ShaperError) as exc:
        print(f"mlnx_qos: {netdev}: {exc}", file=sys.stderr)
        out("Rate limit is not supported on your system!\n")
        return
    state["ratelimit_kbps"] = rates


def _apply_ets(netdev: str, state: dict, options) -> None:
    tsa = list(state["tsa"])
    tcbw = list(state["tcbw"])
    prio_tc = list(state["prio_tc"])
    if options.tsa:
        names = options.tsa.split(",")
        for name in names[:8]:
            if name not in TSA_NAMES:
                raise UsageExit(str(("Bad TSA value: ", name)), usage=True)
        if len(names) > 8:
            raise UsageExit("Too many items for TSA")
        if len(names) != 8:
            raise UsageExit("tsa list must have 8 items")
        tsa = names
    if options.tc_bw:
        tcbw = _ints(
            options.tc_bw,
            0,
            100,
            "ETS BW",
            "Too many items for ETS BW",
            "tcbw list must have 8 items",
        )
        for index, bw in enumerate(tcbw):
            if tsa[index] != "ets" and bw != 0:
                raise UsageExit("ETS BW for a strict/vendor TC must be 0", usage=True)
    if options.prio_tc:
        prio_tc = _ints(
            options.prio_tc,
            0,
            7,
            "UP => TC mapping",
            "Too many items in UP => TC mapping",
            "prio_tc list must have 8 items",
        )
    ets_bw = [bw for name, bw in zip(tsa, tcbw, strict=True) if name == "ets"]
    if ets_bw and sum(ets_bw) != 100:  # mlx5e_dbcnl_validate_ets: "BW sum is illegal"
        raise UsageExit("[Errno 22] Invalid argument")
    if prio_tc != state["prio_tc"] and any(state["ratelimit_kbps"]):
        try:
            shaper.apply(netdev, prio_tc, state["ratelimit_kbps"], state.get("shaper_scale", 1.0))
        except shaper.ShaperError as exc:
            print(f"mlnx_qos: {netdev}: {exc}", file=sys.stderr)
            raise UsageExit("[Errno 5] Input/output error") from None
    state.update(tsa=tsa, tcbw=tcbw, prio_tc=prio_tc)


def _not_dcb(intf: str) -> int:
    out("Priority trust state is not supported on your system\n")
    out("Buffers commands are not supported on your system\n")
    out("Rate limit is not supported on your system!\n")
    out("ETS features are not supported on your system\n")
    return 1


def main(argv: list[str]) -> int:
    parser = _parser()
    options, args = parser.parse_args(argv)
    if args:
        out("Bad arguments\n")
        parser.print_usage()
        return 1
    if options.intf is None:
        out("Interface name is required\n")
        parser.print_usage()
        return 1
    with Store(write=True) as store:
        target = store.find_netdev(options.intf)
        if target is None:
            return _not_dcb(options.intf)
        card = target.card
        state = card["qos"].setdefault(options.intf, model.default_qos())
        try:
            if options.dcbx not in (None, "os", "fw", "get"):
                raise UsageExit("Invalid dcbx mode command. Refer to the help.")
            if options.cable_len:
                state["cable_len"] = _ints(
                    ",".join([options.cable_len] * 8), 0, 0xFFFF, "cable_len", "", ""
                )[0]
            if options.pfc:
                state["pfc"] = _ints(
                    options.pfc, 0, 1, "PFC", "Too many items for PFC", "pfc list must have 8 items"
                )
            if options.trust:
                if options.trust not in ("pcp", "dscp"):
                    raise UsageExit("Invalid trust state command. Refer to the help.")
                state["trust"] = options.trust
            out("Buffers commands are not supported on your system\n")
            if options.buffer_size or options.prio2buffer:
                return 1
            if options.ratelimit:
                _apply_ratelimit(options.intf, state, options.ratelimit)
            _apply_ets(options.intf, state, options)
        except UsageExit as exc:
            out(f"{exc}\n")
            if exc.usage:
                parser.print_usage()
            store.mark(card)  # options applied before the failing one stay applied
            return 1
        store.mark(card)
        out(render.qos(state, options.printall))
        return 0
