"""Apply LINK_TYPE_P<n> and the pinned nv_config parameters to one card: query,
decide per port and parameter, set once, verify.

ConnectX-3 (mlx4) also exposes the port protocol at run time as
/sys/bus/pci/devices/<bdf>/mlx4_port<N> (`ib`, `eth`, `auto`): when that file
exists the running value is switched there as well, so no activation is needed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ...common.mlxconfig import PARAM_NAME_RE, PARAM_VALUE_RE
from . import tools
from .link_type import (
    ACTION_NONE,
    LinkTypeError,
    PortDecision,
    decide_port,
    normalise_link_type,
    set_arguments,
)
from .nv_params import NvParamError, ParamDecision, decide_params, set_words
from .nvconfig import CURRENT, NEXT_BOOT, NvConfigParseError, NvConfigQuery, parse_nvconfig_query
from .runner import Runner, ToolFailed, activation_info, run_checked

_MLX4_RUNTIME = {"ib": "ib", "eth": "eth", "vpi": "auto"}


class PortConfigError(RuntimeError):
    """The card cannot take the requested port protocol; nothing was set."""


@dataclass(frozen=True)
class PortRequest:
    port: int
    link_type: str


def requests_from_inventory(ports: list) -> list[PortRequest]:
    """Port entries as the inventory writes them (`{port: 2, link_type: eth, netdev: ...}`).

    Entries without `link_type` are left alone; other keys are ignored.
    """
    requests = []
    for index, entry in enumerate(ports):
        if not isinstance(entry, dict):
            raise PortConfigError(f"ports[{index}]: expected a mapping, got {entry!r}")
        if entry.get("link_type") in (None, ""):
            continue
        port = entry.get("port")
        if isinstance(port, str) and port.isdigit():
            port = int(port)
        if isinstance(port, bool) or not isinstance(port, int) or port < 1:
            raise PortConfigError(f"ports[{index}].port: expected a port number >= 1, got {port!r}")
        requests.append(PortRequest(port, str(entry["link_type"])))
    return requests


def mlx4_port_file(sysfs_root: str, device: str, port: int) -> str:
    return os.path.join(sysfs_root, "bus", "pci", "devices", device, f"mlx4_port{port}")


def _read(path: str) -> str:
    with open(path, encoding="ascii") as handle:
        return handle.read().strip().lower()


def _text(decisions: list[PortDecision | ParamDecision], column: str) -> str:
    return "".join(f"{d.param}: {getattr(d, column)}\n" for d in decisions)


def pending_reboot(query: NvConfigQuery) -> list[dict]:
    """Every parameter of the card whose Next Boot differs from Current, pinned or not:
    what the next activation (mstfwreset or reboot) will change."""
    waiting = []
    for name, entry in query.params.items():
        current, next_boot = entry.get(CURRENT), entry.get(NEXT_BOOT)
        if current is None or next_boot is None:
            continue  # a query without -e: no Current column to compare
        if not current.equals(next_boot.label, next_boot.number):
            waiting.append({"param": name, "current": current.raw, "next_boot": next_boot.raw})
    return waiting


def check_pins(pins: dict | None) -> dict[str, str]:
    """nv_config as the module got it, refused (naming the key) unless names and values
    have mlxconfig's syntax; LINK_TYPE_P<n> belongs to the ports."""
    checked = {}
    for name, value in (pins or {}).items():
        if isinstance(value, bool):
            value = "True" if value else "False"
        if not PARAM_NAME_RE.match(str(name)):
            raise PortConfigError(f"nv_config.{name}: not an mlxconfig parameter name")
        if str(name).startswith("LINK_TYPE_P"):
            raise PortConfigError(f"nv_config.{name}: the port protocol is set through ports")
        if not PARAM_VALUE_RE.match(str(value)):
            raise PortConfigError(f"nv_config.{name}: {value!r} is not an mlxconfig value")
        checked[str(name)] = str(value)
    return checked


