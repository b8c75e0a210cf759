"""IPoIB through NetworkManager (stages/network_nm.py): the profile carries mode and MTU,
NetworkManager's activation sets them, the stage reads them back from sysfs.

No kernel here has an InfiniBand link layer, so NetworkManager's part is faked: the
fake activation writes the device's sysfs `mode` and `mtu` as NetworkManager does when
it activates an infiniband profile (docs/host-network-backends.md has the source), or
leaves connected mode refused as a ConnectX-4 in enhanced IPoIB does. The sysfs tree is
the one tests/unit/test_hostnet_ipoib.py builds after a real /sys.
"""

from __future__ import annotations

import configparser

import pytest
from cxfab.host.net import ipoib, nmapply
from cxfab.host.stages import network_nm
from cxfab.structured import nmkeyfile

from tests.unit.test_hostnet_ipoib import NICS, add_function
from tests.unit.test_hostnet_ipoib import intent as ipoib_intent

NAME = "ibp59s0"
WANTED = {**ipoib_intent(mode="connected", mtu=65520), "addresses": ["12.0.100.25/24"]}
STRUCTURED = {"network": {"bond": None, "members": [], "vlans": []}, "ipoib": [WANTED]}
INTENT = {**STRUCTURED["network"], "ipoib": [{**WANTED, "path": "cxfab_host.nics[0].ports[0]"}]}
# The link as NetworkManager leaves it up with its address (mode and MTU are sysfs's).
LINKS = {NAME: {"kind": None, "mtu": 65520, "up": True, "addresses": ["12.0.100.25/24"]}}


class Failed(Exception):
    pass


class Module:
    def __init__(self, tmp_path, check_mode=False):
        self.check_mode = check_mode
        self.params = {"persist": True, "nm_keyfile_dir": str(tmp_path / "keyfiles"),
                       "revert_seconds": 0, "purge_addresses": False,
                       "rollback_dir": str(tmp_path / "rollback"),
                       "root": str(tmp_path)}  # fmt: skip

    def run_command(self, argv):
        raise AssertionError(f"nmcli is faked here: {argv}")

    def fail_json(self, **kwargs):
        raise Failed(kwargs)


def host(tmp_path, mode="datagram", mtu=2044):
    add_function(tmp_path, "0000:3b:00.0", "mlx5_0", {1: NAME}, mode=mode, mtu=mtu)
    return ipoib.resolve(str(tmp_path), STRUCTURED["ipoib"], NICS)


def sysfs(tmp_path, key):
    return (tmp_path / "sys" / "class" / "net" / NAME / key).read_text().strip()


def fake_networkmanager(monkeypatch, tmp_path, takes_connected=True):
    """nmapply.apply faked: each activation sets the profile's transport mode and MTU."""
    calls = []

    def activate(runner, directory, files, relink, done):
        calls.append({"files": dict(files), "relink": relink})
        profile = configparser.ConfigParser(interpolation=None)
        profile.read_string(files[f"cxfab-{NAME}.nmconnection"])
        mode = profile.get("infiniband", "transport-mode")
        if mode == "datagram" or takes_connected:
            net = tmp_path / "sys" / "class" / "net" / NAME
            (net / "mode").write_text(mode + "\n")
            (net / "mtu").write_text(profile.get("infiniband", "mtu") + "\n")
        done.append(f"activated cxfab-{NAME}")
        return done

    monkeypatch.setattr(nmapply, "apply", activate)
    return calls


def profiles_on_disk(tmp_path):
    """cxfab's keyfiles where the stage looks for them, as a load by NetworkManager
    leaves them (the fake activation writes none)."""
    directory = tmp_path / "keyfiles"
    directory.mkdir()
    for name, text in nmapply.render(STRUCTURED).items():
        (directory / name).write_text(text)
        (directory / name).chmod(nmkeyfile.KEYFILE_MODE)


