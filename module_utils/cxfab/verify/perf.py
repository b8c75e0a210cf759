"""Performance checks: each workload against its same-run reference and the link's limit."""

from __future__ import annotations

from ..common.checks import Checks
from .readings import data_ports, gbps


def rdma_rate_gbps(rate_text) -> float | None:
    """`/sys/class/infiniband/<dev>/ports/<p>/rate` ("100 Gb/sec (4X EDR)") -> 100.0."""
    parts = str(rate_text or "").split()
    if len(parts) < 2 or not parts[1].startswith("Gb/sec"):
        return None
    try:
        return float(parts[0])
    except ValueError:
        return None


def link_ceiling(host: dict, facts: dict) -> tuple[float | None, str]:
    """min(port rate, PCIe link bandwidth) of a host in Gb/s, or None and the reason."""
    if not facts:
        return None, "host facts were not gathered in this run"
    devices, intent = facts.get("rdma") or {}, (host.get("rdma") or {}).get("devices") or []
    chosen = {d["name"]: devices.get(d["name"]) or {} for d in intent} or devices
    if not chosen:
        return None, "no RDMA device found"
    soft = sorted(n for n, d in chosen.items() if d.get("software"))
    soft += [d["name"] for d in intent if d["type"] == "rxe"]
    if soft:
        return None, f"soft-RoCE device {soft[0]}: its port rate is nominal, not a hardware limit"
    rates = [rdma_rate_gbps(d.get("rate")) for d in chosen.values()]
    netdevs = facts.get("netdevs") or {}
    pcie = [(netdevs.get(p["netdev"]) or {}).get("pcie_gbps") for p in data_ports(host)]
    if None in rates or not rates:
        return None, "an RDMA port rate is unreadable"
    if not pcie or None in pcie:
        return None, "the PCIe link of the adapter is unreadable"
    return min(min(rates), min(pcie)), f"port {min(rates):g} Gb/s, PCIe {min(pcie):g} Gb/s"


def _first(rows, key, tool, transport=None, size=None):
    """`key` of the first result of `tool` (at that transport and size) that has it."""
    for row in rows:
        if (
            row.get("tool") == tool
            and row.get(key) is not None
            and transport in (None, row.get("transport"))
            and size in (None, row.get("size_bytes"))
        ):
            return row[key]
    return None


def _bps(rows, tool, transport=None, size=None):
    """Bits per second of the first matching result, None when it did not run."""
    value = _first(rows, "bits_per_second", tool, transport, size)
    return None if value is None else float(value)


def _error(rows, tool, transport=None, size=None) -> str:
    """Why a run of `tool` has no figure (the rdma_workloads role records it), or ''."""
    return str(_first(rows, "error", tool, transport, size) or "")


def _relative(out, thresholds, key, at, value, ref, what, against, why_missing=""):
    """value / ref >= thresholds[key]; skip (with the reason) without a threshold; either
    figure missing (or both: our transport and its reference failed alike) fails."""
    threshold = thresholds.get(key)
    check_id = f"perf.{key}" + (f".{at}" if at else "")
    expected = f"{what} >= {threshold} x {against}" + (f" at {at} B" if at else "")
    if threshold is None:
        reason = f"no workloads.thresholds.{key} in the inventory"
        out.skip(check_id, f"{what} vs {against}", reason)
    elif value is None or not ref:
        missing = (
            " and ".join(name for name, got in ((what, value), (against, ref)) if got is None)
            or against
        )
        measured_zero = value is not None and ref is not None  # the tool averaged 0 b/s
        reason = why_missing or ("averaged 0 b/s" if measured_zero else "no result")
        out.fail(check_id, expected, f"{missing}: {reason}")
    else:
        ratio = value / ref
        observed = f"ratio {ratio:.3f} ({gbps(value)} vs {gbps(ref)})"
        out.judge(check_id, ratio >= float(threshold), expected, observed)


