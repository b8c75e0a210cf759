"""NVUE health: show outputs -> the Onyx driver's check ids; unreadable fails closed.

The outputs follow the fields of the show tables in the Cumulus Linux 5.9 user
guide (MLAG "Check MLAG Status", `nv show interface bond1 bond mlag`, `nv show
interface vlan10 ip vrr`, `nv show qos roce`); their JSON nesting is UNCONFIRMED.
"""

import json

import pytest
from cxfab.switch.driver import DriverError
from cxfab.switch.nvue import health
from cxfab.switch.nvue.driver import NvueDriver

from tests.unit.nvue_helpers import cumulus

STRUCTURED = cumulus("example", "sw-a")


def healthy(structured=STRUCTURED) -> dict:
    outputs = {
        health.show_revisions(): {"1": {"state": "applied_and_saved", "transition": {}}},
        health.show_mlag(): {
            "enable": "on",
            "mac-address": "00:00:5e:00:01:5d",
            "peer-ip": "fe80::4638:39ff:fe00:5a",
            "backup": {structured["partner_management"]["address"]: {"vrf": "mgmt"}},
            "backup-active": True,
            "local-role": "primary",
            "peer-role": "secondary",
            "peer-alive": True,
            "peer-interface": "peerlink.4094",
        },
        health.show_interface("peerlink"): {"link": {"oper-status": "up", "mtu": 9216}},
        health.show_roce(): {
            "enable": "on",
            "mode": "lossless",
            "congestion-control": {"congestion-mode": "ECN", "enabled-tc": "0,3"},
            "pfc": {"pfc-priority": 3, "rx-enabled": "enabled", "tx-enabled": "enabled"},
            "trust": {"trust-mode": "pcp,dscp"},
        },
    }
    for bond in structured["mlag_bonds"]:
        outputs[health.show_interface(f"bond{bond['id']}")] = {
            "bond": {"mlag": {"enable": "on", "id": bond["id"], "status": "dual"}},
            "link": {"state": {"up": {}}},
        }
    for gateway in structured["anycast_gateways"]:
        outputs[health.show_vrr(gateway["vlan"])] = {
            "enable": "on",
            "mac-address": gateway["virtual_mac"].lower(),
            "address": {f"{gateway['virtual_ip']}/24": {}},
            "state": "up",
        }
    return {command: json.dumps(data) for command, data in outputs.items()}


EXPECTED_IDS = (
    ["config.saved", "mlag.enabled", "mlag.system_mac", "mlag.ipl_config", "mlag.oper"]
    + ["mlag.backup", "mlag.ipl_state"]
    + ["mpo.1", "mpo.2", "mlag.mpo_status"]
    + [f"magp.{i}.{k}" for i in (1, 10, 20, 30) for k in ("config", "state")]
    + [f"{kind}.{port}" for port in ("1/1", "1/2") for kind in ("pfc", "trust", "ecn")]
)


def by_id(checks):
    return {c["id"]: c for c in checks}


def test_needed_shows_are_exactly_what_the_checks_read():
    assert sorted(health.needed_shows(STRUCTURED)) == sorted(healthy())


def test_a_healthy_switch_passes_every_check_with_the_onyx_ids():
    checks = health.switch_checks(STRUCTURED, healthy())
    assert [c["id"] for c in checks] == EXPECTED_IDS
    assert {c["status"] for c in checks} == {"pass"}
    scopes = by_id(checks)
    assert scopes["mlag.enabled"]["scope"] == "local" and scopes["mlag.oper"]["scope"] == "pair"
    assert scopes["pfc.1/1"]["category"] == "lossless"


@pytest.mark.parametrize(
    "spoil",
    [
        lambda text: None,  # the command failed
        lambda text: "Error: mlag is not configured",  # not JSON
        lambda text: "{}",  # no fields
        lambda text: "[]",  # not an object
        lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "enable"}),
    ],
    ids=["failed", "not-json", "empty", "list", "field-missing"],
)
def test_an_unreadable_mlag_output_fails_its_checks_never_passes(spoil):
    outputs = healthy()
    command = health.show_mlag()
    outputs[command] = spoil(outputs[command])
    checks = by_id(health.switch_checks(STRUCTURED, outputs))
    ids = ("mlag.enabled", "mlag.system_mac", "mlag.ipl_config", "mlag.oper", "mlag.backup")
    for check_id in ids:
        assert checks[check_id]["status"] == "fail", check_id
        assert "unreadable" in checks[check_id]["observed"]


def test_every_read_missing_fails_every_check():
    checks = health.switch_checks(STRUCTURED, {})
    assert [c["id"] for c in checks] == EXPECTED_IDS
    assert {c["status"] for c in checks} == {"fail"}


