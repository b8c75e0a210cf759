"""QoS measurement verdicts: limited VLANs within tolerance, unlimited above every limit."""

import json

import pytest
from cxfab.hostnet.measure import iperf3_bits_per_second, judge


def test_iperf3_receiver_sum_is_used():
    out = json.dumps(
        {"end": {"sum_sent": {"bits_per_second": 2e8}, "sum_received": {"bits_per_second": 1e8}}}
    )
    assert iperf3_bits_per_second(out) == 1e8


def test_iperf3_error_is_raised():
    with pytest.raises(ValueError, match="unable to connect"):
        iperf3_bits_per_second(json.dumps({"error": "unable to connect to server"}))


def test_judge_seed_001_figures_pass():
    # Seed 001 measured 1.04 Gb/s (limit 1), 5.02 (limit 5), 37.8 (unlimited).
    verdicts = judge(
        [
            {"vlan": 10, "limit_mbps": 1000, "measured_mbps": 1040},
            {"vlan": 20, "limit_mbps": 5000, "measured_mbps": 5020},
            {"vlan": 30, "limit_mbps": None, "measured_mbps": 37800},
        ],
        0.1,
    )
    assert [v["passed"] for v in verdicts] == [True, True, True]
    assert verdicts[0]["ratio"] == 1.04


def test_judge_fails_a_vlan_outside_tolerance_and_a_slow_unlimited_one():
    verdicts = judge(
        [
            {"vlan": 10, "limit_mbps": 1000, "measured_mbps": 1200},
            {"vlan": 20, "limit_mbps": 5000, "measured_mbps": 4400},
            {"vlan": 30, "limit_mbps": None, "measured_mbps": 5100},
        ],
        0.1,
    )
    assert [v["passed"] for v in verdicts] == [False, False, False]
