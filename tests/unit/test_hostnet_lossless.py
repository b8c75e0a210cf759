"""Lossless RoCE on a host port: trust/PFC parsers on real layouts, commands, ECN knobs."""

import json
from pathlib import Path

import pytest
from cxfab.host.net import agent, lossless
from cxfab.host.net.qos import mlnx_qos_state as qos_state
from hostnet_helpers import LOSSLESS_PLAN as PLAN

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mlnx"


def sample(name: str) -> str:
    return (FIXTURES / name).read_text().split("# ---\n", 1)[1]


def test_mlnx_qos_capture_with_dscp_trust_and_pfc_on_3():
    text = sample("mlnx_qos_trust_dscp_pfc3.txt")
    observed = lossless.mlnx_qos_state(text)
    assert observed == {"trust": "dscp", "pfc": [0, 0, 0, 1, 0, 0, 0, 0]}
    assert lossless.differences(lossless.expected_state(PLAN), observed) == []
    # The dscp2prio block does not disturb the QoS parser (priority -> TC).
    assert qos_state(text)["prio_tc"] == [1, 0, 2, 3, 4, 5, 6, 7]


def test_newer_layout_with_buffers_and_default_priority_reads_pcp_and_no_pfc():
    observed = lossless.mlnx_qos_state(sample("mlnx_qos_buffers_pcp.txt"))
    assert observed == {"trust": "pcp", "pfc": [0] * 8}
    found = lossless.differences(lossless.expected_state(PLAN), observed)
    assert found == [
        "trust 'pcp' != 'dscp'",
        "pfc [0, 0, 0, 0, 0, 0, 0, 0] != [0, 0, 0, 1, 0, 0, 0, 0]",
    ]


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("", "trust state"),
        ("Priority trust state is not supported on your system\n", "trust state"),
        ("Priority trust state: dscp\nCable len: 7\n", "PFC enabled row"),
        ("Priority trust state: dscp\nPFC configuration:\n\tenabled 0 0 0\n", "PFC enabled row"),
    ],
)
def test_unreadable_mlnx_qos_output_fails_closed_with_the_first_lines(text, missing):
    with pytest.raises(lossless.LosslessReadError, match=missing) as error:
        lossless.mlnx_qos_state(text, "mlnx_qos -i ens1f0")
    assert str(error.value).startswith("mlnx_qos -i ens1f0: ")


def test_mlnx_qos_options_are_appended_to_the_one_call():
    assert lossless.mlnx_qos_args(PLAN) == ["--trust=dscp", "--pfc=0,0,0,1,0,0,0,0"]


# iproute2's dcb JSON, samples with their sources in tests/fixtures/mlnx/.
DCB_PFC = sample("dcb_pfc_show_prio3.txt")
DCB_APP = sample("dcb_app_show_dscp_default.txt")


def test_dcb_json_reads_pfc_and_dscp_trust():
    assert lossless.dcb_state(DCB_PFC, DCB_APP) == {"trust": "dscp", "pfc": PLAN["pfc"]}
    assert lossless.dcb_state(DCB_PFC, "{}")["trust"] == "pcp"
    with pytest.raises(lossless.LosslessReadError, match="no prio_pfc"):
        lossless.dcb_state('{"pfc_cap": 8}', "{}")
    with pytest.raises(lossless.LosslessReadError, match="not JSON"):
        lossless.dcb_state("Error: No such device\n", "{}")


def test_dcb_commands_set_pfc_and_the_default_dscp_map():
    pfc, app = lossless.dcb_args("dcb", "ens1f0", PLAN)
    flags = ["0:off", "1:off", "2:off", "3:on", "4:off", "5:off", "6:off", "7:off"]
    assert pfc == ["dcb", "pfc", "set", "dev", "ens1f0", "prio-pfc", *flags]
    assert app[:6] == ["dcb", "app", "replace", "dev", "ens1f0", "dscp-prio"]
    assert app[6 + 26] == "26:3" and len(app) == 6 + 64


def _knob(root: Path, port: str, protocol: str, prio: int, value: str) -> Path:
    path = root / "sys/class/net" / port / "ecn" / protocol / "enable" / str(prio)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value)
    return path


def test_ecn_knobs_are_read_enabled_only_where_off_and_missing_ones_named(tmp_path):
    np_knob = _knob(tmp_path, "ens1f0", "roce_np", 3, "1\n")
    rp_knob = _knob(tmp_path, "ens1f0", "roce_rp", 3, "0\n")
    state = lossless.ecn_state(str(tmp_path), "ens1f0", [3])
    assert state == {"roce_np/3": 1, "roce_rp/3": 0}
    off = lossless.ecn_to_enable(str(tmp_path), "ens1f0", state)
    assert off == [str(rp_knob)]
    assert agent.ecn_enable(off) == []
    assert rp_knob.read_text() == "1\n" and np_knob.read_text() == "1\n"
    after = lossless.ecn_state(str(tmp_path), "ens1f0", [3])
    assert lossless.ecn_to_enable(str(tmp_path), "ens1f0", after) == []  # second run: nothing
    # A driver without the knobs (upstream mlx5, virtio): named, never taken as enabled.
    bare = lossless.ecn_state(str(tmp_path), "ens1f1", [3])
    assert bare == {"roce_np/3": None, "roce_rp/3": None}
    assert lossless.ecn_to_enable(str(tmp_path), "ens1f1", bare) == []
    assert lossless.ecn_missing("ens1f1", bare) == [
        "ens1f1: no ECN knob ecn/roce_np/enable/3 (the driver does not expose it)",
        "ens1f1: no ECN knob ecn/roce_rp/enable/3 (the driver does not expose it)",
    ]


def test_an_ecn_knob_with_garbage_fails_closed(tmp_path):
    _knob(tmp_path, "ens1f0", "roce_np", 3, "enabled\n")
    with pytest.raises(lossless.LosslessReadError, match="expected 0 or 1"):
        lossless.ecn_state(str(tmp_path), "ens1f0", [3])


def test_memlock_text():
    assert "*    hard    memlock    unlimited\n" in lossless.memlock_text(0)
    assert "*    soft    memlock    65536\n" in lossless.memlock_text(65536)


def test_the_agent_re_applies_the_ecn_knobs_of_the_port_that_came_up(tmp_path):
    knob = _knob(tmp_path, "ens1f0", "roce_np", 3, "0\n")
    other = _knob(tmp_path, "ens1f1", "roce_np", 3, "0\n")
    config = tmp_path / "host-apply.json"
    config.write_text(
        json.dumps(
            {
                "qos": {
                    "commands": {"ens1f0": [["true"]], "ens1f1": [["true"]]},
                    "ecn": {"ens1f0": [str(knob)], "ens1f1": [str(other)]},
                }
            }
        )
    )
    assert agent.main(["--config", str(config), "--interface", "ens1f0"]) == 0
    assert knob.read_text() == "1\n" and other.read_text() == "0\n"
    assert agent.main(["--config", str(config)]) == 0
    assert other.read_text() == "1\n"
