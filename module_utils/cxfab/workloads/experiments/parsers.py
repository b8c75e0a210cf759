"""Parsers for the reference tools' outputs: qperf, perftest (ib_*_bw, ib_*_lat), iperf3.

Every parser returns plain numbers in base units (bytes, seconds, bits per
second, percent) and fails closed: what it cannot read raises ValueError with
the tool's name, what was missing and the first lines of the output, so a
report says why a figure is absent instead of printing 0.
"""

from __future__ import annotations

import json
import re


def excerpt(text: str, lines: int = 3) -> str:
    """The first non-empty lines of an output, for error messages."""
    kept = [line.strip() for line in (text or "").splitlines() if line.strip()][:lines]
    return " | ".join(kept) if kept else "(empty output)"


def _fail(tool: str, what: str, text: str) -> ValueError:
    return ValueError(f"{tool}: {what} (output: {excerpt(text)})")


# ---------------------------------------------------------------- qperf

# qperf prints decimal prefixes for rates (GB/sec = 1e9 bytes/sec) and, with
# -vv, binary ones for sizes (KiB). Each unit maps to (quantity, factor to base).
_DECIMAL = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BINARY = {"Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3}
_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "sec": 1.0}
_QPERF_UNITS = {
    "bytes/sec": ("bytes_per_s", 1.0),
    **{f"{prefix}B/sec": ("bytes_per_s", factor) for prefix, factor in _DECIMAL.items()},
    "bits/sec": ("bytes_per_s", 1 / 8),
    **{f"{prefix}b/sec": ("bytes_per_s", factor / 8) for prefix, factor in _DECIMAL.items()},
    **{unit: ("seconds", factor) for unit, factor in _SECONDS.items()},
    "/sec": ("per_s", 1.0),
    **{f"{prefix}/sec": ("per_s", _DECIMAL[prefix]) for prefix in ("K", "M", "G")},
    "% cpus": ("percent", 1.0),
    **{f"{unit}/GB": ("seconds_per_GB", factor) for unit, factor in _SECONDS.items()},
    "bytes": ("bytes", 1.0),
    **{f"{prefix}B": ("bytes", factor) for prefix, factor in (_DECIMAL | _BINARY).items()},
    "": ("count", 1.0),
    "thousand": ("count", 1e3),
    "million": ("count", 1e6),
    "billion": ("count", 1e9),
}
_QPERF_TEST = re.compile(r"^([a-z][a-z0-9_]*):\s*$")
_QPERF_VALUE = re.compile(r"^\s+(\w+)\s*=\s*([\d,.]+)\s*(.*?)\s*$")


def qperf_results(stdout: str, tests: list[str] | tuple[str, ...] = ()) -> dict[str, dict]:
    """qperf: {test: {key: value in base units}} for every test block of the output.

    `bw` is in bytes/s, `latency` and `time` in seconds, `msg_rate` per second,
    `*_cpus_used` in percent of one CPU, `*_cost` in seconds per GB; a size with
    its exact count in brackets (`64 KiB (65,536)`) reads the count. A test
    whose block holds an error line instead of values raises, as does any test
    in `tests` that the output lacks.
    """
    results: dict[str, dict] = {}
    errors: dict[str, str] = {}
    current = None
    for line in stdout.splitlines():
        head = _QPERF_TEST.match(line)
        if head:
            current = head.group(1)
            results[current] = {}
            continue
        if current is None or not line.strip():
            continue
        value = _QPERF_VALUE.match(line)
        if not value:
            errors.setdefault(current, line.strip())
            continue
        key, number, unit = value.groups()
        exact = re.fullmatch(r"\w+\s*\(([\d,]+)\)", unit)
        if exact:
            results[current][key] = float(exact.group(1).replace(",", ""))
            continue
        if unit not in _QPERF_UNITS:
            raise _fail("qperf", f"{current}.{key}: unknown unit {unit!r}", stdout)
        results[current][key] = float(number.replace(",", "")) * _QPERF_UNITS[unit][1]
    for test in tests or results:
        if test not in results:
            raise _fail("qperf", f"no result for {test}", stdout)
        if test in errors:
            raise ValueError(f"qperf: {test} failed: {errors[test]}")
        if not results[test] and test != "quit":
            raise _fail("qperf", f"{test} printed no values", stdout)
    return results


