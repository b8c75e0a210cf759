"""QoS back ends: command lines to program a plan and parsers to read it back.

Three ways to get the same per-TC limits on a port, chosen in this order:
`mlnx_qos` (ConnectX tools, DCB netlink), iproute2 `dcb` (upstream DCB
netlink), and a software shaper with `tc` (HTB classes selected by the VLAN
PCP) for NICs without DCB. Each back end has `*_args(plan)` -> argv lists and
`*_state(output)` -> the normalised state `{"prio_tc": [8], "tcs": {tc:
{"tsa", "bandwidth_percent", "rate_limit_mbps"}}}` that `expected_state(plan,
backend)` predicts after the hardware's quantisation.
"""

from __future__ import annotations

import itertools
import json
import re

# 802.1p priorities and the traffic classes DCB addresses.
NUM_PRIORITIES = 8
NUM_TCS = 8

MLNX_COARSE_STEP_MBPS = 1000

TC_ROOT_HANDLE = "1:"
TC_PARENT_CLASS = "1:1"
TC_DEFAULT_MINOR = 99
TC_FILTER_PREF_BASE = 100
# HTB lends a class `burst` bytes beyond its rate when its timer fires late. tc's
# default (about rate/HZ plus one MTU) assumes timers fire on time; a host whose cores
# are busy with the very traffic being shaped serves them late, the tokens of the late
# interval are lost and a limited class delivers less than its limit (the lab's TCG
# guests delivered 0.82-0.88 of 30 Mb/s). So the burst is set from the rate: this many
# milliseconds of traffic at the class's limit, never less than ten full frames.
TC_BURST_MS_DEFAULT = 10
TC_MIN_BURST_BYTES = 10 * 1514


