"""Rules on the inventory itself: how Ansible reaches the hosts and switches."""

from __future__ import annotations

from collections.abc import Iterator

from . import FabricView, Finding, rule

INVENTORY = "inventory"  # path head: ("inventory", host, variable), see validate.py
DEFAULT_SSH_PORT = 22


@rule(
    "ansible-host-unique",
    "No two inventory hosts share an ansible_host (and ansible_port): one would be "
    "configured twice and the other never.",
)
def ansible_host_unique(view: FabricView) -> Iterator[Finding]:
    owner: dict[tuple[str, int], str] = {}
    for name, settings in view.host_settings.items():
        address = settings.get("ansible_host")
        if not isinstance(address, str) or not address:
            continue
        try:
            port = int(settings.get("ansible_port") or DEFAULT_SSH_PORT)
        except (TypeError, ValueError):
            port = DEFAULT_SSH_PORT
        key = (address.lower(), port)
        if key in owner:
            shown = address if port == DEFAULT_SSH_PORT else f"{address} port {port}"
            yield (
                (INVENTORY, name, "ansible_host"),
                f"{shown} is also the ansible_host of {owner[key]}",
            )
        else:
            owner[key] = name
