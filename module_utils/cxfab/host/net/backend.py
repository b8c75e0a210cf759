"""Which persistence backend writes the host's network: the decision, from what was seen.

`choose(requested, facts)` is pure: the caller gathers `facts` on the host (which
daemons run, which links each manages, which netplan files define interfaces) and
gets back the backend, or the reason to refuse before anything changes. Every
branch is a unit test (tests/unit/test_hostnet_backend.py).

facts: {
    netplan_interfaces: [names defined by /etc/netplan, /run/netplan, /lib/netplan
                         YAML files other than cxfab's own 60-cxfab.yaml],
    networkmanager_running: bool, networkmanager_links: [links NM manages],
    networkd_running: bool,      networkd_links: [links networkd manages],
}
"""

from __future__ import annotations

BACKEND_KEY = "host_network_backend"
BACKENDS = ("networkd", "networkmanager", "netplan")
CHOICES = ("auto", *BACKENDS)
# What each backend needs running on the host to apply what cxfab writes. cxfab's
# netplan definitions carry `renderer: networkd` (docs/host-network-backends.md: the egress
# QoS map rides on a networkd drop-in), so netplan needs networkd too.
NEEDS = {
    "networkd": ("networkd_running", "systemd-networkd is not running"),
    "networkmanager": ("networkmanager_running", "NetworkManager is not running"),
    "netplan": (
        "networkd_running",
        "systemd-networkd is not running (cxfab's netplan definitions use renderer networkd)",
    ),
}


class BackendError(ValueError):
    """The backend cannot be chosen: `reason` says why, naming the key or what was seen."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def validate(requested) -> str:
    """The requested backend, or BackendError naming the key and the choices."""
    if requested not in CHOICES:
        raise BackendError(f"{BACKEND_KEY}: {requested!r} is not one of {', '.join(CHOICES)}")
    return requested


def _names(facts: dict, key: str) -> list[str]:
    return sorted(facts.get(key) or [])


def detect(facts: dict) -> str:
    """The backend `auto` means on a host that showed `facts`, or BackendError."""
    netplan = _names(facts, "netplan_interfaces")
    nm_on = bool(facts.get("networkmanager_running"))
    nd_on = bool(facts.get("networkd_running"))
    nm_links = _names(facts, "networkmanager_links")
    nd_links = _names(facts, "networkd_links")
    if netplan:
        return "netplan"
    if nm_on and nd_on:
        if nm_links and nd_links:
            raise BackendError(
                "both NetworkManager (links: "
                f"{', '.join(nm_links)}) and systemd-networkd (links: {', '.join(nd_links)}) "
                f"manage links: set {BACKEND_KEY} to the one that owns the data ports"
            )
        if nm_links:
            return "networkmanager"
        if nd_links:
            return "networkd"
        raise BackendError(
            "NetworkManager and systemd-networkd both run and neither manages a link: "
            f"set {BACKEND_KEY}"
        )
    if nm_on:
        return "networkmanager"
    if nd_on:
        return "networkd"
    raise BackendError(
        "no netplan file defines an interface and neither NetworkManager nor "
        f"systemd-networkd runs: nothing would apply the files at boot; set {BACKEND_KEY} "
        "after enabling one"
    )


def choose(requested, facts: dict) -> str:
    """The backend to write with: the requested one (checked against what runs) or auto's."""
    backend = validate(requested)
    if backend == "auto":
        backend = detect(facts)
    key, missing = NEEDS[backend]
    if not facts.get(key):
        raise BackendError(f"{BACKEND_KEY}={backend}: {missing}")
    return backend