def quantise_mlnx(rate_mbps):
    """Rate limit as a ConnectX port reads it back (None = unlimited).

    mlnx_qos takes whole Gb/s; the card stores 100 Mb/s units up to 25.5 Gb/s and
    1 Gb/s units above, so a whole-Gb/s request reads back unchanged.
    """
    if not rate_mbps:
        return None
    return max(1, rate_mbps // MLNX_COARSE_STEP_MBPS) * MLNX_COARSE_STEP_MBPS


def mlnx_unrepresentable(plan: dict) -> list[int]:
    """TCs whose limit mlnx_qos cannot express (not a whole Gb/s)."""
    return [
        t["tc"]
        for t in plan["tcs"]
        if t["rate_limit_mbps"] and t["rate_limit_mbps"] % MLNX_COARSE_STEP_MBPS
    ]


def quantise_kbps(rate_mbps):
    """DCB netlink (ieee_maxrate) keeps kb/s: Mb/s values come back unchanged."""
    return rate_mbps or None


QUANTISERS = {"mlnx_qos": quantise_mlnx, "dcb": quantise_kbps, "tc": quantise_kbps}


def expected_state(plan: dict, backend: str) -> dict:
    """What a correct read-back shows for `plan` on `backend`."""
    quantise = QUANTISERS[backend]
    tcs = {}
    for entry in plan["tcs"]:
        tcs[entry["tc"]] = {
            "tsa": entry["tsa"],
            "bandwidth_percent": entry["bandwidth_percent"] if entry["tsa"] == "ets" else 0,
            "rate_limit_mbps": quantise(entry["rate_limit_mbps"]),
        }
    if backend == "tc":
        # A software shaper has no scheduler or share, only limits per class.
        tcs = {tc: {"rate_limit_mbps": v["rate_limit_mbps"]} for tc, v in tcs.items()}
    # Only TCs some priority maps to carry traffic (and mlnx_qos lists only those).
    used = set(plan["prio_tc"])
    tcs = {tc: v for tc, v in tcs.items() if tc in used}
    return {"prio_tc": list(plan["prio_tc"]), "tcs": tcs}


def differences(expected: dict, observed: dict) -> list[str]:
    """Human-readable differences (empty when the port matches the plan)."""
    found = []
    if expected["prio_tc"] != observed.get("prio_tc"):
        found.append(f"prio_tc {observed.get('prio_tc')} != {expected['prio_tc']}")
    have_tcs = observed.get("tcs") or {}
    for tc, want in expected["tcs"].items():
        have = have_tcs.get(tc)
        if have is None:
            found.append(f"tc {tc} missing")
            continue
        for key, value in want.items():
            if have.get(key) != value:
                found.append(f"tc {tc} {key} {have.get(key)!r} != {value!r}")
    return found


# ---------------------------------------------------------------- mlnx_qos


def _gbps(rate_mbps) -> str:
    if not rate_mbps:
        return "0"
    text = f"{rate_mbps / 1000:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def mlnx_qos_args(tool: str, port: str, plan: dict) -> list[str]:
    """One `mlnx_qos` call setting prio->TC, TSA, ETS shares and rate limits (Gb/s)."""
    tcs = plan["tcs"]
    return [
        tool,
        "-i",
        port,
        "--prio_tc=" + ",".join(str(tc) for tc in plan["prio_tc"]),
        "--tsa=" + ",".join(t["tsa"] for t in tcs),
        "--tcbw=" + ",".join(str(t["bandwidth_percent"] if t["tsa"] == "ets" else 0) for t in tcs),
        "--ratelimit=" + ",".join(_gbps(quantise_mlnx(t["rate_limit_mbps"])) for t in tcs),
    ]


_TC_LINE = re.compile(r"^\s*tc:\s*(\d+)\s+(.*)$")
_RATE = re.compile(r"ratelimit:\s*(unlimited|[\d.]+)\s*([KMG]?bps)?", re.IGNORECASE)
_TSA = re.compile(r"tsa:\s*(\w+)")
_BW = re.compile(r"bw:\s*(\d+)\s*%?")
_PRIO = re.compile(r"^\s*priority:\s*([\d,\s]+)$")
_UNIT_MBPS = {"kbps": 0.001, "mbps": 1, "gbps": 1000, "": 1000}


def mlnx_qos_state(output: str) -> dict:
    """Parse `mlnx_qos -i <if>`: `tc: N ratelimit: X Gbps, tsa: T[, bw: B%]` blocks,
    each followed by the `priority:` lines of the priorities mapped to it."""
    tcs: dict[int, dict] = {}
    prio_tc = [None] * NUM_PRIORITIES
    current = None
    for line in output.splitlines():
        match = _TC_LINE.match(line)
        if match:
            current = int(match.group(1))
            rest = match.group(2)
            rate = _RATE.search(rest)
            tsa = _TSA.search(rest)
            bandwidth = _BW.search(rest)
            limit = None
            if rate and rate.group(1).lower() != "unlimited":
                scale = _UNIT_MBPS[(rate.group(2) or "").lower()]
                limit = round(float(rate.group(1)) * scale) or None
            tcs[current] = {
                "tsa": tsa.group(1).lower() if tsa else None,
                "bandwidth_percent": int(bandwidth.group(1)) if bandwidth else 0,
                "rate_limit_mbps": limit,
            }
            continue
        match = _PRIO.match(line)
        if match and current is not None:
            for item in re.split(r"[,\s]+", match.group(1).strip()):
                if item.isdigit() and int(item) < NUM_PRIORITIES:
                    prio_tc[int(item)] = current
    return {"prio_tc": prio_tc, "tcs": tcs}


# ---------------------------------------------------------------- iproute2 dcb


def dcb_args(tool: str, port: str, plan: dict, legacy_maxrate_units: bool) -> list[list[str]]:
    """`dcb ets set` then `dcb maxrate set`.

    iproute2 before the tc-maxrate unit fix (2025) passed the parsed bytes/s to the
    kernel as kb/s; `legacy_maxrate_units` writes the value so both read it right.
    """
    tcs = plan["tcs"]
    ets = [tool, "ets", "set", "dev", port, "prio-tc"]
    ets += [f"{p}:{tc}" for p, tc in enumerate(plan["prio_tc"])]
    ets += ["tc-tsa"] + [f"{t['tc']}:{t['tsa']}" for t in tcs]
    ets += ["tc-bw"] + [
        f"{t['tc']}:{t['bandwidth_percent'] if t['tsa'] == 'ets' else 0}" for t in tcs
    ]
    rates = []
    for t in tcs:
        kbps = (t["rate_limit_mbps"] or 0) * 1000
        rates.append(
            f"{t['tc']}:{kbps * 8}bit" if legacy_maxrate_units else f"{t['tc']}:{kbps}kbit"
        )
    maxrate = [tool, "maxrate", "set", "dev", port, "tc-maxrate", *rates]
    return [ets, maxrate]


def _as_list(value, size):
    if isinstance(value, dict):
        return [value.get(str(i), value.get(i)) for i in range(size)]
    if isinstance(value, list):
        flat = []
        for item in value:
            if isinstance(item, dict) and len(item) == 1:
                flat.append(next(iter(item.values())))
            elif isinstance(item, dict) and "tc" in item:
                flat.append(item.get("value"))
            else:
                flat.append(item)
        return flat + [None] * (size - len(flat))
    return [None] * size


def dcb_state(ets_json: str, maxrate_json: str, legacy_maxrate_units: bool) -> dict:
    """Parse `dcb -j ets show dev X` and `dcb -j maxrate show dev X`."""
    ets = _json(ets_json, {})
    maxrate = _json(maxrate_json, {})
    tsa = _as_list(ets.get("tc_tsa"), NUM_TCS)
    bandwidth = _as_list(ets.get("tc_bw"), NUM_TCS)
    prio_tc = _as_list(ets.get("prio_tc"), NUM_PRIORITIES)
    rates = _as_list(maxrate.get("tc_maxrate"), NUM_TCS)
    tcs = {}
    for tc in range(NUM_TCS):
        raw = rates[tc] or 0
        # Fixed iproute2 prints bytes/s; older releases print the kernel's kb/s.
        mbps = raw / 1000 if legacy_maxrate_units else raw * 8 / 1_000_000
        tcs[tc] = {
            "tsa": tsa[tc],
            "bandwidth_percent": int(bandwidth[tc] or 0) if tsa[tc] == "ets" else 0,
            "rate_limit_mbps": round(mbps) or None,
        }
    return {"prio_tc": [None if p is None else int(p) for p in prio_tc], "tcs": tcs}


def dcb_needs_legacy_units(version_output: str) -> bool:
    """True for iproute2 releases older than 6.17, which predate the maxrate unit fix."""
    match = re.search(r"iproute2-(?:ss)?v?(\d+)\.(\d+)", version_output or "")
    if not match:
        return True
    return (int(match.group(1)), int(match.group(2))) < (6, 17)


# ---------------------------------------------------------------- tc (software)


def _json(text: str, empty):
    """tc/dcb print nothing (or a bare newline) when there is nothing to list."""
    text = (text or "").strip()
    return json.loads(text) if text else empty


_TC_RATE = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)bit$")
_TC_RATE_SCALE = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def tc_classes(text: str) -> list[dict]:
    """`tc -j class show`, as JSON where iproute2 prints it (rates in bytes/s).

    iproute2 6.1 has no JSON printer for HTB classes and prints its text format even
    with -j (`class htb 1:10 parent 1:1 prio 0 rate 20Mbit ceil 20Mbit ...`), so
    that form is read into the same keys.
    """
    text = (text or "").strip()
    if not text or text.startswith("["):
        return _json(text, [])
    classes = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[0] != "class":
            continue
        cls: dict = {"class": fields[1], "handle": fields[2]}
        for key, value in itertools.pairwise(fields[3:]):
            if key == "parent":
                cls["parent"] = value
            elif key in ("rate", "ceil") and (rate := _TC_RATE.match(value)):
                cls[key] = round(float(rate[1]) * _TC_RATE_SCALE[rate[2]] / 8)
        classes.append(cls)
    return classes


