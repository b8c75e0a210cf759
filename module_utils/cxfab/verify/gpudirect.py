"""GPUDirect RDMA readiness of a host that declares GPUs (`gpudirect` of its structured
config), judged from the host facts' `gpudirect` reading (host/mlnx/gpudirect.py):

    gpudirect.peer_memory     nvidia_peermem or ib_peer_mem loaded
    gpudirect.<gpu>.topology  the GPU and its adapter under one PCIe switch or root port
    gpudirect.<gpu>.acs       no ACS redirection on a bridge between them
    gpudirect.<gpu>.ats       the adapter's ATS as its gpudirect profile says

Each failure names what was read: the modules looked for, the two paths of bridges,
the ACS bits set and on which bridge, the ATS state.
"""

from __future__ import annotations

from ..common.checks import Checks
from ..host.mlnx.gpudirect import acs_words

# NVIDIA's GPUDirect RDMA guide: peer-to-peer between a NIC and a GPU is supported
# under a PCIe switch (PIX/PXB); across the host bridge (PHB) or sockets it is slow
# or unsupported, and ACS redirection sends every peer request up to the root complex.
_EXPECT_TOPOLOGY = "GPU and adapter under one PCIe switch or root port"
_EXPECT_ACS = "ACS control 0 (no redirection) on every bridge between GPU and adapter"


def _chain(path: dict) -> str:
    return " > ".join([path["host_bridge"], *path["chain"]])


def _topology(out: Checks, gpu: str, pair: dict) -> None:
    check_id = f"gpudirect.{gpu}.topology"
    errors = [p["error"] for p in (pair["nic_path"], pair["gpu_path"]) if "error" in p]
    if errors:
        out.fail(check_id, _EXPECT_TOPOLOGY, "unreadable", "; ".join(errors))
        return
    common = pair.get("common") or []
    nic, gpu_path = pair["nic_path"], pair["gpu_path"]
    paths = f"adapter {_chain(nic)}; GPU {_chain(gpu_path)}"
    if common:
        out.judge(check_id, True, _EXPECT_TOPOLOGY, f"both under {common[-1]} ({paths})")
    elif nic["host_bridge"] == gpu_path["host_bridge"]:
        observed = f"only the host bridge {nic['host_bridge']} is shared ({paths})"
        message = "peer traffic crosses the root complex (PHB): place both under one switch"
        out.fail(check_id, _EXPECT_TOPOLOGY, observed, message)
    else:
        observed = f"different host bridges ({paths})"
        message = "peer traffic crosses the CPU interconnect (SYS): place both under one switch"
        out.fail(check_id, _EXPECT_TOPOLOGY, observed, message)


def _acs(out: Checks, gpu: str, pair: dict) -> None:
    check_id = f"gpudirect.{gpu}.acs"
    if "acs" not in pair:
        out.fail(check_id, _EXPECT_ACS, "unreadable", "the PCIe path was not read")
        return
    unread = [f"{a['bdf']}: {a['error']}" for a in pair["acs"] if "error" in a]
    if unread:
        out.fail(check_id, _EXPECT_ACS, "unreadable", "; ".join(unread))
        return
    on = [f"{a['bdf']} ACSCtl {acs_words(a['ctl'])}" for a in pair["acs"] if a.get("ctl")]
    read = ", ".join(a["bdf"] for a in pair["acs"]) or "no bridge between them"
    message = "disable ACS on these ports (setpci ECAP_ACS+0x6.w=0000, or in the BIOS)"
    observed = "; ".join(on) if on else f"ACS off ({read})"
    out.judge(check_id, not on, _EXPECT_ACS, observed, message if on else "")


def _ats(out: Checks, gpu: str, pair: dict, wanted: bool) -> None:
    check_id = f"gpudirect.{gpu}.ats"
    expected = f"ATS {'enabled' if wanted else 'disabled'} on {pair['nic']} (gpudirect profile)"
    state = pair.get("ats") or {"error": "not read"}
    if "error" in state:
        out.fail(check_id, expected, "unreadable", state["error"])
        return
    enabled = state["enabled"]
    observed = {None: "no ATS capability", True: "ATS enabled", False: "ATS disabled"}[enabled]
    out.judge(check_id, bool(enabled) == wanted, expected, observed)


def gpudirect_checks(name: str, sc: dict, facts: dict) -> list[dict]:
    section = sc.get("gpudirect")
    out = Checks(name)
    if not section:
        return out
    reading = facts.get("gpudirect")
    modules = ", ".join(section["peer_memory_modules"])
    expected = f"a peer-memory module loaded ({modules})"
    if not isinstance(reading, dict):
        out.fail("gpudirect.peer_memory", expected, "not read")
        for pair in section["pairs"]:
            out.fail(f"gpudirect.{pair['gpu']}.topology", _EXPECT_TOPOLOGY, "not read")
        return out
    loaded = reading["peer_memory"]["loaded"]
    observed = f"{', '.join(loaded)} loaded" if loaded else f"none of {modules} in /sys/module"
    out.judge("gpudirect.peer_memory", bool(loaded), expected, observed,
              "" if loaded else "load nvidia_peermem (modprobe nvidia_peermem)")  # fmt: skip
    by_gpu = {pair["gpu"]: pair for pair in reading.get("pairs") or []}
    for want in section["pairs"]:
        pair = by_gpu.get(want["gpu"])
        if pair is None:
            out.fail(f"gpudirect.{want['gpu']}.topology", _EXPECT_TOPOLOGY, "not read")
            continue
        _topology(out, want["gpu"], pair)
        _acs(out, want["gpu"], pair)
        if want.get("ats") is not None:
            _ats(out, want["gpu"], pair, want["ats"])
    return out
