"""pytest helper: an emulated Onyx pair on free ports in a temporary directory.

    from tests.lab.onyx.fixtures import onyx_pair

    with onyx_pair(tmp_path) as pair:
        conn = ConnectHandler(**pair["lab-sw-a"].netmiko())
        pair.ctl("lab-sw-b", "kill")

The pair is stopped (no process, no socket left) when the block ends.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import pair as pair_cli


@dataclass(frozen=True)
class Endpoint:
    name: str
    host: str
    port: int
    username: str = "admin"
    password: str = "admin"

    def netmiko(self, **extra) -> dict:
        """Keyword arguments for netmiko.ConnectHandler."""
        return {
            "device_type": "mellanox_mlnxos",
            "host": self.host,
            "port": self.port,
            "username": self.username,
            "password": self.password,
            **extra,
        }


@dataclass
class OnyxPair:
    run_dir: Path
    version: str
    endpoints: dict[str, Endpoint] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Endpoint:
        return self.endpoints[name]

    @property
    def names(self) -> list[str]:
        return list(self.endpoints)

    def ctl(self, name: str, *request: str) -> str:
        """kill | revive | rekey | cut-ipl | heal-ipl | set-system-mac MAC | status | logins |
        reject-line LINE | accept-lines"""
        return pair_cli.ctl(self.run_dir, name, list(request))

    def write_known_hosts(self, path: Path) -> Path:
        pair_cli.write_known_hosts(self.run_dir, path)
        return path

    def logins(self, name: str) -> int:
        """SSH logins the switch accepted since it started."""
        return int(self.ctl(name, "logins"))

    def stop(self) -> None:
        pair_cli.stop(self.run_dir)


def _free(port: int, kind: int) -> bool:
    with socket.socket(socket.AF_INET, kind) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _worker_port_range() -> tuple[int, int]:
    """This pytest-xdist worker's own slice of 20000-32500 (the whole range alone).

    A port is free when checked and taken only when the emulator starts: two workers
    drawing from one range could both find the same block free. The range stays below
    Linux's ephemeral ports (net.ipv4.ip_local_port_range, 32768-60999 by default):
    there, any outgoing connection on the machine could take a switch's port in the
    moment `ctl rekey` restarts it, and the new emulator could not bind it (CI of
    dd91311: "lab-sw-b did not accept SSH within 90 s").
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or count <= 1:
        return 20000, 32500
    width = 12500 // count
    low = 20000 + int(worker[2:]) * width
    # Room for the +200 control ports of the block stays inside the slice.
    return low, low + width - 300


def free_port_pair() -> list[int]:
    """Two SSH ports P, P+1 whose keepalive (+100) and control (+200) ports are free too."""
    low, high = _worker_port_range()
    for _ in range(200):
        base = random.randrange(low, high)
        ports = [base, base + 1]
        needed = [
            (p + off, kind)
            for p in ports
            for off, kind in (
                (0, socket.SOCK_STREAM),
                (pair_cli.KEEPALIVE_OFFSET, socket.SOCK_DGRAM),
                (pair_cli.CTL_OFFSET, socket.SOCK_STREAM),
            )
        ]
        if all(_free(p, kind) for p, kind in needed):
            return ports
    raise RuntimeError("no free port block on 127.0.0.1")


@contextlib.contextmanager
def onyx_pair(
    run_dir: Path,
    version: str = "3.10.2002",
    async_messages: bool = False,
    from_config: list[Path] | None = None,
    password: str = "admin",
) -> Iterator[OnyxPair]:
    ports = free_port_pair()
    layout = pair_cli.start(Path(run_dir), ports, version, async_messages, from_config, password)
    handle = OnyxPair(Path(run_dir), version)
    for sw in layout["switches"]:
        handle.endpoints[sw["name"]] = Endpoint(
            sw["name"], "127.0.0.1", sw["port"], password=password
        )
    try:
        yield handle
    finally:
        handle.stop()
