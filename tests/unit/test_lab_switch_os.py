"""One lab intent for either emulated pair: fabric.yml's platform and IPL VLAN follow
lab_switch_os (written by `make lab-up SWITCH_OS=...`); the cumulus variant validates
and builds the structured configs the NVUE tests use (nvue_helpers.cumulus)."""

from __future__ import annotations

import json

import pytest
from cxfab.intent.validate import validate_document
from cxfab.structured import switch as structured
from cxfab.switch.nvue.render import render
from nvue_helpers import cumulus
from onyx_helpers import REPO, inventory_document, inventory_fabric

from tests.lab.vm import switch_os

LAB = REPO / "inventories" / "lab"


def test_the_default_lab_is_onyx_with_its_ipl_vlan():
    pair = inventory_fabric(LAB)["switch_pairs"][0]
    assert (pair["platform"], pair["mlag"]["ipl"]["vlan"]) == ("onyx", 4000)


@pytest.mark.parametrize("switch", ["lab-sw-a", "lab-sw-b"])
def test_the_cumulus_lab_validates_and_builds_the_cumulus_structured_config(switch):
    fabric = inventory_fabric(LAB, {"lab_switch_os": "cumulus"})
    pair = fabric["switch_pairs"][0]
    assert (pair["platform"], pair["mlag"]["ipl"]["vlan"]) == ("cumulus", 4094)
    assert pair["mlag"]["ipl"]["vlan"] == 4094 and isinstance(pair["mlag"]["ipl"]["vlan"], int)
    groups = {"switches": ["lab-sw-a", "lab-sw-b"], "hosts": ["lab-host1", "lab-host2"]}
    result = validate_document(inventory_document(LAB, {"lab_switch_os": "cumulus"}), groups)
    assert result.errors == []
    built, helper = structured.build(result.fabric, switch), cumulus("lab", switch)
    # nvue_helpers.cumulus() also drops Onyx's IPL VLAN 4000 from the scope; the real
    # build scopes NVUE's 4094 instead, which render() leaves to peerlink.4094.
    assert built["scope"].pop("vlans") == [1, 10, 20, 30, 4094]
    helper["scope"].pop("vlans")
    assert built == helper
    assert render(structured.build(result.fabric, switch)) == render(cumulus("lab", switch))


def test_switch_os_refuses_an_unknown_os(monkeypatch):
    monkeypatch.setenv("SWITCH_OS", "eos")
    with pytest.raises(SystemExit, match="onyx, cumulus"):
        switch_os.wanted()
    monkeypatch.setenv("SWITCH_OS", "Cumulus")
    assert switch_os.wanted() == "cumulus"


def test_the_cumulus_inventory_carries_the_pairs_certificates_and_pins(tmp_path, monkeypatch):
    run_dir = tmp_path / "nvue"
    run_dir.mkdir()
    for name, digit in (("lab-sw-a", "a"), ("lab-sw-b", "b")):
        cert = run_dir / f"{name}.pem"
        cert.write_text(f"-----BEGIN CERTIFICATE-----\n{name}\n-----END CERTIFICATE-----\n")
        ready = {"port": 2201, "cert": str(cert), "fingerprint": digit * 64, "pid": 1}
        (run_dir / f"{name}.json").write_text(json.dumps(ready))
    monkeypatch.setitem(switch_os.PAIR_RUN_DIRS, "cumulus", run_dir)
    monkeypatch.setattr(switch_os, "TLS_CA_FILE", tmp_path / "ca.pem")
    all_vars, switch_vars = switch_os.inventory_lines("cumulus", ["lab-sw-a", "lab-sw-b"])
    assert all_vars == ["        lab_switch_os: cumulus"]
    assert f"        cxfab_switch_tls_ca: {tmp_path / 'ca.pem'}" in switch_vars
    assert switch_vars[-2:] == [
        f"          lab-sw-a: {'a' * 64}",
        f"          lab-sw-b: {'b' * 64}",
    ]
    bundle = (tmp_path / "ca.pem").read_text()
    assert "lab-sw-a" in bundle and "lab-sw-b" in bundle
    # the Onyx lab's inventory gets no TLS settings
    assert switch_os.inventory_lines("onyx", ["lab-sw-a"]) == (["        lab_switch_os: onyx"], [])


def test_the_swap_relabels_each_cabled_port_as_the_new_os_names_it():
    from tests.lab.onyx import lldp

    script = lldp.relabel_script("lab-sw-a", ["1/1", "1/2"], lldp.cumulus_port_id)
    assert script.splitlines() == [
        "ip netns exec lab-sw-a lldpcli -u /run/cxfab-lldpd/lab-sw-a.socket configure ports "
        f"swp{n} lldp portidsubtype local swp{n} description swp{n}"
        for n in (1, 2)
    ]
    onyx = lldp.relabel_script("lab-sw-b", ["1/1"], lldp.onyx_port_id)
    assert "portidsubtype local Eth1/1 description Eth1/1" in onyx


def test_the_swap_refuses_an_unknown_os_or_a_lab_that_is_down(monkeypatch):
    from tests.lab.vm import lab

    stopped = []
    monkeypatch.setattr(lab, "switch_pair", lambda *a, **k: stopped.append(a))
    assert lab.use_pair("sonic") == 2
    monkeypatch.setattr(lab, "guest_pid", lambda guest: None)
    assert lab.use_pair("cumulus") == 1
    assert stopped == []  # neither refusal stopped the running pair
