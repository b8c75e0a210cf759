"""The NIC runtime stage: SR-IOV counts planned and written, DCQCN knobs, the agent."""

from __future__ import annotations

import json

import pytest
from cxfab.host import facts as host_facts
from cxfab.host.net import agent, sriov
from cxfab.host.stages import nic_runtime
from cxfab.structured import hosts
from cxfab.verify.nic import dcqcn_checks
from onyx_helpers import example_fabric

PORTS = ("enp23s0f0", "enp23s0f1")


class Failed(Exception):
    pass


class Module:
    def __init__(self, params, check_mode=False):
        self.params = {"root": "/", "persist": True, **params}
        self.check_mode = check_mode
        self.warnings = []

    def fail_json(self, msg, **fields):
        raise Failed(msg)

    def warn(self, text):
        self.warnings.append(text)

    def run_command(self, argv, check_rc=False):  # pragma: no cover - no systemd in tmp
        raise AssertionError(argv)


def _tree(root, numvfs=0, total=8, ecn=0):
    for netdev in PORTS:
        device = root / "sys/class/net" / netdev / "device"
        device.mkdir(parents=True)
        (device / "sriov_numvfs").write_text(f"{numvfs}\n")
        (device / "sriov_totalvfs").write_text(f"{total}\n")
        for protocol in ("roce_np", "roce_rp"):
            knobs = root / "sys/class/net" / netdev / "ecn" / protocol / "enable"
            knobs.mkdir(parents=True)
            for prio in range(8):
                (knobs / str(prio)).write_text(f"{ecn}\n")


def _numvfs(root, netdev):
    return (root / "sys/class/net" / netdev / "device/sriov_numvfs").read_text().strip()


@pytest.mark.parametrize(
    ("current", "want", "steps"),
    [(0, 8, [8]), (8, 8, []), (4, 8, [0, 8]), (8, 0, [0]), (0, 0, [])],
)
def test_steps_write_zero_first_between_two_nonzero_counts(current, want, steps):
    assert sriov.steps("pf0", want, {"numvfs": current, "totalvfs": 8}) == steps


def test_a_count_above_totalvfs_or_no_sriov_is_refused_with_the_reason():
    with pytest.raises(sriov.SriovError, match=r"pf0: 9 VFs wanted, the function offers 8"):
        sriov.steps("pf0", 9, {"numvfs": 0, "totalvfs": 8})
    with pytest.raises(sriov.SriovError, match=r"offers no SR-IOV .*activation may be pending"):
        sriov.steps("pf0", 1, {"error": "x/sriov_numvfs: unreadable (None)"})


def test_plan_refuses_every_bad_port_before_any_write(tmp_path):
    _tree(tmp_path, total=4)
    with pytest.raises(sriov.SriovError) as caught:
        sriov.plan(str(tmp_path), {p: 8 for p in PORTS})
    assert all(p in str(caught.value) for p in PORTS)
    assert [_numvfs(tmp_path, p) for p in PORTS] == ["0", "0"]


def _structured():
    return hosts.build(example_fabric(), "apricot")  # cx4: sriov 8 VFs, roce on both ports


def test_the_stage_creates_vfs_enables_dcqcn_persists_and_is_idempotent(tmp_path):
    _tree(tmp_path, numvfs=2)
    params = {"structured": _structured(), "root": str(tmp_path)}
    checked = nic_runtime.run(Module(params, check_mode=True))
    assert checked["changed"] and checked["sriov"]["enp23s0f0"] == {
        "before": 2, "after": 8, "wanted": 8,
    }  # fmt: skip
    assert _numvfs(tmp_path, "enp23s0f0") == "2"  # check mode wrote nothing
    assert not (tmp_path / agent.CONFIG.lstrip("/")).exists()
    first = nic_runtime.run(Module(params))
    assert first["changed"] and [_numvfs(tmp_path, p) for p in PORTS] == ["8", "8"]
    prios = first["dcqcn"]["enp23s0f0"]["after"]
    assert prios and set(prios.values()) == {1}
    config = json.loads((tmp_path / agent.CONFIG.lstrip("/")).read_text())["nic_runtime"]
    assert config["sriov"] == {p: 8 for p in PORTS}
    second = nic_runtime.run(Module(params))
    assert not second["changed"] and second["persisted"] == []


