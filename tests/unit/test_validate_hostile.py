"""Hostile input: every free-text field refuses every payload, naming its key path.

One case per field x payload. The field tables must cover every free-text field
of the schema, the mapping keys a user chooses included (inventory hostnames,
peer names): a new one fails test_every_free_text_field_is_in_the_table.
"""

import copy

import pytest
from cxfab.intent.validate import validate_inventory

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
    "cxfab_host.gpus[].name": ("apricot", "cxfab_host.gpus[0].name", []),
    "cxfab_host.gpus[].pci": ("apricot", "cxfab_host.gpus[0].pci", []),
    "cxfab_host.gpus[].nic": ("apricot", "cxfab_host.gpus[0].nic", []),
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

_VRRP = {
    "path": "cxfab_vlans[2].gateway",
    "value": {
        "mode": "vrrp",
        "virtual_ip": "12.0.20.1",
        "vrrp": {"priorities": {"sw-a": 120, "sw-b": 100}},
    },
}
_THRESHOLD = {"path": "cxfab_workloads.thresholds.extra", "value": 0.5}

# Free keys: documented path -> (host, path of the mapping, key renamed, room patches).
# The inventory hostname is renamed everywhere the inventory names the host.
KEY_FIELDS = {
    gen_data_model_doc.HOSTNAME_KEY_PATH: (None, None, "apricot", []),
    "cxfab_switch_pairs[].mlag.ipl.members.<peer>": (
        None,
        "cxfab_switch_pairs[0].mlag.ipl.members",
        "sw-a",
        [],
    ),
    "cxfab_switch_pairs[].mlag.ipl.addresses.<peer>": (
        None,
        "cxfab_switch_pairs[0].mlag.ipl.addresses",
        "sw-a",
        [],
    ),
    "cxfab_switch_pairs[].mpos[].members.<peer>": (
        None,
        "cxfab_switch_pairs[0].mpos[0].members",
        "sw-b",
        [],
    ),
    "cxfab_vlans[].svi_addresses.<peer>": (None, "cxfab_vlans[0].svi_addresses", "sw-a", []),
    "cxfab_vlans[].gateway.vrrp.priorities.<peer>": (
        None,
        "cxfab_vlans[2].gateway.vrrp.priorities",
        "sw-a",
        [_VRRP],
    ),
    "cxfab_host.nics[].nv_config.<PARAM>": (
        "cardamine",
        "cxfab_host.nics[0].nv_config",
        "SRIOV_EN",
        [_NV_CONFIG],
    ),
    "cxfab_workloads.thresholds.<threshold>": (
        None,
        "cxfab_workloads.thresholds",
        "extra",
        [_THRESHOLD],
    ),
}


def renamed(inv, host, mapping_path, old, new):
    """A copy of `inv` with the key `old` renamed `new` (an inventory host when no path)."""
    inv = copy.deepcopy(inv)
    if mapping_path is None:
        inv.groups = {g: [new if h == old else h for h in hs] for g, hs in inv.groups.items()}
        inv.host_vars[new] = inv.host_vars.pop(old)
        return inv
    target = inv.host_vars[host] if host else inv.all_vars
    parts = inventory.parse_path(mapping_path)
    for part in parts:
        target = target[part]
    target[new] = target.pop(old)
    return inv


# A supported cable's part number is a pattern (`MCP1600-*`), matched in Python with
# fnmatch and shown in the report; it never reaches a shell, so `*` is its point.
PATTERN_PAYLOADS = tuple(name for name in PAYLOADS if name != "glob")


def cases():
    for field, (host, path, room) in FIELDS.items():
        names = PASSWORD_PAYLOADS if field.endswith(".password") else PAYLOADS
        names = PATTERN_PAYLOADS if field.endswith(".part_number") else names
        for name in names:
            yield pytest.param(host, path, room, PAYLOADS[name], id=f"{field}-{name}")


def key_cases():
    for field, (host, mapping_path, old, room) in KEY_FIELDS.items():
        for name, payload in PAYLOADS.items():
            yield pytest.param(host, mapping_path, old, room, payload, id=f"{field}-{name}")


def test_every_free_text_field_is_in_the_table():
    documented = sorted(path for path, _ in gen_data_model_doc.free_text_nodes())
    # nv_config.<PARAM> names both a value and a key: one documented path for the two.
    assert sorted({*FIELDS, *KEY_FIELDS}) == documented
    assert sorted(KEY_FIELDS) == sorted(gen_data_model_doc.free_key_paths())


def test_the_room_making_patches_alone_are_valid():
    tables = [*FIELDS.values(), *((h, p, r) for h, p, _, r in KEY_FIELDS.values())]
    for _, _, room in tables:
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
    where = (f"cxfab_host.nics[0].nv_config.{key}", "cardamine")
    refused = [e for e in result.errors if e.rule == "schema" and (e.path, e.host) == where]
    assert refused and "is not an mlxconfig parameter name" in str(refused[0])


def test_nv_config_yaml_booleans_and_numbers_become_mlxconfig_values():
    patch = {**_NV_CONFIG, "value": {"SRIOV_EN": True, "NUM_OF_VFS": 8}}
    inv = inventory.apply(EXAMPLE, [patch])
    result = validate_inventory(inv.fabric_vars(), inv.cxfab_hosts(), inv.groups)
    assert result.errors == []
    pinned = result.fabric["hosts"]["cardamine"]["nics"][0]["nv_config"]
    assert pinned == {"SRIOV_EN": "True", "NUM_OF_VFS": "8"}


@pytest.mark.parametrize(("host", "mapping_path", "old", "room", "payload"), list(key_cases()))
def test_hostile_key_is_refused_with_its_key_path(host, mapping_path, old, room, payload):
    inv = renamed(inventory.apply(EXAMPLE, room), host, mapping_path, old, payload)
    result = validate_inventory(inv.fabric_vars(), inv.cxfab_hosts(), inv.groups)
    assert result.fabric is None
    if mapping_path is None:  # the host's own entry: cxfab_host (host <name>)
        expected = ("cxfab_host", payload)
    else:
        expected = (f"{mapping_path}.{payload}", host)
    refused = [e for e in result.errors if e.rule == "schema" and (e.path, e.host) == expected]
    assert refused, [str(e) for e in result.errors]
    # one error per line, whatever the key holds
    assert all("\n" not in str(e) for e in result.errors)


def test_a_hostile_hostname_without_cxfab_host_is_refused_too():
    inv = copy.deepcopy(EXAMPLE)
    inv.groups["hosts"] = [*inv.groups["hosts"], "../../etc"]
    result = validate_inventory(inv.fabric_vars(), inv.cxfab_hosts(), inv.groups)
    messages = [str(e) for e in result.errors if e.host == "../../etc"]
    assert any("is not a DNS-style name" in m for m in messages), messages
