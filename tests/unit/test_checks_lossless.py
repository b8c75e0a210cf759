"""Verification checks of lossless RoCE, one NIC reading and the cabling (LLDP)."""

from __future__ import annotations

from cxfab.verify import host as verify_host
from cxfab.verify import nic, qos

from tests.unit.checks_data import (
    by_id,
    firmware_result,
    host_data,
    host_intent,
    link_type_result,
    status_of,
    structured,
)
from tests.unit.hostnet_helpers import LOSSLESS_PLAN as LOSSLESS


# ---------------------------------------------------------------- lossless RoCE
def qos_result(trust="dscp", pfc=None, knobs=None):
    """cxfab_host_qos in check mode, as verify runs it: `read` is what the port held,
    `observed` the planned state (check mode predicts it, it reads nothing after)."""
    read = {"prio_tc": [0] * 8, "tcs": {}, "trust": trust, "pfc": pfc or LOSSLESS["pfc"]}
    planned = {"prio_tc": [0] * 8, "tcs": {}, "trust": "dscp", "pfc": LOSSLESS["pfc"]}
    ecn = {"before": knobs if knobs is not None else {"roce_np/3": 1, "roce_rp/3": 1}}
    port = {"read": read, "observed": planned, "ecn": ecn}
    return {"changed": False, "plan": {}, "ports": {"ens1f0": port}}


def lossless_by_id(result, plan=LOSSLESS):
    return {c["id"]: c for c in qos.lossless_checks("h1", {"lossless": plan}, result)}


def test_lossless_host_checks_pass_on_what_was_read():
    found = lossless_by_id(qos_result())
    assert {c["status"] for c in found.values()} == {"pass"}
    assert found["pfc.ens1f0"]["observed"] == "PFC on priorities [3]"
    assert found["ecn.ens1f0"]["observed"] == "roce_np/3 1, roce_rp/3 1"


def test_a_removed_pfc_setting_or_pcp_trust_fails_with_the_value_read():
    found = lossless_by_id(qos_result(trust="pcp", pfc=[0] * 8))
    assert found["trust.ens1f0"]["status"] == "fail"
    assert found["trust.ens1f0"]["observed"] == "trust pcp"
    assert (found["pfc.ens1f0"]["status"], found["pfc.ens1f0"]["observed"]) == (
        "fail",
        "PFC on priorities []",
    )


def test_a_result_without_what_was_read_fails_closed():
    # The lab caught it: the checks judged check mode's planned state and passed a
    # PFC removed by hand. Without a `read` state nothing passes.
    result = qos_result(trust="pcp", pfc=[0] * 8)
    del result["ports"]["ens1f0"]["read"]
    found = lossless_by_id(result)
    assert found["pfc.ens1f0"]["status"] == "fail"
    assert found["pfc.ens1f0"]["observed"] == "not read"
    assert found["trust.ens1f0"]["status"] == "fail"


def test_ecn_off_fails_and_a_missing_knob_warns_by_name():
    off = lossless_by_id(qos_result(knobs={"roce_np/3": 1, "roce_rp/3": 0}))["ecn.ens1f0"]
    assert off["status"] == "fail" and off["message"] == "ECN off: roce_rp/3"
    bare = lossless_by_id(qos_result(knobs={"roce_np/3": None, "roce_rp/3": None}))["ecn.ens1f0"]
    assert bare["status"] == "warn" and "roce_np/3, roce_rp/3" in bare["message"]


def test_lossless_checks_fail_on_an_unreadable_result_and_skip_when_off():
    failed = lossless_by_id({"failed": True, "msg": "mlnx_qos -i ens1f0: no trust state"})
    assert {c["status"] for c in failed.values()} == {"fail"}
    assert set(failed) == {"trust.ens1f0", "pfc.ens1f0", "ecn.ens1f0"}
    off = lossless_by_id(qos_result(), plan=None)
    assert list(off) == ["lossless.host"] and off["lossless.host"]["status"] == "skip"
    assert off["lossless.host"]["message"].startswith("not configured")


# ---------------------------------------------------------------- one NIC reading


def nic_state_reading(**firmware) -> dict:
    nic = host_intent()["nics"][0]
    state = {k: v for k, v in firmware_result(**firmware).items() if k != "item"}
    return {
        "changed": False,
        "nics": [
            {
                "pci": nic["pci"],
                "firmware": state,
                "link_type": {"ports": link_type_result()["ports"]},
            }
        ],
    }


def test_one_nic_state_reading_gives_the_firmware_and_port_checks():
    data = host_data(nic_state=nic_state_reading(running_version="12.23.1020",
                                                 target_running=False))  # fmt: skip
    found = by_id(verify_host.host_checks("h1", structured(host_intent()), data))
    assert found["firmware.cx4.version"]["status"] == "fail"
    assert found["firmware.cx4.version"]["observed"] == "flash 12.28.1002, running 12.23.1020"
    assert found["link_type.cx4.p1"]["status"] == "pass"