def tc_classid(tc: int) -> str:
    return f"1:{10 + tc}"


def tc_burst_bytes(rate_mbps: int, burst_ms: int) -> int:
    """`burst_ms` of traffic at `rate_mbps`, in bytes (see TC_BURST_MS_DEFAULT)."""
    return max(TC_MIN_BURST_BYTES, rate_mbps * 1000 * burst_ms // 8)


def tc_args(
    tool: str, port: str, plan: dict, ceiling_mbps: int, burst_ms: int = TC_BURST_MS_DEFAULT
) -> list[list[str]]:
    """HTB on the port: one class per used TC, filters on the VLAN PCP (user priority).

    Untagged frames have no PCP and go to the default class, which is unlimited. A
    limited class gets a burst from its rate (TC_BURST_MS_DEFAULT says why).
    """
    used = sorted(set(plan["prio_tc"]))
    limits = {t["tc"]: t["rate_limit_mbps"] for t in plan["tcs"]}
    root = TC_ROOT_HANDLE
    # Start from an empty port: another tool's tree (or an older plan) may use the
    # same handles with other parents. The first command may fail when no root exists.
    commands = [
        [tool, "qdisc", "del", "dev", port, "root"],
        [tool, "qdisc", "add", "dev", port, "root", "handle", root, "htb",
         "default", str(TC_DEFAULT_MINOR)],
        [tool, "class", "add", "dev", port, "parent", root, "classid", TC_PARENT_CLASS,
         "htb", "rate", f"{ceiling_mbps}mbit", "ceil", f"{ceiling_mbps}mbit"],
        [tool, "class", "add", "dev", port, "parent", TC_PARENT_CLASS, "classid",
         f"1:{TC_DEFAULT_MINOR}", "htb", "rate", f"{ceiling_mbps}mbit",
         "ceil", f"{ceiling_mbps}mbit"],
    ]  # fmt: skip
    for tc in used:
        rate = limits.get(tc) or ceiling_mbps
        burst = []
        if limits.get(tc):
            size = str(tc_burst_bytes(rate, burst_ms))
            burst = ["burst", size, "cburst", size]
        commands.append(
            [tool, "class", "add", "dev", port, "parent", TC_PARENT_CLASS,
             "classid", tc_classid(tc), "htb", "rate", f"{rate}mbit", "ceil", f"{rate}mbit",
             *burst]
        )  # fmt: skip
    for priority, tc in enumerate(plan["prio_tc"]):
        commands.append(
            [tool, "filter", "add", "dev", port, "parent", root, "protocol", "802.1Q",
             "pref", str(TC_FILTER_PREF_BASE + priority), "flower", "vlan_prio",
             str(priority), "classid", tc_classid(tc)]
        )  # fmt: skip
    return commands


def tc_state(qdisc_json: str, class_json: str, filter_json: str, ceiling_mbps: int) -> dict:
    """Read back the HTB tree: limits per TC class and the PCP -> class filters."""
    qdiscs = _json(qdisc_json, [])
    root = next((q for q in qdiscs if q.get("root") or q.get("parent") == "root"), None)
    if not root or root.get("kind") != "htb" or root.get("handle") != TC_ROOT_HANDLE:
        return {"prio_tc": [None] * NUM_PRIORITIES, "tcs": {}, "root": root and root.get("kind")}
    tcs = {}
    for cls in tc_classes(class_json):
        handle = cls.get("handle", "")
        major, _, minor = handle.partition(":")
        if major != "1" or not minor.isdigit() or not 10 <= int(minor) < 10 + NUM_TCS:
            continue
        if cls.get("parent") != TC_PARENT_CLASS:
            continue
        rate_mbps = round(int(cls.get("rate", 0)) * 8 / 1_000_000)
        ceil_mbps = round(int(cls.get("ceil", 0)) * 8 / 1_000_000)
        limit = None if rate_mbps >= ceiling_mbps else min(rate_mbps, ceil_mbps)
        tcs[int(minor) - 10] = {"rate_limit_mbps": limit}
    prio_tc: list = [None] * NUM_PRIORITIES
    for flt in _json(filter_json, []):
        options = flt.get("options") or {}
        keys = options.get("keys") or {}
        classid = options.get("classid") or options.get("flowid")
        if flt.get("kind") != "flower" or "vlan_prio" not in keys or not classid:
            continue
        major, _, minor = str(classid).partition(":")
        if major == "1" and minor.isdigit() and 0 <= int(keys["vlan_prio"]) < NUM_PRIORITIES:
            prio_tc[int(keys["vlan_prio"])] = int(minor) - 10
    return {"prio_tc": prio_tc, "tcs": tcs, "root": "htb"}
