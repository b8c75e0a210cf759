"""Parse `mstflint -d <dev> q` / `flint -d <dev> q` and `mstflint -i <image> q`.

The query prints `Key:   value` lines. Two of them decide a rollout:
`FW Version` is what sits in flash, `FW Version(Running)` appears only while a
burned image waits for activation (a reset or a reboot). Some releases print
only the running line on old cards; then flash and running are the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .versions import same_version

_FIELD_RE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 ()/._-]*?):\s*(?P<value>.*)$")


class FlintParseError(ValueError):
    """The text is not a flint query (an error message, or truncated output)."""


@dataclass(frozen=True)
class FlintQuery:
    """What one `q` told us about a device or an image."""

    fw_version: str
    psid: str
    running_version: str | None = None
    image_type: str | None = None
    product_version: str | None = None
    device_id: str | None = None
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def active_version(self) -> str:
        """The version the card runs now."""
        return self.running_version or self.fw_version

    @property
    def activation_pending(self) -> bool:
        """A newer image is in flash but the card still runs the old one."""
        return self.running_version is not None and not same_version(
            self.running_version, self.fw_version
        )


def parse_flint_query(text: str) -> FlintQuery:
    """Parse the output of a flint/mstflint query of a device or an image file."""
    fields: dict[str, str] = {}
    last_key = None
    for raw in text.splitlines():
        if not raw.strip():
            continue
        if raw.lstrip().startswith("-E-"):
            raise FlintParseError(f"flint reported an error: {raw.strip()}")
        if raw[0].isspace() and last_key is not None:
            # Continuation of a multi-line value (Rom Info lists one ROM per line).
            fields[last_key] += "\n" + raw.strip()
            continue
        match = _FIELD_RE.match(raw.strip())
        if not match:
            continue
        last_key = match.group("key").strip()
        fields[last_key] = match.group("value").strip()

    running = fields.get("FW Version(Running)") or None
    flash = fields.get("FW Version") or running
    psid = fields.get("PSID")
    if not flash or not psid:
        missing = [name for name, value in (("FW Version", flash), ("PSID", psid)) if not value]
        raise FlintParseError(f"flint query output lacks {', '.join(missing)}")
    return FlintQuery(
        fw_version=flash,
        psid=psid,
        running_version=running,
        image_type=fields.get("Image type"),
        product_version=fields.get("Product Version"),
        device_id=fields.get("Device ID"),
        fields=fields,
    )
