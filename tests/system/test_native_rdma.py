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

SMC_MODES = {"SMC-R", "SMC-D", "TCP (fallback)"}

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
    """Without a pnet ID pairing rxe0 with the bond, the kernel finds no SMC device and
    falls back (0x03030000). SMC-R is not attempted here: with a pnet ID and a user EID on
    both guests the 6.1 kernel chose SMC-R over soft-RoCE, and the failed link's clean-up
    then hung on both hosts in smc_wr_drain_cq (unkillable until reboot; docs/native.md)."""
    client, server, _, (_, server_ip) = pair
    out = remote_pingpong(BUILD, client, server, server_ip, "smc", SMALL, 7497)
    assert_smc_connection(out, tcp_reference)


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
