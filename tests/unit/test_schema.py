"""The schema fragments, their dialect, the generated docs and the example agree."""

from pathlib import Path

import pytest
from cxfab.intent import schema
from cxfab.intent.schema import checker

from tests.tools import gen_data_model_doc, inventory

REPO_ROOT = Path(__file__).resolve().parents[2]
NODE_KINDS = {"str", "int", "float", "bool", "dict", "list"}


def all_nodes():
    for key, node in schema.load().items():
        yield key, node
        yield from schema.walk(node, key)


def test_one_fragment_per_top_level_key():
    files = sorted(p.name for p in schema.SCHEMA_DIR.glob("*.schema.yml"))
    assert files == sorted(f"{key}.schema.yml" for key in schema.TOP_LEVEL_KEYS)
    assert list(schema.load()) == list(schema.TOP_LEVEL_KEYS)


@pytest.mark.parametrize(("path", "node"), list(all_nodes()), ids=lambda x: str(x)[:60])
def test_every_node_is_well_formed_and_described(path, node):
    assert set(node) <= schema.DIALECT_KEYS, f"{path}: unknown dialect keys"
    assert node["type"] in NODE_KINDS, path
    assert node.get("description", "").strip(), f"{path}: needs a description"
    assert not (node.get("required") and "default" in node), f"{path}: required with a default"
    if "format" in node:
        assert node["format"] in schema.FORMATS, path
    if "primary_key" in node:
        assert node["primary_key"] in node["items"]["keys"], path
    if "default" in node:
        assert checker.check(node, node["default"])[1] == [], f"{path}: invalid default"


def test_docs_are_rendered_from_the_schema():
    committed = (REPO_ROOT / "docs" / "data-model.md").read_text(encoding="utf-8")
    assert committed == gen_data_model_doc.render(), "docs/data-model.md is stale: run `make docs`"


def test_docs_have_a_row_per_schema_node():
    text = gen_data_model_doc.render()
    schema_part = text[: text.index("## Free-text values")]
    rows = [line for line in schema_part.splitlines() if line.startswith("| `cxfab_")]
    # hosts is documented from its per-host node (`cxfab_host`), one node fewer.
    assert len(rows) == len(list(all_nodes())) - 1
    assert "| `cxfab_host.bond.members[]` | str |" in "\n".join(rows)


def unknown_keys(node, value, path):
    """Keys of `value` that the schema node does not define (recursively)."""
    if node["type"] == "dict" and isinstance(value, dict):
        for key, item in value.items():
            child = node.get("keys", {}).get(key, node.get("values"))
            if child is None:
                yield f"{path}.{key}"
            else:
                yield from unknown_keys(child, item, f"{path}.{key}")
    elif node["type"] == "list" and isinstance(value, list):
        for index, item in enumerate(value):
            yield from unknown_keys(node["items"], item, f"{path}[{index}]")


def test_every_key_of_the_example_exists_in_the_schema():
    example = inventory.load()
    fragments = schema.load()
    found = []
    for key, var in (
        ("fabric_name", "cxfab_fabric_name"),
        ("switch_pairs", "cxfab_switch_pairs"),
        ("vlans", "cxfab_vlans"),
        ("workloads", "cxfab_workloads"),
    ):
        assert var in example.all_vars
        found += unknown_keys(fragments[key], example.all_vars[var], var)
    for host, value in example.cxfab_hosts().items():
        found += unknown_keys(fragments["hosts"]["values"], value, f"{host}:cxfab_host")
    assert found == []
    # ...and the example uses every top-level section.
    assert set(example.cxfab_hosts()) == {"cardamine", "apricot"}


def test_unknown_example_key_would_be_found():
    node = schema.load()["vlans"]
    assert list(unknown_keys(node, [{"id": 1, "gatway": {}}], "cxfab_vlans")) == [
        "cxfab_vlans[0].gatway"
    ]


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("onyx_port", ["1/1", "1/35", "1/1/2"], ["eth1/1", "1/1/5", "0/1", "1"]),
        ("pci_address", ["0000:17:00.0", "0000:af:00.1"], ["17:00.0", "0000:17:00.8"]),
        (
            "mac",
            ["00:00:5E:00:01:5D", "0a:1b:2c:3d:4e:5f"],
            ["00:00:5E:00:01", "00-00-5E-00-01-5D"],
        ),
        ("fw_version", ["12.28.1002", "16.35.2000", "2.42.5000"], ["12.28.1002.1", "12.28"]),
        ("sha256", ["a" * 64], ["a" * 63, "g" * 64]),
        ("cpulist", ["0", "0-3,8", "2-3,6-7"], ["3-1", "0-3,2", "a", "0,,1"]),
        ("ipv4_interface", ["12.0.10.23/24"], ["12.0.10.23", "12.0.10.300/24"]),
        ("ipv4_network", ["12.0.10.0/24"], ["12.0.10.1/24", "12.0.10.0"]),
        ("netdev", ["enp23s0f0", "bond0.10"], ["a" * 16, "eth 0"]),
    ],
)
def test_formats(fmt, good, bad):
    check = schema.FORMATS[fmt][0]
    assert all(check(value) for value in good)
    assert not any(check(value) for value in bad)


