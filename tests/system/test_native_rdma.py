"""native/ over soft-RoCE between the two lab guests (lab-host1 -> lab-host2).

Runs on the lab as site.yml configured it (the session's `deployed` fixture): the
rdma_stack role has created the rxe devices over the bonds. The guests share the
controller's root file system, so they run the binaries of native/build/. The guests'
Debian 6.1 kernel has AF_SMC (CONFIG_SMC=m) and soft-RoCE, so the smc and rsocket
transports run here for real (the controller's kernel has neither).
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "native" / "build"
sys.path.insert(0, str(REPO / "native" / "bench"))

from lab import lab_pair, remote_pingpong  # noqa: E402  (native/bench put on sys.path above)

SMC_NETLINK = Path(__file__).resolve().parent / "smc_netlink.py"
SMC_MODES = {"SMC-R", "SMC-D", "TCP (fallback)"}
# The pnet ID and user EID of the SMC-R attempt (uppercase: the kernel refuses others).
SMC_PNET, SMC_UEID = "CXFABLAB", "CXFAB-LAB-SMCR"

# 3600: the first test to need `deployed` also waits for site.yml (~15 min under TCG).
pytestmark = [pytest.mark.lab, pytest.mark.timeout(3600)]


@pytest.fixture(scope="module")
def pair(deployed):
    found = lab_pair()
    assert not isinstance(found, str), f"site.yml ran, yet: {found}"
    subprocess.run(["make", "-s", "-C", str(REPO / "native")], check=True)
    return found


def test_pingpong_rdma_matches_tcp(pair):
    client, server, _, (_, server_ip) = pair
    args = ["--size", "256K", "--iterations", "10", "--compute", "--pipeline", "2"]
    rdma = remote_pingpong(BUILD, client, server, server_ip, "rdma", args, 7491)
    tcp = remote_pingpong(BUILD, client, server, server_ip, "tcp", args, 7492)
    assert rdma["transport"] == "rdma"
    assert rdma["bytes_server_to_client"] == tcp["bytes_server_to_client"] > 0
    assert rdma["checksum"] == tcp["checksum"]


SMALL = ["--size", "256K", "--iterations", "10", "--compute", "--pipeline", "2"]


@pytest.fixture(scope="module")
def tcp_reference(pair):
    client, server, _, (_, server_ip) = pair
    return remote_pingpong(BUILD, client, server, server_ip, "tcp", SMALL, 7495)


def test_pingpong_rsocket_matches_tcp(pair, tcp_reference):
    client, server, _, (_, server_ip) = pair
    out = remote_pingpong(BUILD, client, server, server_ip, "rsocket", SMALL, 7496)
    assert out["transport"] == "rsocket"
    assert out["bytes_server_to_client"] == tcp_reference["bytes_server_to_client"] > 0
    assert out["checksum"] == tcp_reference["checksum"]
    assert "connection" not in out  # rsockets have no fallback to report


def assert_smc_connection(out: dict, tcp: dict) -> dict:
    """smc gives TCP's grid and says how its connection ran (and why, on a fallback)."""
    assert out["transport"] == "smc"
    assert out["checksum"] == tcp["checksum"]
    connection = out["connection"]
    assert connection["mode"] in SMC_MODES, connection
    if connection["mode"] == "TCP (fallback)":
        assert connection["fallback_reason"] not in (None, "0x00000000"), connection
        assert connection["fallback_text"] not in ("", "none", "unknown code"), connection
    print(f"smc connection: {json.dumps(connection)}")  # the mode for the lab's record
    return connection


def test_pingpong_smc_matches_tcp_and_reports_its_mode(pair, tcp_reference):
    client, server, _, (_, server_ip) = pair
    out = remote_pingpong(BUILD, client, server, server_ip, "smc", SMALL, 7497)
    assert_smc_connection(out, tcp_reference)


def _smc_setup(host, device: str) -> tuple[list[str], list[str]]:
    """Commands pairing the RDMA device's netdev (a bond: its ports) with one pnet ID and
    adding a user EID, and the commands undoing them (smc unloaded if the test loaded it)."""
    netdev = json.loads(host.run(f"rdma -j link show {device}/1", timeout=30).stdout)[0]["netdev"]
    members = host.run(f"cat /sys/class/net/{netdev}/bonding/slaves 2>/dev/null", timeout=30)
    tool = f"python3 {SMC_NETLINK}"
    setup = ["modprobe smc", "modprobe smc_diag", f"{tool} ueid-add {SMC_UEID}"]
    setup += [f"{tool} pnet-eth {SMC_PNET} {port}" for port in members.stdout.split() or [netdev]]
    setup.append(f"{tool} pnet-ib {SMC_PNET} {device} 1")
    loaded = host.run("test -d /sys/module/smc", timeout=30).returncode == 0
    heal = [f"{tool} pnet-flush", f"{tool} ueid-flush"]
    heal += [] if loaded else ["modprobe -r smc_diag smc"]
    return setup, heal