def test_the_agent_recreates_the_vfs_at_boot_and_only_its_port_at_link_up(tmp_path):
    _tree(tmp_path)
    section = {"root": str(tmp_path), "sriov": {p: 8 for p in PORTS}, "ecn": {}}
    assert agent._apply_nic_runtime(section, "enp23s0f1") == []
    assert [_numvfs(tmp_path, p) for p in PORTS] == ["0", "8"]
    assert agent._apply_nic_runtime(section) == []
    assert [_numvfs(tmp_path, p) for p in PORTS] == ["8", "8"]


def test_dcqcn_checks_fail_with_the_knobs_read_off_or_absent(tmp_path):
    _tree(tmp_path, ecn=1)
    sc = _structured()
    priority = sc["nics"][0]["runtime"]["dcqcn"]["priorities"][0]
    (tmp_path / f"sys/class/net/enp23s0f1/ecn/roce_rp/enable/{priority}").write_text("0\n")
    facts = host_facts.gather(
        host_facts.Host(str(tmp_path), sc), readings=(("dcqcn", host_facts.read_dcqcn),)
    )
    found = {c["id"]: c for c in dcqcn_checks("apricot", sc, facts)}
    assert found["dcqcn.enp23s0f0"]["status"] == "pass"
    off = found["dcqcn.enp23s0f1"]
    assert (off["status"], off["observed"]) == ("fail", f"roce_rp/{priority}=0")
    (tmp_path / f"sys/class/net/enp23s0f0/ecn/roce_np/enable/{priority}").unlink()
    facts = host_facts.gather(
        host_facts.Host(str(tmp_path), sc), readings=(("dcqcn", host_facts.read_dcqcn),)
    )
    absent = {c["id"]: c for c in dcqcn_checks("apricot", sc, facts)}["dcqcn.enp23s0f0"]
    assert absent["observed"] == f"roce_np/{priority}=absent"


def test_the_agent_main_acts_on_a_link_up_of_its_ports_only(tmp_path):
    _tree(tmp_path)
    knob = tmp_path / "sys/class/net/enp23s0f1/ecn/roce_np/enable/3"
    section = {
        "root": str(tmp_path),
        "sriov": {p: 8 for p in PORTS},
        "ecn": {"enp23s0f1": [str(knob)]},
    }
    config = tmp_path / "host-apply.json"
    config.write_text(json.dumps({"nic_runtime": section}))
    assert agent.main(["--config", str(config), "--interface", "eth9"]) == 0
    assert [_numvfs(tmp_path, p) for p in PORTS] == ["0", "0"]
    assert agent.main(["--config", str(config), "--interface", "enp23s0f1"]) == 0
    assert [_numvfs(tmp_path, p) for p in PORTS] == ["0", "8"] and knob.read_text() == "1\n"
    (tmp_path / "sys/class/net/enp23s0f0/device/sriov_totalvfs").write_text("4\n")
    (tmp_path / "sys/class/net/enp23s0f1/device/sriov_numvfs").write_text("0\n")  # a reboot
    assert agent.main(["--config", str(config)]) == 1  # 8 of 4: said, that port left alone
    assert [_numvfs(tmp_path, p) for p in PORTS] == ["0", "8"]


def test_trust_outside_lossless_is_checked_with_the_observed_value():
    from cxfab.verify.nic import trust_checks

    runtime = {"trust": "dscp", "dcqcn": {"netdevs": ["p0", "p1", "p2"], "priorities": [3]}}
    sc = {"nics": [{"runtime": runtime}], "lossless": {"ports": ["p2"]}}  # p2: host_qos's
    facts = {"trust": {"p0": {"trust": "pcp"}, "p1": {"error": "mlnx_qos not found in PATH"}}}
    found = {c["id"]: c for c in trust_checks("h", sc, facts)}
    assert set(found) == {"trust.p0", "trust.p1"}
    assert (found["trust.p0"]["status"], found["trust.p0"]["observed"]) == ("fail", "trust pcp")
    assert found["trust.p1"]["status"] != "pass"


def test_trust_commands_are_the_lossless_ones_trust_part():
    from cxfab.host.stages.qos import Backend

    mlnx = Backend(None, None, "mlnx_qos")
    mlnx.tools["mlnx_qos"] = "/usr/bin/mlnx_qos"
    assert mlnx.trust_commands("p0", "dscp") == [["/usr/bin/mlnx_qos", "-i", "p0", "--trust=dscp"]]
    dcb = Backend(None, None, "dcb")
    dcb.tools["dcb"] = "dcb"
    (app,) = dcb.trust_commands("p0", "dscp")
    assert app[:6] == ["dcb", "app", "replace", "dev", "p0", "dscp-prio"] and app[-1] == "63:7"
    assert dcb.trust_commands("p0", "pcp") == []
