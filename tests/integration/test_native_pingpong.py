"""native/pingpong driven as a user would: transports, pipeline depths, output, failures."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CXFAB_NATIVE_BUILD", REPO / "native" / "build"))
SMALL = ["--size", "256K", "--iterations", "20"]


@pytest.fixture(scope="module")
def pingpong():
    sanitize = "1" if BUILD.name == "build-asan" else "0"
    subprocess.run(
        ["make", "-s", "-C", str(REPO / "native"), f"BUILD={BUILD.name}", f"SANITIZE={sanitize}"],
        check=True,
    )
    return str(BUILD / "pingpong")


def run(cmd, timeout=60):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def run_json(cmd):
    proc = run(cmd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_checksum_equal_across_transports_and_pipeline_depths(pingpong):
    results = {}
    for transport in ("tcp", "shm", "shm-zc"):
        for pipeline in (1, 2, 5):
            out = run_json(
                [
                    pingpong,
                    "--loopback",
                    "--transport",
                    transport,
                    "--compute",
                    "--json",
                    "--pipeline",
                    str(pipeline),
                    *SMALL,
                ]
            )
            results[(transport, pipeline)] = out["checksum"]
    assert len(set(results.values())) == 1, results
    # Without compute the grid never changes: a different checksum proves compute ran.
    idle = run_json([pingpong, "--loopback", "--transport", "tcp", "--json", *SMALL])
    assert idle["checksum"] not in results.values()


def test_json_reports_bytes_time_and_cpu(pingpong):
    out = run_json(
        [
            pingpong,
            "--loopback",
            "--transport",
            "shm",
            "--compute",
            "--json",
            "--pipeline",
            "2",
            *SMALL,
        ]
    )
    n, iterations = out["grid_n"], out["iterations"]
    row = n * 8
    # Two bands of n/2 rows: each carries one halo row going out, none coming back.
    assert out["bytes_server_to_client"] == iterations * (2 * 16 + n * row)
    assert out["bytes_client_to_server"] == iterations * (2 * 16 + (n + 2) * row)
    assert out["wall_s"] > 0
    assert out["bytes_per_s_total"] == pytest.approx(
        (out["bytes_client_to_server"] + out["bytes_server_to_client"]) / out["wall_s"], rel=1e-3
    )
    for side in ("client", "server"):
        assert set(out["cpu"][side]) == {"user_s", "sys_s"}
    assert re.fullmatch(r"[0-9a-f]{16}", out["checksum"])


def test_table_has_units(pingpong):
    proc = run([pingpong, "--loopback", "--transport", "tcp", *SMALL])
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()
    for column in ("size[B]", "wall[s]", "c->s[MB/s]", "s->c[MB/s]", "cli usr/sys[s]"):
        assert column in header
    assert row.split()[0] == "tcp"


@pytest.mark.parametrize("transport", ["tcp", "shm"])
def test_separate_server_and_client(pingpong, transport):
    addr = "127.0.0.1:0" if transport == "tcp" else f"pytest-{os.getpid()}"
    server = subprocess.Popen(
        [pingpong, "--server", addr, "--transport", transport],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        assert line.startswith("listening on "), line
        bound = line.split()[-1]
        out = run_json(
            [pingpong, "--client", bound, "--transport", transport, "--compute", "--json", *SMALL]
        )
        assert server.wait(timeout=30) == 0
        loop = run_json(
            [pingpong, "--loopback", "--transport", transport, "--compute", "--json", *SMALL]
        )
        assert out["checksum"] == loop["checksum"]
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize("transport", ["tcp", "shm"])
@pytest.mark.parametrize("victim", ["server", "client"])
def test_vanished_peer_is_reported_without_hanging(pingpong, transport, victim):
    addr = "127.0.0.1:0" if transport == "tcp" else f"pytest-kill-{os.getpid()}"
    server = subprocess.Popen(
        [pingpong, "--server", addr, "--transport", transport, "--timeout", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    client = None
    try:
        bound = server.stdout.readline().split()[-1]
        client = subprocess.Popen(
            [
                pingpong,
                "--client",
                bound,
                "--transport",
                transport,
                "--size",
                "64K",
                "--iterations",
                "100000000",
                "--timeout",
                "20",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.5)
        killed, survivor = (server, client) if victim == "server" else (client, server)
        assert survivor.poll() is None, "the run ended before the peer was killed"
        killed.send_signal(signal.SIGKILL)
        start = time.monotonic()
        rc = survivor.wait(timeout=10)
        assert time.monotonic() - start < 10
        assert rc not in (0, None)
        err = survivor.stderr.read()
        assert re.search(r"(peer|connection|Connection)", err), err
    finally:
        for proc in (server, client):
            if proc is not None:
                proc.kill()
                proc.wait()


def test_rdma_without_device_exits_77(pingpong):
    if Path("/sys/class/infiniband").is_dir() and any(Path("/sys/class/infiniband").iterdir()):
        pytest.skip("this host has an RDMA device; tests/system covers RDMA")
    proc = run([pingpong, "--loopback", "--transport", "rdma", *SMALL])
    assert proc.returncode == 77
    assert "no RDMA device" in proc.stderr


def test_stream_moves_the_grid_one_way_with_messages_in_flight(pingpong):
    idle = run_json([pingpong, "--loopback", "--transport", "tcp", "--json", *SMALL])
    for transport in ("tcp", "shm", "shm-zc"):
        stream = ["--stream", "--pipeline", "4", "--json", *SMALL]
        out = run_json([pingpong, "--loopback", "--transport", transport, *stream])
        n = out["grid_n"]
        assert out["stream"] is True and out["pipeline"] == 4
        # Each message: the whole grid and its 16-byte header; nothing comes back.
        assert out["bytes_client_to_server"] == 20 * (n * n * 8 + 16)
        assert out["bytes_server_to_client"] == 0
        assert out["bytes_per_s_total"] == pytest.approx(out["bytes_per_s_client_to_server"])
        assert out["checksum"] == idle["checksum"]  # the grid travels untouched
    assert idle["stream"] is False
    # A stream's in-flight messages are whole grids: more of them than the grid has rows/2.
    deep = [pingpong, "--loopback", "--transport", "shm", "--stream", "--pipeline", "64"]
    assert run_json([*deep, "--json", "--size", "64K", "--iterations", "100"])["pipeline"] == 64


def test_stream_refuses_compute(pingpong):
    proc = run([pingpong, "--loopback", "--transport", "tcp", "--stream", "--compute", *SMALL])
    assert proc.returncode == 2
    assert "--stream sends the grid untouched: it takes no --compute" in proc.stderr
