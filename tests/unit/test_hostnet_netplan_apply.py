"""The netplan backend's files: where they go, what changes, netplan's verdict, the revert.

host/stages/network_netplan.py on a temporary root (the lab host's structured config);
the revert is rollback.restore_files on the absolute-path snapshot and rollback.restore's
`netplan generate` after it. netplan itself runs in tests/integration/test_netplan_backend.py.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml
from cxfab.host.net import rollback
from cxfab.host.stages import network_netplan

REPO = Path(__file__).resolve().parents[2]
LAB_HOST = yaml.safe_load((REPO / "tests/golden/lab/structured/lab-host1.yml").read_text())
DROPIN = "10-netplan-{}.netdev.d/60-cxfab-egress-qos.conf"


@pytest.fixture
def dirs(tmp_path):
    return str(tmp_path / "etc/netplan"), str(tmp_path / "etc/systemd/network")


def _contents(paths) -> dict:
    return {p: (Path(p).read_text(), os.stat(p).st_mode & 0o7777) for p in paths}


def test_the_netplan_file_is_0600_in_netplan_dir_and_each_egress_map_a_dropin(dirs):
    netplan_dir, networkd_dir = dirs
    files = network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir)
    vlans = [v["name"] for v in LAB_HOST["network"]["vlans"]]
    assert sorted(files) == sorted(
        [f"{netplan_dir}/60-cxfab.yaml"] + [f"{networkd_dir}/{DROPIN.format(v)}" for v in vlans]
    )
    text, mode = files[f"{netplan_dir}/60-cxfab.yaml"]
    assert mode == 0o600 and yaml.safe_load(text)["network"]["bonds"]["bond0"]
    assert {m for path, (_t, m) in files.items() if path.endswith(".conf")} == {0o644}


def test_written_once_nothing_differs_and_a_mode_or_text_change_is_seen(dirs):
    netplan_dir, networkd_dir = dirs
    files = network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir)
    assert network_netplan.changes(files, []) == [f"write {p}" for p in files]
    network_netplan.write(files, [])
    present = network_netplan.owned(netplan_dir, networkd_dir)
    assert sorted(present) == sorted(files)
    assert network_netplan.changes(files, present) == []
    assert _contents(files) == files
    own = f"{netplan_dir}/60-cxfab.yaml"
    os.chmod(own, 0o644)  # netplan warns about a readable file: cxfab puts 0600 back
    assert network_netplan.changes(files, present) == [f"write {own}"]
    os.chmod(own, 0o600)
    Path(own).write_text(Path(own).read_text().replace("mtu: 9000", "mtu: 1500", 1))
    assert network_netplan.changes(files, present) == [f"write {own}"]


def test_a_dropped_vlans_dropin_and_cxfabs_networkd_files_are_removed(dirs):
    """On a netplan host cxfab's networkd files would define the links a second time."""
    netplan_dir, networkd_dir = dirs
    network_netplan.write(network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir), [])
    os.makedirs(networkd_dir, exist_ok=True)
    Path(networkd_dir, "60-cxfab-bond0.netdev").write_text("[NetDev]\nName=bond0\n")
    Path(networkd_dir, "50-operator.network").write_text("[Match]\nName=eno1\n")
    fewer = copy.deepcopy(LAB_HOST)
    fewer["network"]["vlans"] = fewer["network"]["vlans"][:1]
    files = network_netplan.wanted(fewer, netplan_dir, networkd_dir)
    present = network_netplan.owned(netplan_dir, networkd_dir)
    gone = [DROPIN.format(v["name"]) for v in LAB_HOST["network"]["vlans"][1:]]
    assert network_netplan.changes(files, present) == [f"write {netplan_dir}/60-cxfab.yaml"] + [
        f"remove {networkd_dir}/{name}" for name in [*gone, "60-cxfab-bond0.netdev"]
    ]
    network_netplan.write(files, present)
    assert sorted(network_netplan.owned(netplan_dir, networkd_dir)) == sorted(files)
    assert Path(networkd_dir, "50-operator.network").exists()  # not cxfab's: left alone


def test_the_snapshot_restores_every_file_written_or_removed(dirs):
    netplan_dir, networkd_dir = dirs
    first = network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir)
    network_netplan.write(first, [])
    stale = Path(networkd_dir, "60-cxfab-old.network")
    stale.write_text("[Match]\nName=old\n")
    before = {p: Path(p).read_bytes() for p in network_netplan.owned(netplan_dir, networkd_dir)}
    changed = copy.deepcopy(LAB_HOST)
    changed["network"]["vlans"] = changed["network"]["vlans"][:1]
    changed["network"]["bond"]["mtu"] = 1500
    files = network_netplan.wanted(changed, netplan_dir, networkd_dir)
    present = network_netplan.owned(netplan_dir, networkd_dir)
    saved = rollback.snapshot_paths(network_netplan.snapshot(files, present))
    network_netplan.write(files, present)
    assert not stale.exists()
    done = rollback.restore_files(networkd_dir, saved)
    assert {p: Path(p).read_bytes() for p in network_netplan.owned(netplan_dir, networkd_dir)} == (
        before
    )
    assert os.stat(f"{netplan_dir}/60-cxfab.yaml").st_mode & 0o7777 == 0o600
    assert f"wrote {stale}" in done


def test_a_never_written_file_is_removed_by_the_revert(dirs):
    netplan_dir, networkd_dir = dirs
    files = network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir)
    saved = rollback.snapshot_paths(network_netplan.snapshot(files, []))
    assert set(saved.values()) == {None}
    network_netplan.write(files, [])
    rollback.restore_files(networkd_dir, saved)
    assert network_netplan.owned(netplan_dir, networkd_dir) == []


