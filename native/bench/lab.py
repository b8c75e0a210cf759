"""Reach the lab guests (written by `make lab-up` into inventories/lab/hosts.yml)
to run the native programs over soft-RoCE between lab-host1 and lab-host2.

Used by bench.py (rdma_vs_ib_write_bw) and tests/system/test_native_rdma.py.
The guests share the controller's root file system, so native/build/ is the
same path inside them.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
HOSTS_FILE = REPO / "inventories" / "lab" / "hosts.yml"


@dataclass
class LabHost:
    name: str
    address: str
    port: int
    user: str
    key: str

    def ssh_argv(self, command: str) -> list[str]:
        return [
            "ssh",
            "-i",
            self.key,
            "-p",
            str(self.port),
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "LogLevel=ERROR",
            "-o",
            "ConnectTimeout=10",
            f"{self.user}@{self.address}",
            command,
        ]

    def run(self, command: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.ssh_argv(command), capture_output=True, text=True, timeout=timeout, check=False
        )

    def start(self, command: str) -> subprocess.Popen:
        return subprocess.Popen(
            self.ssh_argv(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )


def lab_hosts() -> list[LabHost] | None:
    """The servers of the lab inventory, or None when there is no lab."""
    if not HOSTS_FILE.exists():
        return None
    inventory = yaml.safe_load(HOSTS_FILE.read_text()) or {}
    group = inventory.get("all", {}).get("children", {}).get("hosts", {})
    common = group.get("vars", {})
    hosts = []
    for name, hv in sorted((group.get("hosts") or {}).items()):
        hv = {**common, **(hv or {})}
        hosts.append(
            LabHost(
                name,
                hv.get("ansible_host", name),
                int(hv.get("ansible_port", 22)),
                hv.get("ansible_user", "root"),
                hv.get("ansible_ssh_private_key_file", ""),
            )
        )
    return hosts


def rdma_endpoint(host: LabHost) -> tuple[str, str] | None:
    """(RDMA device, IPv4 of its netdev) of the first ACTIVE device, or None."""
    links = host.run("rdma -j link show", timeout=30)
    if links.returncode != 0:
        return None
    for link in json.loads(links.stdout or "[]"):
        if link.get("state") != "ACTIVE" or not link.get("netdev"):
            continue
        addrs = host.run(f"ip -j -4 addr show dev {link['netdev']}", timeout=30)
        for entry in json.loads(addrs.stdout or "[]"):
            for info in entry.get("addr_info", []):
                return link["ifname"], info["local"]
    return None


def lab_pair() -> tuple[LabHost, LabHost, tuple[str, str], tuple[str, str]] | str:
    """Two guests with RDMA endpoints, or the reason why not (for a skip)."""
    hosts = lab_hosts()
    if hosts is None:
        return f"no lab: {HOSTS_FILE.relative_to(REPO)} is absent (run `make lab-up`)"
    if len(hosts) < 2:
        return f"the lab inventory lists {len(hosts)} host(s); two are needed"
    first, second = hosts[:2]
    endpoints = []
    for host in (first, second):
        probe = host.run("true", timeout=30)
        if probe.returncode != 0:
            return f"{host.name} does not answer over SSH: {probe.stderr.strip()}"
        ep = rdma_endpoint(host)
        if ep is None:
            return (
                f"{host.name} has no ACTIVE RDMA device with an IPv4 address "
                "(the rdma_stack role creates it: run site.yml on the lab)"
            )
        endpoints.append(ep)
    return first, second, endpoints[0], endpoints[1]


def remote_pingpong(
    build: Path,
    client: LabHost,
    server: LabHost,
    server_ip: str,
    transport: str,
    extra: list[str],
    port: int,
) -> dict:
    srv = server.start(
        f"timeout 600 {build}/pingpong --transport {transport} --server {server_ip}:{port}"
    )
    try:
        line = srv.stdout.readline()
        if not line.startswith("listening on"):
            raise RuntimeError(f"{server.name}: pingpong server: {line}{srv.stderr.read()}")
        out = client.run(
            f"{build}/pingpong --transport {transport} --client "
            f"{server_ip}:{port} --json {' '.join(extra)}",
            timeout=600,
        )
        if out.returncode != 0:
            raise RuntimeError(f"{client.name}: pingpong client: {out.stderr.strip()}")
        return json.loads(out.stdout)
    finally:
        srv.wait(timeout=60)


def ib_write_bw(
    client: LabHost,
    server: LabHost,
    server_ip: str,
    device_client: str,
    device_server: str,
    size: int,
) -> float:
    """Average bytes/s of perftest's ib_write_bw at `size` (one direction)."""
    flags = f"-d {{dev}} -s {size} -n 100 -F --report_gbits"
    srv = server.start(f"timeout 300 ib_write_bw {flags.format(dev=device_server)}")
    try:
        out = client.run(
            f"sleep 1; ib_write_bw {flags.format(dev=device_client)} {server_ip}", timeout=300
        )
        if out.returncode != 0:
            raise RuntimeError(f"ib_write_bw: {out.stderr.strip()}")
        # Data row: #bytes #iterations BW-peak[Gb/sec] BW-average[Gb/sec] MsgRate[Mpps]
        for line in out.stdout.splitlines():
            fields = line.split()
            if len(fields) == 5 and fields[0] == str(size):
                return float(fields[3]) * 1e9 / 8
        raise RuntimeError(f"ib_write_bw: no result row in: {out.stdout[-400:]}")
    finally:
        srv.wait(timeout=60)


def lab_rdma_comparison(build: Path, size: int) -> dict:
    pair = lab_pair()
    if isinstance(pair, str):
        return {"skipped": pair}
    client, server, (dev_c, _), (dev_s, ip_s) = pair
    ours = remote_pingpong(
        build, client, server, ip_s, "rdma", ["--size", str(size), "--iterations", "20"], 7481
    )
    # pingpong is stop-and-wait: one direction at a time, like ib_write_bw's one stream.
    ours_bps = ours["bytes_per_s_total"]
    ref_bps = ib_write_bw(client, server, ip_s, dev_c, dev_s, size)
    return {
        "ratio": ours_bps / ref_bps,
        "pingpong_rdma": ours,
        "ib_write_bw_bytes_per_s": ref_bps,
        "hosts": [client.name, server.name],
        "note": "soft-RoCE under TCG: only the ratio means anything",
    }
