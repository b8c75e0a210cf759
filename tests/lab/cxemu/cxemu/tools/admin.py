"""cxemu-admin: control of the cxfab lab emulator (not an NVIDIA tool).

    cxemu-admin seed --profile seed000 --netdevs ens4,ens5 [--force]
    cxemu-admin seed --profile seed000 --bdf 0000:65:00.0,0000:65:00.1 [--netdevs a,b]
    cxemu-admin set -d <dev> KEY=VALUE ...
    cxemu-admin show [-d <dev>]
    cxemu-admin make-image --psid P --version V --out FILE [--device-type T] [--pxe V] [--uefi V]
    cxemu-admin catalog [--list | --psid P --fw V [--pxe V] [--uefi V] | --remove P]
    cxemu-admin remove -d <dev>
    cxemu-admin flap -d <dev>          (one link down/up of the port <dev> names)
    cxemu-admin sync [-d <dev>]        (the kernel's side of a sriov_numvfs write: VFs appear)

``set`` keys: device_type, psid, part_number, description, base_mac, fw (flash and
running), fw.flash, fw.running, pxe, uefi, config.<PARAM> (current and next),
config.<PARAM>.<default|current|next>, port<N>.cable (mellanox|optcore|none),
port<N>.link (auto|down), port<N>.eth_enabled_speeds, port<N>.sm (present|none:
the IB subnet manager, see cxemu/ib.py), netdev<N>,
netdev<N>.shaper_scale (kernel shaper rate = configured rate x scale, for slow
guests), pcie.<speed|width|max_speed|max_width> (the PCIe link, e.g. pcie.width=8
for seed 000's narrow slot; shown only in a CXEMU_SYSFS_ROOT tree), temperature (the
ASIC's, whole degrees C, that mget_temp/mstmget_temp print). A bad key or
value fails with the key and the reason, and changes nothing.
"""

import argparse
import copy
import hashlib
import json
import re
import subprocess
import sys

from .. import EMULATOR_TAG, catalog, ib, image, model, pcie, runtime, sysfs
from ..pcie import PublishError
from ..state import DeviceNotFound, Store, normalize_bdf

VERSION_RE = re.compile(r"^\d+\.\d+\.\d+$")
EXIT_USAGE = 2


class AdminError(Exception):
    """Bad input to cxemu-admin; the message names the key and the reason."""


def _fail(message: str) -> int:
    print(f"cxemu-admin: {message}", file=sys.stderr)
    return EXIT_USAGE


