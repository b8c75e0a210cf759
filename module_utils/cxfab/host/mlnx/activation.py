"""Activate a host's ConnectX cards once, in one module call: reset, read back, wait.

The firmware and link type roles queue a request per card that has something
pending (new firmware in flash, new port protocols in Next Boot). The handler
hands the whole queue to one call of `cxfab_nic_activate`, which:
  1. merges the requests per card (one reset covers firmware and protocols) and
     splits live resets (`mstfwreset -d DEV -y reset`) from cards that need a reboot;
  2. notes whether the host's bond exists before anything is reset (a bond that
     host_network builds later in the run cannot come back, so it is not waited for);
  3. resets the live cards;
  4. reads back what every activated card runs (firmware version, port protocols);
  5. waits until the bond's members are back in the aggregator, so the next host of
     the serial rollout starts only when this one carries traffic again.
A card that needs a reboot splits the work in two calls: the first resets the live
cards and notes the bond, the play reboots the host, the second (`after_reboot`)
reads back and waits. Every failure names the card and what was read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..net.bondstate import wait_for_members, wait_skip_reason
from . import tools
from .firmware import FirmwareError, Toolset, query_card
from .port_config import PortConfigError, configure_ports, requests_from_inventory
from .runner import Runner, ToolFailed, run_checked
from .versions import same_version


class ActivationError(RuntimeError):
    """The activation failed; `result` holds what was done and read before it stopped."""

    def __init__(self, message: str, result: dict):
        super().__init__(message)
        self.result = result


@dataclass
class Card:
    """Everything pending on one card, merged from the firmware and link type requests."""

    device: str
    fwreset: str
    live: bool
    version: str | None = None
    ports: list = field(default_factory=list)
    pins: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Options:
    use_fwreset: bool
    allow_reboot: bool
    after_reboot: bool = False
    bond: dict | None = None
    bond_existed_before: bool | None = None
    bond_timeout: float = 120
    bond_interval: float = 1.0
    bond_proc_dir: str = "/proc/net/bonding"
    sysfs_root: str = "/sys"


def merge_requests(requests: list[dict], use_fwreset: bool) -> list[Card]:
    """One Card per device, in queue order; a card is reset live only when it can be."""
    cards: dict[str, Card] = {}
    for index, request in enumerate(requests):
        device = request.get("device")
        if not device:
            raise ActivationError(f"requests[{index}]: no device", {})
        card = cards.setdefault(
            device,
            Card(
                device=device,
                fwreset=request.get("fwreset") or "",
                live=bool(use_fwreset and request.get("fwreset_supported")),
            ),
        )
        if request.get("version"):
            card.version = str(request["version"])
        if request.get("ports"):
            card.ports = list(request["ports"])
        if request.get("nv_config"):
            card.pins = dict(request["nv_config"])
    return list(cards.values())


def _verify_card(card: Card, runner: Runner, toolset: Toolset, config_tool: str | None, opts):
    """What the card runs now; raises ActivationError naming what differs."""
    seen: dict = {"device": card.device}
    problems = []
    if card.version:
        try:
            state = query_card(runner, toolset, card.device)
        except FirmwareError as exc:
            raise ActivationError(f"{card.device}: after the activation: {exc}", seen) from exc
        seen.update(flash_version=state.flash, running_version=state.running, psid=state.psid)
        if not same_version(state.running, card.version):
            problems.append(f"runs firmware {state.running}, not {card.version}")
    if card.ports or card.pins:
        if not config_tool:
            raise ActivationError(
                f"{card.device}: no mstconfig/mlxconfig to read the port protocols back", seen
            )
        try:
            ports = configure_ports(
                card.device,
                requests_from_inventory(card.ports),
                runner,
                config_tool,
                None,
                opts.sysfs_root,
                check_mode=False,
                query_only=True,
                pins=card.pins,
            )
        except PortConfigError as exc:
            raise ActivationError(f"{card.device}: after the activation: {exc}", seen) from exc
        seen["ports"] = ports["ports"]
        seen["params"] = ports.get("params", [])
        if ports["pending_activation"]:
            problems.append(f"port protocols or pinned parameters still pending: {ports['msg']}")
    if problems:
        raise ActivationError(
            f"{card.device}: after the activation the card " + "; ".join(problems), seen
        )
    return seen


def activate(
    requests: list[dict],
    opts: Options,
    runner: Runner,
    toolset: Toolset,
    config_tool: str | None,
    bond_exists: Callable[[str], bool],
    check_mode: bool = False,
    clock=None,
    sleep=None,
) -> dict:
    """Run the activation; return the module result or raise ActivationError."""
    cards = merge_requests(requests, opts.use_fwreset)
    live = [c for c in cards if c.live]
    reboot = [c for c in cards if not c.live]
    result: dict = {
        "changed": False,
        "reset": [],
        "reboot_for": [],
        "not_activated": [],
        "cards": [],
        "bond": {},
    }
    if not opts.after_reboot:
        if reboot and not opts.allow_reboot:
            # Never silently: these cards keep running the old firmware/protocols.
            result["not_activated"] = [c.device for c in reboot]
        elif reboot:
            result["reboot_for"] = [c.device for c in reboot]
    done = live + (reboot if (opts.allow_reboot or opts.after_reboot) else [])

    bond = opts.bond
    existed = opts.bond_existed_before
    if existed is None:
        existed = bool(bond) and bond_exists(bond["name"])
    result["bond"]["existed_before"] = existed

    if check_mode:
        result["changed"] = bool(done)
        result["msg"] = _summary("would activate", live, reboot, opts)
        return result

    if not opts.after_reboot:
        for card in live:
            if not card.fwreset:
                raise ActivationError(
                    f"{card.device}: no mstfwreset/mlxfwreset to reset it", result
                )
            try:
                run_checked(runner, tools.fwreset_reset(card.fwreset, card.device))
            except ToolFailed as exc:
                raise ActivationError(f"{card.device}: live reset failed: {exc}", result) from exc
            result["reset"].append(card.device)
            result["changed"] = True
        if result["reboot_for"]:
            # The play reboots the host now and calls again with after_reboot.
            result["msg"] = _summary("activated", live, reboot, opts) + "; reboot next"
            return result

    for card in done:
        try:
            result["cards"].append(_verify_card(card, runner, toolset, config_tool, opts))
        except ActivationError as exc:
            result["cards"].append(exc.result)
            raise ActivationError(str(exc), result) from exc

    reason = wait_skip_reason(bond, existed) if done else "nothing was activated"
    result["bond"]["skipped_reason"] = reason
    if reason is None:
        waited = _wait_bond(bond, opts, clock, sleep, result)
        result["bond"]["waited_seconds"] = waited
    result["msg"] = _summary("activated", live, reboot, opts) + _bond_text(result["bond"], bond)
    return result


def _wait_bond(bond, opts, clock, sleep, result):
    kwargs = {k: v for k, v in (("clock", clock), ("sleep", sleep)) if v is not None}
    try:
        ready, waited, states = wait_for_members(
            bond, opts.bond_proc_dir, opts.bond_timeout, opts.bond_interval, **kwargs
        )
    except ValueError as exc:
        raise ActivationError(str(exc), result) from exc
    result["bond"]["members"] = states
    if not ready:
        summary = "; ".join(f"{name}: {state}" for name, state in states.items())
        raise ActivationError(
            f"bond {bond['name']}: members not back in the aggregator after {waited} s "
            f"(timeout {opts.bond_timeout} s): {summary}",
            result,
        )
    return waited


def _summary(verb: str, live: list[Card], reboot: list[Card], opts: Options) -> str:
    parts = []
    if live and not opts.after_reboot:
        parts.append(f"{verb} {', '.join(c.device for c in live)} by live reset")
    if reboot and (opts.allow_reboot or opts.after_reboot):
        parts.append(
            f"{'rebooted for' if opts.after_reboot else 'reboot for'} "
            f"{', '.join(c.device for c in reboot)}"
        )
    elif reboot:
        parts.append(
            f"NOT activated: {', '.join(c.device for c in reboot)} cannot be reset live and "
            "reboots are not allowed (nic_firmware_allow_reboot)"
        )
    return "; ".join(parts) or "nothing to activate"


def _bond_text(bond_result: dict, bond: dict | None) -> str:
    if bond_result.get("skipped_reason"):
        return f"; no bond wait: {bond_result['skipped_reason']}"
    if "waited_seconds" in bond_result:
        return f"; bond {bond['name']} members back after {bond_result['waited_seconds']} s"
    return ""
