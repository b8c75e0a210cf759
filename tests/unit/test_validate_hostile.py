"""Hostile input: every free-text field refuses every payload, naming its key path.

One case per field x payload. The field table must cover every free-text field
of the schema (a new one fails test_every_free_text_field_is_in_the_table).
"""

import pytest
from cxfab.validate import validate_inventory

from tests.tools import gen_data_model_doc, inventory

EXAMPLE = inventory.load()

PAYLOADS = {
    "newline": "a\nreboot",
    "semicolon": "a;reboot",
    "double-quote": 'a"b',
    "command-substitution": "a$(id>&2)",
    "backticks": "a`id`",
    "glob": "a*",
    "glob-class": "a[0-9]",
    "hash": "a#b",
    "300-chars": "a" * 300,
    "non-ascii": "bönd",
    "trailing-newline": "bond0\n",
}
# The password only reaches the SSH login (never a command line, file or output):
# any printable character is a valid password; control characters and length are not.
PASSWORD_PAYLOADS = ("newline", "300-chars", "trailing-newline")

_RDMA = {
    "host": "cardamine",
    "path": "cxfab_host.rdma",
    "value": {"devices": [{"name": "mlx5_0", "netdev": "enp23s0f0", "type": "mlx5"}]},
}
_CPULIST = {"host": "cardamine", "path": "cxfab_host.irq_affinity.policy", "value": "cpulist"}
_NV_CONFIG = {
    "host": "cardamine",
    "path": "cxfab_host.nics[0].nv_config",
    "value": {"SRIOV_EN": "True"},
}
_CABLES = {
    "path": "cxfab_supported_cables",
    "value": [{"vendor": "Mellanox", "part_number": "MCP1600-*", "description": "DAC"}],
}

# documented path -> (host, patch path in the example, patches that make room)
FIELDS = {
    "cxfab_fabric_name": (None, "cxfab_fabric_name", []),
    "cxfab_switch_pairs[].name": (None, "cxfab_switch_pairs[0].name", []),
    "cxfab_switch_pairs[].model": (None, "cxfab_switch_pairs[0].model", []),
    "cxfab_switch_pairs[].peers[].name": (None, "cxfab_switch_pairs[0].peers[0].name", []),
    "cxfab_switch_pairs[].peers[].mgmt_address": (
        None,
        "cxfab_switch_pairs[0].peers[0].mgmt_address",
        [],
    ),
    "cxfab_switch_pairs[].credentials.username": (
        None,
        "cxfab_switch_pairs[0].credentials.username",
        [],
    ),
    "cxfab_switch_pairs[].credentials.password": (
        None,
        "cxfab_switch_pairs[0].credentials.password",
        [],
    ),
    "cxfab_switch_pairs[].mlag.domain": (None, "cxfab_switch_pairs[0].mlag.domain", []),
    "cxfab_switch_pairs[].mlag.ipl.members.<peer>[]": (
        None,
        "cxfab_switch_pairs[0].mlag.ipl.members.sw-a[0]",
        [],
    ),
    "cxfab_switch_pairs[].mpos[].description": (
        None,
        "cxfab_switch_pairs[0].mpos[0].description",
        [],
    ),
    "cxfab_switch_pairs[].mpos[].members.<peer>[]": (
        None,
        "cxfab_switch_pairs[0].mpos[0].members.sw-a[0]",
        [],
    ),
    "cxfab_vlans[].name": (None, "cxfab_vlans[0].name", []),
    "cxfab_supported_cables[].vendor": (None, "cxfab_supported_cables[0].vendor", [_CABLES]),
    "cxfab_supported_cables[].part_number": (
        None,
        "cxfab_supported_cables[0].part_number",
        [_CABLES],
    ),
    "cxfab_supported_cables[].description": (
        None,
        "cxfab_supported_cables[0].description",
        [_CABLES],
    ),
    "cxfab_host.mgmt_interface": ("cardamine", "cxfab_host.mgmt_interface", []),
    "cxfab_host.nics[].name": ("cardamine", "cxfab_host.nics[0].name", []),
    "cxfab_host.nics[].pci": ("cardamine", "cxfab_host.nics[0].pci", []),
    "cxfab_host.nics[].ports[].netdev": ("cardamine", "cxfab_host.nics[0].ports[0].netdev", []),
    "cxfab_host.nics[].ports[].peer": ("cardamine", "cxfab_host.nics[0].ports[0].peer", []),
    "cxfab_host.nics[].ports[].peer_port": (
        "cardamine",
        "cxfab_host.nics[0].ports[0].peer_port",
        [],
    ),
    "cxfab_host.nics[].firmware.psid": ("cardamine", "cxfab_host.nics[0].firmware.psid", []),
    "cxfab_host.nics[].firmware.image": ("cardamine", "cxfab_host.nics[0].firmware.image", []),
    "cxfab_host.nics[].nv_config.<PARAM>": (
        "cardamine",
        "cxfab_host.nics[0].nv_config.SRIOV_EN",
        [_NV_CONFIG],
    ),
    "cxfab_host.bond.name": ("cardamine", "cxfab_host.bond.name", []),
    "cxfab_host.bond.members[]": ("cardamine", "cxfab_host.bond.members[0]", []),
    "cxfab_host.bond.switch_pair": ("cardamine", "cxfab_host.bond.switch_pair", []),
    "cxfab_host.irq_affinity.cpus": ("cardamine", "cxfab_host.irq_affinity.cpus", [_CPULIST]),
    "cxfab_host.rdma.devices[].name": ("cardamine", "cxfab_host.rdma.devices[0].name", [_RDMA]),
    "cxfab_host.rdma.devices[].netdev": (
        "cardamine",
        "cxfab_host.rdma.devices[0].netdev",
        [_RDMA],
    ),
    "cxfab_workloads.pairs[].name": (None, "cxfab_workloads.pairs[0].name", []),
    "cxfab_workloads.pairs[].client": (None, "cxfab_workloads.pairs[0].client", []),
    "cxfab_workloads.pairs[].server": (None, "cxfab_workloads.pairs[0].server", []),
}


