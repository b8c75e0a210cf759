"""Per-card JSON state of the cxfab lab emulator, shared by every emulated tool.

Layout under ``$CXEMU_STATE_DIR`` (default ``/var/lib/cxemu``)::

    .lock                   flock(2) taken for every command (shared to read, exclusive to write)
    cards/<bdf>.json        one file per card, named after the BDF of its first PCI function
    catalog.json            firmware images "bundled" with mlxfwmanager, keyed by PSID

A card has one PCI function per port; both functions share firmware, PSID and config,
exactly like a dual-port ConnectX. Devices are addressed by PCI BDF (``0000:65:00.0`` or
``65:00.0``) or by mst name (``/dev/mst/mt4115_pciconf0``, ``.1`` for the second port).
"""

import contextlib
import fcntl
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from . import catalog

SCHEMA_VERSION = 1
BDF_RE = re.compile(r"^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")
MST_RE = re.compile(r"^(?:/dev/mst/)?(mt\d+)_pciconf(\d+)(?:\.(\d+))?$")


class DeviceNotFound(Exception):
    """The name given with -d does not designate an emulated device."""


def state_dir() -> Path:
    return Path(os.environ.get("CXEMU_STATE_DIR", "/var/lib/cxemu"))


def normalize_bdf(text: str) -> str | None:
    """Return the full lower-case BDF for ``65:00.0`` or ``0000:65:00.0``; None otherwise."""
    match = BDF_RE.match(text.strip())
    if not match:
        return None
    domain, bus, slot, function = match.groups()
    return f"{(domain or '0000').lower()}:{bus.lower()}:{slot.lower()}.{function}"


def card_file_name(bdf: str) -> str:
    return bdf.replace(":", "-") + ".json"


@dataclass
class Target:
    """A resolved device name: the card plus which port (PCI function) was meant."""

    card: dict
    port: int  # 0-based
    name: str  # as the user typed it


def _fill_new_params(card: dict) -> None:
    """A card seeded before the emulator learned a parameter holds it at its default."""
    kind = catalog.DEVICE_TYPES.get(card.get("device_type", ""))
    for param in kind.params if kind else ():
        card["config"].setdefault(
            param.name, {"default": param.default, "current": param.default, "next": param.default}
        )


class Store:
    """Locked access to the emulator state; use as a context manager."""

    def __init__(self, write: bool = False, root: Path | None = None):
        self.root = root or state_dir()
        self.write = write
        self._lock_file = None
        self.cards: dict[str, dict] = {}
        self.catalog: dict[str, dict] = {}
        self._dirty: set[str] = set()
        self._removed: set[str] = set()
        self._catalog_dirty = False

    def __enter__(self) -> "Store":
        (self.root / "cards").mkdir(parents=True, exist_ok=True)
        self._lock_file = open(self.root / ".lock", "a+")  # held until __exit__
        fcntl.flock(self._lock_file, fcntl.LOCK_EX if self.write else fcntl.LOCK_SH)
        for path in sorted((self.root / "cards").glob("*.json")):
            card = json.loads(path.read_text())
            _fill_new_params(card)
            self.cards[card["functions"][0]] = card
        catalog_path = self.root / "catalog.json"
        if catalog_path.exists():
            self.catalog = json.loads(catalog_path.read_text())
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None and self.write:
                self._flush()
        finally:
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()

    def _flush(self) -> None:
        for key in self._removed:
            with contextlib.suppress(FileNotFoundError):
                (self.root / "cards" / card_file_name(key)).unlink()
        for key in self._dirty:
            card = self.cards[key]
            card["pending_reset"] = pending_reset(card)
            _atomic_write(self.root / "cards" / card_file_name(key), card)
        if self._catalog_dirty:
            _atomic_write(self.root / "catalog.json", self.catalog)

    def mark(self, card: dict) -> None:
        """Record that a card changed and must be written back."""
        if not self.write:
            raise RuntimeError("state opened read-only")
        self._dirty.add(card["functions"][0])

    def mark_catalog(self) -> None:
        self._catalog_dirty = True

    def add(self, card: dict) -> None:
        self.cards[card["functions"][0]] = card
        self.mark(card)

    def remove(self, card: dict) -> None:
        key = card["functions"][0]
        self.cards.pop(key, None)
        self._dirty.discard(key)
        self._removed.add(key)

    def ordered_cards(self) -> list[dict]:
        return sorted(self.cards.values(), key=lambda card: (card["mst_index"], card["functions"]))

    def resolve(self, name: str) -> Target:
        """Find the card and port behind a BDF or mst device name."""
        bdf = normalize_bdf(name)
        if bdf:
            for card in self.cards.values():
                if bdf in card["functions"]:
                    return Target(card, card["functions"].index(bdf), name)
            raise DeviceNotFound(name)
        match = MST_RE.match(name.strip())
        if match:
            prefix, index, function = match.group(1), int(match.group(2)), match.group(3)
            port = int(function) if function else 0
            for card in self.cards.values():
                kind = catalog.DEVICE_TYPES[card["device_type"]]
                matches = kind.mst_prefix == prefix and card["mst_index"] == index
                if matches and port < len(card["functions"]):
                    return Target(card, port, name)
        raise DeviceNotFound(name)

    def find_netdev(self, netdev: str) -> Target | None:
        for card in self.cards.values():
            if netdev in card.get("netdevs", []):
                return Target(card, card["netdevs"].index(netdev), netdev)
        return None

    def next_mst_index(self, device_type: str) -> int:
        prefix = catalog.DEVICE_TYPES[device_type].mst_prefix
        used = {
            card["mst_index"]
            for card in self.cards.values()
            if catalog.DEVICE_TYPES[card["device_type"]].mst_prefix == prefix
        }
        index = 0
        while index in used:
            index += 1
        return index


def _atomic_write(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def mst_name(card: dict, port: int = 0) -> str:
    kind = catalog.DEVICE_TYPES[card["device_type"]]
    suffix = f".{port}" if port else ""
    return f"/dev/mst/{kind.mst_prefix}_pciconf{card['mst_index']}{suffix}"


def pending_reset(card: dict) -> bool:
    """A reset is pending while burned firmware or Next Boot config is not active yet."""
    if card["firmware"]["flash"] != card["firmware"]["running"]:
        return True
    return any(entry["next"] != entry["current"] for entry in card["config"].values())


def device_type(card: dict) -> catalog.DeviceType:
    return catalog.DEVICE_TYPES[card["device_type"]]


def port_protocol(card: dict, port: int) -> str:
    """``IB`` or ``ETH``: the active (Current) link type of a port."""
    entry = card["config"].get(f"LINK_TYPE_P{port + 1}")
    if entry is None:
        return "ETH"
    return "IB" if entry["current"] == 1 else "ETH"
