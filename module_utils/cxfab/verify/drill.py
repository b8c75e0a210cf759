"""Failover drill: what the hosts' continuous pings say about one switch going away.

`ping -D -O -n -i <interval>` (iputils) prints one timestamped line per probe: a
reply (`[t] 64 bytes from ...: icmp_seq=N ...`) or, when the next probe leaves
without an answer, `[t] no answer yet for icmp_seq=N`. From that timeline and the
moments the drill took the switch's MPOs down and brought them back, this module
counts the pings lost at the failure and at the return and the longest gap between
two replies (the convergence time the hosts saw). Pure functions, no I/O.
"""

from __future__ import annotations

import re
from datetime import datetime

REPLY = re.compile(r"^\[(\d+\.\d+)\] \d+ bytes from [^:]+: icmp_seq=(\d+) ")
NO_ANSWER = re.compile(r"^\[(\d+\.\d+)\] no answer yet for icmp_seq=(\d+)\s*$")
SUMMARY = re.compile(r"^(\d+) packets transmitted, (\d+) received", re.M)


class DrillReadError(ValueError):
    """A ping output that cannot be read (names the target and its first lines)."""


def parse_timeline(text: str, interval: float, where: str = "ping") -> dict:
    """ping -D -O output -> {sent: {seq: time}, replies: {seq: time}, transmitted}.

    A probe's send time is its reply's time (RTTs are far below the interval), or one
    interval before its `no answer yet` line; probes with neither are placed between
    their neighbours, and those after the last line are left out (in flight at the end)."""
    summary = SUMMARY.search(text or "")
    lines = (text or "").splitlines()
    if summary is None or not any(REPLY.match(x) or NO_ANSWER.match(x) for x in lines):
        first = " | ".join((text or "").strip().splitlines()[:3])[:300] or "(no output)"
        raise DrillReadError(f"{where}: no timestamped ping timeline and statistics in: {first}")
    replies, sent = {}, {}
    for line in lines:
        reply, silent = REPLY.match(line), NO_ANSWER.match(line)
        if reply:
            seq, stamp = int(reply.group(2)), float(reply.group(1))
            replies.setdefault(seq, stamp)
            sent.setdefault(seq, stamp)
        elif silent:
            sent.setdefault(int(silent.group(2)), float(silent.group(1)) - interval)
    transmitted = int(summary.group(1))
    known = sorted(sent)
    # Probes after the last one with a line were still in flight when the ping was ended
    # (SIGINT prints no `no answer yet` for them): undetermined, so neither sent nor lost.
    for seq in range(1, min(transmitted, known[-1] if known else 0) + 1):
        if seq not in sent and known:
            before = max((s for s in known if s < seq), default=None)
            after = min((s for s in known if s > seq), default=None)
            anchor = before if before is not None else after
            sent[seq] = sent[anchor] + (seq - anchor) * interval
    return {"sent": sent, "replies": replies, "transmitted": transmitted}


def figures(timeline: dict, down_at: float, up_at: float, interval: float) -> dict:
    """Losses at the failure [down_at, up_at) and at the return [up_at, end], and the
    longest gap between two replies that began in each (the convergence time seen)."""
    sent, replies = timeline["sent"], timeline["replies"]
    last = max(sent.values(), default=up_at) + interval
    answered = sorted(replies.values())
    gaps = []  # (length, time of the first unanswered probe in it)
    for before, after in zip([down_at - 1e9, *answered], [*answered, last + 1e9], strict=True):
        silent = [t for s, t in sent.items() if before < t < after and s not in replies]
        if silent:
            end = after if after < last else last  # not answered again before the end
            gaps.append((end - max(before, min(silent) - interval), min(silent)))

    def phase(start: float, end: float) -> dict:
        seqs = [s for s, t in sent.items() if start <= t < end]
        lost = sorted(s for s in seqs if s not in replies)
        longest = max((g for g, first in gaps if start <= first < end), default=0.0)
        return {
            "sent": len(seqs),
            "measured": bool(seqs),  # no probe in the phase: no figure, never "0 lost"
            "lost": len(lost),
            "lost_seqs": _ranges(lost),
            "longest_gap_s": round(longest, 3),
            # an answered probe after the last lost one: the path came back
            "recovered": not lost or any(s in replies for s in sent if s > lost[-1]),
        }

    return {
        "failure": phase(down_at, up_at),
        "return": phase(up_at, last),
        "total_sent": len(sent),
        "total_lost": len([s for s in sent if s not in replies]),
    }


def _ranges(seqs: list[int]) -> str:
    out, start = [], None
    for index, seq in enumerate(seqs):
        if start is None:
            start = seq
        if index + 1 == len(seqs) or seqs[index + 1] != seq + 1:
            out.append(str(start) if start == seq else f"{start}-{seq}")
            start = None
    return ",".join(out)


def command_epoch(stamp: str) -> float:
    """`2026-11-24 01:40:00.123456` (ansible.builtin.command's start/end, the controller's
    local time) -> epoch seconds, the clock of the pings' -D timestamps."""
    try:
        return datetime.strptime(str(stamp), "%Y-%m-%d %H:%M:%S.%f").timestamp()
    except ValueError as exc:
        raise DrillReadError(f"not a command timestamp: {stamp!r}") from exc


def mpo_lines(switch_structured: dict, shutdown: bool) -> list[str]:
    """The config lines that take this peer's MPOs down (or bring them back)."""
    prefix = "" if shutdown else "no "
    return [
        f"interface mlag-port-channel {int(mpo['id'])} {prefix}shutdown"
        for mpo in switch_structured.get("mlag_bonds") or []
    ]


def _cell(phase: dict, figure: str) -> str:
    if not phase["measured"]:
        return "not measured"
    return f"{phase['lost']}/{phase['sent']}" if figure == "lost" else str(phase["longest_gap_s"])


def report(
    results: list[dict], switch: str, down_at: float, up_at: float, interval: float,
    fault: str = "MPOs shut",
):  # fmt: skip
    """Per target figures and a Markdown table, from the hosts' collected ping outputs.

    results: [{host, id, kind, address, stdout}] (cxfab_drill_ping state=collect);
    fault: what was done to the switch, for the title. A phase without a probe (the
    pings ended before the return) is reported "not measured" and named in errors."""
    rows, errors = [], []
    for result in results:
        where = f"{result['host']} -> {result['id']} ({result['address']})"
        try:
            timeline = parse_timeline(result.get("stdout", ""), interval, where)
        except DrillReadError as exc:
            errors.append(str(exc))
            continue
        row = {**{k: result[k] for k in ("host", "id", "kind", "address")},
               **figures(timeline, down_at, up_at, interval)}  # fmt: skip
        rows.append(row)
        for name in ("failure", "return"):
            if not row[name]["measured"]:
                errors.append(f"{where}: no probe was sent in the {name} phase")
    lines = [
        f"# Failover drill: {switch}, {fault} for {up_at - down_at:.1f} s",
        "",
        "| from | to | lost at failure | longest gap (s) | lost at return | longest gap (s) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        fail, back = row["failure"], row["return"]
        lines.append(
            f"| {row['host']} | {row['id']} ({row['address']}) | {_cell(fail, 'lost')} | "
            f"{_cell(fail, 'gap')} | {_cell(back, 'lost')} | {_cell(back, 'gap')} |"
        )
    lines += [f"\nUnreadable: {e}" for e in errors]
    return {"switch": switch, "down_at": down_at, "up_at": up_at, "interval": interval,
            "targets": rows, "errors": errors, "markdown": "\n".join(lines) + "\n"}  # fmt: skip
