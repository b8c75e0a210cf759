"""The validation holes of issue 11: wrong types, YAML conversions, one run for all errors."""

import copy
import itertools

import pytest
import yaml
from cxfab.intent.schema import checker
from cxfab.intent.validate import validate_inventory

from tests.tools import gen_data_model_doc, inventory

EXAMPLE = inventory.load()
TYPE_WORDS = {
    "str": "a string",
    "bool": "a boolean (true/false)",
    "int": "an integer",
    "float": "a number",
    "dict": "a mapping",
    "list": "a list",
}
HOST = "apricot"
# A free key of the example for each documented key name.
FREE_KEYS = {"<peer>": "sw-a", "<threshold>": "extra", "<PARAM>": "SRIOV_EN"}


def run(inv):
    return validate_inventory(inv.fabric_vars(), inv.cxfab_hosts(), inv.groups, inv.host_settings())


def concrete(documented: str) -> str:
    """`cxfab_vlans[].svi_addresses.<peer>` -> `cxfab_vlans[0].svi_addresses.sw-a`."""
    path = documented.replace("[]", "[0]")
    for name, key in FREE_KEYS.items():
        path = path.replace(name, key)
    return path


def schema_nodes():
    """(host, concrete path, node) of every schema node below the inventory variables.

    Walked from the schema, not from the example: a node the example leaves out (a
    soft-RoCE device, VRRP, a supported cable) is tested too.
    """
    for documented, node in gen_data_model_doc.documented_nodes():
        if documented == "cxfab_host":  # an undefined cxfab_host has its own message
            continue
        host = HOST if documented.startswith("cxfab_host") else None
        yield host, concrete(documented), node


NODES = list(schema_nodes())


def set_deep(data: dict, path: str, value) -> None:
    """Set `path` in `data`, making the mappings and list entries on the way."""
    parts = inventory.parse_path(path)
    for part, after in itertools.pairwise(parts):
        kind = list if isinstance(after, int) else dict
        if isinstance(part, int):
            while len(data) <= part:
                data.append(kind())
        elif not isinstance(data.get(part), kind):
            data[part] = kind()
        data = data[part]
    if isinstance(parts[-1], int):  # a list of scalars the example leaves out
        while len(data) <= parts[-1]:
            data.append(None)
    data[parts[-1]] = value


def error_lines(host, path, value):
    inv = copy.deepcopy(EXAMPLE)
    set_deep(inv.host_vars[host] if host else inv.all_vars, path, value)
    result = run(inv)
    assert result.fabric is None
    where = f"{path} (host {host})" if host else path
    return where, [str(error) for error in result.errors]


def test_the_walk_reaches_the_nodes_the_example_leaves_out():
    paths = {path for _, path, _ in NODES}
    assert {
        "cxfab_host.rdma.devices[0].name",
        "cxfab_host.irq_affinity.cpus",
        "cxfab_supported_cables[0].vendor",
        "cxfab_vlans[0].gateway.vrrp.priorities.sw-a",
        "cxfab_host.nics[0].ports[0].ipoib.ib_mtu",
        "cxfab_switch_pairs[0].peers[0].mgmt_port",
        "cxfab_switch_pairs[0].mlag.ipl.mtu",
        "cxfab_workloads.thresholds.extra",
    } <= paths
    assert any(path.startswith("cxfab_roce.") for path in paths)


@pytest.mark.parametrize(("host", "path", "node"), NODES, ids=[p for _, p, _ in NODES])
def test_a_null_in_any_field_names_its_path_and_the_expected_type(host, path, node):
    where, lines = error_lines(host, path, None)
    assert f"{where}: expected {TYPE_WORDS[node['type']]}, got null" in lines, lines


