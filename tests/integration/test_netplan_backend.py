"""cxfab's netplan file is one netplan itself accepts, and says what the intent says.

The lab structured config's netplan file (structured/netplan.py) goes into a temporary
root; `netplan generate --root-dir` turns it into networkd files there, and the test
reads the bond, VLAN and MTU values back out of those files. The egress QoS drop-in
cxfab writes next to them must name a netdev file netplan really generated.

Needs the `netplan` command (netplan.io, requirements-apt.txt): outside CI the test
skips with the reason when it is absent; with CI set it fails, since a skipped check
proves nothing there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from cxfab.structured import netplan

pytestmark = [pytest.mark.integration]
SPREAD_TESTS = True
REPO = Path(__file__).resolve().parents[2]
LAB_HOST = REPO / "tests/golden/lab/structured/lab-host1.yml"


@pytest.fixture(scope="module")
def netplan_command() -> str:
    found = shutil.which("netplan")
    if found:
        return found
    why = "netplan is not installed (package netplan.io, in requirements-apt.txt)"
    if os.environ.get("CI"):
        pytest.fail(f"{why} (CI is set: a skipped netplan check proves nothing)")
    pytest.skip(why)


def _networkd(path: Path) -> list[tuple[str, str, str]]:
    """(section, key, value) of a networkd file, repeated keys kept."""
    section, entries = "", []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
        else:
            key, _, value = line.partition("=")
            entries.append((section, key.strip(), value.strip()))
    return entries


def _values(path: Path, section: str, key: str) -> list[str]:
    return [v for s, k, v in _networkd(path) if (s, k) == (section, key)]


def test_netplan_generate_accepts_the_lab_hosts_file(netplan_command, tmp_path):
    structured = yaml.safe_load(LAB_HOST.read_text())
    network = structured["network"]
    for path, text in netplan.render_netplan(network, structured["ipoib"]).items():
        target = tmp_path / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        target.chmod(netplan.NETPLAN_MODE)
    done = subprocess.run(
        [netplan_command, "generate", "--root-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "run/systemd/network"
    generated = sorted(p.name for p in out.iterdir())

    bond = network["bond"]
    netdev = out / f"10-netplan-{bond['name']}.netdev"
    assert _values(netdev, "NetDev", "Kind") == ["bond"]
    assert _values(netdev, "NetDev", "MTUBytes") == [str(bond["mtu"])]
    assert _values(netdev, "Bond", "Mode") == [bond["mode"]]
    assert _values(netdev, "Bond", "LACPTransmitRate") == [bond["lacp_rate"]]
    assert _values(netdev, "Bond", "MIIMonitorSec") == [f"{bond['miimon']}ms"]
    assert _values(netdev, "Bond", "TransmitHashPolicy") == [bond["xmit_hash_policy"]]
    bond_network = out / f"10-netplan-{bond['name']}.network"
    assert _values(bond_network, "Network", "Address") == bond["addresses"]
    assert sorted(_values(bond_network, "Network", "VLAN")) == sorted(
        v["name"] for v in network["vlans"]
    )
    for member in network["members"]:
        member_network = out / f"10-netplan-{member['name']}.network"
        assert _values(member_network, "Network", "Bond") == [bond["name"]]
        assert _values(member_network, "Link", "MTUBytes") == [str(member["mtu"])]
    for vlan in network["vlans"]:
        vlan_netdev = out / f"10-netplan-{vlan['name']}.netdev"
        assert vlan_netdev.name in generated
        assert _values(vlan_netdev, "NetDev", "Kind") == ["vlan"]
        assert _values(vlan_netdev, "VLAN", "Id") == [str(vlan["id"])]
        assert _values(vlan_netdev, "NetDev", "MTUBytes") == [str(vlan["mtu"])]
        vlan_network = out / f"10-netplan-{vlan['name']}.network"
        assert _values(vlan_network, "Network", "Address") == vlan["addresses"]
        assert _values(vlan_network, "Network", "LinkLocalAddressing") == ["no"]
        # cxfab's drop-in extends exactly the netdev file netplan generated
        dropin = tmp_path / "etc/systemd/network" / f"{vlan_netdev.name}.d" / netplan.DROPIN
        assert dropin.is_file()
        pairs = " ".join(f"{p}-{up}" for p, up in sorted(vlan["egress_qos_map"].items()))
        assert _values(dropin, "VLAN", "EgressQOSMaps") == [pairs]