def perf_checks(workloads, hosts, results, host_facts, run_error="") -> tuple[list, list]:
    """Checks of the workload runs, each against a reference measured in the same run."""
    thresholds, pairs = workloads.get("thresholds") or {}, workloads.get("pairs") or []
    found, series = [], []
    for pair in pairs:
        target = pair["name"]
        perf, integrity = Checks(target), Checks(target)
        rows = [r for r in results or [] if r.get("pair") == target]
        if not rows:
            perf.fail("perf.results", "workload results", "none", run_error or "no result")
            found += perf
            continue
        label = "" if len(pairs) == 1 else f"{target} "
        names = {"pingpong": "{transport}", "ib_write_bw": "ib_write_bw (reference)"}
        for row in rows:
            if row.get("tool") in names and row.get("size_bytes") and row.get("bits_per_second"):
                series.append(
                    {
                        "transport": label + names[row["tool"]].format(**row),
                        "size_bytes": row["size_bytes"],
                        "bits_per_second": row["bits_per_second"],
                    }
                )
        sizes = sorted({r["size_bytes"] for r in rows if r.get("tool") == "pingpong"})
        for size in sizes:
            _relative(
                perf,
                thresholds,
                "rdma_vs_ib_write_bw",
                size,
                _bps(rows, "pingpong", "rdma", size),
                _bps(rows, "ib_write_bw", size=size),
                "pingpong over RDMA",
                "ib_write_bw",
                _error(rows, "pingpong", "rdma", size) or _error(rows, "ib_write_bw", size=size),
            )
        tcp = [b for b in (_bps(rows, "pingpong", "tcp", s) for s in sizes) if b is not None]
        _relative(
            perf,
            thresholds,
            "tcp_vs_iperf3",
            None,
            max(tcp, default=None),
            _bps(rows, "iperf3"),
            "best pingpong over TCP",
            "iperf3",
            _error(rows, "pingpong", "tcp") or _error(rows, "iperf3"),
        )
        _link_fraction(perf, pair, hosts, host_facts, thresholds, rows)
        _checksums(integrity, rows, sizes)
        _rcat(integrity, rows)
        found += perf + integrity
    return found, series


def _link_fraction(out, pair, hosts, host_facts, thresholds, rows) -> None:
    fraction = float(thresholds.get("link_fraction", 0.9))
    expected = f"best ib_write_bw >= {fraction:g} x min(port rate, PCIe link)"
    ceilings = []
    for host in (pair["client"], pair["server"]):
        ceiling, why = link_ceiling(hosts.get(host) or {}, (host_facts or {}).get(host) or {})
        if ceiling is None:
            # Not applicable: a soft-RoCE port (intent), or the host section did not run.
            if why.startswith("soft-RoCE") or why.startswith("host facts were not"):
                out.skip("perf.link_fraction", expected, f"{host}: {why}")
            else:
                out.unmeasured("perf.link_fraction", expected, f"{host}: {why}")
            return
        ceilings.append((ceiling, f"{host}: {why}"))
    tool = [
        float(r["bits_per_second"])
        for r in rows
        if r.get("tool") == "ib_write_bw" and r.get("bits_per_second")
    ]
    limit = min(c for c, _ in ceilings)
    if not tool:
        out.fail("perf.link_fraction", expected, "no ib_write_bw result")
        return
    ratio = max(tool) / (limit * 1e9)
    observed = f"{gbps(max(tool))}, ratio {ratio:.3f} ({'; '.join(w for _, w in ceilings)})"
    out.judge(
        "perf.link_fraction",
        ratio >= fraction,
        f"{expected} = {fraction * limit:.3f} Gb/s",
        observed,
    )


def _checksums(out, rows, sizes) -> None:
    for size in sizes:
        sums = {
            r["transport"]: r.get("checksum")
            for r in rows
            if r.get("tool") == "pingpong" and r.get("size_bytes") == size
        }
        expected = "one checksum across " + ", ".join(sorted(sums))
        if len(sums) < 2:
            out.skip(f"perf.checksum.{size}", expected, "fewer than two transports at this size")
            continue
        observed = ", ".join(f"{t} {sums[t]}" for t in sorted(sums))
        ok = len(set(sums.values())) == 1 and None not in sums.values()
        out.judge(f"perf.checksum.{size}", ok, expected, observed)


def _rcat(out, rows) -> None:
    record = next((r for r in rows if r.get("tool") == "rcat-integrity"), None)
    if record is not None:
        sent, received = record.get("sent_sha256") or "", record.get("received_sha256") or ""
        out.judge(
            "perf.rcat.sha256",
            bool(sent) and sent == received,
            f"received sha256 = sent {sent or '?'}",
            f"received {received or 'nothing'}",
        )
