"""Link, cable and card health checks: two `cxfab_nic_health` snapshots -> checks.

Pure functions. `playbooks/verify_health.yml` takes a snapshot of every host at
the start of verify (counters) and one at the end (everything); here they become
checks in the report's shape:

    link.<netdev>.diag        port up at its speed, else why (opcode, text, cable)
    cable.<netdev>.supported  the cable is on `cxfab_supported_cables` (warn if not)
    flap.<netdev>             no carrier/link-down event between start and end
    counters.<netdev>         no error/discard counter grew between start and end
    pfc.<netdev>.counters     lossless RoCE: the RoCE priority's counters moved under
                              the RoCE workloads (checks_pfc.py)
    pcie.<nic>.link           PCIe link at the card's capability
    temp.<nic>                ASIC temperature under the limit
    nvconfig.<nic>.<PARAM>    every pinned mlxconfig parameter, Current and Next Boot

Nothing that was not read passes: a failed read fails with the command's words, a
tool that is missing or mistyped, or a start snapshot that was not taken, fails "not
measured"; `skip` is left to what the card itself does not have.
"""

from __future__ import annotations

import fnmatch
import re

from ..common.checks import check, unmeasured
from .pfc import pfc_counters_check

DEFAULT_MAX_TEMP_C = 95.0
# Gb/s of an InfiniBand 4x link per speed name (mlxlink prints `IB-EDR`).
_IB_4X_GBPS = {"SDR": 10, "DDR": 20, "QDR": 40, "FDR10": 40, "FDR": 56, "EDR": 100, "HDR": 200}
_ETH_SPEED_RE = re.compile(r"^(\d+)G")


def _usable(result) -> tuple[dict | None, str]:
    """The snapshot inside a registered module result, or why there is none."""
    if not isinstance(result, dict) or result.get("skipped"):
        return None, "not taken"
    if result.get("failed") or result.get("unreachable"):
        return None, str(result.get("msg") or "the health read failed")
    health = result.get("health")
    if not isinstance(health, dict):
        return None, "the result carries no health snapshot"
    return health, ""


def link_gbps(speed: str | None, width: str | None) -> float | None:
    """`100GbE`, `25G`, `IB-EDR` (x `4x`) -> Gb/s; None when unknown."""
    if not speed:
        return None
    if speed.startswith("IB-"):
        per_4x = _IB_4X_GBPS.get(speed[3:])
        lanes = int(width.rstrip("x")) if width and width.rstrip("x").isdigit() else 4
        return per_4x * lanes / 4 if per_4x else None
    match = _ETH_SPEED_RE.match(speed)
    return float(match.group(1)) if match else None


def cable_words(cable: dict | None) -> str:
    """`cable OPTCORE Q-100G-DAC-P2M` or `cable unknown`."""
    if not cable or not (cable.get("vendor") or cable.get("part_number")):
        return "cable unknown"
    return f"cable {cable.get('vendor') or '?'} {cable.get('part_number') or '?'}"


# ---------------------------------------------------------------- per port


def link_check(target, port_intent, data) -> dict:
    netdev = data["netdev"]
    check_id, wanted = f"link.{netdev}.diag", port_intent.get("speed_gbps")
    expected = "Active, no troubleshooting opcode" + (f", {wanted} Gb/s" if wanted else "")
    link = data.get("link") or {}
    if link.get("absent"):
        return unmeasured(check_id, target, expected, link["absent"])
    if link.get("error"):
        return check(check_id, target, "fail", expected, "unreadable", link["error"])
    cable = cable_words(data.get("cable"))
    if not link.get("up"):
        observed = f"{link.get('cause')}, {cable}"
        message = f"state {link.get('state')}: {link.get('recommendation') or 'no recommendation'}"
        return check(check_id, target, "fail", expected, observed, message)
    speed = link_gbps(link.get("speed"), link.get("width"))
    observed = f"Active {link.get('speed')} {link.get('width')}, FEC {link.get('fec')}, {cable}"
    if wanted and (speed is None or speed < wanted):
        message = (
            f"running at {link.get('speed')} below {wanted} Gb/s: port enables "
            f"{link.get('enabled_speeds')}, cable supports {link.get('cable_speeds')}"
        )
        return check(check_id, target, "fail", expected, observed, message)
    if link.get("opcode"):
        message = f"{link.get('cause')}: {link.get('recommendation')}"
        return check(check_id, target, "fail", expected, observed, message)
    errors = link.get("effective_errors")
    if errors:
        observed += f", {errors} effective physical errors (BER {link.get('effective_ber'):.1e})"
        message = "errors FEC could not correct: check the cable and both ends"
        return check(check_id, target, "fail", expected, observed, message)
    return check(check_id, target, "pass", expected, observed)


def _cable_listed(cable: dict, supported: list[dict]) -> bool:
    vendor = (cable.get("vendor") or "").strip().casefold()
    part = (cable.get("part_number") or "").strip().upper()
    return any(
        vendor == str(entry.get("vendor", "")).strip().casefold()
        and fnmatch.fnmatchcase(part, str(entry.get("part_number", "")).strip().upper())
        for entry in supported
    )


