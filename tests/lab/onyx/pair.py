"""Start, stop and control the emulated Onyx switch pair.

  python -m tests.lab.onyx.pair start  --run-dir DIR [--ports 2201,2202]
        [--from-config a.cfg,b.cfg] [--async-messages] [--version 3.10.2002]
        [--known-hosts FILE] [--dataplane FILE]
  python -m tests.lab.onyx.pair status --run-dir DIR
  python -m tests.lab.onyx.pair stop   --run-dir DIR
  python -m tests.lab.onyx.pair ctl    --run-dir DIR <switch> kill|revive|cut-ipl|heal-ipl|
                                       set-system-mac <mac>|status|logins|rekey|
                                       reject-line <config line>|accept-lines|
                                       config <config line>
  python -m tests.lab.onyx.pair known-hosts --run-dir DIR --known-hosts FILE

Switch N listens for SSH on its port P (user admin, password admin or the one
given to start() in Python, kept 0600 in DIR/login.password), for the
IPL keepalive (UDP) on P+100 and for control requests (TCP) on P+200, all on
127.0.0.1. DIR holds pair.json, <switch>.pid, <switch>.log, the host keys and
<switch>.saved.cfg (written by `configuration write`, loaded at boot).
--known-hosts FILE writes both switches' SSH host keys into FILE (entries
`[127.0.0.1]:P ssh-rsa ...`, replacing older ones for the same ports), the
file an operator would own; `ctl <switch> rekey` restarts that switch with a
new host key (a changed key, as after a swap or an attack).
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.lab.switch_processes import (
    PairError,
    kill,
    pid_of,
    port_free,
    read_layout,
    reap,
    run_verb,
    terminate,
)

REPO_ROOT = Path(__file__).resolve().parents[3]
NAMES = ("lab-sw-a", "lab-sw-b")
HOST_MACS = ("7C:FE:90:11:00:0A", "7C:FE:90:11:00:0B")
RELEASES = ("3.6.5000", "3.6.8008", "3.10.2002")
KEEPALIVE_OFFSET, CTL_OFFSET = 100, 200
PASSWORD_FILE = "login.password"  # read by tests.lab.onyx.server
# An emulated switch starts in 2-5 s alone; beside other test workers on 2 loaded cores
# one took over 30 s to listen (2026-11-26).
START_TIMEOUT = 90.0


def _ssh_ready(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.settimeout(2.0)
            return sock.recv(8).startswith(b"SSH-2.0")
    except OSError:
        return False


def _spawn(run_dir: Path, layout: dict, index: int) -> int:
    sw = layout["switches"][index]
    peer = layout["switches"][1 - index]
    cmd = [
        sys.executable, "-m", "tests.lab.onyx.server",
        "--name", sw["name"],
        "--port", str(sw["port"]),
        "--keepalive-port", str(sw["port"] + KEEPALIVE_OFFSET),
        "--peer-keepalive-port", str(peer["port"] + KEEPALIVE_OFFSET),
        "--ctl-port", str(sw["port"] + CTL_OFFSET),
        "--run-dir", str(run_dir),
        "--version", layout["version"],
        "--host-mac", sw["host_mac"],
        "--mgmt-ip", sw["mgmt_ip"],
    ]  # fmt: skip
    if layout["async_messages"]:
        cmd.append("--async-messages")
    if layout.get("dataplane"):
        cmd += ["--dataplane", layout["dataplane"]]
    log = open(run_dir / f"{sw['name']}.log", "a", encoding="utf-8")  # noqa: SIM115
    with log:
        proc = subprocess.Popen(
            cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    (run_dir / f"{sw['name']}.pid").write_text(f"{proc.pid}\n")
    return proc.pid


def _wait_ready(run_dir: Path, layout: dict, names: list[str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    pending = {s["name"]: s["port"] for s in layout["switches"] if s["name"] in names}
    while pending and time.monotonic() < deadline:
        for name, port in list(pending.items()):
            pid = pid_of(run_dir, name)
            if pid is not None:
                reap(pid)  # a child that died at start is a zombie until reaped
            if pid_of(run_dir, name) is None:
                raise PairError(f"{name} exited at start; see {run_dir / (name + '.log')}")
            if _ssh_ready(port):
                pending.pop(name)
        time.sleep(0.1)
    if pending:
        raise PairError(f"{', '.join(pending)} did not accept SSH within {START_TIMEOUT:.0f} s")


def start(
    run_dir: Path,
    ports: list[int],
    version: str,
    async_messages: bool,
    from_config: list[Path] | None,
    password: str | None = None,
    dataplane: Path | None = None,
) -> dict:
    if len(ports) != 2:
        raise PairError("--ports: give two ports, e.g. 2201,2202")
    if version not in RELEASES:
        raise PairError(f"--version: {version} is not one of {', '.join(RELEASES)}")
    if from_config and len(from_config) != 2:
        raise PairError("--from-config: give two files, sw-a.cfg,sw-b.cfg")
    run_dir.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        if pid_of(run_dir, name):
            raise PairError(f"{name} is already running from {run_dir}; stop it first")
    for port in ports:
        for offset, kind in (
            (0, socket.SOCK_STREAM),
            (KEEPALIVE_OFFSET, socket.SOCK_DGRAM),
            (CTL_OFFSET, socket.SOCK_STREAM),
        ):
            if not port_free(port + offset, kind):
                raise PairError(f"--ports: port {port + offset} on 127.0.0.1 is in use")
    layout = {
        "version": version,
        "async_messages": async_messages,
        "dataplane": str(dataplane.resolve()) if dataplane else None,
        "switches": [
            {
                "name": name,
                "port": port,
                "host_mac": mac,
                "mgmt_ip": "127.0.0.1",
                "ctl_port": port + CTL_OFFSET,
            }
            for name, port, mac in zip(NAMES, ports, HOST_MACS, strict=True)
        ],
    }
    for index, name in enumerate(NAMES):
        saved = run_dir / f"{name}.saved.cfg"
        if from_config:
            source = from_config[index]
            if not source.is_file():
                raise PairError(f"--from-config: {source} is not a file")
            shutil.copyfile(source, saved)
        elif saved.exists():
            saved.unlink()  # a new pair starts blank unless told otherwise
    (run_dir / "pair.json").write_text(json.dumps(layout, indent=2) + "\n", encoding="utf-8")
    password_file = run_dir / PASSWORD_FILE
    password_file.unlink(missing_ok=True)
    if password is not None:
        password_file.touch(mode=0o600)
        password_file.write_text(password + "\n", encoding="utf-8")
    for index in range(2):
        _spawn(run_dir, layout, index)
    try:
        _wait_ready(run_dir, layout, list(NAMES))
    except PairError:
        stop(run_dir)
        raise
    return layout


def stop(run_dir: Path) -> None:
    for name in NAMES:
        terminate(run_dir, name)


def status(run_dir: Path) -> list[dict]:
    layout = read_layout(run_dir)
    rows = []
    for sw in layout["switches"]:
        pid = pid_of(run_dir, sw["name"])
        rows.append(
            {
                "name": sw["name"],
                "port": sw["port"],
                "pid": pid,
                "running": pid is not None and _ssh_ready(sw["port"]),
            }
        )
    return rows


def write_known_hosts(run_dir: Path, path: Path) -> None:
    """Put both switches' host keys into the known-hosts file `path` (0600)."""
    import paramiko

    layout = read_layout(run_dir)
    entries = {}
    for sw in layout["switches"]:
        key = paramiko.RSAKey(filename=str(run_dir / f"{sw['name']}.host_key"))
        entries[f"[127.0.0.1]:{sw['port']}"] = f"{key.get_name()} {key.get_base64()}"
    kept = []
    if path.exists():
        kept = [
            line
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.split(" ", 1)[0] not in entries
        ]
    lines = kept + [f"{host} {key}" for host, key in entries.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(0o600)


def ctl(run_dir: Path, name: str, request: list[str]) -> str:
    layout = read_layout(run_dir)
    names = [s["name"] for s in layout["switches"]]
    if name not in names:
        raise PairError(f"ctl: unknown switch {name} (known: {', '.join(names)})")
    index = names.index(name)
    if request == ["kill"]:
        kill(run_dir, layout, name)
        return "ok"
    if request == ["rekey"]:
        terminate(run_dir, name, signal.SIGKILL)
        (run_dir / f"{name}.host_key").unlink(missing_ok=True)
        _spawn(run_dir, layout, index)
        _wait_ready(run_dir, layout, [name])
        return "ok"
    if request == ["revive"]:
        if pid_of(run_dir, name):
            raise PairError(f"ctl: {name} is running")
        _spawn(run_dir, layout, index)
        _wait_ready(run_dir, layout, [name])
        return "ok"
    port = layout["switches"][index]["ctl_port"]
    with socket.create_connection(("127.0.0.1", port), timeout=5.0) as sock:
        sock.sendall((" ".join(request) + "\n").encode())
        answer = sock.makefile("r").readline().strip()
    if answer.startswith("error"):
        raise PairError(f"ctl {name} {' '.join(request)}: {answer}")
    return answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.lab.onyx.pair", description="Emulated Onyx switch pair"
    )
    sub = parser.add_subparsers(dest="action", required=True)
    p_start = sub.add_parser("start", help="start both switches and wait until they accept SSH")
    p_start.add_argument("--run-dir", required=True, type=Path)
    p_start.add_argument("--ports", default="2201,2202")
    p_start.add_argument("--version", default="3.10.2002", choices=RELEASES)
    p_start.add_argument("--async-messages", action="store_true")
    p_start.add_argument("--from-config", help="two saved running-configs: a.cfg,b.cfg")
    p_start.add_argument("--known-hosts", type=Path, help="write the host keys into this file")
    p_start.add_argument(
        "--dataplane", type=Path, help="the lab's fabric guest (dataplane.json of lab.py)"
    )
    p_keys = sub.add_parser("known-hosts", help="write both host keys into a known-hosts file")
    p_keys.add_argument("--run-dir", required=True, type=Path)
    p_keys.add_argument("--known-hosts", required=True, type=Path)
    for action in ("stop", "status"):
        sub.add_parser(action).add_argument("--run-dir", required=True, type=Path)
    p_ctl = sub.add_parser(
        "ctl",
        help="kill|revive|rekey|cut-ipl|heal-ipl|set-system-mac MAC|status|logins|"
        "reject-line LINE|accept-lines|config LINE",
    )
    p_ctl.add_argument("--run-dir", required=True, type=Path)
    p_ctl.add_argument("switch")
    p_ctl.add_argument("request", nargs="+")
    args = parser.parse_args(argv)
    return run_verb(
        args, _start_verb, stop, status, ctl,
        **{"known-hosts": lambda a: write_known_hosts(a.run_dir, a.known_hosts)},
    )  # fmt: skip


def _start_verb(args: argparse.Namespace) -> None:
    ports = [int(p) for p in args.ports.split(",") if p.strip()]
    configs = [Path(p) for p in args.from_config.split(",")] if args.from_config else None
    layout = start(
        args.run_dir, ports, args.version, args.async_messages, configs,
        dataplane=args.dataplane,
    )  # fmt: skip
    if args.known_hosts:
        write_known_hosts(args.run_dir, args.known_hosts)
    for sw in layout["switches"]:
        print(f"{sw['name']} 127.0.0.1:{sw['port']}")


if __name__ == "__main__":
    sys.exit(main())
