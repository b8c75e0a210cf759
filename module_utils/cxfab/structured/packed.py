"""The structured config as validate.yml publishes it: one JSON text per device.

`hostvars['localhost'].cxfab_structured` maps each device to the JSON text of its
structured config rather than to the nested data. Ansible walks every node of a
fact it receives (tags, copies, cleaning, the callbacks' conversion); for a fabric
of 2,200 devices that was 2.5 million nodes and half of validate.yml's time, and
every later task that reached into the fact paid again. A text is one node. A
consumer decodes only the device it needs: `cxfab_device` (filter) for one,
`Unpacked` for code that walks a rack or the fabric, decoding on first use.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping


class NoStructuredConfig(KeyError):
    """The device has no structured config in the published fact."""

    def __str__(self) -> str:
        return self.args[0]


def pack(devices: dict[str, dict]) -> dict[str, str]:
    return {
        name: json.dumps(structured, separators=(",", ":")) for name, structured in devices.items()
    }


def decode(value) -> dict:
    """A device's structured config from its published form (already decoded: as is)."""
    return json.loads(value) if isinstance(value, str) else value


def device(published: Mapping, name: str) -> dict:
    if not isinstance(published, Mapping):
        raise NoStructuredConfig(
            "cxfab_structured: not published (run playbooks/validate.yml first)"
        )
    if name not in published:
        raise NoStructuredConfig(
            f"cxfab_structured: no structured config for {name!r} (not a switch or host of "
            "the validated fabric)"
        )
    return decode(published[name])


class Unpacked(Mapping):
    """The published fact as a mapping of device -> structured config, decoded lazily."""

    def __init__(self, published: Mapping):
        self._published = published
        self._decoded: dict[str, dict] = {}

    def __getitem__(self, name: str) -> dict:
        if name not in self._decoded:
            self._decoded[name] = device(self._published, name)
        return self._decoded[name]

    def __contains__(self, name) -> bool:
        return name in self._published

    def __iter__(self) -> Iterator[str]:
        return iter(self._published)

    def __len__(self) -> int:
        return len(self._published)
