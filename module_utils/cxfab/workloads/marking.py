"""How the RoCE workloads of a pair mark their traffic when the fabric runs lossless.

A lossless fabric trusts DSCP (cxfab_roce): RoCE packets reach the PFC priority only
when they carry its DSCP, and only RoCE v2 (UDP/IP) carries a DSCP at all. The host's
structured config has the ToS byte (DSCP x 4) and the GID type; the host facts list
the GID entries of each VLAN interface. Per tool:

- ib_write_bw (perftest 4.5): with both sides' GID known, `-d <dev> -x <index>
  --tclass <tos>` and no RDMA-CM (`-x` picks the GID of the VLAN interface and its
  type; RDMA-CM would choose the GID itself and ignore `-x`); without, `-R --tos <tos>`
  (`-T/--tos` works only with RDMA-CM, per `ib_write_bw --help`), GID left to RDMA-CM;
- pingpong and rcat (native/): `--tos <tos>` on the client (RDMA_OPTION_ID_TOS);
- qperf 0.4.11 has no ToS option (`qperf --help options`): its runs stay unmarked,
  and its record says so.
"""

from __future__ import annotations

from ..host.net.roce import pick_gid
from ..structured.packed import Unpacked

QPERF_UNMARKED = "unmarked: qperf has no ToS option"


def _vlan_netdev(structured: dict, vlan: int) -> str | None:
    for entry in (structured.get("network") or {}).get("vlans") or []:
        if entry["id"] == vlan:
            return entry["name"]
    return None


def roce_marking(structured: dict, pair: dict, gids: dict | None = None) -> dict | None:
    """{tos, gid_type, server: gid entry | None, client: ...} of a pair on a RoCE VLAN, else None.

    structured: host -> structured config; gids: {"server": {netdev: [entries]},
    "client": ...} as cxfab_host_facts read them (absent when the facts were not read).
    """
    structured = Unpacked(structured)  # as validate.yml publishes it, or decoded
    lossless = (structured.get(pair["client"]) or {}).get("lossless")
    if not lossless or pair.get("vlan") not in lossless["roce"]["vlans"]:
        return None
    gid_type = lossless["roce"]["gid_type"]
    marking = {"tos": lossless["roce"]["tos"], "gid_type": gid_type}
    for side in ("server", "client"):
        netdev = _vlan_netdev(structured.get(pair[side]) or {}, pair["vlan"])
        entries = ((gids or {}).get(side) or {}).get(netdev) or []
        marking[side] = pick_gid(entries, gid_type)
    return marking


def uses_gid_index(marking: dict | None) -> bool:
    return bool(marking and marking["server"] and marking["client"])


def perftest_connection(marking: dict | None, side: str) -> list[str]:
    """perftest options that connect one side: RDMA-CM, or the GID index and class."""
    if not marking:
        return ["-R"]
    if uses_gid_index(marking):
        gid = marking[side]
        return ["-d", gid["device"], "-x", str(gid["index"]), "--tclass", str(marking["tos"])]
    return ["-R", "--tos", str(marking["tos"])]


def describe(marking: dict | None, tool: str) -> str | None:
    """What a run's record says about its marking (None off a lossless RoCE VLAN)."""
    if not marking:
        return None
    if tool == "qperf":
        return QPERF_UNMARKED
    if tool == "ib_write_bw" and uses_gid_index(marking):
        gids = ", ".join(
            f"{side} {marking[side]['device']} index {marking[side]['index']}"
            for side in ("client", "server")
        )
        return f"ToS {marking['tos']}, {marking['gid_type']} GID ({gids})"
    if tool == "ib_write_bw":
        return f"ToS {marking['tos']}, GID chosen by RDMA-CM (no {marking['gid_type']} GID read)"
    return f"ToS {marking['tos']} (RDMA-CM)"