def cable_check(target, data, supported) -> dict | None:
    """A cable outside `cxfab_supported_cables` is a warning naming it; no list, no check."""
    if not supported:
        return None
    netdev, cable = data["netdev"], data.get("cable") or {}
    check_id = f"cable.{netdev}.supported"
    expected = "a cable listed in cxfab_supported_cables"
    if not (cable.get("vendor") or cable.get("part_number")):
        reason = data.get("cable_error") or "no tool reported the cable's vendor and part number"
        link = data.get("link") or {}
        if link.get("state") and link.get("opcode") == 1024:
            reason = "no cable plugged in (opcode 1024)"
        return check(check_id, target, "skip", expected, "not measured", reason)
    observed = cable_words(cable)
    details = ", ".join(
        f"{key} {cable[key]}" for key in ("type", "length", "compliance") if cable.get(key)
    )
    if _cable_listed(cable, supported):
        return check(check_id, target, "pass", expected, observed, details or "listed")
    message = f"{observed} is not in cxfab_supported_cables" + (f" ({details})" if details else "")
    return check(check_id, target, "warn", expected, observed, message)


def _down_events(data: dict) -> dict[str, int]:
    """Every counter of link-down events a port has, by source."""
    found = {}
    if isinstance(data.get("carrier_changes"), int):
        found["carrier_changes"] = data["carrier_changes"]
    if isinstance(data.get("bond_link_failures"), int):
        found[f"{data.get('bond')} Link Failure Count"] = data["bond_link_failures"]
    counter = (data.get("link") or {}).get("link_down_counter")
    if isinstance(counter, int):
        found["mlxlink Link Down Counter"] = counter
    for name, value in ((data.get("counters") or {}).get("link_down") or {}).items():
        found[name] = value
    return found


# Why a flap or counter check is unmeasured when verify's first snapshot is missing.
NO_START_SNAPSHOT = "no start snapshot (taken at the start of verify)"


def flap_check(target, start, end) -> dict:
    netdev = end["netdev"]
    check_id, expected = f"flap.{netdev}", "no link-down event during verify"
    if start is None:
        return unmeasured(check_id, target, expected, NO_START_SNAPSHOT)
    before, after = _down_events(start), _down_events(end)
    common = sorted(set(before) & set(after))
    if not common:
        why = end.get("carrier_error") or start.get("carrier_error") or "no link-down counter read"
        return check(check_id, target, "fail", expected, "unreadable", why)
    moved = [
        f"{name} {before[name]} -> {after[name]}" for name in common if after[name] != before[name]
    ]
    observed = ", ".join(f"{name} {after[name]}" for name in common)
    if not moved:
        return check(check_id, target, "pass", expected, f"unchanged ({observed})")
    downs = (after.get("carrier_changes", 0) - before.get("carrier_changes", 0) + 1) // 2
    times = f" ({downs} down/up)" if "carrier_changes" in common and downs > 0 else ""
    message = f"link {netdev} flapped during verify{times}: results measured over it may be low"
    return check(check_id, target, "fail", expected, "; ".join(moved), message)


def counters_check(target, start, end) -> dict:
    netdev = end["netdev"]
    check_id, expected = f"counters.{netdev}", "no error or discard counter grew during verify"
    if start is None:
        return unmeasured(check_id, target, expected, NO_START_SNAPSHOT)
    for snapshot in (start, end):
        if snapshot.get("counters_error"):
            return check(
                check_id, target, "fail", expected, "unreadable", snapshot["counters_error"]
            )
        if snapshot.get("counters_absent"):
            reason = snapshot["counters_absent"]
            return check(check_id, target, "skip", expected, "not measured", reason)
    grown: dict[str, list[str]] = {}
    for kind in ("error", "discard", "pause"):
        old = (start.get("counters") or {}).get(kind) or {}
        for name, value in sorted(((end.get("counters") or {}).get(kind) or {}).items()):
            if name in old and value > old[name]:
                grown.setdefault(kind, []).append(f"{name} +{value - old[name]}")
    pause = f"; pause {', '.join(grown['pause'])}" if grown.get("pause") else ""
    bad = grown.get("error", []) + grown.get("discard", [])
    if bad:
        return check(check_id, target, "fail", expected, ", ".join(bad) + pause)
    return check(check_id, target, "pass", expected, "none grew" + pause)


# ---------------------------------------------------------------- per adapter