def _split(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


# ---------------------------------------------------------------- seed
def cmd_seed(args) -> int:
    if args.profile not in catalog.PROFILES:
        return _fail(
            f"seed: --profile: unknown profile {args.profile!r} "
            f"(known: {', '.join(sorted(catalog.PROFILES))})"
        )
    netdevs = _split(args.netdevs)
    if args.bdf:
        functions = []
        for item in _split(args.bdf):
            bdf = normalize_bdf(item)
            if not bdf:
                return _fail(f"seed: --bdf: {item!r} is not a PCI address (0000:65:00.0)")
            functions.append(bdf)
        if netdevs and len(netdevs) != len(functions):
            return _fail("seed: --netdevs: give one netdev per --bdf function")
    elif netdevs:
        try:
            functions = [sysfs.pci_function(name) for name in netdevs]
        except sysfs.NetdevError as exc:
            return _fail(f"seed: --netdevs: {exc}")
    else:
        return _fail("seed: give --netdevs (discovered from sysfs) or --bdf")
    if len(functions) not in (1, 2) or len(set(functions)) != len(functions):
        return _fail(f"seed: need one or two distinct PCI functions, got {functions}")
    base_mac = sysfs.mac_address(netdevs[0]) if netdevs and not args.bdf else None
    with Store(write=True) as store:
        for bdf in functions:
            try:
                existing = store.resolve(bdf).card
            except DeviceNotFound:
                continue
            if not args.force:
                return _fail(f"seed: {bdf} already belongs to a card (use --force to replace)")
            store.remove(existing)
        profile = catalog.PROFILES[args.profile]
        card = model.new_card(
            args.profile,
            functions,
            netdevs or [None] * len(functions),
            store.next_mst_index(profile["device_type"]),
            base_mac,
        )
        store.add(card)
        if pcie.fake_tree() is not None:
            pcie.publish(card)
            ib.publish(card, sysfs.carrier)
            runtime.publish(card)
        if profile["available"]:
            store.catalog[card["psid"]] = model.catalog_entry(profile["available"])
            store.mark_catalog()
        print(json.dumps({"card": functions[0], "mst": _mst_names(card)}))
    return 0


def _mst_names(card: dict) -> list[str]:
    from ..state import mst_name

    return [mst_name(card, port) for port in range(len(card["functions"]))]


# ---------------------------------------------------------------- set
def _version(key: str, value: str) -> str:
    if not VERSION_RE.match(value):
        raise AdminError(f"{key}: {value!r} is not a version like 12.28.1002")
    return value


def _port_index(card: dict, key: str, text: str) -> int:
    index = int(text) - 1
    if index < 0 or index >= len(card["functions"]):
        raise AdminError(f"{key}: the card has ports 1..{len(card['functions'])}")
    return index


def apply_setting(card: dict, key: str, value: str) -> None:
    """Apply one KEY=VALUE to a card dict; AdminError names the key on bad input."""
    if key == "device_type":
        if value not in catalog.DEVICE_TYPES:
            raise AdminError(
                f"{key}: unknown device type {value!r} ({', '.join(catalog.DEVICE_TYPES)})"
            )
        card["device_type"] = value
        card["config"] = model.build_config(value)
    elif key in ("psid", "part_number", "description"):
        if not value or (key == "psid" and len(value) > 16):
            raise AdminError(
                f"{key}: must be non-empty" + (" and at most 16 chars" if key == "psid" else "")
            )
        card[key] = value
    elif key == "base_mac":
        mac = value.replace(":", "").lower()
        if not re.fullmatch(r"[0-9a-f]{12}", mac):
            raise AdminError(f"{key}: {value!r} is not a MAC address")
        card["base_mac"], card["base_guid"] = mac, model.guid_from_mac(mac)
    elif key == "fw":
        card["firmware"]["flash"] = card["firmware"]["running"] = _version(key, value)
    elif key in ("fw.flash", "fw.running"):
        card["firmware"][key.split(".")[1]] = _version(key, value)
    elif key in ("pxe", "uefi"):
        card["firmware"][key] = _version(key, value) if value else ""
    elif key.startswith("config."):
        _apply_config(card, key, value)
    elif match := re.fullmatch(r"port(\d+)\.sm", key):
        if value not in ("present", "none"):
            raise AdminError(f"{key}: must be present or none (a subnet manager on the IB fabric)")
        card["ports"][_port_index(card, key, match.group(1))]["sm"] = value
    elif match := re.fullmatch(r"port(\d+)\.(cable|link|eth_enabled_speeds)", key):
        port = card["ports"][_port_index(card, key, match.group(1))]
        field = match.group(2)
        if field == "cable":
            if value not in (*catalog.CABLES, "none"):
                raise AdminError(
                    f"{key}: {value!r} is not one of {', '.join(catalog.CABLES)}, none"
                )
            port["cable"] = None if value == "none" else value
        elif field == "link":
            if value not in ("auto", "down"):
                raise AdminError(f"{key}: must be auto or down")
            port["link"] = value
        else:
            if not re.fullmatch(r"0x[0-9a-f]{8}", value):
                raise AdminError(f"{key}: {value!r} is not a 32-bit hex mask like 0xfafc0003")
            port["eth_enabled_speeds"] = value
    elif match := re.fullmatch(r"netdev(\d+)\.shaper_scale", key):
        netdev = card["netdevs"][_port_index(card, key, match.group(1))]
        if not netdev:
            raise AdminError(f"{key}: port has no netdev (set netdev{match.group(1)} first)")
        try:
            scale = float(value)
        except ValueError:
            scale = 0.0
        if not 0 < scale <= 1:
            raise AdminError(f"{key}: {value!r} must be a number in (0, 1]")
        card["qos"].setdefault(netdev, model.default_qos())["shaper_scale"] = scale
    elif match := re.fullmatch(r"netdev(\d+)", key):
        index = _port_index(card, key, match.group(1))
        old = card["netdevs"][index]
        card["netdevs"][index] = value
        if value:
            card["qos"][value] = card["qos"].pop(old, None) or model.default_qos()
    elif match := re.fullmatch(r"pcie\.(speed|width|max_speed|max_width)", key):
        field = match.group(1)
        allowed = pcie.SPEEDS if "speed" in field else pcie.WIDTHS
        try:
            number = float(value) if "speed" in field else int(value)
        except ValueError:
            number = None
        if number not in allowed:
            raise AdminError(f"{key}: {value!r} is not one of {', '.join(map(str, allowed))}")
        card["pcie"] = {**pcie.link_of(card), field: number}
    elif key == "temperature":
        if not re.fullmatch(r"-?\d{1,3}", value) or not -40 <= int(value) <= 150:
            raise AdminError(f"{key}: {value!r} is not whole degrees C in -40..150")
        card["asic_temp_c"] = int(value)
    else:
        raise AdminError(f"{key}: unknown key (see cxemu-admin set --help)")


def _apply_config(card: dict, key: str, value: str) -> None:
    parts = key.split(".")
    name = parts[1].upper()
    columns = ("current", "next") if len(parts) == 2 else (parts[2],)
    if len(parts) > 3 or not set(columns) <= {"default", "current", "next"}:
        raise AdminError(f"{key}: use config.<PARAM> or config.<PARAM>.<default|current|next>")
    param = catalog.DEVICE_TYPES[card["device_type"]].param(name)
    if param is None:
        raise AdminError(f"{key}: {card['device_type']} has no parameter {name}")
    try:
        number = param.parse(value)
    except ValueError as exc:
        raise AdminError(f"{key}: {value!r}: {exc}") from None
    for column in columns:
        card["config"][name][column] = number


def cmd_set(args) -> int:
    with Store(write=True) as store:
        try:
            card = store.resolve(args.device).card
        except DeviceNotFound:
            return _fail(f"set: -d: no emulated device {args.device!r}")
        draft = copy.deepcopy(card)
        for item in args.settings:
            key, sep, value = item.partition("=")
            if not sep:
                return _fail(f"set: {item!r}: expected KEY=VALUE")
            try:
                apply_setting(draft, key.strip(), value.strip())
            except AdminError as exc:
                return _fail(f"set: {exc}")
        if draft.get("pcie") != card.get("pcie"):
            try:
                pcie.publish(draft)
            except PublishError as exc:
                return _fail(f"set: pcie: {exc}")
        if pcie.fake_tree() is not None:
            # The link type or the subnet manager may have changed what IB shows.
            ib.publish(draft, sysfs.carrier)
            runtime.publish(draft)
        card.clear()
        card.update(draft)
        store.mark(card)
    return 0


# ---------------------------------------------------------------- other commands
def cmd_show(args) -> int:
    with Store() as store:
        if args.device:
            try:
                cards = [store.resolve(args.device).card]
            except DeviceNotFound:
                return _fail(f"show: -d: no emulated device {args.device!r}")
        else:
            cards = store.ordered_cards()
        print(json.dumps({"cards": cards, "catalog": store.catalog}, indent=2, sort_keys=True))
    return 0


def cmd_make_image(args) -> int:
    try:
        _version("--version", args.version)
        for name in ("pxe", "uefi"):
            if getattr(args, name):
                _version(f"--{name}", getattr(args, name))
    except AdminError as exc:
        return _fail(f"make-image: {exc}")
    if args.device_type not in catalog.DEVICE_TYPES:
        return _fail(f"make-image: --device-type: unknown {args.device_type!r}")
    release = catalog.RELEASES.get(args.version)
    pxe = args.pxe if args.pxe is not None else (release.pxe if release else "")
    uefi = args.uefi if args.uefi is not None else (release.uefi if release else "")
    try:
        data = image.build(
            image.Image(
                catalog.DEVICE_TYPES[args.device_type].device_id, args.psid, args.version, pxe, uefi
            )
        )
    except ValueError as exc:
        return _fail(f"make-image: {exc}")
    with open(args.out, "wb") as handle:
        handle.write(data)
    print(f"{hashlib.sha256(data).hexdigest()}  {args.out}")
    return 0


def cmd_catalog(args) -> int:
    with Store(write=bool(args.psid or args.remove)) as store:
        if args.remove:
            if store.catalog.pop(args.remove, None) is None:
                return _fail(f"catalog: --remove: no entry for PSID {args.remove!r}")
            store.mark_catalog()
        elif args.psid:
            if not args.fw:
                return _fail("catalog: --fw is required with --psid")
            try:
                entry = model.catalog_entry(_version("--fw", args.fw))
                for name in ("pxe", "uefi"):
                    if getattr(args, name):
                        entry[name] = _version(f"--{name}", getattr(args, name))
            except AdminError as exc:
                return _fail(f"catalog: {exc}")
            store.catalog[args.psid] = entry
            store.mark_catalog()
        print(json.dumps(store.catalog, indent=2, sort_keys=True))
    return 0


def cmd_remove(args) -> int:
    with Store(write=True) as store:
        try:
            store.remove(store.resolve(args.device).card)
        except DeviceNotFound:
            return _fail(f"remove: -d: no emulated device {args.device!r}")
    return 0


def cmd_flap(args) -> int:
    with Store(write=True) as store:
        try:
            target = store.resolve(args.device)
        except DeviceNotFound:
            return _fail(f"flap: -d: no emulated device {args.device!r}")
        try:
            done = pcie.flap(target.card, target.port)
        except (PublishError, OSError, subprocess.CalledProcessError) as exc:
            return _fail(f"flap: {exc}")
        store.mark(target.card)
    print(done)
    return 0


def cmd_sync(args) -> int:
    with Store() as store:
        try:
            cards = [store.resolve(args.device).card] if args.device else store.ordered_cards()
        except DeviceNotFound:
            return _fail(f"sync: -d: no emulated device {args.device!r}")
        try:
            done = [line for card in cards for line in runtime.sync(card)]
        except PublishError as exc:
            return _fail(f"sync: {exc}")
    print("\n".join(done))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cxemu-admin",
        description=f"Control the emulated ConnectX devices of the {EMULATOR_TAG}.",
        epilog="State lives in $CXEMU_STATE_DIR (default /var/lib/cxemu).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    seed = sub.add_parser("seed", help="create a card in a profile's starting state")
    seed.add_argument("--profile", default="seed000", help=", ".join(catalog.PROFILES))
    seed.add_argument("--netdevs", help="comma-separated netdevs, one per port")
    seed.add_argument("--bdf", help="comma-separated PCI functions (skips sysfs discovery)")
    seed.add_argument("--force", action="store_true", help="replace an existing card")
    seed.set_defaults(func=cmd_seed)
    setp = sub.add_parser("set", help="set starting state (see module doc for keys)")
    setp.add_argument("-d", "--device", required=True)
    setp.add_argument("settings", nargs="+", metavar="KEY=VALUE")
    setp.set_defaults(func=cmd_set)
    show = sub.add_parser("show", help="print the state as JSON")
    show.add_argument("-d", "--device")
    show.set_defaults(func=cmd_show)
    make = sub.add_parser("make-image", help="write a deterministic fake firmware image")
    make.add_argument("--psid", required=True)
    make.add_argument("--version", required=True)
    make.add_argument("--out", required=True)
    make.add_argument("--device-type", default="ConnectX4")
    make.add_argument("--pxe")
    make.add_argument("--uefi")
    make.set_defaults(func=cmd_make_image)
    cat = sub.add_parser("catalog", help="images known to mlxfwmanager, by PSID")
    cat.add_argument("--list", action="store_true")
    cat.add_argument("--psid")
    cat.add_argument("--fw")
    cat.add_argument("--pxe")
    cat.add_argument("--uefi")
    cat.add_argument("--remove", metavar="PSID")
    cat.set_defaults(func=cmd_catalog)
    remove = sub.add_parser("remove", help="delete a card")
    remove.add_argument("-d", "--device", required=True)
    remove.set_defaults(func=cmd_remove)
    flap = sub.add_parser("flap", help="take the port's link down and up once")
    flap.add_argument("-d", "--device", required=True, help="BDF or mst name of the port")
    flap.set_defaults(func=cmd_flap)
    sync = sub.add_parser("sync", help="VFs appear as the count in sriov_numvfs says")
    sync.add_argument("-d", "--device", help="BDF or mst name (default: every card)")
    sync.set_defaults(func=cmd_sync)
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    return args.func(args)