def test_a_card_waiting_for_an_activation_is_named_with_its_parameters():
    reading = nic_state_reading()
    pci = reading["nics"][0]["pci"]
    words = "SRIOV_EN (current False(0), next boot True(1))"
    reading["pending_activation"] = {pci: words}
    found = by_id(
        verify_host.host_checks("h1", structured(host_intent()), host_data(nic_state=reading))
    )
    assert found["activation.cx4"]["status"] == "fail"
    assert found["activation.cx4"]["observed"] == words
    assert found["activation.cx4"]["category"] == "firmware"
    reading["pending_activation"] = {}
    found = by_id(
        verify_host.host_checks("h1", structured(host_intent()), host_data(nic_state=reading))
    )
    assert found["activation.cx4"]["status"] == "pass"


def test_a_nic_state_reading_that_failed_fails_every_nic_check_with_its_message():
    failed = {"failed": True, "msg": "cannot query the firmware of 0000:65:00.0: rc 3"}
    found = by_id(
        verify_host.host_checks("h1", structured(host_intent()), host_data(nic_state=failed))
    )
    assert found["firmware.cx4.version"]["observed"] == "unreadable"
    assert "rc 3" in found["firmware.cx4.version"]["message"]
    assert found["link_type.cx4.p1"]["status"] == "fail"
    missing = nic.nic_state_results(structured(host_intent()), {"changed": False, "nics": []})
    assert all(r["failed"] for r in missing[0] + missing[1])


# ---------------------------------------------------------------- cabling (LLDP)


def _cabled():
    host = host_intent()
    for port, switch in zip(host["nics"][0]["ports"], ("sw-a", "sw-b"), strict=True):
        port.update(peer=switch, peer_port="1/3")
    return structured(host)


def _neighbours(first, second):
    return {"lldp": {"neighbours": {"ens1f0": [first], "ens1f1": [second]}}}


def test_each_cabled_port_reaches_its_switch_port():
    facts = _neighbours(
        {"sysname": "sw-a.example.net", "port_id": "Eth1/3"},
        {"sysname": "sw-b", "port_id": "ethernet 1/3"},
    )
    found = by_id(verify_host.cabling_checks("h1", _cabled(), facts))
    assert found["link.ens1f0.neighbour"]["status"] == "pass"
    assert found["link.ens1f1.neighbour"]["status"] == "pass"
    assert found["link.ens1f0.neighbour"]["category"] == "link/cable"


def test_a_cumulus_switch_port_name_is_its_intent_port():
    facts = _neighbours(
        {"sysname": "sw-a", "port_id": "swp3"}, {"sysname": "sw-b", "port_id": "swp4"}
    )
    found = by_id(verify_host.cabling_checks("h1", _cabled(), facts))
    assert found["link.ens1f0.neighbour"]["status"] == "pass"  # swp3 is 1/3
    assert found["link.ens1f1.neighbour"]["status"] == "fail"  # swp4 is not


def test_swapped_cables_fail_naming_both_ends():
    facts = _neighbours(
        {"sysname": "sw-b", "port_id": "Eth1/3"}, {"sysname": "sw-a", "port_id": "Eth1/3"}
    )
    found = by_id(verify_host.cabling_checks("h1", _cabled(), facts))
    check = found["link.ens1f0.neighbour"]
    assert check["status"] == "fail" and check["observed"] == "sw-b Eth1/3"
    assert check["message"] == "h1 ens1f0 reaches sw-b Eth1/3; the intent cables it to sw-a Eth1/3"
    wrong_port = _neighbours(
        {"sysname": "sw-a", "port_id": "Eth1/4"}, {"sysname": "sw-b", "port_id": "Eth1/3"}
    )
    assert (
        status_of(verify_host.cabling_checks("h1", _cabled(), wrong_port), "link.ens1f0.neighbour")
        == "fail"
    )


def test_no_neighbour_or_no_reading_fails():
    silent = {"lldp": {"neighbours": {"ens1f0": [], "ens1f1": []}}}
    found = by_id(verify_host.cabling_checks("h1", _cabled(), silent))
    assert found["link.ens1f1.neighbour"]["observed"] == "no neighbour"
    broken = by_id(
        verify_host.cabling_checks("h1", _cabled(), {"lldp": {"error": "lldpcli not found"}})
    )
    assert broken["link.ens1f0.neighbour"]["status"] == "fail"
    assert broken["link.ens1f0.neighbour"]["message"] == "lldpcli not found"
    unread = verify_host.cabling_checks("h1", _cabled(), {})
    assert [c["status"] for c in unread] == ["fail", "fail"]


def test_a_port_the_intent_does_not_cable_has_no_cabling_check():
    assert verify_host.cabling_checks("h1", structured(host_intent()), {}) == []
