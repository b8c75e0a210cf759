"""Validation of whole inventories: the example passes, normalisation, error plumbing."""

import copy
from pathlib import Path

import pytest
from cxfab.intent import fabric
from cxfab.intent.validate import FabricError, inventory_path, validate_inventory
from onyx_helpers import templated

from tests.tools import inventory

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = inventory.load()


def run(inv):
    return validate_inventory(inv.fabric_vars(), inv.cxfab_hosts(), inv.groups)


def vrrp_gateway(vlan_id):
    third_octet = 0 if vlan_id == 1 else vlan_id  # VLAN 1 is 12.0.0.0/24
    return {"mode": "vrrp", "virtual_ip": f"12.0.{third_octet}.1"}


def test_example_inventory_validates():
    result = run(EXAMPLE)
    assert result.errors == []
    assert list(result.fabric) == [
        "fabric_name",
        "switch_pairs",
        "vlans",
        "hosts",
        "workloads",
        "supported_cables",
        "roce",
    ]
    assert set(result.fabric["hosts"]) == {"cardamine", "apricot"}


def test_defaults_are_filled():
    fab = run(EXAMPLE).fabric
    pair = fab["switch_pairs"][0]
    assert [peer["mgmt_port"] for peer in pair["peers"]] == [22, 22]
    assert pair["mlag"]["ipl"]["pfc"] is True
    assert {mpo["state"] for mpo in pair["mpos"]} == {"present"}
    assert {vlan["state"] for vlan in fab["vlans"]} == {"present"}
    assert fab["hosts"]["apricot"]["irq_affinity"] == {"policy": "numa-local"}
    assert fab["hosts"]["apricot"]["qos"][2]["tsa"] == "strict"
    assert fab["workloads"]["thresholds"]["link_fraction"] == 0.9


def test_validation_does_not_change_its_input():
    before = copy.deepcopy(EXAMPLE)
    run(EXAMPLE)
    assert before == EXAMPLE


def test_host_vlan_mtu_defaults_to_the_vlans_own_mtu():
    # VLANs 10, 20, 30 are cxfab_vlans[1..3]; apricot's VLANs name no MTU of their own.
    inv = inventory.apply(EXAMPLE, [{"path": "cxfab_vlans[2].mtu", "value": 8000}])
    fab = run(inv).fabric
    assert [vlan["mtu"] for vlan in fab["hosts"]["apricot"]["vlans"]] == [9000, 8000, 9000]


def test_a_vlan_mtu_above_the_bonds_needs_a_lower_host_value():
    raised = inventory.apply(EXAMPLE, [{"path": "cxfab_vlans[2].mtu", "value": 9216}])
    errors = [str(e) for e in run(raised).errors]
    assert (
        "cxfab_host.vlans[1].mtu (host apricot): 9216 (VLAN 20's MTU, the default) exceeds"
        " the bond MTU 9000" in errors
    )
    lowered = inventory.apply(
        raised,
        [
            {"host": host, "path": "cxfab_host.vlans[1].mtu", "value": 9000}
            for host in ("apricot", "cardamine")
        ],
    )
    result = run(lowered)
    assert result.errors == []
    assert [vlan["mtu"] for vlan in result.fabric["hosts"]["apricot"]["vlans"]] == [9000] * 3


def test_macs_are_upper_case():
    inv = inventory.apply(
        EXAMPLE, [{"path": "cxfab_switch_pairs[0].mlag.system_mac", "value": "00:00:5e:00:01:5d"}]
    )
    assert run(inv).fabric["switch_pairs"][0]["mlag"]["system_mac"] == "00:00:5E:00:01:5D"


