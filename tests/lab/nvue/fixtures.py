"""pytest helper: emulated NVUE switches, each its own process on a free port.

    from tests.lab.nvue.fixtures import nvue_pair

    with nvue_pair(tmp_path) as pair:
        pair["lab-sw-a"].port, .cert, .fingerprint
        pair["lab-sw-a"].status()            # applied tree, revisions, refusals
        pair["lab-sw-b"].fault(**{"peer-down": True})

The processes are killed (by their pid) when the block ends.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
USERNAME, PASSWORD = "cumulus", "Lab-Nvue-2026!"
START_TIMEOUT = 15.0


def request(port: int, cert: str, credentials: tuple[str, str], method: str, path: str, body=None):
    """(status, JSON answer) of one request to 127.0.0.1:port, TLS checked against cert."""
    context = ssl.create_default_context(cafile=cert)
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    token = base64.b64encode(":".join(credentials).encode()).decode()
    headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json"}
    data = None if body is None else json.dumps(body)
    try:
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        conn.close()


@dataclass
class NvueSwitch:
    name: str
    run_dir: Path
    port: int
    cert: str
    fingerprint: str
    pid: int

    def request(self, method: str, path: str, body=None):
        """(status, JSON answer) of one request, TLS checked against the switch's cert."""
        return request(self.port, self.cert, (USERNAME, PASSWORD), method, path, body)

    def status(self) -> dict:
        status, answer = self.request("GET", "/_lab/status")
        assert status == 200, answer
        return answer

    def fault(self, **faults) -> dict:
        """peer-down / vrr-down / refuse-apply: True or False; refuse_paths: [dotted path];
        garble_paths: [show path, e.g. "qos/roce"] answered with cut JSON."""
        body = {k.replace("_", "-"): v for k, v in faults.items()}
        status, answer = self.request("POST", "/_lab/fault", body)
        assert status == 200, answer
        return answer

    def applied(self) -> dict:
        status, answer = self.request("GET", "/nvue_v1/?rev=applied&filled=false")
        assert status == 200, answer
        return answer


def _free_udp_ports(count: int) -> list[int]:
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def start(run_dir: Path, name: str, role: str = "primary", keepalive=None) -> NvueSwitch:
    """One emulator process; `keepalive` (its UDP port, the peer's) peers it (peering.py)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    marker = run_dir / f"{name}.json"
    marker.unlink(missing_ok=True)
    env = dict(os.environ, NVUE_LAB_PASSWORD=PASSWORD)
    with open(run_dir / f"{name}.log", "a", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.lab.nvue.server", "--name", name,
             "--run-dir", str(run_dir), "--role", role, "--username", USERNAME,
             *(["--keepalive-port", str(keepalive[0]), "--peer-keepalive-port",
                str(keepalive[1])] if keepalive else [])],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + START_TIMEOUT
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"{name} did not start; see {run_dir / (name + '.log')}")
        time.sleep(0.05)
    ready = json.loads(marker.read_text(encoding="utf-8"))
    return NvueSwitch(name, run_dir, ready["port"], ready["cert"], ready["fingerprint"], proc.pid)


def stop(switch: NvueSwitch) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(switch.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(switch.pid, 0)


@contextlib.contextmanager
def nvue_pair(
    run_dir: Path, names=("lab-sw-a", "lab-sw-b"), peered: bool = False
) -> Iterator[dict[str, NvueSwitch]]:
    """The two switches; `peered`: they exchange the MLAG keepalive (peering.py: peer
    state and the VRRP elections follow what each hears of the other)."""
    switches: dict[str, NvueSwitch] = {}
    ports = _free_udp_ports(2) if peered else None
    try:
        for index, name in enumerate(names):
            keepalive = (ports[index], ports[1 - index]) if ports else None
            switches[name] = start(Path(run_dir), name, "primary" if index == 0 else "secondary",
                                   keepalive)  # fmt: skip
        yield switches
    finally:
        for switch in switches.values():
            stop(switch)
