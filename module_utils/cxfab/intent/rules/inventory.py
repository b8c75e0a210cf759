"""Rules on the inventory itself: how Ansible reaches the hosts and switches."""

from __future__ import annotations

from collections.abc import Iterator

from ..schema.addresses import numeric_reading, reading_hint, resolve
from . import FabricView, Finding, rule

INVENTORY = "inventory"  # path head: ("inventory", host, variable), see validate.py
DEFAULT_SSH_PORT = 22


@rule("ansible-host-unique")
def ansible_host_unique(view: FabricView) -> Iterator[Finding]:
    """No two inventory hosts share an ansible_host (and ansible_port): one would be configured
    twice and the other never."""
    owner: dict[tuple[str, int], str] = {}
    for name, settings in view.host_settings.items():
        address = settings.get("ansible_host")
        if not isinstance(address, str) or not address:
            continue
        reading = numeric_reading(address)
        if reading is not None:
            yield (
                (INVENTORY, name, "ansible_host"),
                f"{address!r} is not a canonical IPv4 address{reading_hint(address)}",
            )
            continue
        try:
            port = int(settings.get("ansible_port") or DEFAULT_SSH_PORT)
        except (TypeError, ValueError):
            port = DEFAULT_SSH_PORT
        # Compared as the addresses it reaches (`localhost` is 127.0.0.1), else as a name.
        keys = [(key, port) for key in sorted(resolve(address))] or [(address.lower(), port)]
        other = next((owner[key] for key in keys if key in owner), None)
        if other is not None:
            shown = address if port == DEFAULT_SSH_PORT else f"{address} port {port}"
            yield (
                (INVENTORY, name, "ansible_host"),
                f"{shown} is also the ansible_host of {other}",
            )
        else:
            owner.update(dict.fromkeys(keys, name))
