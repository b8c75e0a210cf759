"""pingpong over AF_SMC and over rsockets: same grid as TCP, honest about the mode it ran in.

Both need what this machine may lack: AF_SMC needs a kernel with CONFIG_SMC, rsockets
an RDMA device. Without them the transport exits 77 with the reason and the tests
that need a connection skip with that reason. The development machines' kernel has
neither, so there only the exit-77 tests run; these loopback tests do not run in the
lab. The connected cases run between the lab's guests (Debian 6.1 kernel: CONFIG_SMC=m,
soft-RoCE) in tests/system/test_native_rdma.py.
"""

import json
import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CXFAB_NATIVE_BUILD", REPO / "native" / "build"))
SMALL = ["--size", "256K", "--iterations", "20", "--compute", "--pipeline", "2", "--json"]
AF_SMC = 43
SMC_MODES = {"SMC-R", "SMC-D", "TCP (fallback)"}


@pytest.fixture(scope="module")
def pingpong():
    sanitize = "1" if BUILD.name == "build-asan" else "0"
    subprocess.run(
        ["make", "-s", "-C", str(REPO / "native"), f"BUILD={BUILD.name}", f"SANITIZE={sanitize}"],
        check=True,
    )
    return str(BUILD / "pingpong")


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def tcp_checksum(pingpong):
    proc = run([pingpong, "--loopback", "--transport", "tcp", *SMALL])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["checksum"]


def kernel_has_af_smc() -> bool:
    try:
        socket.socket(AF_SMC, socket.SOCK_STREAM, 0).close()
    except OSError:
        return False
    return True


def rdma_device_present() -> bool:
    devices = Path("/sys/class/infiniband")
    return devices.is_dir() and any(devices.iterdir())


def run_or_skip(pingpong, transport):
    proc = run([pingpong, "--loopback", "--transport", transport, *SMALL])
    if proc.returncode == 77:
        pytest.skip(f"{transport} cannot run here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_smc_checksum_matches_tcp_and_reports_its_mode(pingpong, tcp_checksum):
    out = run_or_skip(pingpong, "smc")
    assert out["transport"] == "smc"
    assert out["checksum"] == tcp_checksum
    connection = out["connection"]
    assert connection["mode"] in SMC_MODES, connection
    if connection["mode"] == "TCP (fallback)":
        assert re.fullmatch(r"0x[0-9a-f]{8}", connection["fallback_reason"])
        assert connection["fallback_reason"] != "0x00000000"
        assert connection["fallback_text"] not in ("", "none")


def test_smc_without_kernel_support_exits_77_and_says_why(pingpong):
    if kernel_has_af_smc():
        pytest.skip("this kernel has AF_SMC; the checksum test covers it")
    proc = run([pingpong, "--loopback", "--transport", "smc", *SMALL])
    assert proc.returncode == 77
    assert "AF_SMC sockets are not available in this kernel" in proc.stderr
    assert "CONFIG_SMC" in proc.stderr
    assert proc.stdout == ""


def test_rsocket_checksum_matches_tcp(pingpong, tcp_checksum):
    out = run_or_skip(pingpong, "rsocket")
    assert out["transport"] == "rsocket"
    assert out["checksum"] == tcp_checksum
    assert "connection" not in out  # rsockets have no fallback to report


def test_rsocket_without_rdma_device_exits_77(pingpong):
    if rdma_device_present():
        pytest.skip("this host has an RDMA device; the checksum test covers rsocket")
    for role in (["--loopback"], ["--client", "127.0.0.1:1"], ["--server", "127.0.0.1:0"]):
        proc = run([pingpong, "--transport", "rsocket", *role, *SMALL])
        assert proc.returncode == 77, (role, proc.stderr)
        assert "no RDMA device" in proc.stderr


def test_rcat_accepts_the_new_transports(pingpong):
    rcat = str(BUILD / "rcat")
    for transport, marker in (("rsocket", "no RDMA device"), ("smc", "AF_SMC")):
        proc = run([rcat, "--transport", transport, "--client", "127.0.0.1:1"])
        if proc.returncode != 77:
            pytest.skip(f"{transport} available here; the lab streams over it")
        assert marker in proc.stderr