def configure_ports(
    device: str,
    requests: list[PortRequest],
    runner: Runner,
    config_tool: str,
    fwreset: str | None,
    sysfs_root: str,
    check_mode: bool,
    query_only: bool = False,
    pins: dict | None = None,
) -> dict:
    """Bring every requested port to its protocol and every pin to its value."""
    pins = check_pins(pins)
    for index, req in enumerate(requests):
        try:
            normalise_link_type(req.link_type)
        except LinkTypeError as exc:
            raise PortConfigError(f"ports[{index}].link_type: {exc}") from exc
    try:
        query = parse_nvconfig_query(
            run_checked(runner, tools.config_query(config_tool, device, []))
        )
    except (ToolFailed, NvConfigParseError) as exc:
        raise PortConfigError(f"cannot query the configuration of {device}: {exc}") from exc
    decisions = []
    for index, req in enumerate(requests):
        try:
            decisions.append(decide_port(query, req.port, req.link_type, device))
        except LinkTypeError as exc:
            raise PortConfigError(f"ports[{index}] (port {req.port}): {exc}") from exc
    try:
        params = decide_params(query, pins, device)
    except NvParamError as exc:
        raise PortConfigError(str(exc)) from exc

    changed = False
    runtime_switched: list[int] = []
    runtime_ok: set[int] = set()
    for decision in decisions:
        path = mlx4_port_file(sysfs_root, device, decision.port)
        if not os.path.exists(path):
            continue
        wanted = _MLX4_RUNTIME[decision.desired]
        if _read(path) == wanted:
            runtime_ok.add(decision.port)
            continue
        if query_only:
            continue
        changed = True
        runtime_switched.append(decision.port)
        runtime_ok.add(decision.port)
        if not check_mode:
            with open(path, "w", encoding="ascii") as handle:
                handle.write(wanted + "\n")

    assignments = [] if query_only else set_arguments(decisions) + set_words(params)
    if assignments:
        changed = True
        if not check_mode:
            try:
                run_checked(runner, tools.config_set(config_tool, device, assignments))
                query = parse_nvconfig_query(
                    run_checked(runner, tools.config_query(config_tool, device, []))
                )
            except (ToolFailed, NvConfigParseError) as exc:
                raise PortConfigError(
                    f"setting {' '.join(assignments)} on {device}: {exc}"
                ) from exc
            verified = [decide_port(query, d.port, d.desired, device) for d in decisions]
            verified += decide_params(query, pins, device)
            unset = [d.param for d in verified if d.needs_set]
            if unset:
                raise PortConfigError(
                    f"{device}: the tool accepted the set but Next Boot still differs for "
                    f"{', '.join(unset)}"
                )

    pending = [d.port for d in decisions if d.action != ACTION_NONE and d.port not in runtime_ok]
    # No runtime switch for other parameters: every one set or not yet current waits.
    pending_params = [d.param for d in params if d.needs_activation]
    after = [
        PortDecision(d.param, d.desired, d.current, d.desired, d.action, d.port) for d in decisions
    ] + [ParamDecision(d.param, d.desired, d.current, d.desired, d.action) for d in params]
    result = {
        "changed": changed,
        "device": device,
        "device_type": query.device_type,
        "ports": [
            {
                "port": d.port,
                "param": d.param,
                "link_type": d.desired,
                "desired": d.desired,
                "current": d.current,
                "next_boot": d.next_boot,
                "action": d.action,
            }
            for d in decisions
        ],
        "params": [
            {
                "param": d.param,
                "desired": d.desired,
                "current": d.current,
                "next_boot": d.next_boot,
                "action": d.action,
            }
            for d in params
        ],
        "set": assignments,
        "runtime_switched": runtime_switched,
        "pending_activation": bool(pending or pending_params),
        "pending_ports": pending,
        "pending_params": pending_params,
        "pending_reboot": pending_reboot(query),
        "diff": {
            "before": _text([*decisions, *params], "next_boot"),
            "after": _text(after if not query_only else [*decisions, *params], "next_boot"),
        },
    }
    waiting = pending or pending_params
    result["activation"] = activation_info(runner, fwreset, device) if waiting else None
    if query_only:
        result["msg"] = f"{device}: " + ", ".join(
            f"{d.param} current {d.current}, next boot {d.next_boot}" for d in [*decisions, *params]
        )
    elif assignments:
        verb = "would set" if check_mode else "set"
        result["msg"] = f"{device}: {verb} {' '.join(assignments)} (Next Boot); activation pending"
    elif waiting:
        result["msg"] = f"{device}: Next Boot already as desired, activation pending"
    else:
        result["msg"] = f"{device}: port protocols and pinned parameters as desired"
    return result
