"""Lab tier: the mixed lab, one host on networkd and one whose network NetworkManager owns.

lab-host2 is the lab's NetworkManager host: `make lab-up` started a system bus,
NetworkManager (the data ports, the bond and its VLANs managed; the management interface
not) and its dispatcher in the guest (tests/lab/vm/host_stack.py, tests/tools/nm_guest.py)
and its host_vars say `host_network_backend: auto`: the network stage found
NetworkManager running (the guest's process table: no systemd) and took its path.
site.yml has deployed the mixed lab (the `deployed` fixture), so every deployed suite
runs on both backends. Here:

1. site.yml handed lab-host2's network to NetworkManager: cxfab's keyfiles and nothing
   else, its profiles active on every link, the management interface unmanaged, the
   links as the structured config says, the change confirmed over a fresh connection
   under a NetworkManager checkpoint; lab-host1 kept networkd's files.

A second site.yml changing nothing on either host is test_demo's; the cut-off
management interface reverted by NetworkManager's checkpoint is test_host_revert's; a
real reboot of lab-host2 (power-cycled, its network back from the keyfiles on its disk)
is test_host_reboot's, which runs last.
"""

from __future__ import annotations

import json

import pytest
import yaml

from tests.lab.vm.topology import GUESTS
from tests.system.nmlinks import REPO, guest_module, whole_as_configured
from tests.tools.nm_lab_selftest import PORTS

pytestmark = [pytest.mark.lab, pytest.mark.timeout(600)]

NETWORKD_HOST, NM_HOST = (guest.name for guest in GUESTS)
STRUCTURED = REPO / "tests/golden/lab/structured" / f"{NM_HOST}.yml"
MGMT = "enp0s16"
KEYFILES = "/etc/NetworkManager/system-connections"
ROLLBACK_DIR = "/run/cxfab/network-rollback"
NETWORKD_DIR = "/etc/systemd/network"


@pytest.fixture(scope="module")
def network():
    return yaml.safe_load(STRUCTURED.read_text())["network"]


@pytest.fixture(scope="module")
def mixed(deployed, lab) -> dict:
    """What the deployed lab shows of both hosts."""
    hosts = {host.name: host for host in lab.hosts}
    nm_host, other = hosts[NM_HOST], hosts[NETWORKD_HOST]
    return {
        "links": guest_module(nm_host, "tests.tools.nm_guest links"),
        "devices": nm_host.run("nmcli -t -f DEVICE,STATE,CONNECTION device"),
        "keyfiles": nm_host.run(f"ls {KEYFILES}").split(),
        "result": json.loads(nm_host.run(f"cat {ROLLBACK_DIR}/result.json")),
        "nm_networkd_files": nm_host.run(f"ls {NETWORKD_DIR} 2>/dev/null || true").split(),
        "other_networkd_files": other.run(f"ls {NETWORKD_DIR}").split(),
    }


def _devices(mixed) -> dict[str, tuple[str, str]]:
    rows = (line.split(":", 2) for line in mixed["devices"].splitlines() if line.count(":") >= 2)
    return {device: (state, connection) for device, state, connection in rows}


def test_site_yml_handed_the_host_to_networkmanager_and_the_other_kept_networkd(
    deployed, mixed, network
):
    first = deployed.first_site
    if first is not None:  # not when CXFAB_LAB_CONFIGURED=1
        assert first.recap[NM_HOST]["changed"] >= 1, first.tail()
    # NetworkManager runs every link cxfab configures from cxfab's own profiles ...
    links = [network["bond"]["name"], *PORTS, *(v["name"] for v in network["vlans"])]
    devices = _devices(mixed)
    assert {name: devices.get(name) for name in links} == {
        name: ("connected", f"cxfab-{name}") for name in links
    }, mixed["devices"]
    assert sorted(mixed["keyfiles"]) == sorted(f"cxfab-{name}.nmconnection" for name in links)
    # ... and not the management interface.
    assert devices[MGMT][0] == "unmanaged", mixed["devices"]
    whole_as_configured(mixed["links"], network)
    # The last change was made under a NetworkManager checkpoint and confirmed over a
    # fresh connection (the checkpoint destroyed, the record says so).
    result = mixed["result"]
    assert result["state"] == "confirmed", result
    # No networkd file on the NetworkManager host; networkd's files on the other.
    assert not [f for f in mixed["nm_networkd_files"] if f.startswith("60-cxfab-")]
    assert any(f.startswith("60-cxfab-") for f in mixed["other_networkd_files"]), mixed