@pytest.mark.parametrize(("host", "path", "node"), NODES, ids=[p for _, p, _ in NODES])
def test_a_wrong_type_in_any_field_names_its_path_and_the_expected_type(host, path, node):
    wrong = {"a": 1} if node["type"] == "list" else ["x"]
    got = "a mapping" if node["type"] == "list" else "a list"
    where, lines = error_lines(host, path, wrong)
    assert f"{where}: expected {TYPE_WORDS[node['type']]}, got {got}" in lines, lines
    # A boolean where another scalar belongs; mlxconfig values take YAML's booleans as
    # the tool's own True/False labels.
    if node["type"] not in ("bool", "dict", "list") and node.get("format") != "nv_value":
        where, lines = error_lines(host, path, True)
        assert any(line.startswith(f"{where}: expected ") for line in lines), lines


def test_every_error_of_the_inventory_is_reported_in_one_run():
    patches = [
        {"path": "cxfab_vlans[1].mtu", "value": 10000},  # schema: VLAN 10 is left out
        {"path": "cxfab_vlans[3].svi_addresses.sw-b", "value": "12.0.31.253/24"},  # rule
        {"path": "cxfab_switch_pairs[0].mpos[0].mtu", "value": None},  # schema: MPO 1 out
        {"host": "apricot", "path": "cxfab_host.qos[0].vlan", "value": 40},  # rule
        {"host": "cardamine", "path": "cxfab_host.bond.address", "value": None},  # schema
        {"path": "cxfab_workloads.pairs[0].server", "value": "cardamine"},  # rule
    ]
    lines = [str(e) for e in run(inventory.apply(EXAMPLE, patches)).errors]
    assert lines == [
        "cxfab_switch_pairs[0].mpos[0].mtu: expected an integer, got null",
        "cxfab_vlans[1].mtu: 10000 is above the maximum 9216",
        "cxfab_host.bond.address (host cardamine): expected a string, got null",
        # positions in the inventory, although VLAN 10 was left out of the rules
        "cxfab_vlans[3].svi_addresses.sw-b: 12.0.31.253/24 is outside the VLAN subnet 12.0.30.0/24",
        "cxfab_host.qos[0].vlan (host apricot): VLAN 40 is not a VLAN of this host "
        "(cxfab_host.vlans)",
        "cxfab_workloads.pairs[0].server: cardamine is also the client; a pair needs two hosts",
    ], lines


def test_references_to_a_left_out_entity_are_not_reported_as_undefined():
    # The whole pair is left out of the rules: its hosts' bonds, VLAN SVIs and the
    # inventory group 'switches' all name it, and none of that is an error.
    patches = [{"path": "cxfab_switch_pairs[0].mlag.vip", "value": None}]
    lines = [str(e) for e in run(inventory.apply(EXAMPLE, patches)).errors]
    assert lines == ["cxfab_switch_pairs[0].mlag.vip: expected a string, got null"]


def test_mpo_positions_are_mapped_back_after_an_mpo_is_left_out():
    patches = [
        {"path": "cxfab_switch_pairs[0].mpos[0].lacp_mode", "value": "sometimes"},
        {"path": "cxfab_switch_pairs[0].mpos[1].allowed_vlans", "value": [10, 20, 30, 99]},
    ]
    lines = [str(e) for e in run(inventory.apply(EXAMPLE, patches)).errors]
    assert "cxfab_switch_pairs[0].mpos[1].allowed_vlans[3]: VLAN 99 is not defined in " in (
        "\n".join(lines)
    )


@pytest.mark.parametrize(
    ("typed", "field", "hint"),
    [
        ("52:54:00:12:34:56", "mac", "the unquoted 52:54:00:12:34:56 as the base-60 number"),
        ("10:20:30:40:50:59", "mac", "the unquoted 10:20:30:40:50:59 as the base-60"),
        ("1:35", "onyx_port", "the unquoted 01:35 as the base-60 number 95"),
        ("16.30", "fw_version", "as the number 16.3 (trailing zeros are lost): quote it"),
    ],
)
def test_values_yaml_converted_get_a_hint_showing_what_was_typed(typed, field, hint):
    loaded = yaml.safe_load(f"value: {typed}")["value"]
    assert not isinstance(loaded, str), "YAML 1.1 converts this unquoted value"
    node = {"type": "str", "format": field, "description": "x"}
    _, problems = checker.check(node, loaded)
    assert len(problems) == 1
    assert hint in problems[0][1]