def pcie_check(target, nic_name, pcie: dict) -> dict:
    check_id, expected = f"pcie.{nic_name}.link", "PCIe link at the card's capability"
    if pcie.get("absent"):
        return check(check_id, target, "skip", expected, "not measured", pcie["absent"])
    if pcie.get("error"):
        return check(check_id, target, "fail", expected, "unreadable", pcie["error"])
    current = f"{pcie['speed_gts']:g} GT/s x{pcie['width']} ({pcie['gbps']:.3f} Gb/s)"
    capable = f"{pcie['max_speed_gts']:g} GT/s x{pcie['max_width']} ({pcie['max_gbps']:.3f} Gb/s)"
    expected = f"{capable} (the card's maximum)"
    observed = f"{current}, capable of {capable}"
    if pcie.get("degraded"):
        message = (
            f"the slot limits the card to {pcie['gbps']:.3f} Gb/s of the {pcie['max_gbps']:.3f} "
            "it is capable of: move it to a full-width slot or check the BIOS link settings"
        )
        return check(check_id, target, "fail", expected, observed, message)
    return check(check_id, target, "pass", expected, observed)


def temperature_check(target, nic_name, reading: dict, limit: float) -> dict:
    check_id, expected = f"temp.{nic_name}", f"ASIC below {limit:g} C"
    if reading.get("absent"):
        return check(check_id, target, "skip", expected, "not measured", reading["absent"])
    if reading.get("error"):
        return check(check_id, target, "fail", expected, "unreadable", reading["error"])
    celsius = float(reading["celsius"])
    observed = f"{celsius:g} C ({reading.get('source')})"
    status = "pass" if celsius < limit else "fail"
    message = "" if status == "pass" else "the card runs hot: check the airflow over its heatsink"
    return check(check_id, target, status, expected, observed, message)


def config_checks(target, nic_name, config: dict) -> list[dict]:
    if config.get("error"):
        expected = "every pinned mlxconfig parameter as intended"
        return [
            check(f"nvconfig.{nic_name}", target, "fail", expected, "unreadable", config["error"])
        ]
    out = []
    for name, entry in sorted((config.get("params") or {}).items()):
        check_id, desired = f"nvconfig.{nic_name}.{name}", entry["desired"]
        expected = f"{desired} current and next boot"
        if not entry.get("supported"):
            message = f"{name} is not in the card's configuration: this card does not support it"
            out.append(check(check_id, target, "fail", expected, "absent", message))
            continue
        observed = f"current {entry.get('current')}, next boot {entry.get('next_boot')}"
        current_ok, next_ok = entry.get("current_ok"), entry.get("next_boot_ok")
        if current_ok and next_ok:
            out.append(check(check_id, target, "pass", expected, observed))
            continue
        message = (
            "set for next boot, activation pending (mstfwreset or reboot)"
            if next_ok
            else "drifted from the intent: re-run the stage that sets it"
        )
        out.append(check(check_id, target, "fail", expected, observed, message))
    return out


# ---------------------------------------------------------------- a host


def host_health_checks(
    name: str,
    host: dict,
    health: dict | None,
    supported_cables: list[dict] | None = None,
    max_temp_c: float = DEFAULT_MAX_TEMP_C,
    load: dict | None = None,
) -> list[dict]:
    """Every health check of one host from its `{start, end}` snapshots.

    `load`: the RoCE workloads this host ran during verify (checks_pfc.roce_load).
    """
    nics = host.get("nics") or []
    if not nics:
        return []
    health = health or {}
    end, why = _usable(health.get("end"))
    if end is None:
        expected = "link, cable and card health read at the end of verify"
        return [check("health.read", name, "fail", expected, "not read", why)]
    start, _ = _usable(health.get("start"))
    out = []
    for nic in nics:
        got = (end.get("nics") or {}).get(nic["name"]) or {}
        before = ((start or {}).get("nics") or {}).get(nic["name"]) or {}
        out.append(pcie_check(name, nic["name"], got.get("pcie") or {"error": "not read"}))
        temperature = got.get("temperature") or {"absent": "not read"}
        out.append(temperature_check(name, nic["name"], temperature, max_temp_c))
        out += config_checks(name, nic["name"], got.get("config") or {})
        for port in nic.get("ports") or []:
            data = (got.get("ports") or {}).get(str(port["port"]))
            if data is None:
                expected = "port read at the end of verify"
                out.append(check(f"link.{port['netdev']}.diag", name, "fail", expected, "not read"))
                continue
            first = (before.get("ports") or {}).get(str(port["port"])) if start else None
            out.append(link_check(name, port, data))
            cable = cable_check(name, data, supported_cables)
            if cable:
                out.append(cable)
            out.append(flap_check(name, first, data))
            out.append(counters_check(name, first, data))
            lossless = host.get("lossless")
            if lossless and port["netdev"] in lossless["ports"]:
                out.append(pfc_counters_check(name, lossless["priority"], first, data, load))
    return out


def health_checks(
    hosts: dict, health: dict, supported_cables=None, max_temp_c=None, roce_load=None
) -> list:
    """Health checks of every host of the fabric (hosts without NICs add none)."""
    limit = DEFAULT_MAX_TEMP_C if max_temp_c is None else float(max_temp_c)
    found = []
    for name in sorted(hosts or {}):
        found += host_health_checks(
            name,
            hosts[name],
            (health or {}).get(name),
            supported_cables,
            limit,
            (roce_load or {}).get(name),
        )
    return found
