"""The facts backend.choose decides on, read from a fake root and fake commands."""

from pathlib import Path

import pytest
from cxfab.host.net import backend, backendfacts, rollback


def fake_run(active=(), nmcli=None):
    def run(argv):
        if argv[:2] == ["systemctl", "is-active"]:
            return (0, "active\n") if argv[2] in active else (3, "inactive\n")
        if argv[0] == "nmcli":
            return (127, "") if nmcli is None else (0, nmcli)
        raise AssertionError(argv)

    return run


def make_root(tmp_path, links=(), netplan=None, own_netplan=None, systemd=True):
    if systemd:  # booted by systemd (sd_booted): systemctl answers
        (tmp_path / "run/systemd/system").mkdir(parents=True)
        (tmp_path / "proc/1").mkdir(parents=True)
        (tmp_path / "proc/1/comm").write_text("systemd\n")
    for name, ifindex, admin in links:
        (tmp_path / "sys/class/net" / name).mkdir(parents=True)
        (tmp_path / "sys/class/net" / name / "ifindex").write_text(f"{ifindex}\n")
        state = tmp_path / "run/systemd/netif/links"
        state.mkdir(parents=True, exist_ok=True)
        (state / str(ifindex)).write_text(f"# This is private data.\nADMIN_STATE={admin}\n")
    etc = tmp_path / "etc/netplan"
    etc.mkdir(parents=True)
    if netplan:
        (etc / "50-cloud-init.yaml").write_text(netplan)
    if own_netplan:
        (etc / "60-cxfab.yaml").write_text(own_netplan)
    return str(tmp_path)


CLOUD_INIT = "network:\n  version: 2\n  ethernets:\n    enp1s0:\n      dhcp4: true\n"
OWN = "network:\n  version: 2\n  bonds:\n    bond0: {interfaces: [a]}\n"


def test_networkd_host(tmp_path):
    root = make_root(tmp_path, links=[("lo", 1, "unmanaged"), ("ens1f0", 2, "configured")])
    facts = backendfacts.gather(root, fake_run(active={"systemd-networkd"}))
    assert facts == {
        "netplan_interfaces": [],
        "networkmanager_running": False,
        "networkmanager_links": [],
        "networkd_running": True,
        "networkd_links": ["ens1f0"],
    }
    assert backend.choose("auto", facts) == "networkd"


def test_cxfabs_own_netplan_file_does_not_make_a_netplan_host(tmp_path):
    root = make_root(tmp_path, own_netplan=OWN)
    assert backendfacts.netplan_interfaces(root) == []
    root2 = make_root(tmp_path / "b", netplan=CLOUD_INIT, own_netplan=OWN)
    assert backendfacts.netplan_interfaces(root2) == ["enp1s0"]


def test_networkmanager_host_counts_what_nm_really_manages(tmp_path):
    root = make_root(tmp_path, links=[("eth0", 2, "unmanaged")])
    nmcli = (
        "eth0:connected\nlo:connected (externally)\nvirbr0:connected (externally)\nib0:unmanaged\n"
    )
    run = fake_run(active={"NetworkManager", "systemd-networkd"}, nmcli=nmcli)
    facts = backendfacts.gather(root, run)
    assert facts["networkmanager_links"] == ["eth0"]
    assert facts["networkd_links"] == []
    assert backend.choose("auto", facts) == "networkmanager"


def test_both_managing_is_refused(tmp_path):
    root = make_root(tmp_path, links=[("ens1f0", 3, "configured")])
    run = fake_run(active={"NetworkManager", "systemd-networkd"}, nmcli="eth0:connected\n")
    facts = backendfacts.gather(root, run)
    try:
        backend.choose("auto", facts)
    except backend.BackendError as error:
        assert "eth0" in error.reason and "ens1f0" in error.reason
    else:
        raise AssertionError("an ambiguous host was accepted")


def test_netplan_host(tmp_path):
    root = make_root(tmp_path, links=[("enp1s0", 2, "configured")], netplan=CLOUD_INIT)
    facts = backendfacts.gather(root, fake_run(active={"systemd-networkd"}))
    assert facts["netplan_interfaces"] == ["enp1s0"]
    assert backend.choose("auto", facts) == "netplan"


def test_nmcli_missing_means_no_links(tmp_path):
    assert backendfacts.networkmanager_links(fake_run()) == []


def _process(root, pid: int, comm: str) -> None:
    (Path(root) / "proc" / str(pid)).mkdir(parents=True)
    (Path(root) / "proc" / str(pid) / "comm").write_text(comm + "\n")


@pytest.mark.parametrize(
    ("comm", "running"),
    [
        ("NetworkManager", ("networkmanager_running",)),
        ("systemd-network", ("networkd_running",)),  # comm is cut at 15 characters
        ("nm-dispatcher", ()),
    ],
)
def test_without_systemd_the_process_table_says_what_runs(tmp_path, comm, running):
    """A host systemd did not boot (no /run/systemd/system: a container, the lab's
    guests): systemctl is not asked, the daemon's process is looked for."""
    root = make_root(tmp_path, systemd=False)
    _process(root, 1, "init")
    _process(root, 250, comm)

    def no_systemctl(argv):
        assert argv[0] != "systemctl", argv
        return (0, "ens1f0:connected\nenp0s16:unmanaged\n") if argv[0] == "nmcli" else (127, "")

    facts = backendfacts.gather(root, no_systemctl)
    assert {k for k in ("networkmanager_running", "networkd_running") if facts[k]} == set(running)
    if "networkmanager_running" in running:
        assert facts["networkmanager_links"] == ["ens1f0"]


def test_the_directory_netplan_generate_leaves_does_not_make_systemd_the_init(tmp_path):
    """`netplan generate` creates /run/systemd/system on any host: with another PID 1
    the process table is still what says what runs (rollback.systemd_is_init)."""
    root = make_root(tmp_path, systemd=False)
    (Path(root) / "run/systemd/system/systemd-networkd.service.wants").mkdir(parents=True)
    _process(root, 1, "virtme-ng-init")
    _process(root, 250, "NetworkManager")

    def no_systemctl(argv):
        assert argv[0] != "systemctl", argv
        return (0, "ens1f0:connected\n") if argv[0] == "nmcli" else (127, "")

    facts = backendfacts.gather(root, no_systemctl)
    assert (facts["networkmanager_running"], facts["networkd_running"]) == (True, False)
    assert rollback.systemd_is_init(root) is False
    (Path(root) / "proc/1/comm").write_text("systemd\n")
    assert rollback.systemd_is_init(root) is True
