"""The named NIC profiles (`nics[].profiles`): which mlxconfig parameters and runtime
settings each one stands for.

One table for the rules (a conflicting explicit `nv_config` value) and the structured
config (the merged parameters the link-type stage sets, the runtime settings). The
parameter names and values follow NVIDIA's nic-configuration-operator (its
`configuration-details` page and `pkg/consts`); docs/firmware.md cites them.
"""

from __future__ import annotations

NUM_PRIORITIES = 8
# In the order docs/firmware.md lists them; the order the parameters are merged.
PROFILE_NAMES = ("sriov", "roce", "pci_performance", "gpudirect")


def _flag(value: bool) -> str:
    # mlxconfig's boolean labels; `True(1)`/`False(0)` is how a query prints them.
    return "True" if value else "False"


def cc_priorities(options: dict, roce: dict | None) -> list[int]:
    """The priorities congestion control acts on: given, else the lossless PFC priority
    of cxfab_roce, else all eight (the operator's ROCE_CC_PRIO_MASK of 255)."""
    if options.get("cc_priorities"):
        return sorted(options["cc_priorities"])
    if roce and roce.get("lossless") and isinstance(roce.get("priority"), int):
        return [roce["priority"]]
    return list(range(NUM_PRIORITIES))


def _port_numbers(nic: dict) -> list[int]:
    return sorted(p["port"] for p in nic.get("ports") or [] if isinstance(p.get("port"), int))


def profile_params(nic: dict, roce: dict | None = None) -> dict[str, tuple[str, str]]:
    """{PARAM: (value, profile)} of every profile of one adapter, in PROFILE_NAMES order."""
    profiles = nic.get("profiles") or {}
    params: dict[str, tuple[str, str]] = {}
    sriov = profiles.get("sriov")
    if sriov is not None:
        params["SRIOV_EN"] = (_flag(True), "sriov")
        params["NUM_OF_VFS"] = (str(sriov["num_vfs"]), "sriov")
    options = profiles.get("roce")
    if options is not None:
        mask = sum(1 << p for p in cc_priorities(options, roce))
        for n in _port_numbers(nic):
            params[f"ROCE_CC_PRIO_MASK_P{n}"] = (str(mask), "roce")
            params[f"CNP_DSCP_P{n}"] = (str(options.get("cnp_dscp", 4)), "roce")
            params[f"CNP_802P_PRIO_P{n}"] = (str(options.get("cnp_priority", 6)), "roce")
    pci = profiles.get("pci_performance")
    if pci is not None and pci.get("max_acc_out_read") is not None:
        # MAX_ACC_OUT_READ is hidden from the query until ADVANCED_PCI_SETTINGS is on.
        params["ADVANCED_PCI_SETTINGS"] = (_flag(True), "pci_performance")
        params["MAX_ACC_OUT_READ"] = (str(pci["max_acc_out_read"]), "pci_performance")
    gpudirect = profiles.get("gpudirect")
    if gpudirect is not None:
        params["ATS_ENABLED"] = (_flag(bool(gpudirect.get("ats", False))), "gpudirect")
    return params


_FLAG_NUMBERS = {"true": "1", "false": "0"}


def same_value(left: str, right: str) -> bool:
    """mlxconfig values alike: `True` = `1` = `true`, `0x10` = `16`, labels case-blind."""

    def key(text: str) -> str:
        word = str(text).strip().casefold()
        word = _FLAG_NUMBERS.get(word, word)
        try:
            return str(int(word, 0))
        except ValueError:
            return word

    return key(left) == key(right)


def merged_nv_config(nic: dict, roce: dict | None = None) -> dict[str, str]:
    """The profiles' parameters, then the explicit `nv_config` (rule nic-profile-conflict
    guarantees an explicit value of a profile's parameter is the same value)."""
    merged = {name: value for name, (value, _) in profile_params(nic, roce).items()}
    for name, value in (nic.get("nv_config") or {}).items():
        merged[name] = str(value)
    return merged


def runtime_settings(nic: dict, roce: dict | None = None) -> dict:
    """The run-time side the profiles imply, per adapter (recorded, applied by no stage yet)."""
    profiles = nic.get("profiles") or {}
    ports = [p for p in nic.get("ports") or [] if p.get("netdev")]
    runtime: dict = {}
    if profiles.get("sriov") is not None:
        runtime["sriov_numvfs"] = {p["netdev"]: profiles["sriov"]["num_vfs"] for p in ports}
    if profiles.get("roce") is not None:
        runtime["trust"] = "dscp"
        runtime["dcqcn"] = {
            "netdevs": [p["netdev"] for p in ports],
            "priorities": cc_priorities(profiles["roce"], roce),
        }
    if profiles.get("pci_performance") is not None:
        runtime["max_read_request"] = profiles["pci_performance"].get("max_read_request", 4096)
    return runtime