# ---------------------------------------------------------------- perftest

# perftest's MB/sec (MiB/sec in newer releases) is 2^20 bytes/s; Gb/sec
# (--report_gbits) is 1e9 bits/s (format_factor in perftest_parameters.c).
_PERFTEST_BW_UNITS = {"Gb": 1e9, "MB": 8 * 2**20, "MiB": 8 * 2**20}
_BW_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(\w+)/sec\]\s+BW average\[\w+/sec\]")
_LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\]")
_LAT_DUR_HEADER = re.compile(r"#bytes\s+#iterations\s+t_avg\[usec\]\s+tps average")
_NUMBER = r"([-\d.]+)"


def _rows(text: str, start: int, columns: int) -> list[list[float]]:
    """The numeric rows right after a table header (until a ruler or text line)."""
    rows = []
    for line in text[start:].splitlines()[1:]:
        fields = line.split()
        if not fields:
            continue
        try:
            numbers = [float(f) for f in fields]
        except ValueError:
            break
        if len(numbers) < columns:
            break
        rows.append(numbers)
    return rows


# perftest's clock could not be calibrated: the run may be tried once more (retries.py).
UNCALIBRATED = "perftest could not calibrate its cycle counter"


def perftest_bw_rows(stdout: str, tool: str = "ib_write_bw") -> list[dict]:
    """ib_write_bw / ib_read_bw text: one dict per result row (several with -a).

    Keys: bytes, iterations, bw_peak_bps, bw_average_bps (bits/s), msg_rate_mpps
    and cpu_util_percent when the run had --cpu_util.
    """
    header = _BW_HEADER.search(stdout)
    if not header:
        raise _fail(tool, "no result table", stdout)
    scale = _PERFTEST_BW_UNITS.get(header.group(1))
    if scale is None:
        raise _fail(tool, f"unknown unit {header.group(1)}/sec", stdout)
    line_end = stdout.find("\n", header.start())
    has_cpu = "CPU_Util" in stdout[header.start() : line_end if line_end > 0 else None]
    rows = _rows(stdout, header.start(), 5)
    if not rows:
        raise _fail(tool, "result table has no row", stdout)
    out = []
    for row in rows:
        if row[1] > 0 and row[3] <= 0:
            # perftest prints 0.00 when its cycle counter could not be calibrated
            # against the clock (stderr: "Correlation coefficient r^2 < 0.9", seen
            # on loaded virtual machines with -F): no bandwidth was read, so none
            # is reported and the run can be retried.
            raise _fail(
                tool,
                f"{int(row[1])} iterations of {int(row[0])} B at 0 bandwidth ({UNCALIBRATED})",
                stdout,
            )
        item = {
            "bytes": int(row[0]),
            "iterations": int(row[1]),
            "bw_peak_bps": row[2] * scale,
            "bw_average_bps": row[3] * scale,
            "msg_rate_mpps": row[4],
        }
        if has_cpu and len(row) > 5:
            item["cpu_util_percent"] = row[5]
        out.append(item)
    return out


_LAT_KEYS = ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "percentile_99", "percentile_99.9")


