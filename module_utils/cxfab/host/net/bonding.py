"""The bonding driver's netlink values for the names the fabric uses."""

BOND_MODES = {
    "balance-rr": 0,
    "active-backup": 1,
    "balance-xor": 2,
    "broadcast": 3,
    "802.3ad": 4,
    "balance-tlb": 5,
    "balance-alb": 6,
}
LACP_RATES = {"slow": 0, "fast": 1}
XMIT_HASH_POLICIES = {
    "layer2": 0,
    "layer3+4": 1,
    "layer2+3": 2,
    "encap2+3": 3,
    "encap3+4": 4,
    "vlan+srcmac": 5,
}
