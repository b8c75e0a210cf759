"""Construction of emulated cards (cxfab lab emulator) from the catalog."""

import hashlib
import time

from . import catalog
from .state import SCHEMA_VERSION

# mlx5 starts with priority 0 -> TC1, 1 -> TC0, every other priority on its own TC,
# every TC in the "vendor" group with no rate limit (see mlx5e_ets_init).
MLX5_DEFAULT_PRIO_TC = [1, 0, 2, 3, 4, 5, 6, 7]


def build_config(device_type: str, values: dict[str, int] | None = None) -> dict:
    """Default/Current/Next Boot for every parameter of a device type."""
    config = {}
    for param in catalog.DEVICE_TYPES[device_type].params:
        value = (values or {}).get(param.name, param.default)
        config[param.name] = {"default": param.default, "current": value, "next": value}
    return config


def default_qos() -> dict:
    return {
        "prio_tc": list(MLX5_DEFAULT_PRIO_TC),
        "tsa": ["vendor"] * 8,
        "tcbw": [100] * 8,
        "ratelimit_kbps": [0] * 8,
        "pfc": [0] * 8,
        "cable_len": 7,
        "trust": "pcp",
    }


def derived_mac(seed_text: str) -> str:
    """A stable locally-derived MAC (Mellanox OUI) when the netdev's own MAC is unknown."""
    digest = hashlib.sha256(seed_text.encode()).hexdigest()
    return "248a07" + digest[:6]


def guid_from_mac(mac: str) -> str:
    return mac[:6] + "0300" + mac[6:]


def new_card(
    profile_name: str,
    functions: list[str],
    netdevs: list[str | None],
    mst_index: int,
    base_mac: str | None = None,
) -> dict:
    profile = catalog.PROFILES[profile_name]
    kind = profile["device_type"]
    fw = profile["fw"]
    release = catalog.RELEASES.get(fw)
    mac = (base_mac or derived_mac(functions[0])).replace(":", "").lower()
    ports = []
    for index in range(len(functions)):
        cable = profile["cables"][index] if index < len(profile["cables"]) else None
        ports.append({"cable": cable, "link": "auto", "eth_enabled_speeds": "0xfafc0003"})
    return {
        "schema": SCHEMA_VERSION,
        "profile": profile_name,
        "device_type": kind,
        "functions": functions,
        "netdevs": [name or "" for name in netdevs],
        "mst_index": mst_index,
        "part_number": profile["part_number"],
        "description": profile["description"],
        "psid": profile["psid"],
        "base_mac": mac,
        "base_guid": guid_from_mac(mac),
        "firmware": {
            "flash": fw,
            "running": fw,
            "pxe": release.pxe if release else "",
            "uefi": release.uefi if release else "",
        },
        "config": build_config(kind, profile["config"]),
        "ports": ports,
        "qos": {name: default_qos() for name in netdevs if name},
        "counters_cleared_at": int(time.time()),
        "pending_reset": False,
    }


def catalog_entry(fw: str) -> dict:
    release = catalog.RELEASES.get(fw)
    return {
        "fw": fw,
        "pxe": release.pxe if release else "",
        "uefi": release.uefi if release else "",
    }
