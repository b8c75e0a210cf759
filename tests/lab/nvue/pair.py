"""Start, stop and control the emulated NVUE (Cumulus Linux) switch pair of the lab.

  python -m tests.lab.nvue.pair start  --run-dir DIR [--ports 2201,2202] [--dataplane FILE]
  python -m tests.lab.nvue.pair status --run-dir DIR
  python -m tests.lab.nvue.pair stop   --run-dir DIR
  python -m tests.lab.nvue.pair ctl    --run-dir DIR <switch> kill|revive|cut-ipl|heal-ipl|status

The same verbs as the Onyx pair (tests/lab/onyx/pair.py; both on the process helpers
of tests/lab/switch_processes.py), so `lab fail switch a` and `lab fail ipl` work on
either. Switch N serves
NVUE's REST API over HTTPS on its port P (user and password as given to start(); the
password kept 0600 in DIR/login.password and handed over in the environment) and its
MLAG keepalive (UDP, peering.py) on P+100, all on 127.0.0.1. DIR holds pair.json,
<switch>.pid, <switch>.log, <switch>.pem (the certificate, its SHA-256 in
<switch>.json) and <switch>.startup.json (the applied tree, loaded again at `revive`).
lab-sw-a is the MLAG primary, lab-sw-b the secondary.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.lab.onyx.pair import KEEPALIVE_OFFSET, NAMES, PASSWORD_FILE, START_TIMEOUT
from tests.lab.switch_processes import (
    PairError,
    kill,
    pid_of,
    port_free,
    read_layout,
    run_verb,
    terminate,
)

from .fixtures import request

REPO_ROOT = Path(__file__).resolve().parents[3]
ROLES = ("primary", "secondary")
# The lab intent's switch account (inventories/lab/group_vars/all/fabric.yml).
DEFAULT_USERNAME, DEFAULT_PASSWORD = "admin", "admin"


def _spawn(run_dir: Path, layout: dict, index: int) -> int:
    sw, peer = layout["switches"][index], layout["switches"][1 - index]
    (run_dir / f"{sw['name']}.json").unlink(missing_ok=True)  # the ready marker
    cmd = [
        sys.executable, "-m", "tests.lab.nvue.server",
        "--name", sw["name"], "--run-dir", str(run_dir), "--port", str(sw["port"]),
        "--role", ROLES[index], "--username", layout["username"],
        "--keepalive-port", str(sw["port"] + KEEPALIVE_OFFSET),
        "--peer-keepalive-port", str(peer["port"] + KEEPALIVE_OFFSET),
        "--startup", str(run_dir / f"{sw['name']}.startup.json"),
    ]  # fmt: skip
    if layout.get("dataplane"):
        cmd += ["--dataplane", layout["dataplane"]]
    password = (run_dir / PASSWORD_FILE).read_text(encoding="utf-8").strip()
    env = dict(os.environ, NVUE_LAB_PASSWORD=password)
    with open(run_dir / f"{sw['name']}.log", "a", encoding="utf-8") as log:
        proc = subprocess.Popen(
            cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    (run_dir / f"{sw['name']}.pid").write_text(f"{proc.pid}\n")
    return proc.pid


def _wait_ready(run_dir: Path, names: list[str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    pending = set(names)
    while pending and time.monotonic() < deadline:
        for name in list(pending):
            if pid_of(run_dir, name) is None:
                raise PairError(f"{name} exited at start; see {run_dir / (name + '.log')}")
            if (run_dir / f"{name}.json").exists():
                pending.discard(name)
        time.sleep(0.1)
    if pending:
        raise PairError(f"{', '.join(sorted(pending))} did not listen within {START_TIMEOUT:.0f} s")


def ready_info(run_dir: Path, name: str) -> dict:
    """{port, cert, fingerprint, pid} the switch wrote once it accepted connections."""
    return json.loads((run_dir / f"{name}.json").read_text(encoding="utf-8"))


def start(
    run_dir: Path,
    ports: list[int],
    dataplane: Path | None = None,
    username: str = DEFAULT_USERNAME,
    password: str = DEFAULT_PASSWORD,
) -> dict:
    if len(ports) != 2:
        raise PairError("--ports: give two ports, e.g. 2201,2202")
    run_dir.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        if pid_of(run_dir, name):
            raise PairError(f"{name} is already running from {run_dir}; stop it first")
        (run_dir / f"{name}.startup.json").unlink(missing_ok=True)  # a new pair starts blank
    for port in ports:
        for offset, kind in ((0, socket.SOCK_STREAM), (KEEPALIVE_OFFSET, socket.SOCK_DGRAM)):
            if not port_free(port + offset, kind):
                raise PairError(f"--ports: port {port + offset} on 127.0.0.1 is in use")
    layout = {
        "os": "cumulus",
        "username": username,
        "dataplane": str(dataplane.resolve()) if dataplane else None,
        "switches": [{"name": n, "port": p} for n, p in zip(NAMES, ports, strict=True)],
    }
    (run_dir / "pair.json").write_text(json.dumps(layout, indent=2) + "\n", encoding="utf-8")
    password_file = run_dir / PASSWORD_FILE
    password_file.unlink(missing_ok=True)
    password_file.touch(mode=0o600)
    password_file.write_text(password + "\n", encoding="utf-8")
    for index in range(2):
        _spawn(run_dir, layout, index)
    try:
        _wait_ready(run_dir, list(NAMES))
    except PairError:
        stop(run_dir)
        raise
    return layout


def stop(run_dir: Path) -> None:
    for name in NAMES:
        terminate(run_dir, name)


def status(run_dir: Path) -> list[dict]:
    rows = []
    for sw in read_layout(run_dir)["switches"]:
        pid = pid_of(run_dir, sw["name"])
        listening = pid is not None and not port_free(sw["port"])
        rows.append({"name": sw["name"], "port": sw["port"], "pid": pid, "running": listening})
    return rows


def credentials(run_dir: Path) -> tuple[str, str]:
    """The account the pair was started with (its layout and its 0600 password file)."""
    return (
        read_layout(run_dir)["username"],
        (run_dir / PASSWORD_FILE).read_text(encoding="utf-8").strip(),
    )


def _lab_request(run_dir: Path, name: str, method: str, path: str, body=None) -> dict:
    info = ready_info(run_dir, name)
    status_code, answer = request(
        info["port"], info["cert"], credentials(run_dir), method, path, body
    )
    if status_code != 200:
        raise PairError(f"{name} {method} {path}: HTTP {status_code}: {answer}")
    return answer


def ctl(run_dir: Path, name: str, words: list[str]) -> str:
    layout = read_layout(run_dir)
    names = [s["name"] for s in layout["switches"]]
    if name not in names:
        raise PairError(f"ctl: unknown switch {name} (known: {', '.join(names)})")
    if words == ["kill"]:
        kill(run_dir, layout, name)
        return "ok"
    if words == ["revive"]:
        if pid_of(run_dir, name):
            raise PairError(f"ctl: {name} is running")
        _spawn(run_dir, layout, names.index(name))
        _wait_ready(run_dir, [name])
        return "ok"
    if words in (["cut-ipl"], ["heal-ipl"]):
        _lab_request(run_dir, name, "POST", "/_lab/fault", {"ipl-cut": words == ["cut-ipl"]})
        return "ok"
    if words == ["status"]:
        return json.dumps(_lab_request(run_dir, name, "GET", "/_lab/status"))
    raise PairError(f"ctl: {' '.join(words)}: not one of kill|revive|cut-ipl|heal-ipl|status")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.lab.nvue.pair", description="Emulated NVUE switch pair"
    )
    sub = parser.add_subparsers(dest="action", required=True)
    p_start = sub.add_parser("start", help="start both switches and wait until they listen")
    p_start.add_argument("--run-dir", required=True, type=Path)
    p_start.add_argument("--ports", default="2201,2202")
    p_start.add_argument("--dataplane", type=Path, help="the lab's fabric guest (lab.py)")
    for action in ("stop", "status"):
        sub.add_parser(action).add_argument("--run-dir", required=True, type=Path)
    p_ctl = sub.add_parser("ctl", help="kill|revive|cut-ipl|heal-ipl|status")
    p_ctl.add_argument("--run-dir", required=True, type=Path)
    p_ctl.add_argument("switch")
    p_ctl.add_argument("request", nargs="+")
    args = parser.parse_args(argv)
    return run_verb(args, _start_verb, stop, status, ctl)


def _start_verb(args: argparse.Namespace) -> None:
    ports = [int(p) for p in args.ports.split(",") if p.strip()]
    layout = start(args.run_dir, ports, dataplane=args.dataplane)
    for sw in layout["switches"]:
        print(f"{sw['name']} https://127.0.0.1:{sw['port']}")


if __name__ == "__main__":
    sys.exit(main())
