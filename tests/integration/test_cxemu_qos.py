"""The emulated mlnx_qos: real format, mlx5 quantisation, and a real kernel shaper.

The shaper part needs root, network namespaces and HTB (present on the controller); it
skips with the reason otherwise. flower is not on the controller kernel, so there the
shaper falls back to u32 (the guest kernel has flower).
"""

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CXEMU = Path(__file__).resolve().parents[1] / "lab" / "cxemu"
sys.path.insert(0, str(CXEMU))

from cxemu.tools.qos import DriverError, quantize_kbps  # noqa: E402

GBIT = 1_000_000  # kbit/s


@pytest.mark.parametrize(
    ("requested", "stored"),
    [
        (0, 0),
        (50_000, 100_000),
        (2_550_000, 2_500_000),
        (25_500_000, 25_500_000),
        (25_600_000, 25_000_000),
        (30 * GBIT, 30 * GBIT),
        (255 * GBIT, 255 * GBIT),
    ],
)
def test_quantisation_follows_mlx5(requested, stored):
    assert quantize_kbps(requested) == stored


def test_rate_above_255_gbps_is_a_driver_error():
    with pytest.raises(DriverError):
        quantize_kbps(256 * GBIT)


def _run(state, *args, netns=None):
    command = [str(CXEMU / "bin" / "mlnx_qos"), *args]
    if netns:
        command = ["ip", "netns", "exec", netns, *command]
    env = {**os.environ, "CXEMU_STATE_DIR": str(state)}
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=30)


@pytest.fixture
def qos_state(tmp_path):
    state = tmp_path / "state"
    subprocess.run(
        [
            str(CXEMU / "bin" / "cxemu-admin"),
            "seed",
            "--bdf",
            "0000:65:00.0,0000:65:00.1",
            "--netdevs",
            "cxq0,cxq1",
        ],
        env={**os.environ, "CXEMU_STATE_DIR": str(state)},
        check=True,
        capture_output=True,
    )
    return state


def test_default_block_format(qos_state):
    result = _run(qos_state, "-i", "cxq0")
    assert result.returncode == 0
    assert "tc: 0 ratelimit: unlimited, tsa: vendor\n\t priority:  1\n" in result.stdout
    assert "tc: 1 ratelimit: unlimited, tsa: vendor\n\t priority:  0\n" in result.stdout


def test_driver_error_when_kernel_refuses_changes_nothing(qos_state):
    # cxq0 does not exist in this namespace: tc fails like the driver would
    result = _run(qos_state, "-i", "cxq0", "-r", "0,5,0,0,0,0,0,0")
    assert result.returncode == 0  # the real tool reports and carries on
    assert "Rate limit is not supported on your system!" in result.stdout
    assert "tc: 1 ratelimit: unlimited" in result.stdout


def test_ets_validation(qos_state):
    bad_sum = _run(
        qos_state,
        "-i",
        "cxq0",
        "-s",
        "ets,ets,strict,strict,strict,strict,strict,strict",
        "-t",
        "50,40,0,0,0,0,0,0",
    )
    assert bad_sum.returncode == 1
    assert "[Errno 22] Invalid argument" in bad_sum.stdout
    short = _run(qos_state, "-i", "cxq0", "-p", "0,0,0")
    assert (short.returncode, short.stdout.splitlines()[-1]) == (
        1,
        "prio_tc list must have 8 items",
    )
    good = _run(
        qos_state,
        "-i",
        "cxq0",
        "-s",
        "ets,ets,strict,strict,strict,strict,strict,strict",
        "-t",
        "60,40,0,0,0,0,0,0",
        "-p",
        "0,0,0,1,1,1,1,1",
    )
    assert good.returncode == 0
    assert "tc: 0 ratelimit: unlimited, tsa: ets, bw: 60%\n" in good.stdout


def test_unknown_netdev_has_no_dcb(qos_state):
    result = _run(qos_state, "-i", "eth9")
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "ETS features are not supported on your system"


