"""Rollout benchmark: how the controller-side stages grow with the fabric (make bench-rollout).

    python -m tests.tools.bench_rollout [--pairs 1,10,100] [--hosts-per-pair 20]
                                        [--repeat 3] [--playbook-repeat 2] [--out reports/bench]

For each size it generates a valid fabric (tests/tools/gen_fabric.py: N MLAG
pairs, H hosts per pair) and times, best of `repeat` runs:

- `validate`: schema + rules + inventory checks in Python (cxfab.intent.validate);
- `structured` and `render`: per-device stages, when their code exists (see STAGES);
- `validate.yml`: ansible-playbook on the generated inventory written to disk.
  Every address Ansible could reach is a TEST-NET one and the play runs on
  localhost only: nothing is contacted.

Results: <out>/rollout.json and <out>/rollout.md, with the growth from the
second-largest to the largest size (10 -> 100 by default; linear is 10x).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT / "module_utils") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "module_utils"))

from cxfab.intent.validate import validate_inventory  # noqa: E402

from tests.tools import gen_fabric  # noqa: E402

# Targets of issue 15 at 100 pairs + 2,000 hosts.
TARGETS_S = {"python": 5.0, "validate.yml": 20.0}


def _validate(inv) -> dict:
    result = validate_inventory(
        inv.fabric_vars(), inv.cxfab_hosts(), inv.groups, inv.host_settings()
    )
    if not result.ok:
        raise SystemExit("generated fabric is invalid:\n" + "\n".join(map(str, result.errors)))
    return result.fabric


def _optional(module: str, name: str) -> Callable | None:
    """module.name when that code exists in this tree, else None (stage skipped)."""
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def _stage_structured(fabric: dict) -> object:
    """Structured config of every switch and host (what validate.yml's cxfab_structured does)."""
    from cxfab.structured import build_all

    devices = build_all(fabric)
    hosts = set(fabric["hosts"])
    return {
        "switches": {n: sc for n, sc in devices.items() if n not in hosts},
        "hosts": {n: sc for n, sc in devices.items() if n in hosts},
    }


def _stage_render(structured: dict) -> object:
    """Rendered device config from the structured config (switch CLI)."""
    render_config = _optional("cxfab.switch.onyx.render", "render_config")
    if render_config is None or not structured or not structured["switches"]:
        return None
    roles = REPO_ROOT / "roles"
    return {name: render_config(roles, data) for name, data in structured["switches"].items()}


# Stages run in order on one generated fabric; each takes the previous output.
# A stage returning None is reported as "not available in this tree".
STAGES: list[tuple[str, Callable]] = [
    ("structured", _stage_structured),
    ("render", _stage_render),
]


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (user + system)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best_of(repeat: int, run: Callable[[], object]) -> tuple[float, float, object]:
    """(best wall seconds, best CPU seconds, last output) over `repeat` runs.

    CPU time is reported beside wall time: on a machine shared with other work
    the wall time measures the neighbours as much as the code.
    """
    best_wall, best_cpu, output = float("inf"), float("inf"), None
    for _ in range(repeat):
        started, cpu = time.perf_counter(), _cpu_seconds()
        output = run()
        best_wall = min(best_wall, time.perf_counter() - started)
        best_cpu = min(best_cpu, _cpu_seconds() - cpu)
    return best_wall, best_cpu, output


def time_playbook(inventory_dir: Path, repeat: int) -> tuple[float, float]:
    """validate.yml on the generated inventory, best of `repeat`; the first run writes the
    structured files (cold), the others find them written (warm, the common re-run).
    Its own build directory: the repository's build/structured belongs to real runs
    (a run writing there removes the files of devices it does not know)."""
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO_ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    command = [
        str(REPO_ROOT / ".venv" / "bin" / "ansible-playbook"),
        "playbooks/validate.yml",
        "-i",
        str(inventory_dir),
        "-e",
        f"cxfab_build_dir={inventory_dir.parent / 'build'}",
    ]

    def run() -> None:
        proc = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"validate.yml failed:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")

    wall, cpu, _ = best_of(repeat, run)
    return wall, cpu