def test_vrrp_masters_alternate_between_peers_in_vlan_order():
    vlans = copy.deepcopy(EXAMPLE.all_vars["cxfab_vlans"])
    for vlan in vlans:
        vlan["gateway"] = vrrp_gateway(vlan["id"])
    vlans.reverse()  # list order must not matter: VLAN id order does
    inv = inventory.apply(EXAMPLE, [{"path": "cxfab_vlans", "value": vlans}])
    result = run(inv)
    assert result.errors == []
    by_id = {vlan["id"]: vlan["gateway"]["vrrp"] for vlan in result.fabric["vlans"]}
    masters = {
        vid: max(vrrp["priorities"], key=vrrp["priorities"].get) for vid, vrrp in by_id.items()
    }
    assert masters == {1: "sw-a", 10: "sw-b", 20: "sw-a", 30: "sw-b"}
    assert by_id[10]["priorities"] == {"sw-a": 100, "sw-b": 110}
    assert {vid: vrrp["vrid"] for vid, vrrp in by_id.items()} == {1: 1, 10: 10, 20: 20, 30: 30}
    assert by_id[1]["preempt"] is True
    assert by_id[1]["advertisement_interval"] == 1


def test_explicit_vrrp_priorities_are_kept_and_still_count():
    vlans = copy.deepcopy(EXAMPLE.all_vars["cxfab_vlans"])
    for vlan in vlans:
        vlan["gateway"] = vrrp_gateway(vlan["id"])
    vlans[1]["gateway"]["vrrp"] = {"priorities": {"sw-a": 200, "sw-b": 50}}
    inv = inventory.apply(EXAMPLE, [{"path": "cxfab_vlans", "value": vlans}])
    by_id = {v["id"]: v["gateway"]["vrrp"]["priorities"] for v in run(inv).fabric["vlans"]}
    assert by_id[10] == {"sw-a": 200, "sw-b": 50}
    assert by_id[20] == {"sw-a": 110, "sw-b": 100}
    assert by_id[30] == {"sw-a": 100, "sw-b": 110}


def test_all_semantic_errors_are_reported_together():
    inv = inventory.apply(
        EXAMPLE,
        [
            {"path": "cxfab_vlans[2].svi_addresses.sw-b", "value": "12.0.21.253/24"},
            {"host": "apricot", "path": "cxfab_host.qos[0].vlan", "value": 40},
            {"path": "cxfab_workloads.pairs[0].server", "value": "cardamine"},
        ],
    )
    rules = {error.rule for error in run(inv).errors}
    assert {"svi-in-subnet", "qos-vlan-is-host-vlan", "workload-client-not-server"} <= rules


def test_schema_and_semantic_errors_are_reported_in_one_run():
    inv = inventory.apply(
        EXAMPLE,
        [
            {"path": "cxfab_vlans[1].mtu", "value": 10000},
            {"path": "cxfab_workloads.pairs[0].server", "value": "cardamine"},
        ],
    )
    errors = run(inv).errors
    # VLAN 10 is left out of the rules, but the MPOs and hosts that use it are not
    # told it is undefined: only the two real errors are reported.
    assert [str(e) for e in errors] == [
        "cxfab_vlans[1].mtu: 10000 is above the maximum 9216",
        "cxfab_workloads.pairs[0].server: cardamine is also the client; a pair needs two hosts",
    ]


def test_the_password_never_appears_in_errors():
    secret = "S3cret-Pw"
    inv = inventory.apply(
        EXAMPLE,
        [
            {"path": "cxfab_switch_pairs[0].credentials.password", "value": secret},
            {"path": "cxfab_switch_pairs[0].credentials.extra", "value": 1},
            {"path": "cxfab_switch_pairs[0].platform", "value": "eos"},
        ],
    )
    errors = run(inv).errors
    assert len(errors) == 2
    assert all(secret not in str(error) for error in errors)


def test_string_numbers_from_templating_are_accepted():
    inv = inventory.apply(
        EXAMPLE, [{"path": "cxfab_switch_pairs[0].peers[0].mgmt_port", "value": "2222"}]
    )
    assert run(inv).fabric["switch_pairs"][0]["peers"][0]["mgmt_port"] == 2222


