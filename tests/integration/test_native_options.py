"""Bad options are rejected with a message naming the option; --help comes from the table."""

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CXFAB_NATIVE_BUILD", REPO / "native" / "build"))


@pytest.fixture(scope="module")
def build():
    sanitize = "1" if BUILD.name == "build-asan" else "0"
    subprocess.run(
        ["make", "-s", "-C", str(REPO / "native"), f"BUILD={BUILD.name}", f"SANITIZE={sanitize}"],
        check=True,
    )
    return BUILD


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--loopback", "--size", "12x"], "--size: '12x' is not a number"),
        (["--loopback", "--size", "1"], "--size: 1 is out of range [4096, 1073741824]"),
        (["--loopback", "--size", "2G"], "--size: 2147483648 is out of range"),
        (["--loopback", "--pipeline", "0"], "--pipeline: 0 is out of range [1, 64]"),
        (["--loopback", "--pipeline", "65"], "--pipeline: 65 is out of range"),
        (["--loopback", "--iterations", "-5"], "--iterations: '-5' is not a non-negative"),
        (["--loopback", "--transport", "udp"], "--transport: 'udp' is not one of: tcp shm"),
        (["--loopback", "--isa", "sse9"], "--isa: 'sse9' is not one of: scalar avx2 avx512"),
        (["--loopback", "--bogus"], "unknown option '--bogus'"),
        (["--loopback", "--size"], "--size needs a value (BYTES)"),
        (["--loopback", "--json=yes"], "--json takes no value"),
        (["--loopback", "--cpus", "3-1"], "--cpus: range 3-1 is reversed"),
        (["--loopback", "--cpus", "a"], "--cpus: 'a' is not a CPU list"),
        (["--size", "4K"], "choose exactly one of --server, --client, --loopback"),
        (["--loopback", "--client", "x:1"], "choose exactly one of"),
        (["--loopback", "--size", "4K", "--pipeline", "9"], "--pipeline: 9 bands do not fit"),
        (["--client", "127.0.0.1"], "address '127.0.0.1' has no port"),
        (["stray"], "unexpected argument 'stray'"),
        (["--client", "x:1", "--transport", "rdma", "--tos", "256"], "--tos: 256 is out of range"),
        (["--loopback", "--tos", "104"], "--tos: only --transport rdma sets a ToS"),
        (["--server", "--transport", "rdma", "--tos", "104"], "--tos: a client option"),
    ],
)
def test_pingpong_rejects_bad_options(build, args, message):
    proc = subprocess.run(
        [str(build / "pingpong"), *args], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert f"pingpong: {message}" in proc.stderr, proc.stderr


def test_unreachable_server_names_the_call(build):
    proc = subprocess.run(
        [str(build / "pingpong"), "--client", "127.0.0.1:1", "--timeout", "1"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1
    assert "pingpong: connect: Connection refused" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--server", "--client", "x:1"], "choose exactly one of --server, --client"),
        (["--client", "x:1", "--size", "1K"], "--size: 1024 is out of range"),
        (["--client", "x:1", "--transport", "ib"], "--transport: 'ib' is not one of"),
        (["--client", "x:1", "--transport", "tcp", "--tos", "104"], "--tos: only --transport rdma"),
        (["--server", "--transport", "rdma", "--tos", "104"], "--tos: a client option"),
    ],
)
def test_rcat_rejects_bad_options(build, args, message):
    proc = subprocess.run([str(build / "rcat"), *args], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert f"rcat: {message}" in proc.stderr, proc.stderr


@pytest.mark.parametrize("program", ["pingpong", "rcat", "stencil-bench"])
def test_help_lists_every_option_with_ranges(build, program):
    proc = subprocess.run(
        [str(build / program), "--help"], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"usage: {program}")
    assert "--size BYTES" in proc.stdout
    assert "[4096..1073741824]" in proc.stdout
    if program == "pingpong":
        for option in (
            "--transport NAME",
            "--server [ADDR:PORT]",
            "--client ADDR:PORT",
            "--loopback",
            "--iterations N",
            "--compute",
            "--pipeline N",
            "--cpus LIST",
            "--isa NAME",
            "--json",
            "--timeout SECONDS",
            "--tos BYTE",
        ):
            assert option in proc.stdout
        assert "(DSCP x 4), set through RDMA-CM [0..255]" in proc.stdout
        assert "{tcp|shm|shm-zc|rdma|smc|rsocket}" in proc.stdout
        assert "{scalar|avx2|avx512|auto}" in proc.stdout