def test_netplans_verdict_comes_from_a_scratch_root_holding_cxfabs_file_only(dirs):
    netplan_dir, networkd_dir = dirs
    files = network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir)
    seen = {}

    def run(argv):
        root = argv[argv.index("--root-dir") + 1]
        seen["argv"], seen["files"] = argv, sorted(os.listdir(f"{root}/etc/netplan"))
        seen["text"] = Path(root, "etc/netplan/60-cxfab.yaml").read_text()
        return 1, "", "Error in network definition: unknown key 'mtuu'\n"

    reason = network_netplan.accepted(run, files, netplan_dir)
    assert seen["argv"][:2] == ["netplan", "generate"] and seen["files"] == ["60-cxfab.yaml"]
    assert seen["text"] == files[f"{netplan_dir}/60-cxfab.yaml"][0]
    assert reason == (
        "netplan generate refused cxfab's file (rc=1): Error in network definition: "
        "unknown key 'mtuu'"
    )
    assert not Path(netplan_dir).exists()  # nothing written where netplan reads
    assert "not installed" in network_netplan.accepted(
        lambda argv: (127, "", ""), files, netplan_dir
    )
    assert network_netplan.accepted(lambda argv: (0, "", ""), files, netplan_dir) == ""


def test_a_failed_generate_raises_so_the_change_is_restored():
    with pytest.raises(RuntimeError, match=r"netplan generate failed \(rc=1\): bad"):
        network_netplan.generate(lambda argv: (1, "", "bad\n"))


def test_the_revert_runs_netplan_generate_after_the_files_then_the_reload(dirs, monkeypatch):
    netplan_dir, networkd_dir = dirs
    files = network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir)
    record = {
        "links": {},
        "files": rollback.snapshot_paths(network_netplan.snapshot(files, [])),
        "networkd_dir": networkd_dir,
        "netplan_generate": True,
        "reload_networkd": True,
    }
    network_netplan.write(files, [])
    calls = []

    class Done:
        returncode, stdout, stderr = 0, "", ""

    monkeypatch.setattr(rollback.subprocess, "run", lambda argv, **_kw: calls.append(argv) or Done)
    monkeypatch.setattr(rollback.shutil, "which", lambda name: f"/usr/sbin/{name}")
    restored, errors = rollback.restore(record)
    assert errors == [] and calls == [["netplan", "generate"], ["networkctl", "reload"]]
    assert sorted(restored) == sorted(f"removed {p}" for p in files)
    network_netplan.write(files, [])
    monkeypatch.setattr(rollback.shutil, "which", lambda name: None)
    calls.clear()
    assert rollback.restore(record)[1] == []  # no netplan: nothing renders the files
    assert calls == [["networkctl", "reload"]]


def test_on_networkd_an_earlier_netplan_runs_files_are_a_leftover_to_remove(dirs):
    """Left, netplan would render them at every boot ahead of cxfab's 60-cxfab-* files."""
    netplan_dir, networkd_dir = dirs
    files = network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir)
    network_netplan.write(files, [])
    Path(networkd_dir, "60-cxfab-bond0.netdev").write_text("[NetDev]\nName=bond0\n")
    left = network_netplan.leftover(netplan_dir, networkd_dir)
    assert sorted(left) == sorted(files)  # the networkd file is not a leftover
    calls = []
    network_netplan.remove_leftover(left, lambda argv: calls.append(argv) or (0, "", ""))
    assert calls == [["netplan", "generate"]]
    assert network_netplan.owned(netplan_dir, networkd_dir) == [
        f"{networkd_dir}/60-cxfab-bond0.netdev"
    ]
    assert network_netplan.leftover(netplan_dir, networkd_dir) == []


def test_without_netplan_installed_removing_the_leftover_is_enough_but_a_refusal_raises(dirs):
    netplan_dir, networkd_dir = dirs
    network_netplan.write(network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir), [])
    left = network_netplan.leftover(netplan_dir, networkd_dir)
    network_netplan.remove_leftover(left, lambda argv: (127, "", ""))
    assert network_netplan.leftover(netplan_dir, networkd_dir) == []
    network_netplan.write(network_netplan.wanted(LAB_HOST, netplan_dir, networkd_dir), [])
    with pytest.raises(RuntimeError, match=r"netplan generate failed \(rc=1\)"):
        network_netplan.remove_leftover(
            network_netplan.leftover(netplan_dir, networkd_dir), lambda argv: (1, "", "no")
        )


class _Module:
    """What netplan_boot uses of AnsibleModule: params, run_command, fail_json."""

    def __init__(self, netplan_dir, networkd_dir):
        self.params = {"netplan_dir": netplan_dir, "networkd_dir": networkd_dir}
        self.commands = []

    def run_command(self, argv, handle_exceptions=True):
        self.commands.append(argv)
        return 0, "", ""

    def fail_json(self, **fields):
        raise AssertionError(fields)


def test_netplan_is_asked_only_when_cxfabs_file_is_to_be_written(dirs):
    """A reading run (check mode, verify) on a host whose files are current spawns none."""
    from cxfab.host.stages import network

    netplan_dir, networkd_dir = dirs
    module = _Module(netplan_dir, networkd_dir)
    (files, _present), changes = network.netplan_boot(module, LAB_HOST)
    assert changes == [f"write {p}" for p in files]
    assert [argv[:2] for argv in module.commands] == [["netplan", "generate"]]
    network_netplan.write(files, [])
    module.commands.clear()
    assert network.netplan_boot(module, LAB_HOST)[1] == []
    assert module.commands == []