def measure(pairs: int, hosts_per_pair: int, repeat: int, playbook_repeat: int) -> dict:
    inv = gen_fabric.generate(pairs, hosts_per_pair)
    row: dict = {"pairs": pairs, "switches": 2 * pairs, "hosts": pairs * hosts_per_pair}
    wall, cpu, fabric = best_of(repeat, lambda: _validate(inv))
    row["validate_s"], row["validate_cpu_s"] = round(wall, 3), round(cpu, 3)
    previous = fabric
    for name, stage in STAGES:
        wall, cpu, output = best_of(repeat, lambda stage=stage, previous=previous: stage(previous))
        available = output is not None
        row[f"{name}_s"] = round(wall, 3) if available else None
        row[f"{name}_cpu_s"] = round(cpu, 3) if available else None
        previous = output
    stages = ["validate", *(name for name, _ in STAGES)]
    for suffix in ("_s", "_cpu_s"):
        row[f"python{suffix}"] = round(sum(row[f"{n}{suffix}"] or 0 for n in stages), 3)
    if playbook_repeat > 0:
        with tempfile.TemporaryDirectory(prefix="cxfab-bench-") as tmp:
            directory = gen_fabric.write(inv, Path(tmp) / "inventory")
            wall, cpu = time_playbook(directory, playbook_repeat)
            row["validate_yml_s"], row["validate_yml_cpu_s"] = round(wall, 3), round(cpu, 3)
    return row


def growth(rows: list[dict]) -> dict:
    """Time ratio of the largest to the second-largest size, per measured column."""
    if len(rows) < 2:
        return {}
    small, large = rows[-2], rows[-1]
    out = {"from_pairs": small["pairs"], "to_pairs": large["pairs"]}
    out["size_ratio"] = large["pairs"] / small["pairs"]
    for key, value in large.items():
        if key.endswith("_s") and value and small.get(key):
            out[key] = round(value / small[key], 2)
    return out


def markdown(report: dict) -> str:
    columns = ["validate_s", *(f"{name}_s" for name, _ in STAGES), "python_s", "validate_yml_s"]
    lines = [
        "# Rollout benchmark",
        "",
        f"Generated fabrics of N MLAG pairs with {report['hosts_per_pair']} hosts per pair; "
        f"best of {report['repeat']} (Python) and {report['playbook_repeat']} (validate.yml) "
        f"runs on {report['machine']}. `python_s` is the sum of the Python stages. "
        "A dash: the stage does not exist in this tree. Cells are wall / CPU seconds "
        "(CPU: user + system, children included).",
        "",
        "| pairs | switches | hosts | "
        + " | ".join(c.removesuffix("_s") + " (s)" for c in columns)
        + " |",
        "| ---: | ---: | ---: | " + " | ".join("---:" for _ in columns) + " |",
    ]
    for row in report["rows"]:
        cells = [str(row["pairs"]), str(row["switches"]), str(row["hosts"])]
        for column in columns:
            wall, cpu = row.get(column), row.get(column.removesuffix("_s") + "_cpu_s")
            cells.append("-" if wall is None else f"{wall:.2f} / {cpu:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    g = report["growth"]
    if g:
        lines += [
            "",
            f"Growth {g['from_pairs']} -> {g['to_pairs']} pairs (size x{g['size_ratio']:g}; "
            "linear growth is the same factor):",
            "",
        ]
        lines += [
            f"- {key.removesuffix('_s')}: x{value}"
            for key, value in g.items()
            if key.endswith("_s")
        ]
    lines += [
        "",
        "Targets at 100 pairs + 2,000 hosts (issue 15): "
        f"Python < {TARGETS_S['python']:g} s, validate.yml < {TARGETS_S['validate.yml']:g} s.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", default="1,10,100")
    parser.add_argument("--hosts-per-pair", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--playbook-repeat", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "reports" / "bench")
    args = parser.parse_args(argv)
    sizes = [int(n) for n in args.pairs.split(",")]
    rows = []
    for pairs in sizes:
        row = measure(pairs, args.hosts_per_pair, args.repeat, args.playbook_repeat)
        print(json.dumps(row), flush=True)
        rows.append(row)
    report = {
        "hosts_per_pair": args.hosts_per_pair,
        "repeat": args.repeat,
        "playbook_repeat": args.playbook_repeat,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
        "rows": rows,
        "growth": growth(rows),
        "targets_s": TARGETS_S,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "rollout.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (args.out / "rollout.md").write_text(markdown(report), encoding="utf-8")
    print(f"bench-rollout: {args.out / 'rollout.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