def _smc_left(host) -> str:
    """What the SMC-R attempt left on a host ('' when nothing)."""
    if host.run("test -d /sys/module/smc", timeout=30).returncode != 0:
        return ""
    counts = host.run(f"python3 {SMC_NETLINK} pnet-count; python3 {SMC_NETLINK} ueid-count")
    pnet, ueid = [*counts.stdout.split(), "?", "?"][:2]
    return "" if (pnet, ueid) == ("0", "0") else f"pnet entries {pnet}, user EIDs {ueid}"


def test_smc_r_over_soft_roce_with_a_pnet_id_and_a_user_eid(pair, tcp_reference):
    """SMC-R needs the RoCE device paired with the interface; rxe has RoCE v2 GIDs only,
    so only SMC-Rv2 (which needs a user EID on both ends) can use it. The mode and the
    kernel's reason are reported either way; the tables are emptied afterwards."""
    client, server, (client_dev, _), (server_dev, server_ip) = pair
    hosts = ((client, client_dev), (server, server_dev))
    plans = [(host, *_smc_setup(host, device)) for host, device in hosts]
    try:
        for host, setup, _ in plans:
            for command in setup:
                done = host.run(command, timeout=60)
                assert done.returncode == 0, f"{host.name}: {command}: {done.stderr}"
        out = remote_pingpong(BUILD, client, server, server_ip, "smc", SMALL, 7498)
        assert_smc_connection(out, tcp_reference)
    finally:
        for host, _, heal in plans:
            for command in heal:
                host.run(command, timeout=60)
    assert {host.name: _smc_left(host) for host, _ in hosts} == {host.name: "" for host, _ in hosts}


def test_rcat_rdma_moves_a_file_intact(pair, tmp_path):
    client, server, _, (_, server_ip) = pair
    payload = os.urandom(5 * 1024 * 1024 + 17)
    digest = hashlib.sha256(payload).hexdigest()
    out_file = f"/tmp/cxfab-rcat-{os.getpid()}.bin"
    receiver = server.start(
        f"timeout 300 {BUILD}/rcat --transport rdma --server {server_ip}:7493 > {out_file}"
    )
    try:
        line = receiver.stderr.readline()
        assert "listening on" in line, line
        sender = subprocess.run(
            client.ssh_argv(
                f"{BUILD}/rcat --transport rdma --client {server_ip}:7493 --size 256K --pipeline 2"
            ),
            input=payload,
            capture_output=True,
            timeout=300,
            check=False,
        )
        assert sender.returncode == 0, sender.stderr
        assert receiver.wait(timeout=120) == 0, receiver.stderr.read()
        remote = server.run(f"sha256sum {out_file} && rm -f {out_file}", timeout=60)
        assert remote.stdout.split()[0] == digest
    finally:
        receiver.kill()
        receiver.wait()


def test_rdma_peer_that_vanishes_is_reported(pair):
    client, server, _, (_, server_ip) = pair
    # The remote shell prints its PID, then becomes the server: that PID is what we kill.
    srv = server.start(f"echo $$; exec {BUILD}/pingpong --transport rdma --server {server_ip}:7494")
    try:
        pid = int(srv.stdout.readline())
        assert srv.stdout.readline().startswith("listening on")
        run = client.start(
            f"{BUILD}/pingpong --transport rdma --client {server_ip}:7494 "
            "--size 64K --iterations 100000000 --timeout 20"
        )
        server.run(f"sleep 3; kill -KILL {pid}", timeout=60)
        rc = run.wait(timeout=120)
        assert rc not in (0, None)
        # Reported, not hung: either the CM's disconnect (names the peer) or the verbs
        # completion error of the write in flight (rxe: remote access error).
        error = run.stderr.read()
        assert "peer" in error or "ibv_poll_cq:" in error, error
    finally:
        srv.kill()
        srv.wait()