def test_parse_cpulist():
    assert schema.parse_cpulist("0-2,8") == [0, 1, 2, 8]
    with pytest.raises(ValueError, match="backwards"):
        schema.parse_cpulist("3-1")


def test_sensitive_values_are_never_printed():
    node = {"type": "str", "sensitive": True, "valid_values": ["x"], "description": "secret"}
    assert checker.check(node, "hunter2")[1] == [((), "<hidden> is not one of: x")]
    node = {"type": "str", "sensitive": True, "format": "mac", "description": "secret"}
    (problem,) = checker.check(node, "hunter2")[1]
    assert problem == ((), "<hidden> is not a MAC address (00:00:5E:00:01:0A)")


def test_convert_types_coerces_lossless_scalars_only():
    node = schema.load()["switch_pairs"]
    value = [{"name": 7, "peers": [{"name": "sw-a", "mgmt_port": "2222"}], "mlag": {"vip": 5}}]
    converted = schema.convert_types(node, value)
    assert converted[0]["name"] == "7"
    assert converted[0]["peers"][0]["mgmt_port"] == 2222
    assert converted[0]["mlag"]["vip"] == "5"
    assert schema.convert_types({"type": "int"}, "many") == "many"


def test_fill_defaults_leaves_given_values():
    node = schema.load()["workloads"]
    filled = schema.fill_defaults(node, {"iterations": 5, "thresholds": {"custom": 2}})
    assert filled["iterations"] == 5
    assert filled["pipeline"] == 1
    assert filled["transports"] == ["tcp"]
    assert filled["thresholds"] == {"custom": 2, "link_fraction": 0.9, "qos_tolerance": 0.1}


def test_every_free_text_field_has_its_destinations_documented():
    from cxfab.intent.schema import free_text

    paths = [path for path, _ in gen_data_model_doc.free_text_nodes()]
    assert sorted(paths) == sorted(free_text.DESTINATIONS)


def test_every_string_field_has_a_format_or_valid_values():
    loose = [
        path
        for path, node in gen_data_model_doc.documented_nodes()
        if node["type"] == "str" and "format" not in node and "valid_values" not in node
    ]
    assert loose == []


@pytest.mark.parametrize(
    ("fmt", "bad"),
    [
        ("netdev", ["b$(id)", "b*", ".", "..", "bond 0", "bönd", "bond0\n", "-bond0", "-"]),
        (
            "inventory_hostname",
            ["../../etc", "a/b", "card$(id)", "a\nb", "ñode", "-a", ".a", "a..b", "a.", "a" * 129],
        ),
        ("name", ["a;b", "a\n", "a" * 65, "-a"]),
        ("text", ["a\nb", 'a"b', "a;b", "a#b", "a`b`", " lead", "trail ", "a" * 65]),
        ("path", ["-i", "a b", "a;b", "a$(x)", "a\n"]),
        ("cpulist", ["0-3\n", " 1", "1 "]),
        ("secret", ["a\nb", "a" * 129, ""]),
    ],
)
def test_strict_formats_refuse_shell_and_control_characters(fmt, bad):
    check = schema.FORMATS[fmt][0]
    assert not [value for value in bad if check(value)]


@pytest.mark.parametrize(
    ("fmt", "good"),
    [
        ("netdev", ["bond0", "enp23s0f0", "bond0.10", "a-b", "x_1"]),
        ("inventory_hostname", ["cardamine", "node-01", "gpu_7", "n1.rack3.example.com"]),
    ],
)
def test_strict_formats_keep_ordinary_names(fmt, good):
    check = schema.FORMATS[fmt][0]
    assert [value for value in good if not check(value)] == []


def test_every_mapping_with_free_keys_gives_them_a_format():
    # A free key reaches file names and references like any value: none is left unchecked.
    nodes = [(p, n) for p, n in gen_data_model_doc.documented_nodes() if "values" in n]
    nodes.append(("hosts", schema.load()["hosts"]))
    assert [path for path, node in nodes if node.get("key_format") not in schema.FORMATS] == []
