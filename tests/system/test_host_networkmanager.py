"""Lab tier: the mixed lab, one host on networkd and one whose network NetworkManager owns.

After site.yml has deployed the lab (both hosts on networkd, the `deployed` fixture),
lab-host2 becomes a NetworkManager host: tests/tools/nm_guest.py starts a system bus,
NetworkManager (the data ports, the bond and its VLANs managed; the management
interface not) and its dispatcher in the guest's own namespaces. An inventory copy then
says `host_network_backend: networkmanager` for lab-host2 only, and:

1. site.yml on the mixed lab hands lab-host2's network to NetworkManager (cxfab's
   keyfiles, its profiles active on every link, the links as the structured config
   says) under the checkpoint revert timer, confirmed over a fresh connection, and
   leaves lab-host1 alone;
2. a second site.yml changes nothing on either host;
3. a reboot of lab-host2's network (NetworkManager stopped, the bond and VLANs
   deleted, the ports as a boot finds them, NetworkManager started again on the same
   keyfiles; its dispatcher keeps running) brings everything back as the structured
   config says, egress maps whole (the host agent through the dispatcher), compared
   link by link.

Then NetworkManager goes, with cxfab's profiles, and site.yml on the lab's own inventory
gives lab-host2 back to networkd (its soft-RoCE device went with the deleted bond), so
the suites after this one find the lab as deployed. A real reboot of the guest is not
shown: its /etc is a tmpfs, the keyfiles would not survive it.
"""

from __future__ import annotations

import shlex

import pytest
import yaml

from tests.lab.vm.topology import GUESTS, INVENTORY_DIR
from tests.system.deployment import Deployment
from tests.system.nmlinks import REPO, guest_module, show, whole_as_configured
from tests.tools.inventory import write_copy
from tests.tools.nm_lab_selftest import PORTS

pytestmark = [pytest.mark.lab, pytest.mark.timeout(1500)]

NETWORKD_HOST, NM_HOST = (guest.name for guest in GUESTS)
STRUCTURED = REPO / "tests/golden/lab/structured" / f"{NM_HOST}.yml"
MGMT = "enp0s16"
KEYFILES = "/etc/NetworkManager/system-connections"


def mixed_inventory(deployed: Deployment, destination) -> Deployment:
    """The lab inventory with lab-host2 on NetworkManager (and the firmware images'
    paths absolute: they are relative to the inventory, which lives elsewhere now)."""
    patches = [deployed.image_patch(guest.name) for guest in GUESTS]
    copy = write_copy(INVENTORY_DIR, destination, patches)
    backend = {"host_network_backend": "networkmanager"}
    (copy / "host_vars" / NM_HOST / "network_backend.yml").write_text(yaml.safe_dump(backend))
    return Deployment(copy)


@pytest.fixture(scope="module")
def network():
    return yaml.safe_load(STRUCTURED.read_text())["network"]


@pytest.fixture(scope="module")
def mixed(deployed, lab, tmp_path_factory, request) -> dict:
    """Every step's reading, one run for the module; the lab handed back whatever failed."""
    hosts = {host.name: host for host in lab.hosts}
    nm_host, other = hosts[NM_HOST], hosts[NETWORKD_HOST]
    inventory = mixed_inventory(deployed, tmp_path_factory.mktemp("mixed") / "inventory")
    out: dict = {"other_before": guest_module(other, "tests.tools.nm_guest links")}
    try:
        out["start"] = guest_module(nm_host, "tests.tools.nm_guest start")
        out["site"] = inventory.play("site.yml", "-v")  # -v: the module's result
        out["links"] = guest_module(nm_host, "tests.tools.nm_guest links")
        out["devices"] = nm_host.run("nmcli -t -f DEVICE,STATE,CONNECTION device")
        out["keyfiles"] = nm_host.run(f"ls {KEYFILES}").split()
        out["again"] = inventory.play("site.yml")
        out["other_after"] = guest_module(other, "tests.tools.nm_guest links")
        out["reboot"] = guest_module(
            nm_host, f"tests.tools.nm_guest reboot {shlex.quote(str(STRUCTURED))}"
        )
    finally:
        try:
            out["stop"] = guest_module(nm_host, "tests.tools.nm_guest stop")
        finally:  # networkd takes the host back even if stopping NetworkManager failed
            out["restore"] = deployed.play("site.yml", "--limit", f"localhost,{NM_HOST}")
    reboot = out.get("reboot", {})
    show(request, f"\n{NM_HOST} on NetworkManager: started in {out['start'].get('seconds')} s;"
         f" after the reboot the links were back in {reboot.get('rebuilt_s')} s, every egress"
         f" map whole {reboot.get('settled_s')} s later")  # fmt: skip
    return out


def _devices(mixed) -> dict[str, tuple[str, str]]:
    rows = (line.split(":", 2) for line in mixed["devices"].splitlines() if line.count(":") >= 2)
    return {device: (state, connection) for device, state, connection in rows}


def test_site_yml_hands_the_host_to_networkmanager_and_leaves_the_other_alone(mixed, network):
    site = mixed["site"]
    assert site.returncode == 0, site.tail()
    assert site.recap[NM_HOST]["changed"] >= 1 and site.recap[NETWORKD_HOST]["changed"] == 0
    assert mixed["start"]["hostname"]["after"] == NM_HOST
    # NetworkManager runs every link cxfab configures from cxfab's own profiles ...
    links = [network["bond"]["name"], *PORTS, *(v["name"] for v in network["vlans"])]
    devices = _devices(mixed)
    # The module's result (-v): under a NetworkManager checkpoint, each cxfab keyfile
    # written and loaded, each profile activated, then confirmed over a fresh connection.
    # (The egress maps stay whole here: NetworkManager's one entry per VLAN lands on the
    # whole map networkd's run left; the reboot below starts from none.)
    output = " ".join(site.output.split())
    assert "method: networkmanager checkpoint" in output, site.tail()
    for name in links:
        assert f"wrote and loaded {KEYFILES}/cxfab-{name}.nmconnection" in output, name
        assert f"activated cxfab-{name}" in output, name
    assert "state: confirmed" in output, site.tail()
    assert {name: devices.get(name) for name in links} == {
        name: ("connected", f"cxfab-{name}") for name in links
    }, mixed["devices"]
    assert sorted(mixed["keyfiles"]) == sorted(f"cxfab-{name}.nmconnection" for name in links)
    # ... and not the management interface.
    assert devices[MGMT][0] == "unmanaged", mixed["devices"]
    whole_as_configured(mixed["links"], network)
    assert mixed["other_after"] == mixed["other_before"]


def test_a_second_site_run_changes_nothing_on_either_host(mixed):
    again = mixed["again"]
    assert again.returncode == 0, again.tail()
    assert {host: again.recap[host]["changed"] for host in (NM_HOST, NETWORKD_HOST)} == {
        NM_HOST: 0,
        NETWORKD_HOST: 0,
    }, again.tail()


def test_a_reboot_brings_the_network_back_as_the_structured_config_says(mixed, network):
    reboot = mixed["reboot"]
    assert reboot["rebuilt_s"] >= 0 and reboot["settled_s"] >= 0, reboot
    whole_as_configured(reboot["links"], network)


def test_the_host_goes_back_to_networkd_for_the_suites_after_this_one(mixed):
    assert mixed["stop"]["stopped"] == ["NetworkManager", "dbus-daemon", "nm-dispatcher"]
    restore = mixed["restore"]
    assert restore.returncode == 0, restore.tail()
