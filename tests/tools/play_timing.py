"""Where a playbook run's wall time went, from Ansible's log file (`log_path`).

    python -m tests.tools.play_timing build/timing [--top 15]

Every line of the log carries its time. A task lasts from its TASK (or RUNNING
HANDLER) header to the next header, whatever ran on how many hosts, so the figures
are wall time: a play with `serial` shows each batch's share added up, and the
times of one file add up to the run's own.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) p=\d+ u=\S+ n=\S+ \w+\| (.*)$")
_HEADER = re.compile(r"^(PLAY|TASK|RUNNING HANDLER) \[(.*)\] \*+$")
_RECAP = "PLAY RECAP"


def _time(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def spans(lines: list[str]) -> tuple[dict[tuple[str, str], float], dict[str, float], float]:
    """(seconds per (play, task), seconds per play, the run's seconds) of one log."""
    events: list[tuple[float, str, str]] = []
    for line in lines:
        found = _LINE.match(line)
        if not found:
            continue
        when, message = _time(found.group(1)), found.group(2)
        header = _HEADER.match(message)
        if header:
            events.append((when, header.group(1), header.group(2)))
        elif message.startswith(_RECAP):
            events.append((when, "RECAP", ""))
    tasks: dict[tuple[str, str], float] = defaultdict(float)
    plays: dict[str, float] = defaultdict(float)
    play = ""
    for (when, kind, name), (after, _, _) in itertools.pairwise(events):
        if kind == "PLAY":
            play = name
        if kind in ("TASK", "RUNNING HANDLER"):
            tasks[(play, name)] += after - when
        if kind != "RECAP":
            plays[play] += after - when
    total = events[-1][0] - events[0][0] if len(events) > 1 else 0.0
    return dict(tasks), dict(plays), total


def summarize(path: Path, top: int) -> str:
    tasks, plays, total = spans(path.read_text(errors="replace").splitlines())
    if not tasks:
        # Say so rather than print a run of 0 s: a log in another format reads as empty.
        return f"{path.name}: no timed TASK line read (not an Ansible log_path file?)"
    lines = [f"{path.name}: {total:.0f} s wall, {len(tasks)} tasks"]
    for play, seconds in sorted(plays.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {seconds:7.1f} s  play {play}")
    lines.append("  slowest tasks:")
    for (play, name), seconds in sorted(tasks.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {seconds:7.1f} s  {name}  ({play})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    files = sorted(args.directory.glob("*.log"), key=lambda p: p.stat().st_mtime)
    if not files:
        print(f"no Ansible logs in {args.directory}", file=sys.stderr)
        return 1
    print("\n\n".join(summarize(path, args.top) for path in files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