def perftest_lat_rows(stdout: str, tool: str = "ib_write_lat") -> list[dict]:
    """ib_write_lat / ib_read_lat text: one dict per row, times in seconds.

    Iteration mode (-n) prints min/max/typical (median)/avg/stdev and the 99 and
    99.9 percentiles; duration mode (-D) prints only t_avg and tps_average.
    ib_write_lat's figures are half a round trip; ib_read_lat's a whole read.
    """
    header = _LAT_HEADER.search(stdout)
    if header:
        rows = _rows(stdout, header.start(), 2 + len(_LAT_KEYS))
        keys = _LAT_KEYS
    else:
        header = _LAT_DUR_HEADER.search(stdout)
        if not header:
            raise _fail(tool, "no latency table", stdout)
        rows = _rows(stdout, header.start(), 4)
        keys = ("t_avg", "tps_average")
    if not rows:
        raise _fail(tool, "latency table has no row", stdout)
    out = []
    for row in rows:
        item = {"bytes": int(row[0]), "iterations": int(row[1])}
        for key, value in zip(keys, row[2:], strict=False):
            item[key if key == "tps_average" else f"{key}_s"] = (
                value if key == "tps_average" else value * 1e-6
            )
        out.append(item)
    return out


_RELAXED_PAIR = re.compile(r'^\s*"?([\w.% ]+?)"?\s*:\s*"?([^,"\n]*)"?\s*,?\s*$', re.M)


def perftest_json_results(text: str, tool: str = "perftest") -> dict[str, float]:
    """The `results` object of an --out_json file, as numbers.

    perftest >= 4.5-0.20 writes real JSON; Debian 12's 4.5-0.17 writes the same
    keys without quotes and with trailing commas (`results: {` / `t_avg: 1.23,`),
    which json cannot read; both are accepted.
    """
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        results = data.get("results")
        if not isinstance(results, dict) or not results:
            raise _fail(tool, "JSON has no results object", text)
        return {k: float(v) for k, v in results.items() if isinstance(v, int | float)}
    block = re.search(r'^\s*"?results"?\s*:\s*\{(.*?)^\s*\}', text, re.M | re.S)
    if not block:
        raise _fail(tool, "JSON has no results object", text)
    results = {}
    for key, value in _RELAXED_PAIR.findall(block.group(1)):
        try:
            results[key.strip()] = float(value)
        except ValueError:
            continue
    if not results:
        raise _fail(tool, "results object holds no number", text)
    return results


# ---------------------------------------------------------------- iperf3


def iperf3_result(stdout: str, streams: int | None = None) -> dict:
    """iperf3 -J: receiver and sender totals, each stream, and CPU use.

    bits_per_second is what the receiver got (summed over -P streams);
    per_stream lists each stream's receiver rate; cpu holds iperf3's
    cpu_utilization_percent (host = this side, remote = the server). With
    `streams`, a run that connected fewer streams raises.
    """
    try:
        data = json.loads(stdout)
    except ValueError:
        raise _fail("iperf3", "output is not JSON", stdout) from None
    if not isinstance(data, dict):
        raise _fail("iperf3", "output is not a JSON object", stdout)
    if data.get("error"):
        raise ValueError(f"iperf3: {data['error']}")
    end = data.get("end") or {}
    received = (end.get("sum_received") or {}).get("bits_per_second")
    sent = (end.get("sum_sent") or {}).get("bits_per_second")
    if received is None:
        raise _fail("iperf3", "no end.sum_received.bits_per_second", stdout)
    per_stream = []
    for index, stream in enumerate(end.get("streams") or []):
        receiver = stream.get("receiver") or {}
        if "bits_per_second" not in receiver:
            raise _fail("iperf3", f"end.streams[{index}] has no receiver rate", stdout)
        per_stream.append(
            {
                "bits_per_second": float(receiver["bits_per_second"]),
                "bytes": int(receiver.get("bytes", 0)),
                "retransmits": (stream.get("sender") or {}).get("retransmits"),
            }
        )
    if streams is not None and len(per_stream) != streams:
        raise ValueError(f"iperf3: {len(per_stream)} streams reported, {streams} asked for (-P)")
    cpu = end.get("cpu_utilization_percent") or {}
    return {
        "bits_per_second": float(received),
        "sender_bits_per_second": float(sent) if sent is not None else None,
        "streams": len(per_stream),
        "per_stream": per_stream,
        "retransmits": (end.get("sum_sent") or {}).get("retransmits"),
        "cpu": {k: float(v) for k, v in cpu.items() if isinstance(v, int | float)},
    }
