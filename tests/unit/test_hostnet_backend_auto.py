"""cxfab_host_network with backend auto: the host's daemons are read before any change.

networkd, NetworkManager and netplan go on; a NetworkManager host without nmcli, a
netplan host without netplan, or one where no daemon runs, fails naming what was seen,
before the module touches a link (the network stage calls detected_backend ahead of
netlink).
"""

import pytest
from cxfab.host.stages import network
from test_hostnet_backendfacts import CLOUD_INIT, fake_run, make_root


class Failed(Exception):
    pass


class FakeModule:
    """run_command answers as backendfacts' fake host does, but a command that is not
    installed raises as AnsibleModule.run_command(handle_exceptions=False) does."""

    def __init__(self, active=(), nmcli=None, netplan=True):
        self.run, self.nmcli, self.commands = fake_run(active, nmcli), nmcli, []
        self.netplan = netplan

    def run_command(self, argv, handle_exceptions=True):
        self.commands.append(argv)
        assert handle_exceptions is False, "a missing command must not end the module"
        if argv[0] == "nmcli" and self.nmcli is None:
            raise FileNotFoundError(argv[0])
        if argv[0] == "netplan":
            if not self.netplan:
                raise FileNotFoundError(argv[0])
            return 0, "usage: netplan ...", ""
        status, out = self.run(argv)
        return status, out, ""

    def fail_json(self, msg, **fields):
        raise Failed(msg, fields)


def test_a_networkd_host_goes_on_as_networkd(tmp_path):
    root = make_root(tmp_path, links=[("lo", 1, "unmanaged"), ("ens1f0", 2, "configured")])
    assert network.detected_backend(FakeModule(active={"systemd-networkd"}), root) == "networkd"


def test_a_networkmanager_host_goes_on_as_networkmanager(tmp_path):
    module = FakeModule(active={"NetworkManager"}, nmcli="eth0:connected\nlo:unmanaged\n")
    assert network.detected_backend(module, make_root(tmp_path)) == "networkmanager"


def test_networkmanager_running_without_nmcli_is_refused(tmp_path):
    """nmcli not installed reads as no managed link, not as an error that ends the module;
    the NetworkManager path needs it, so the host is refused before anything changes."""
    module = FakeModule(active={"NetworkManager"})
    with pytest.raises(Failed) as failed:
        network.detected_backend(module, make_root(tmp_path))
    msg, fields = failed.value.args
    assert msg.startswith("host_network_backend=auto: this host's network belongs to ")
    assert "networkmanager (NetworkManager runs and manages: no link yet)" in msg
    assert "nmcli, which cxfab applies it with, is not installed" in msg
    assert msg.endswith("nothing was changed") and fields["changed"] is False
    assert module.commands[-1] == ["nmcli", "--version"]


def test_a_netplan_host_goes_on_as_netplan(tmp_path):
    module = FakeModule(active={"systemd-networkd"})
    assert network.detected_backend(module, make_root(tmp_path, netplan=CLOUD_INIT)) == "netplan"
    assert module.commands[-1] == ["netplan", "--help"]


def test_a_netplan_host_without_the_netplan_command_is_refused_naming_the_interfaces(tmp_path):
    module = FakeModule(active={"systemd-networkd"}, netplan=False)
    with pytest.raises(Failed) as failed:
        network.detected_backend(module, make_root(tmp_path, netplan=CLOUD_INIT))
    msg = failed.value.args[0]
    assert "belongs to netplan (netplan files define enp1s0)" in msg
    assert "netplan, which cxfab applies it with, is not installed" in msg


def test_a_host_without_a_network_daemon_is_refused(tmp_path):
    module = FakeModule()  # systemctl answers inactive for both, nmcli is not installed
    with pytest.raises(Failed, match="neither NetworkManager nor systemd-networkd runs"):
        network.detected_backend(module, make_root(tmp_path))
    assert ["nmcli", "-t", "-f", "DEVICE,STATE", "device"] not in module.commands


def test_an_unreadable_netplan_file_fails_closed(tmp_path):
    root = make_root(tmp_path, netplan="network: [unclosed\n")
    with pytest.raises(Failed) as failed:
        network.detected_backend(FakeModule(active={"systemd-networkd"}), root)
    msg = failed.value.args[0]
    assert "could not tell the host's network backend apart" in msg
    assert "50-cloud-init.yaml" in msg and msg.endswith("nothing was changed")


def test_auto_is_checked_before_any_netlink_reading(tmp_path, monkeypatch):
    """run() refuses at detection: IPRoute is never opened."""

    def no_netlink(*_args, **_kwargs):
        raise AssertionError("netlink opened before the backend was known")

    monkeypatch.setattr(network, "IPRoute", no_netlink)
    monkeypatch.setattr(network, "PYROUTE2_IMPORT_ERROR", None)
    module = FakeModule()  # no daemon runs
    module.params = {
        "backend": "auto",
        "root": make_root(tmp_path),
        "revert_seconds": 0,
        "structured": {"network": {}},
    }
    with pytest.raises(Failed, match="neither NetworkManager nor systemd-networkd runs"):
        network.run(module)