# A supported cable's part number is a pattern (`MCP1600-*`), matched in Python with
# fnmatch and shown in the report; it never reaches a shell, so `*` is its point.
PATTERN_PAYLOADS = tuple(name for name in PAYLOADS if name != "glob")


def cases():
    for field, (host, path, room) in FIELDS.items():
        names = PASSWORD_PAYLOADS if field.endswith(".password") else PAYLOADS
        names = PATTERN_PAYLOADS if field.endswith(".part_number") else names
        for name in names:
            yield pytest.param(host, path, room, PAYLOADS[name], id=f"{field}-{name}")


def test_every_free_text_field_is_in_the_table():
    assert sorted(FIELDS) == sorted(path for path, _ in gen_data_model_doc.free_text_nodes())


def test_the_room_making_patches_alone_are_valid():
    for _, _, room in FIELDS.values():
        inv = inventory.apply(EXAMPLE, room)
        result = validate_inventory(
            inv.fabric_vars(), inv.cxfab_hosts(), inv.groups, inv.host_settings()
        )
        if room == [_CPULIST]:  # policy cpulist needs cpus: exactly that rule complains
            assert [e.rule for e in result.errors] == ["irq-cpus-policy"]
        else:
            assert result.errors == [], room


@pytest.mark.parametrize(("host", "path", "room", "payload"), list(cases()))
def test_hostile_value_is_refused_with_its_key_path(host, path, room, payload):
    patch = {"path": path, "value": payload, **({"host": host} if host else {})}
    inv = inventory.apply(EXAMPLE, [*room, patch])
    result = validate_inventory(inv.fabric_vars(), inv.cxfab_hosts(), inv.groups)
    assert result.fabric is None
    where = f"{path} (host {host})" if host else path
    refused = [e for e in result.errors if e.rule == "schema" and str(e).startswith(f"{where}: ")]
    assert refused, [str(e) for e in result.errors]
    if path.endswith("password"):  # the secret is refused without being shown
        assert all(payload not in str(e) for e in result.errors)


# The parameter names of nv_config are keys, not values: each payload as a key is
# refused naming its path, and nothing else is reported for it.
@pytest.mark.parametrize("name", [*PAYLOADS, "lower-case"])
def test_hostile_nv_config_parameter_name_is_refused(name):
    key = PAYLOADS.get(name, "sriov_en")
    patch = {**_NV_CONFIG, "value": {key: "True"}}
    inv = inventory.apply(EXAMPLE, [patch])
    result = validate_inventory(inv.fabric_vars(), inv.cxfab_hosts(), inv.groups)
    assert result.fabric is None
    where = f"cxfab_host.nics[0].nv_config.{key} (host cardamine): "
    refused = [e for e in result.errors if e.rule == "schema" and str(e).startswith(where)]
    assert refused and "is not an mlxconfig parameter name" in str(refused[0])


def test_nv_config_yaml_booleans_and_numbers_become_mlxconfig_values():
    patch = {**_NV_CONFIG, "value": {"SRIOV_EN": True, "NUM_OF_VFS": 8}}
    inv = inventory.apply(EXAMPLE, [patch])
    result = validate_inventory(inv.fabric_vars(), inv.cxfab_hosts(), inv.groups)
    assert result.errors == []
    pinned = result.fabric["hosts"]["cardamine"]["nics"][0]["nv_config"]
    assert pinned == {"SRIOV_EN": "True", "NUM_OF_VFS": "8"}
