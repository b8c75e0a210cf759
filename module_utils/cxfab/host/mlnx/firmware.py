"""Firmware rollout for one ConnectX card: decide, verify, burn.

Safety rules, in the order they are checked:
  1. nothing is burned when the card already has the target in flash (a burned
     image awaiting activation is reported as pending, never burned again);
  2. the image on the host must have the sha256 the inventory names;
  3. the image must contain the target version;
  4. the image's PSID must equal the card's, unless crossflashing is allowed
     explicitly (`allow_psid_change`), which passes `-allow_psid_change`;
  5. a version lower than the one in flash is refused, whichever tool burns,
     unless downgrades are allowed explicitly (`allow_downgrade`); mlxfwmanager
     then needs its force flag, as it burns only newer images by itself.
A burn that fails is followed by a fresh query: the error says what the flash
holds now (or that it could not be read), never only that the tool failed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from . import tools
from .flint import FlintParseError, parse_flint_query
from .fwmanager import FwManagerParseError, find_device, parse_fwmanager
from .runner import Runner, ToolFailed, activation_info, run_checked
from .versions import VersionError, compare_versions, parse_version, same_version


class FirmwareError(RuntimeError):
    """The rollout must stop for this host; nothing was burned unless stated.

    `state`: what is known of the card when it stopped (flash/running versions
    re-read after a failed burn), returned beside the message.
    """

    def __init__(self, message: str, state: dict | None = None):
        super().__init__(message)
        self.state = state or {}


@dataclass(frozen=True)
class Toolset:
    flint: str | None
    fwmanager: str | None
    query_with: str  # "flint" or "fwmanager"
    fwreset: str | None = None

    @property
    def burner(self) -> str:
        return self.flint or self.fwmanager or ""


@dataclass(frozen=True)
class FirmwareRequest:
    device: str
    version: str | None = None
    image: str | None = None
    sha256: str | None = None
    psid: str | None = None
    allow_psid_change: bool = False
    allow_downgrade: bool = False
    query_only: bool = False


@dataclass(frozen=True)
class CardState:
    flash: str
    running: str
    psid: str

    @property
    def pending(self) -> bool:
        return not same_version(self.flash, self.running)

    def as_text(self, device: str) -> str:
        return (
            f"device: {device}\npsid: {self.psid}\n"
            f"flash_version: {self.flash}\nrunning_version: {self.running}\n"
        )


def toolset_from_params(params: dict, find: Callable[[str], str | None]) -> Toolset:
    """The tools named by a module's query_tool/flint_path/fwmanager_path/fwreset_path.

    A configured tool must exist; an unconfigured one is optional, except the one
    that queries the card. Raises tools.ToolNotFound.
    """

    def pick(option, candidates, purpose):
        if params.get(option):
            return tools.resolve_tool(params[option], candidates, find, purpose, option)
        return tools.find_optional(None, candidates, find)

    choice = params.get("query_tool") or "auto"
    flint = pick("flint_path", tools.FLINT_CANDIDATES, "reading firmware")
    fwmanager = pick("fwmanager_path", tools.FWMANAGER_CANDIDATES, "reading firmware")
    # The querying tool is required: resolve_tool raises when it is missing.
    query_with = "flint" if choice == "flint" or (choice == "auto" and flint) else "fwmanager"
    option = f"{query_with}_path"
    candidates = tools.FLINT_CANDIDATES if query_with == "flint" else tools.FWMANAGER_CANDIDATES
    found = tools.resolve_tool(params.get(option), candidates, find, "querying firmware", option)
    if query_with == "flint":
        flint = found
    else:
        fwmanager = found
    fwreset = tools.find_optional(params.get("fwreset_path"), tools.FWRESET_CANDIDATES, find)
    return Toolset(flint=flint, fwmanager=fwmanager, query_with=query_with, fwreset=fwreset)


def query_card(runner: Runner, toolset: Toolset, device: str) -> CardState:
    try:
        if toolset.query_with == "flint":
            info = parse_flint_query(run_checked(runner, tools.flint_query(toolset.flint, device)))
            return CardState(info.fw_version, info.active_version, info.psid)
        text = run_checked(runner, tools.fwmanager_query(toolset.fwmanager, device, xml=True))
        block = find_device(parse_fwmanager(text), device)
    except (ToolFailed, FlintParseError, FwManagerParseError) as exc:
        raise FirmwareError(f"cannot query the firmware of {device}: {exc}") from exc
    if block is None or not block.fw_version or not block.psid:
        raise FirmwareError(f"cannot query the firmware of {device}: device not in the output")
    return CardState(block.fw_version, block.running_version or block.fw_version, block.psid)


def inspect_image(
    runner: Runner, toolset: Toolset, device: str, image: str, card: CardState
) -> tuple[str, str]:
    """Return (psid, version) of the image file."""
    try:
        if toolset.flint:
            info = parse_flint_query(
                run_checked(runner, tools.flint_image_query(toolset.flint, image))
            )
            return info.psid, info.fw_version
        text = run_checked(runner, tools.fwmanager_image_query(toolset.fwmanager, device, image))
        block = find_device(parse_fwmanager(text), device)
    except (ToolFailed, FlintParseError, FwManagerParseError) as exc:
        raise FirmwareError(f"cannot read the image {image}: {exc}") from exc
    # mlxfwmanager only shows an image version when the image has a build for the card's PSID.
    if block is None or not block.available_version:
        raise FirmwareError(
            f"PSID mismatch: the image {image} has no firmware for the card's PSID "
            f"{card.psid} on {device} (mlxfwmanager: {block.status if block else 'no match'}); "
            "nothing was burned"
        )
    return card.psid, block.available_version


def _validate(request: FirmwareRequest) -> None:
    if request.query_only:
        if request.version:
            try:
                parse_version(request.version)
            except VersionError as exc:
                raise FirmwareError(f"version: {exc}") from exc
        return
    for name in ("version", "image", "sha256"):
        if not getattr(request, name):
            raise FirmwareError(f"{name}: required to roll firmware out to {request.device}")
    try:
        parse_version(request.version)
    except VersionError as exc:
        raise FirmwareError(f"version: {exc}") from exc
    digest = request.sha256.strip().lower()
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise FirmwareError(f"sha256: {request.sha256!r} is not a sha256 hex digest")


def roll_out(
    request: FirmwareRequest,
    runner: Runner,
    toolset: Toolset,
    sha256_of: Callable[[str], str],
    check_mode: bool,
) -> dict:
    """Bring one card to request.version; return the module result (without diff keys)."""
    _validate(request)
    device = request.device
    before = query_card(runner, toolset, device)
    result: dict = {
        "changed": False,
        "device": device,
        "psid": before.psid,
        "flash_version": before.flash,
        "running_version": before.running,
        "target_version": request.version,
        "burned": False,
        "would_burn": False,
        "pending_activation": before.pending,
        "image": None,
        "tools": {"query": toolset.flint if toolset.query_with == "flint" else toolset.fwmanager},
        "diff": {"before": before.as_text(device), "after": before.as_text(device)},
    }
    if request.version:
        result["target_in_flash"] = same_version(before.flash, request.version)
        result["target_running"] = same_version(before.running, request.version)
    if request.query_only:
        result["msg"] = f"{device}: flash {before.flash}, running {before.running}"
        return _with_activation(result, runner, toolset, device)

    psid_ok = not request.psid or request.psid == before.psid
    if same_version(before.flash, request.version) and psid_ok:
        result["pending_activation"] = not same_version(before.running, request.version)
        result["msg"] = (
            f"{device}: {request.version} in flash, activation pending (running {before.running})"
            if result["pending_activation"]
            else f"{device}: running {request.version}, nothing to do"
        )
        return _with_activation(result, runner, toolset, device)

    if request.psid and request.psid != before.psid and not request.allow_psid_change:
        raise FirmwareError(
            f"PSID mismatch on {device}: the card reports {before.psid}, the inventory expects "
            f"{request.psid}; set allow_psid_change to crossflash; nothing was burned"
        )

    downgrade = compare_versions(request.version, before.flash) < 0
    if downgrade and not request.allow_downgrade:
        raise FirmwareError(
            f"downgrade refused on {device}: the flash holds {before.flash}, the inventory "
            f"asks for the older {request.version}; set allow_downgrade "
            "(nic_firmware_allow_downgrade) to go back; nothing was burned"
        )

    image = request.image
    expected_sha = request.sha256.strip().lower()
    if not os.path.isfile(image):
        if check_mode:
            result.update(
                changed=True,
                would_burn=True,
                image={"path": image, "sha256": expected_sha, "verified_on_host": False},
                msg=(
                    f"{device}: would burn {request.version} over {before.flash} "
                    f"(image {image} not on the host yet: PSID checked when it is copied)"
                ),
            )
            result["diff"]["after"] = _after_text(before, request, device)
            return result
        raise FirmwareError(f"image: {image} does not exist on the host")
    actual_sha = sha256_of(image)
    if actual_sha != expected_sha:
        raise FirmwareError(
            f"sha256 mismatch for {image} on {device}: the file has {actual_sha}, the inventory "
            f"expects {expected_sha}; nothing was burned"
        )
    image_psid, image_version = inspect_image(runner, toolset, device, image, before)
    result["image"] = {
        "path": image,
        "sha256": actual_sha,
        "psid": image_psid,
        "version": image_version,
        "verified_on_host": True,
    }
    if not same_version(image_version, request.version):
        raise FirmwareError(
            f"version: the image {image} contains {image_version}, the inventory expects "
            f"{request.version}; nothing was burned"
        )
    if request.psid and image_psid != request.psid:
        raise FirmwareError(
            f"PSID mismatch: the image {image} is built for {image_psid}, the inventory expects "
            f"{request.psid}; nothing was burned"
        )
    crossflash = image_psid != before.psid
    if crossflash and not request.allow_psid_change:
        raise FirmwareError(
            f"PSID mismatch on {device}: the card is {before.psid}, the image {image} is "
            f"{image_psid}; crossflashing needs allow_psid_change; nothing was burned"
        )
    if crossflash and not toolset.flint:
        raise FirmwareError(
            f"{device}: crossflashing {before.psid} -> {image_psid} needs mstflint or flint "
            "(mlxfwmanager cannot change a PSID); nothing was burned"
        )

    verb = "crossflash" if crossflash else "burn"
    summary = f"{verb} {image_psid} {request.version} over {before.psid} {before.flash}"
    result["diff"]["after"] = _after_text(before, request, device, image_psid)
    if check_mode:
        result.update(changed=True, would_burn=True, msg=f"{device}: would {summary}")
        return result

    burn_argv = (
        tools.flint_burn(toolset.flint, device, image, allow_psid_change=crossflash)
        if toolset.flint
        else tools.fwmanager_burn(toolset.fwmanager, device, image, force=downgrade)
    )
    result["tools"]["burn"] = burn_argv[0]
    try:
        run_checked(runner, burn_argv)
    except ToolFailed as exc:
        raise _failed_burn(runner, toolset, device, image, before, exc) from exc
    after = query_card(runner, toolset, device)
    if same_version(after.running, after.flash) and not same_version(before.running, after.flash):
        # A burn never activates. A query that shows no running version (mlxfwmanager
        # builds without the `FW (Running)` row) must not hide the pending reset.
        after = CardState(after.flash, before.running, after.psid)
    if not same_version(after.flash, request.version):
        raise FirmwareError(
            f"{device}: the burn reported success but flash holds {after.flash}, "
            f"not {request.version}"
        )
    result.update(
        changed=True,
        burned=True,
        psid=after.psid,
        flash_version=after.flash,
        running_version=after.running,
        pending_activation=not same_version(after.running, request.version),
        msg=f"{device}: {summary}"
        + ("; activation pending" if not same_version(after.running, request.version) else ""),
    )
    result["diff"]["after"] = after.as_text(device)
    return _with_activation(result, runner, toolset, device)


def _failed_burn(
    runner: Runner, toolset: Toolset, device: str, image: str, before: CardState, exc: Exception
) -> FirmwareError:
    """The error of a failed burn, with what the flash holds now (read again)."""
    message = f"burning {image} on {device} failed: {exc}"
    try:
        now = query_card(runner, toolset, device)
    except FirmwareError as reread:
        return FirmwareError(
            f"{message}; the flash could not be read back ({reread}): treat the card as "
            "unknown, do not reboot it before checking it by hand",
            {"flash_version": None, "running_version": before.running, "psid": None},
        )
    state = {"flash_version": now.flash, "running_version": now.running, "psid": now.psid}
    if same_version(now.flash, before.flash) and now.psid == before.psid:
        held = f"the flash still holds {now.flash} ({now.psid}): unchanged"
    else:
        held = (
            f"the flash now holds {now.flash} ({now.psid}), it held {before.flash} "
            f"({before.psid}) before"
        )
    return FirmwareError(f"{message}; read back: {held}", state)


def _after_text(before: CardState, request: FirmwareRequest, device: str, psid=None) -> str:
    planned = CardState(request.version, before.running, psid or before.psid)
    return planned.as_text(device)


def _with_activation(result: dict, runner: Runner, toolset: Toolset, device: str) -> dict:
    if result["pending_activation"]:
        result["activation"] = activation_info(runner, toolset.fwreset, device)
    else:
        result["activation"] = None
    return result
