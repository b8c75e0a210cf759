"""LINK_TYPE decision rule and its application with a recorded-output runner."""

import pytest
from cxfab.host.mlnx.link_type import (
    ACTION_ACTIVATE,
    ACTION_NONE,
    ACTION_SET,
    LinkTypeError,
    decide_port,
    normalise_link_type,
    set_arguments,
)
from cxfab.host.mlnx.nvconfig import parse_nvconfig_query
from cxfab.host.mlnx.port_config import PortConfigError, PortRequest, configure_ports

ENUM = {1: "IB(1)", 2: "ETH(2)", 3: "VPI(3)"}


def render(ports: dict[int, tuple[int, int]], device_type="ConnectX4") -> str:
    """mstconfig -e q output for {port: (current, next_boot)}."""
    rows = []
    for port, (current, next_boot) in sorted(ports.items()):
        mark = "*" if current != next_boot or next_boot != 2 else " "
        rows.append(
            f"{mark}        LINK_TYPE_P{port:<24}ETH(2)          "
            f"{ENUM[current]:<16}{ENUM[next_boot]}"
        )
    return (
        f"\nDevice #1:\n----------\n\nDevice type:    {device_type}\nDevice:         x\n\n"
        "Configurations:                              Default         Current         Next Boot\n"
        + "\n".join(rows)
        + "\nThe '*' shows parameters with next value different from default/current value.\n"
    )


class FakeConfigTool:
    """Replays mstconfig: `-e q` prints the state, `-y set` changes Next Boot only."""

    def __init__(self, ports, fwreset_ok=True):
        self.ports = dict(ports)
        self.fwreset_ok = fwreset_ok
        self.calls = []

    def __call__(self, argv):
        self.calls.append(argv)
        tool = argv[0]
        if tool == "mstfwreset":
            if self.fwreset_ok:
                return 0, "Reset-levels:\n3: Driver restart and PCI reset -Supported\n", ""
            return 1, "", "-E- Unsupported Device\n"
        if argv[3:5] == ["-e", "q"]:
            return 0, render(self.ports), ""
        if argv[3:5] == ["-y", "set"]:
            for word in argv[5:]:
                name, value = word.split("=")
                port = int(name.removeprefix("LINK_TYPE_P"))
                if port not in self.ports:
                    return 3, "", f"-E- The Device doesn't support {name} parameter\n"
                self.ports[port] = (self.ports[port][0], int(value))
            return 0, "Apply new Configuration? (y/n) [n] : y\nApplying... Done!\n", ""
        raise AssertionError(f"unexpected call {argv}")

    @property
    def sets(self):
        return [c for c in self.calls if c[3:5] == ["-y", "set"]]


def run(fake, ports, check_mode=False, sysfs_root="/nonexistent", query_only=False):
    return configure_ports(
        "0000:65:00.0",
        [PortRequest(p, t) for p, t in ports],
        fake,
        "mstconfig",
        "mstfwreset",
        sysfs_root,
        check_mode=check_mode,
        query_only=query_only,
    )


class TestRule:
    def query(self, ports):
        return parse_nvconfig_query(render(ports))

    def test_not_in_next_boot_sets(self):
        decision = decide_port(self.query({2: (1, 1)}), 2, "eth", "dev")
        assert (decision.action, decision.current, decision.next_boot) == (ACTION_SET, "ib", "ib")
        assert set_arguments([decision]) == ["LINK_TYPE_P2=2"]

    def test_in_next_boot_not_current_only_activates(self):
        decision = decide_port(self.query({2: (1, 2)}), 2, "ETH", "dev")
        assert decision.action == ACTION_ACTIVATE
        assert decision.needs_activation and not decision.needs_set
        assert set_arguments([decision]) == []

    def test_in_both_does_nothing(self):
        decision = decide_port(self.query({1: (2, 2)}), 1, 2, "dev")
        assert decision.action == ACTION_NONE and not decision.needs_activation

    def test_missing_parameter_is_unsupported(self):
        with pytest.raises(LinkTypeError, match=r"ConnectX4.*does not report LINK_TYPE_P2"):
            decide_port(self.query({1: (2, 2)}), 2, "eth", "0000:65:00.0")

    def test_needs_current_column(self):
        query = parse_nvconfig_query(
            "Configurations:    Next Boot\n         LINK_TYPE_P1      ETH(2)\n"
        )
        with pytest.raises(LinkTypeError, match="-e"):
            decide_port(query, 1, "eth", "dev")

    @pytest.mark.parametrize(("given", "name"), [("IB", "ib"), (2, "eth"), ("3", "vpi")])
    def test_normalise(self, given, name):
        assert normalise_link_type(given) == name

    @pytest.mark.parametrize("bad", ["ethernet", 4, "roce"])
    def test_normalise_rejects(self, bad):
        with pytest.raises(LinkTypeError):
            normalise_link_type(bad)