def stage(tmp_path, found, check_mode=False):
    return network_nm.run(
        Module(tmp_path, check_mode), None, INTENT, STRUCTURED, LINKS, [], {},
        lambda intent, links: {NAME: dict(links[NAME])}, lambda _ipr: dict(LINKS),
        ipoib_found=found,
    )  # fmt: skip


def test_the_profile_carries_mode_and_mtu():
    text = nmapply.render(STRUCTURED)[f"cxfab-{NAME}.nmconnection"]
    profile = configparser.ConfigParser(interpolation=None)
    profile.read_string(text)
    assert profile.get("connection", "type") == "infiniband"
    assert profile.get("connection", "interface-name") == NAME
    assert dict(profile["infiniband"]) == {"transport-mode": "connected", "mtu": "65520"}


def test_check_mode_shows_what_the_activation_will_set_and_changes_nothing(tmp_path, monkeypatch):
    calls = fake_networkmanager(monkeypatch, tmp_path)
    result = stage(tmp_path, host(tmp_path), check_mode=True)
    assert calls == []
    assert (sysfs(tmp_path, "mode"), sysfs(tmp_path, "mtu")) == ("datagram", "2044")
    assert result["actions"] == [
        f"set_ipoib_mode {NAME} (mode=connected)", f"set_ipoib_mtu {NAME} (mtu=65520)"
    ]  # fmt: skip
    assert result["diff"]["before"][NAME]["ipoib"] == {"mode": "datagram", "mtu": 2044}
    assert result["diff"]["after"][NAME]["ipoib"] == {"mode": "connected", "mtu": 65520}
    assert result["changed"] is True


def test_networkmanager_sets_them_the_stage_reads_them_back_and_a_second_run_does_nothing(
    tmp_path, monkeypatch
):
    calls = fake_networkmanager(monkeypatch, tmp_path)
    result = stage(tmp_path, host(tmp_path))
    assert len(calls) == 1 and calls[0]["relink"] == [NAME]
    assert (sysfs(tmp_path, "mode"), sysfs(tmp_path, "mtu")) == ("connected", "65520")
    assert result["ipoib"][NAME] == {
        "mode": "connected", "mtu": 65520, "device": "mlx5_0", "ib_port": 1
    }  # fmt: skip
    assert result["steps"] == [f"activated cxfab-{NAME}"]
    # The profile written by the fake is not on disk (nmapply.apply is faked): write it
    # as NetworkManager's load would find it, then nothing is left to do.
    profiles_on_disk(tmp_path)
    again = stage(tmp_path, ipoib.resolve(str(tmp_path), STRUCTURED["ipoib"], NICS))
    assert len(calls) == 1, "a second run activated a profile"
    assert (again["changed"], again["actions"], again["files"]) == (False, [], [])


def test_a_mode_changed_by_hand_reactivates_its_profile(tmp_path, monkeypatch):
    """The keyfile is unchanged; only the device differs: its profile is brought up."""
    calls = fake_networkmanager(monkeypatch, tmp_path)
    profiles_on_disk(tmp_path)
    result = stage(tmp_path, host(tmp_path, mode="datagram", mtu=2044))
    assert result["files"] == [] and calls[0]["relink"] == [NAME]
    assert result["ipoib"][NAME]["mode"] == "connected"


def test_connected_mode_the_device_refuses_fails_the_change(tmp_path, monkeypatch):
    """Enhanced IPoIB (ConnectX-4 and later) runs datagram only: NetworkManager fails the
    activation or leaves the mode; either way the read-back fails the task."""
    fake_networkmanager(monkeypatch, tmp_path, takes_connected=False)
    with pytest.raises(Failed) as failed:
        stage(tmp_path, host(tmp_path))
    details = failed.value.args[0]
    assert details["msg"] == (
        f"IPoIB read back differs: {NAME} is datagram MTU 2044, intended connected MTU 65520"
    )
    assert details["changed"] is True
    assert details["actions"][:1] == [f"set_ipoib_mode {NAME} (mode=connected)"]


def test_the_checkpoint_covers_the_ipoib_interface():
    assert network_nm.intended_interfaces(INTENT) == [NAME]
