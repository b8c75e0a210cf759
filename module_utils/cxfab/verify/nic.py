"""Checks of the ConnectX cards' state: firmware, link type, configuration drift."""

from __future__ import annotations

from ..common.checks import Checks
from ..host.net.lossless import profile_trust
from .readings import absent, failed, tool_missing


def _nic(result: dict) -> dict:
    return result.get("item") or {}


def _unreadable(out: Checks, check_id: str, expected: str, result: dict) -> None:
    message = str(result.get("msg", "query failed"))
    if tool_missing(message):
        out.unmeasured(check_id, expected, message)
    else:
        out.fail(check_id, expected, "unreadable", message)


def nic_state_results(sc: dict, result) -> tuple[list[dict], list[dict]]:
    """cxfab_nic_state's one reading as the per-NIC query results the checks judge
    (each with its NIC as `item`); a reading that failed, or a NIC it does not name,
    gives that NIC's results as failed, with the module's message."""
    nics = sc.get("nics") or []
    with_firmware = [n for n in nics if n.get("firmware")]
    with_ports = [n for n in nics if any(p.get("link_type") for p in n.get("ports") or [])]
    if absent(result) or not result:  # not run in this verify (its section not selected)
        return [], []
    if failed(result):
        unread = {"failed": True, "msg": str(result.get("msg", "NIC state not read"))}
        return [{**unread, "item": n} for n in with_firmware], [
            {**unread, "item": n} for n in with_ports
        ]
    read = {entry.get("pci"): entry for entry in result.get("nics") or []}
    missing = {"failed": True, "msg": "not in cxfab_nic_state's reading"}
    firmware = [
        {"item": n, **((read.get(n["pci"]) or {}).get("firmware") or missing)}
        for n in with_firmware
    ]
    link_type = [
        {"item": n, **((read.get(n["pci"]) or {}).get("link_type") or missing)} for n in with_ports
    ]
    return firmware, link_type


def firmware_checks(name: str, results: list[dict]) -> list[dict]:
    """Firmware version running and PSID, from `cxfab_nic_firmware state=query`."""
    out = Checks(name)
    for result in (r for r in results if not absent(r)):
        nic, wanted = _nic(result).get("name", "nic"), _nic(result).get("firmware") or {}
        version_id, psid_id = f"firmware.{nic}.version", f"firmware.{nic}.psid"
        expected_version = f"{wanted.get('version')} in flash and running"
        if failed(result):
            _unreadable(out, version_id, expected_version, result)
            if wanted.get("psid"):
                _unreadable(out, psid_id, wanted["psid"], result)
            continue
        observed = f"flash {result.get('flash_version')}, running {result.get('running_version')}"
        in_flash, running = bool(result.get("target_in_flash")), bool(result.get("target_running"))
        pending = "in flash, awaiting activation (reset or reboot)" if in_flash else ""
        pending = "" if running else pending
        out.judge(version_id, in_flash and running, expected_version, observed, pending)
        if wanted.get("psid"):
            psid = result.get("psid") or "unknown"
            out.judge(psid_id, psid == wanted["psid"], wanted["psid"], psid)
    return out


def link_type_checks(name: str, results: list[dict]) -> list[dict]:
    """Port protocol (LINK_TYPE_P<n>) current and next boot, from a query run."""
    out = Checks(name)
    for result in (r for r in results if not absent(r)):
        nic = _nic(result).get("name", "nic")
        if failed(result):
            for port in _nic(result).get("ports") or []:
                expected = str(port.get("link_type", "eth")).upper()
                _unreadable(out, f"link_type.{nic}.p{port.get('port')}", expected, result)
            continue
        for port in result.get("ports") or []:
            desired = str(port.get("desired")).upper()
            current = str(port.get("current") or "unknown").upper()
            next_boot = str(port.get("next_boot") or "unknown").upper()
            pending = "set for next boot, activation pending" if next_boot == desired else ""
            out.judge(
                f"link_type.{nic}.p{port.get('port')}",
                current == desired == next_boot,
                f"{desired} current and next boot",
                f"current {current}, next boot {next_boot}",
                "" if current == desired == next_boot else pending,
            )
    return out


