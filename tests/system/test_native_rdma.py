"""native/ over soft-RoCE between the two lab guests (lab-host1 -> lab-host2).

Runs on the lab as site.yml configured it (the session's `deployed` fixture): the
rdma_stack role has created the rxe devices over the bonds. The guests share the
controller's root file system, so they run the binaries of native/build/.
"""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "native" / "build"
sys.path.insert(0, str(REPO / "native" / "bench"))

from lab import lab_pair, remote_pingpong  # noqa: E402  (native/bench put on sys.path above)

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