class TestConfigurePorts:
    def test_seed_state_sets_p2_once(self):
        fake = FakeConfigTool({1: (2, 2), 2: (1, 1)})
        result = run(fake, [(1, "eth"), (2, "eth")])
        assert result["changed"]
        assert result["set"] == ["LINK_TYPE_P2=2"]
        assert [c[5:] for c in fake.sets] == [["LINK_TYPE_P2=2"]]
        assert result["pending_activation"] and result["pending_ports"] == [2]
        assert result["activation"] == {
            "device": "0000:65:00.0",
            "fwreset": "mstfwreset",
            "fwreset_supported": True,
        }
        assert "LINK_TYPE_P2: ib" in result["diff"]["before"]
        assert "LINK_TYPE_P2: eth" in result["diff"]["after"]
        # Re-run before activation: nothing set again, still pending.
        again = run(fake, [(1, "eth"), (2, "eth")])
        assert not again["changed"] and again["pending_activation"]
        assert len(fake.sets) == 1
        # After the activation the card runs ETH: nothing to do at all.
        fake.ports[2] = (2, 2)
        done = run(fake, [(1, "eth"), (2, "eth")])
        assert not done["changed"] and not done["pending_activation"]
        assert done["activation"] is None

    def test_check_mode_sets_nothing(self):
        fake = FakeConfigTool({1: (2, 2), 2: (1, 1)})
        result = run(fake, [(2, "eth")], check_mode=True)
        assert result["changed"] and "would set LINK_TYPE_P2=2" in result["msg"]
        assert fake.sets == []
        assert fake.ports[2] == (1, 1)

    def test_unsupported_port_fails_before_setting(self):
        fake = FakeConfigTool({1: (1, 1)})
        with pytest.raises(PortConfigError, match=r"ports\[1\] \(port 2\).*LINK_TYPE_P2"):
            run(fake, [(1, "eth"), (2, "eth")])
        assert fake.sets == []

    def test_bad_value_names_the_key(self):
        with pytest.raises(PortConfigError, match=r"ports\[0\]\.link_type"):
            run(FakeConfigTool({1: (1, 1)}), [(1, "ethernet")])

    def test_fwreset_unsupported_reported(self):
        fake = FakeConfigTool({1: (1, 2)}, fwreset_ok=False)
        result = run(fake, [(1, "eth")])
        assert not result["changed"]
        assert result["activation"]["fwreset_supported"] is False

    def test_query_only_never_sets(self):
        fake = FakeConfigTool({2: (1, 1)})
        result = run(fake, [(2, "eth")], query_only=True)
        assert not result["changed"] and fake.sets == []
        assert result["ports"][0]["action"] == ACTION_SET

    def test_mlx4_runtime_switch(self, tmp_path):
        # ConnectX-3: the port file switches the running protocol, no activation needed.
        port_file = tmp_path / "bus/pci/devices/0000:65:00.0/mlx4_port1"
        port_file.parent.mkdir(parents=True)
        port_file.write_text("ib\n")
        fake = FakeConfigTool({1: (1, 1)})
        result = run(fake, [(1, "eth")], sysfs_root=str(tmp_path))
        assert port_file.read_text() == "eth\n"
        assert result["runtime_switched"] == [1]
        assert result["set"] == ["LINK_TYPE_P1=2"]
        assert not result["pending_activation"]

    def test_mlx4_runtime_check_mode(self, tmp_path):
        port_file = tmp_path / "bus/pci/devices/0000:65:00.0/mlx4_port2"
        port_file.parent.mkdir(parents=True)
        port_file.write_text("auto\n")
        fake = FakeConfigTool({2: (3, 3)})
        result = run(fake, [(2, "eth")], check_mode=True, sysfs_root=str(tmp_path))
        assert result["changed"] and port_file.read_text() == "auto\n"


class TestInventoryPorts:
    def test_inventory_entries(self):
        from cxfab.host.mlnx.port_config import requests_from_inventory

        ports = [
            {"port": 1, "netdev": "enp23s0f0", "link_type": "eth", "speed_gbps": 100},
            {"port": "2", "link_type": "IB"},
            {"port": 3, "netdev": "x"},
        ]
        assert requests_from_inventory(ports) == [PortRequest(1, "eth"), PortRequest(2, "IB")]

    @pytest.mark.parametrize(
        ("entry", "match"),
        [({"port": 0, "link_type": "eth"}, r"ports\[0\]\.port"), ("eth", r"ports\[0\]: expected")],
    )
    def test_bad_entries(self, entry, match):
        from cxfab.host.mlnx.port_config import requests_from_inventory

        with pytest.raises(PortConfigError, match=match):
            requests_from_inventory([entry])