def activation_checks(name: str, sc: dict, result) -> list[dict]:
    """activation.<nic>: nothing on the card waits for a reset or reboot, from the same
    cxfab_nic_state reading (`pending_activation`: firmware in flash, and every
    parameter whose Next Boot differs from Current, pinned or not)."""
    out = Checks(name)
    if absent(result) or not result or failed(result):
        return out  # not read, or read and failed: the firmware/link_type checks say so
    waiting = result.get("pending_activation")
    read = {entry.get("pci") for entry in result.get("nics") or []}
    for nic in sc.get("nics") or []:
        if nic["pci"] not in read:
            continue  # the firmware/link_type checks fail a card the reading missed
        expected = "nothing waits for an activation (Next Boot = Current, firmware running)"
        if not isinstance(waiting, dict):
            out.fail(f"activation.{nic['name']}", expected, "unreadable", "no pending state read")
            continue
        pending = waiting.get(nic["pci"])
        message = "reset the card (mstfwreset) or reboot the host" if pending else ""
        out.judge(f"activation.{nic['name']}", not pending, expected, pending or "none", message)
    return out


def sriov_checks(name: str, sc: dict, facts: dict) -> list[dict]:
    """sriov.<netdev>.vfs: the VFs of the sriov profile exist (read back from sysfs)."""
    out = Checks(name)
    reading = facts.get("sriov")
    for nic in sc.get("nics") or []:
        for netdev, want in sorted(((nic.get("runtime") or {}).get("sriov_numvfs") or {}).items()):
            check_id, expected = f"sriov.{netdev}.vfs", f"{want} VFs (sriov_numvfs)"
            got = (reading or {}).get(netdev) if isinstance(reading, dict) else None
            if got is None:
                out.fail(check_id, expected, "not read")
            elif "error" in got:
                message = "the function offers no SR-IOV: is SRIOV_EN active (activation)?"
                out.fail(check_id, expected, "unreadable", f"{got['error']}; {message}")
            else:
                total = got.get("totalvfs")
                observed = f"{got['numvfs']} VFs" + (f" (of {total})" if total is not None else "")
                message = (
                    ""
                    if got["numvfs"] == want
                    else "the VFs differ from the profile: run nic_runtime.yml (cxfab_nic_runtime)"
                )
                out.judge(check_id, got["numvfs"] == want, expected, observed, message)
    return out


def dcqcn_checks(name: str, sc: dict, facts: dict) -> list[dict]:
    """dcqcn.<netdev>: ECN (roce_np and roce_rp) enabled on each of the roce profile's
    priorities, read back from the driver's sysfs knobs."""
    out = Checks(name)
    reading = facts.get("dcqcn") if isinstance(facts.get("dcqcn"), dict) else {}
    for nic in sc.get("nics") or []:
        section = (nic.get("runtime") or {}).get("dcqcn") or {}
        for netdev in section.get("netdevs") or []:
            check_id = f"dcqcn.{netdev}"
            expected = f"roce_np and roce_rp enabled on priorities {section['priorities']}"
            got = reading.get(netdev)
            if got is None:
                out.fail(check_id, expected, "not read")
            elif "error" in got:
                out.fail(check_id, expected, "unreadable", got["error"])
            else:
                bad = {k: v for k, v in sorted(got.items()) if v != 1}
                observed = (
                    ", ".join(f"{k}={'absent' if v is None else v}" for k, v in bad.items())
                    or "all enabled"
                )
                message = "" if not bad else "run nic_runtime.yml (cxfab_nic_runtime)"
                if any(v is None for v in bad.values()):
                    message = "the driver exposes no such ECN knob (mlx5 with MLNX_OFED has them)"
                out.judge(check_id, not bad, expected, observed, message)
    return out


def drift_check(name: str, result) -> list[dict]:
    """host_network in check mode: the actions it would take are the drift."""
    out = Checks(name)
    expected = "bond, members, VLANs, MTUs and addresses as intended"
    if absent(result):
        return out
    if failed(result):
        out.fail("network.config", expected, "unreadable", str(result.get("msg", "failed")))
        return out
    actions = result.get("actions") or []
    out.judge("network.config", not actions, expected, "; ".join(actions) or "no difference")
    return out


def trust_checks(name: str, sc: dict, facts: dict) -> list[dict]:
    """trust.<netdev>: the roce profile's trust on its ports outside lossless (the
    lossless ones are judged by lossless_checks), read with mlnx_qos."""
    out = Checks(name)
    reading = facts.get("trust") if isinstance(facts.get("trust"), dict) else {}
    for port, want in sorted(profile_trust(sc).items()):
        check_id, expected = f"trust.{port}", f"trust {want}"
        got = reading.get(port)
        if got is None:
            out.fail(check_id, expected, "not read")
        elif "error" in got:
            if tool_missing(got["error"]):
                out.unmeasured(check_id, expected, got["error"])
            else:
                out.fail(check_id, expected, "unreadable", got["error"])
        else:
            message = "" if got["trust"] == want else "run nic_runtime.yml (cxfab_nic_runtime)"
            out.judge(check_id, got["trust"] == want, expected, f"trust {got['trust']}", message)
    return out
