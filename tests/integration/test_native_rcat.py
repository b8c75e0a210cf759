"""native/rcat moves a byte stream intact (TCP and shared memory here; RDMA in tests/system)."""

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CXFAB_NATIVE_BUILD", REPO / "native" / "build"))


@pytest.fixture(scope="module")
def rcat():
    sanitize = "1" if BUILD.name == "build-asan" else "0"
    subprocess.run(
        ["make", "-s", "-C", str(REPO / "native"), f"BUILD={BUILD.name}", f"SANITIZE={sanitize}"],
        check=True,
    )
    return str(BUILD / "rcat")


def transfer(rcat, transport, data_path, out_path, extra=()):
    addr = "127.0.0.1:0" if transport == "tcp" else f"rcat-{os.getpid()}-{out_path.name}"
    with open(out_path, "wb") as out:
        server = subprocess.Popen(
            [rcat, "--server", addr, "--transport", transport, *extra],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = server.stderr.readline()
            assert line.startswith("rcat: listening on "), line
            bound = line.split()[-1]
            with open(data_path, "rb") as data:
                sender = subprocess.run(
                    [rcat, "--client", bound, "--transport", transport, *extra],
                    stdin=data,
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
            assert sender.returncode == 0, sender.stderr
            assert server.wait(timeout=30) == 0, server.stderr.read()
        finally:
            server.kill()
            server.wait()


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.parametrize("transport", ["tcp", "shm"])
@pytest.mark.parametrize(
    ("nbytes", "extra"),
    [
        (3 * 1024 * 1024 + 123, ()),
        (1000003, ("--size", "4K", "--pipeline", "3")),
        (0, ()),
    ],
)
def test_stream_arrives_intact(rcat, tmp_path, transport, nbytes, extra):
    data = tmp_path / "in.bin"
    data.write_bytes(os.urandom(nbytes))
    out = tmp_path / f"out-{transport}-{nbytes}.bin"
    transfer(rcat, transport, data, out, extra)
    assert out.stat().st_size == nbytes
    assert sha256(out) == sha256(data)


def test_sender_without_server_fails_fast(rcat):
    proc = subprocess.run(
        [rcat, "--client", "127.0.0.1:1", "--timeout", "1"],
        input=b"x",
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 1
    assert b"rcat: connect: Connection refused" in proc.stderr
