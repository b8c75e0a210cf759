"""validate.yml publishes one JSON text per device; consumers decode what they use."""

import json

import pytest
from cxfab.structured import build_all, packed
from cxfab.verify import dataplane
from onyx_helpers import REPO, inventory_fabric
from plugin_loading import load_plugin

filters = load_plugin("filter_plugins", "cxfab_structured")


@pytest.fixture(scope="module")
def lab_devices():
    return build_all(inventory_fabric(REPO / "inventories" / "lab"))


def test_each_device_is_one_text_that_decodes_to_its_structured_config(lab_devices):
    published = packed.pack(lab_devices)
    assert all(isinstance(text, str) for text in published.values())
    for name, structured in lab_devices.items():
        # As a module receives it in its JSON arguments (integer keys become strings),
        # which is how every consumer saw the nested fact before, too.
        assert filters.cxfab_device(published, name) == json.loads(json.dumps(structured))


def test_a_device_outside_the_fabric_or_no_publication_is_a_clear_error(lab_devices):
    published = packed.pack(lab_devices)
    with pytest.raises(Exception, match="no structured config for 'lab-host9'"):
        filters.cxfab_device(published, "lab-host9")
    with pytest.raises(Exception, match=r"not published \(run playbooks/validate.yml first"):
        filters.cxfab_device(None, "lab-host1")


def test_walkers_decode_only_what_they_reach(lab_devices):
    published = packed.pack(lab_devices)
    unpacked = packed.Unpacked(published)
    assert "lab-sw-a" in unpacked and len(unpacked) == len(lab_devices)
    assert dataplane.targets(published, "lab-host1") == dataplane.targets(lab_devices, "lab-host1")
    unpacked["lab-host1"]
    assert sorted(unpacked._decoded) == ["lab-host1"]