@pytest.fixture
def netns():
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        pytest.skip("needs root, ip and tc to build a veth pair in a namespace")
    name = f"cxq-{uuid.uuid4().hex[:8]}"
    created = subprocess.run(["ip", "netns", "add", name], capture_output=True, check=False)
    if created.returncode != 0:
        pytest.skip(f"cannot create a network namespace: {created.stderr.decode().strip()}")
    try:
        subprocess.run(
            ["ip", "-n", name, "link", "add", "cxq0", "type", "veth", "peer", "name", "cxq1"],
            check=True,
            capture_output=True,
        )
        subprocess.run(["ip", "-n", name, "link", "set", "cxq0", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def test_ratelimit_programs_kernel_shaper(qos_state, netns):
    result = _run(qos_state, "-i", "cxq0", "-r", "0,5,0,0,0,0,0,30", netns=netns)
    if "Rate limit is not supported" in result.stdout:
        pytest.skip(f"kernel refused HTB: {result.stderr.strip()}")
    assert "tc: 1 ratelimit: 5.0 Gbps, tsa: vendor\n\t priority:  0\n" in result.stdout
    assert "tc: 7 ratelimit: 30.0 Gbps" in result.stdout
    classes = subprocess.run(
        ["ip", "netns", "exec", netns, "tc", "class", "show", "dev", "cxq0"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "class htb 1:11 root prio 0 rate 5Gbit ceil 5Gbit" in classes
    assert "class htb 1:17 root prio 0 rate 30Gbit" in classes
    # 50 ms of tokens per class, so late guest timers do not cost the class its rate.
    burst = re.search(r"class htb 1:11 .* burst (\d+)([KM]?)b", classes)
    scale = {"": 1, "K": 1000, "M": 1_000_000}[burst.group(2)]
    assert int(burst.group(1)) * scale == 5_000_000_000 // 8 // 20
    qdisc = subprocess.run(
        ["ip", "netns", "exec", netns, "tc", "qdisc", "show", "dev", "cxq0"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "default 0x11" in qdisc  # untagged = priority 0 = TC1 on mlx5
    filters = subprocess.run(
        ["ip", "netns", "exec", netns, "tc", "filter", "show", "dev", "cxq0"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert filters.count("flowid 1:") + filters.count("classid 1:") >= 8
    # all limits back to unlimited removes the shaper again
    _run(qos_state, "-i", "cxq0", "-r", "0,0,0,0,0,0,0,0", netns=netns)
    qdisc = subprocess.run(
        ["ip", "netns", "exec", netns, "tc", "qdisc", "show", "dev", "cxq0"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "htb" not in qdisc


def test_trust_and_pfc_are_kept_and_printed_like_the_real_tool(qos_state):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "module_utils"))
    from cxfab.host.net import lossless

    before = lossless.mlnx_qos_state(_run(qos_state, "-i", "cxq0").stdout)
    assert before == {"trust": "pcp", "pfc": [0] * 8}
    applied = _run(qos_state, "-i", "cxq0", "--trust=dscp", "--pfc=0,0,0,1,0,0,0,0")
    assert applied.returncode == 0, applied.stdout
    shown = _run(qos_state, "-i", "cxq0").stdout
    assert "dscp2prio mapping:\n\tprio:0 dscp:07,06,05,04,03,02,01,00,\n" in shown
    assert "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n" in shown
    assert "\tenabled     0   0   0   1   0   0   0   0   \n" in shown
    assert lossless.mlnx_qos_state(shown) == {"trust": "dscp", "pfc": [0, 0, 0, 1, 0, 0, 0, 0]}
    # The other port of the card keeps its own state.
    assert lossless.mlnx_qos_state(_run(qos_state, "-i", "cxq1").stdout)["pfc"] == [0] * 8
    assert _run(qos_state, "-i", "cxq0", "--trust=l3").returncode == 1
    back = _run(qos_state, "-i", "cxq0", "--trust=pcp", "--pfc=0,0,0,0,0,0,0,0").stdout
    assert "dscp2prio" not in back
    assert lossless.mlnx_qos_state(back) == {"trust": "pcp", "pfc": [0] * 8}