@pytest.mark.parametrize(
    ("doc_path", "expected"),
    [
        (("vlans", 2, "svi_addresses", "sw-b"), (None, "cxfab_vlans[2].svi_addresses.sw-b")),
        (
            ("switch_pairs", 0, "mlag", "system_mac"),
            (None, "cxfab_switch_pairs[0].mlag.system_mac"),
        ),
        (("hosts", "cardamine", "bond", "members", 1), ("cardamine", "cxfab_host.bond.members[1]")),
        (("workloads", "pairs", 0, "vlan"), (None, "cxfab_workloads.pairs[0].vlan")),
        (("fabric_name",), (None, "cxfab_fabric_name")),
    ],
)
def test_document_paths_map_to_inventory_key_paths(doc_path, expected):
    assert inventory_path(doc_path) == expected


def test_error_line_names_host_path_and_reason():
    error = FabricError("cxfab_host.bond.members[1]", "enp9 is not a port", host="cardamine")
    assert str(error) == "cxfab_host.bond.members[1] (host cardamine): enp9 is not a port"


def test_a_missing_switch_group_is_an_error_and_a_partial_one_names_the_missing_peer():
    # A hosts file that did not parse leaves no group: never a silent "valid".
    inv = copy.deepcopy(EXAMPLE)
    del inv.groups["switches"]
    assert [str(e) for e in run(inv).errors] == [
        "cxfab_switch_pairs: inventory group 'switches' is missing: the peers of every "
        "switch pair must be its hosts (does the inventory file parse?)"
    ]
    inv.groups["switches"] = ["sw-a"]
    assert [str(e) for e in run(inv).errors] == [
        "cxfab_switch_pairs[0].peers[1].name: sw-b is not a host of inventory group 'switches'"
    ]


def test_assemble_takes_only_the_fabric_variables():
    doc = fabric.assemble({"cxfab_fabric_name": "x", "other": 1}, {"h1": {"a": 1}})
    assert doc == {"fabric_name": "x", "hosts": {"h1": {"a": 1}}}


@pytest.mark.parametrize("switch_os", ["onyx", "cumulus"])
def test_lab_inventory_validates_when_present(switch_os):
    lab = REPO_ROOT / "inventories" / "lab"
    inv = inventory.load(lab) if lab.is_dir() else None
    if inv is None or "cxfab_switch_pairs" not in inv.all_vars:
        pytest.skip("inventories/lab has no fabric intent yet")
    # The lab's pair is templated from lab_switch_os (`make lab-up SWITCH_OS=...`).
    inv.all_vars = templated(inv.all_vars, {"lab_switch_os": switch_os})
    if "switches" not in inv.groups:  # hosts.yml is written by lab-up, with these peers
        pairs = inv.all_vars["cxfab_switch_pairs"]
        inv.groups["switches"] = [peer["name"] for pair in pairs for peer in pair["peers"]]
    result = run(inv)
    assert result.errors == [], "\n".join(map(str, result.errors))


def key_paths(value, path):
    """Every dict key path inside an inventory value, as patch paths."""
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}"
            yield child
            yield from key_paths(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from key_paths(item, f"{path}[{index}]")


def all_deletions():
    for var, value in EXAMPLE.fabric_vars().items():
        for path in key_paths(value, var):
            yield {"path": path, "delete": True}
    for path in key_paths(EXAMPLE.cxfab_hosts()["apricot"], "cxfab_host"):
        yield {"host": "apricot", "path": path, "delete": True}


def test_removing_any_single_key_never_crashes_validation():
    outcomes = {"valid": 0, "invalid": 0}
    for patch in all_deletions():
        result = run(inventory.apply(EXAMPLE, [patch]))
        assert (result.fabric is None) == bool(result.errors), patch
        assert all(str(error).startswith("cxfab_") for error in result.errors), patch
        outcomes["valid" if result.ok else "invalid"] += 1
    # Optional keys fall back to defaults; required ones are reported.
    assert outcomes["valid"] > 10
    assert outcomes["invalid"] > 50