def test_a_dead_peer_a_single_bond_and_a_down_vrr_fail_their_checks():
    outputs = healthy()
    mlag = json.loads(outputs[health.show_mlag()])
    mlag["peer-alive"] = "False"
    outputs[health.show_mlag()] = json.dumps(mlag)
    bond = json.loads(outputs[health.show_interface("bond2")])
    bond["bond"]["mlag"]["status"] = "single"
    outputs[health.show_interface("bond2")] = json.dumps(bond)
    outputs[health.show_vrr(10)] = json.dumps(
        {"mac-address": "00:00:5e:00:01:0a", "address": {"12.0.10.1/24": {}}, "state": "down"}
    )
    checks = by_id(health.switch_checks(STRUCTURED, outputs))
    failed = sorted(i for i, c in checks.items() if c["status"] == "fail")
    assert failed == ["magp.10.state", "mlag.mpo_status", "mlag.oper", "mpo.2"]
    assert checks["mpo.2"]["observed"] == "bond2 up, status single"


def test_lossy_roce_or_another_priority_fails_pfc():
    outputs = healthy()
    roce = json.loads(outputs[health.show_roce()])
    roce["mode"] = "lossy"
    outputs[health.show_roce()] = json.dumps(roce)
    checks = by_id(health.switch_checks(STRUCTURED, outputs))
    assert checks["pfc.1/1"]["status"] == "fail"
    assert checks["trust.1/1"]["status"] == "pass"


def test_pair_checks_compare_the_system_mac_and_fail_closed():
    peers = {"sw-a": STRUCTURED, "sw-b": cumulus("example", "sw-b")}
    outputs = {"sw-a": healthy(), "sw-b": healthy(peers["sw-b"])}
    [same] = health.pair_checks("rack1", peers, outputs)
    assert same["id"] == "mlag.system_mac_equal" and same["status"] == "pass"
    outputs["sw-b"] = {}
    [unread] = health.pair_checks("rack1", peers, outputs)
    assert unread["status"] == "fail" and "sw-b: unreadable" in unread["observed"]


def test_the_driver_stages_and_judges_without_a_session():
    driver = NvueDriver("sw-a", STRUCTURED)
    staged = driver.stage_tree({})
    assert staged.lines[0] == "nv set mlag enable on"
    assert driver.health_from(healthy()).checks[0]["status"] == "pass"
    # Reads need the session open() makes: without it they fail, never read a blank switch.
    with pytest.raises(DriverError, match="no NVUE session"):
        driver.read_config()


def test_a_failed_read_fails_its_checks_with_the_transports_reason():
    outputs = healthy()
    outputs[health.show_mlag()] = health.Failed("10.0.0.1:8765: GET /nvue_v1/mlag: HTTP 500: boom")
    checks = by_id(health.switch_checks(STRUCTURED, outputs))
    assert checks["mlag.oper"]["status"] == "fail"
    assert "GET /nvue_v1/mlag: HTTP 500: boom" in checks["mlag.oper"]["observed"]


def test_mlag_backup_judges_the_address_and_only_shows_backup_active():
    outputs = healthy()
    mlag = json.loads(outputs[health.show_mlag()])
    # NVIDIA's own example of a healthy pair reads backup-active False: not a failure.
    outputs[health.show_mlag()] = json.dumps({**mlag, "backup-active": "False"})
    check = by_id(health.switch_checks(STRUCTURED, outputs))["mlag.backup"]
    assert check["status"] == "pass" and check["scope"] == "local"
    assert check["observed"].endswith("backup-active False")
    outputs[health.show_mlag()] = json.dumps({**mlag, "backup": {"192.0.2.9": {}}})
    check = by_id(health.switch_checks(STRUCTURED, outputs))["mlag.backup"]
    assert check["status"] == "fail" and "backup 192.0.2.9," in check["observed"]


@pytest.mark.parametrize(
    ("answer", "status", "observed"),
    [
        ({"1": {"state": "applied_and_saved"}, "2": {"state": "confirm"}}, "fail",
         "revision 2 awaiting its confirm"),
        ({}, "pass", "0 revisions, none awaiting its confirm"),
        ({"1": "applied"}, "fail", "unreadable: no field state"),
        (None, "fail", "unreadable: nv config revision -o json: not run or failed"),
    ],
    ids=["awaiting", "none", "garbled", "failed"],
)  # fmt: skip
def test_config_saved_fails_while_a_revision_awaits_its_confirm_or_unread(answer, status, observed):
    outputs = healthy()
    outputs[health.show_revisions()] = None if answer is None else json.dumps(answer)
    check = by_id(health.switch_checks(STRUCTURED, outputs))["config.saved"]
    assert (check["status"], check["observed"]) == (status, observed)


def test_a_field_missing_late_fails_the_checks_after_it_once_each():
    outputs = healthy()
    mlag = json.loads(outputs[health.show_mlag()])
    del mlag["backup-active"]
    outputs[health.show_mlag()] = json.dumps(mlag)
    checks = health.switch_checks(STRUCTURED, outputs)
    assert [c["id"] for c in checks] == EXPECTED_IDS  # each id once
    assert by_id(checks)["mlag.oper"]["status"] == "pass"
    assert by_id(checks)["mlag.backup"]["observed"] == "unreadable: no field backup-active"
