"""Which of a host's NICs need firmware, port protocols, pinned parameters or an activation.

One read of every card per host, every host at once, before the serial rollout: a
card whose firmware and ports are as the structured config wants is named settled,
and the serial play does not touch it (its tasks are skipped without contacting the
host). The decisions are the rollout's own: the same query (firmware.query_card) and
the same port rule (port_config.configure_ports in query mode), so "settled" means
exactly "the firmware and link type modules would do nothing".
"""

from __future__ import annotations

from collections.abc import Callable

from .firmware import FirmwareError, Toolset, query_card
from .port_config import PortConfigError, configure_ports, requests_from_inventory
from .runner import Runner
from .versions import same_version


class NicStateError(RuntimeError):
    """A card could not be read: the host fails (nothing is assumed settled)."""


def firmware_state(nic: dict, runner: Runner, toolset: Toolset) -> dict:
    wanted = nic["firmware"]
    try:
        card = query_card(runner, toolset, nic["pci"])
    except FirmwareError as exc:
        raise NicStateError(str(exc)) from exc
    version = str(wanted["version"])
    psid_ok = not wanted.get("psid") or wanted["psid"] == card.psid
    in_flash = same_version(card.flash, version)
    running = same_version(card.running, version)
    if in_flash and running and psid_ok:
        need = None
    elif in_flash and psid_ok:
        need = f"activation pending: {version} in flash, running {card.running}"
    elif not psid_ok:
        need = f"PSID {card.psid} differs from the inventory's {wanted['psid']}"
    else:
        need = f"firmware {card.flash} in flash, {version} wanted"
    return {
        "flash_version": card.flash,
        "running_version": card.running,
        "psid": card.psid,
        "target_in_flash": in_flash,
        "target_running": running,
        "settled": need is None,
        "need": need,
    }


def link_type_state(nic: dict, runner: Runner, config_tool: str, sysfs_root: str) -> dict:
    try:
        found = configure_ports(
            nic["pci"],
            requests_from_inventory(nic["ports"]),
            runner,
            config_tool,
            None,
            sysfs_root,
            check_mode=True,
            query_only=True,
            pins=nic.get("nv_config") or {},
        )
    except PortConfigError as exc:
        raise NicStateError(str(exc)) from exc
    moving = [p for p in found["ports"] + found.get("params", []) if p["action"] != "none"]
    need = (
        "; ".join(
            f"{p['param']} {p['action']} (current {p['current']}, next boot {p['next_boot']}, "
            f"wanted {p['desired']})"
            for p in moving
        )
        or None
    )
    return {
        "ports": found["ports"],
        "params": found.get("params", []),
        "pending_reboot": found.get("pending_reboot", []),
        "settled": need is None,
        "need": need,
    }


def pending_words(pending: list[dict]) -> str:
    """`SRIOV_EN (current False(0), next boot True(1)), ...`: what the activation changes."""
    return ", ".join(
        f"{p['param']} (current {p['current']}, next boot {p['next_boot']})" for p in pending
    )


def read_nics(
    nics: list[dict],
    runner: Runner,
    toolset: Callable[[], Toolset],
    config_tool: Callable[[], str],
    sysfs_root: str = "/sys",
) -> dict:
    """The module result: per NIC what it runs and needs; the settled PCI addresses."""
    cards, firmware_ok, link_type_ok, needs = [], [], [], []
    waiting: dict[str, str] = {}
    for nic in nics:
        entry: dict = {"pci": nic["pci"], "name": nic.get("name"), "firmware": None}
        entry["link_type"] = None
        if nic.get("firmware"):
            entry["firmware"] = firmware_state(nic, runner, toolset())
            if entry["firmware"]["settled"]:
                firmware_ok.append(nic["pci"])
            else:
                needs.append(f"{nic['pci']}: {entry['firmware']['need']}")
            if entry["firmware"]["target_in_flash"] and not entry["firmware"]["target_running"]:
                waiting[nic["pci"]] = entry["firmware"]["need"]
        if any(p.get("link_type") for p in nic.get("ports") or []) or nic.get("nv_config"):
            entry["link_type"] = link_type_state(nic, runner, config_tool(), sysfs_root)
            if entry["link_type"]["settled"]:
                link_type_ok.append(nic["pci"])
            else:
                needs.append(f"{nic['pci']}: {entry['link_type']['need']}")
            if entry["link_type"]["pending_reboot"]:
                words = pending_words(entry["link_type"]["pending_reboot"])
                waiting[nic["pci"]] = "; ".join(filter(None, [waiting.get(nic["pci"]), words]))
        cards.append(entry)
    return {
        "changed": False,
        "nics": cards,
        "settled_firmware": firmware_ok,
        "settled_link_type": link_type_ok,
        "changes_needed": bool(needs),
        # Cards whose configuration waits for an activation, whatever set it.
        "pending_activation": waiting,
        "msg": "; ".join(needs) if needs else "every NIC runs its firmware and port protocols",
    }
