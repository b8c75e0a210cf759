"""Where a playbook run's time went, from ansible-core's junit callback files.

    python -m tests.tools.play_timing build/timing [--top 15]

Per file (one playbook run): the total of its tasks, the time per role (the task
class) and the slowest tasks. Tasks of one play run in parallel across hosts, so a
task's time here is the slowest host's, and totals are upper bounds of wall time.
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def _stage(classname: str) -> str:
    """roles/<role>/... -> the role; a playbook's own tasks -> the playbook."""
    path = classname.rsplit(":", 1)[0]
    found = re.search(r"roles/([^/]+)/", path)
    return f"role {found.group(1)}" if found else Path(path).name


def summarize(path: Path, top: int) -> str:
    cases = ET.parse(path).getroot().iter("testcase")
    # One testcase per task and host: keep the slowest host of each task.
    tasks: dict[tuple[str, str], float] = {}
    for case in cases:
        name = re.sub(r"^\[[^]]*\] ", "", case.get("name", ""))
        key = (case.get("classname", ""), name)
        tasks[key] = max(tasks.get(key, 0.0), float(case.get("time", "0")))
    by_class: dict[str, float] = defaultdict(float)
    for (classname, _), seconds in tasks.items():
        by_class[_stage(classname)] += seconds
    lines = [f"{path.name}: {sum(tasks.values()):.0f} s in {len(tasks)} tasks"]
    for classname, seconds in sorted(by_class.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {seconds:7.1f} s  {classname}")
    lines.append("  slowest tasks:")
    for (classname, name), seconds in sorted(tasks.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {seconds:7.1f} s  {name}  ({classname})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    files = sorted(args.directory.glob("*.xml"), key=lambda p: p.stat().st_mtime)
    if not files:
        print(f"no junit files in {args.directory}", file=sys.stderr)
        return 1
    print("\n\n".join(summarize(path, args.top) for path in files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