def test_on_and_off_read_as_booleans_get_a_hint():
    loaded = yaml.safe_load("policy: off")["policy"]
    node = {"type": "str", "valid_values": ["numa-local", "cpulist", "off"], "description": "x"}
    (problem,) = checker.check(node, loaded)[1]
    assert problem[1] == (
        "expected a string, got a boolean; YAML read an unquoted on/off/yes/no/true/false "
        "as the boolean false: quote it, e.g. 'off'"
    )


def test_a_quoted_number_in_a_string_field_gets_no_yaml_hint():
    node = {"type": "str", "format": "mac", "description": "x"}
    (problem,) = checker.check(node, "1234")[1]
    assert "YAML" not in problem[1]


def test_unknown_variable_without_a_close_name_lists_the_known_ones():
    inv = inventory.apply(EXAMPLE, [{"path": "cxfab_zzz", "value": 1}])
    (line,) = [str(e) for e in run(inv).errors]
    assert line.startswith("cxfab_zzz: unknown cxfab variable (known: cxfab_fabric_name, ")


def test_run_settings_are_not_unknown_variables():
    inv = inventory.apply(
        EXAMPLE,
        [
            {"path": "cxfab_switch_prune", "value": False},
            {"host": "apricot", "path": "cxfab_reports_dir", "value": "/tmp/r"},
        ],
    )
    assert run(inv).errors == []


def test_one_address_with_different_ssh_ports_is_two_endpoints():
    inv = copy.deepcopy(EXAMPLE)
    for port, host in enumerate(("cardamine", "apricot")):
        inv.host_vars[host].update(ansible_host="127.0.0.1", ansible_port=2200 + port)
    assert run(inv).errors == []
    inv.host_vars["apricot"]["ansible_port"] = 2200
    assert [str(e) for e in run(inv).errors] == [
        "ansible_host (host apricot): 127.0.0.1 port 2200 is also the ansible_host of cardamine"
    ]


@pytest.mark.parametrize(
    ("model", "version", "ok"),
    [
        ("ConnectX-3", "2.42.5000", True),
        ("ConnectX-3 Pro", "2.42.5000", True),
        ("ConnectX-4", "12.28.2006", True),
        ("ConnectX-4 Lx", "14.32.1010", True),
        ("ConnectX-5", "16.35.2000", True),
        ("ConnectX-6", "20.36.1010", True),
        ("ConnectX-6 Dx", "22.36.1010", True),
        ("ConnectX-6 Lx", "26.36.1010", True),
        ("ConnectX-7", "28.36.1010", True),
        ("ConnectX-4", "16.35.2000", False),
        ("ConnectX-4 Lx", "12.28.2006", False),
        ("ConnectX-3", "12.28.2006", False),
    ],
)
def test_firmware_versions_are_checked_per_family(model, version, ok):
    patches = [
        {"host": "cardamine", "path": "cxfab_host.nics[0].model", "value": model},
        {"host": "cardamine", "path": "cxfab_host.nics[0].firmware.version", "value": version},
        {"host": "cardamine", "path": "cxfab_host.nics[0].ports[0].speed_gbps", "value": 25},
        {"host": "cardamine", "path": "cxfab_host.nics[0].ports[1].speed_gbps", "value": 25},
    ]
    errors = run(inventory.apply(EXAMPLE, patches)).errors
    family = [e for e in errors if e.rule == "nic-firmware-family"]
    assert (not family) == ok, [str(e) for e in errors]
    if model.startswith("ConnectX-3"):  # mlx4: no other rule may refuse the example
        errors = [e for e in errors if e.rule != "rdma-device-netdev"]
    assert ok == (not errors), [str(e) for e in errors]


def test_a_dns_name_or_loopback_mgmt_address_skips_the_vip_subnet_check():
    patches = [
        {"path": "cxfab_switch_pairs[0].peers[0].mgmt_address", "value": "sw-a.example.net"},
        {"path": "cxfab_switch_pairs[0].peers[1].mgmt_address", "value": "127.0.0.1"},
    ]
    assert run(inventory.apply(EXAMPLE, patches)).errors == []
