"""Shared by the host network planning tests: one host's intent and its links' live state."""

HOST = {
    "mgmt_interface": "eno1",
    "bond": {"name": "bond0", "members": ["ens1f0", "ens1f1"], "mode": "802.3ad",
             "lacp_rate": "fast", "mtu": 9000, "address": "12.0.0.23/24"},
    "vlans": [{"id": 10, "address": "12.0.10.23/24", "mtu": 9000},
              {"id": 30, "address": "12.0.30.23/24", "mtu": 9000}],
    "qos": [{"vlan": 10, "user_priority": 1, "traffic_class": 0, "tsa": "strict",
             "bandwidth_percent": 0}],
}  # fmt: skip


# A host's lossless RoCE plan as the structured config carries it (hosts.py).
LOSSLESS_PLAN = {
    "priority": 3,
    "ports": ["ens1f0"],
    "trust": "dscp",
    "pfc": [0, 0, 0, 1, 0, 0, 0, 0],
    "ecn_priorities": [3],
    "memlock_kb": 0,
}


def live_link(**extra):
    """A link as the live state reads it: a down physical port with no address, unless `extra`."""
    return {"kind": None, "mtu": 1500, "master": None, "link": None, "up": False,
            "addresses": [], **extra}  # fmt: skip
