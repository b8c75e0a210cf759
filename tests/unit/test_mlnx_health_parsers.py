"""Parsers of the link, cable, PCIe and counter outputs, fed with real layouts.

Each sample under tests/fixtures/mlnx/ names its source in its header (seed 000's
MFT captures, the mstflint sources, a public ConnectX-6 capture, this machine).
"""

import re
from pathlib import Path

import pytest
from cxfab.host.mlnx.mlxcables import MlxcablesParseError, parse_mlxcables
from cxfab.host.mlnx.mlxlink import MODULE_OPCODES, MlxlinkParseError, parse_ber, parse_mlxlink
from cxfab.host.mlnx.nicstats import (
    EthtoolParseError,
    health_counters,
    kind,
    parse_ethtool_stats,
)
from cxfab.host.mlnx.pcie import PcieReadError, parse_link, parse_speed, read_link

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mlnx"


def sample(name: str) -> str:
    """The tool output of a fixture, without its `# ...` source header."""
    text = (FIXTURES / name).read_text()
    return text.split("# ---\n", 1)[1]


# ---------------------------------------------------------------- mlxlink / mstlink


def test_seed000_third_party_cable_names_the_opcode_and_its_text():
    report = parse_mlxlink(sample("mlxlink_seed000_wrong_module.txt"))
    assert report.state == "Disable" and not report.up
    assert report.speed is None and report.width is None and report.fec is None
    assert report.opcode == 1036 and report.group == "MNG FW"
    assert report.recommendation == (
        "Connected wrong module type. Change to a different module type."
    )
    assert report.cause() == "module's PMD type is not enabled (opcode 1036)"
    assert report.effective_errors is None and report.raw_errors_per_lane == ()


def test_module_opcode_texts_are_the_pddr_register_descriptions():
    """Each MNG FW opcode's text is the register's own (the fixture cites the source)."""
    listed = {}
    for line in sample("pddr_monitor_opcodes.txt").splitlines():
        number, _, text = line.partition(" - ")
        # Our words: first letter lower-cased, no "(see REGISTER)" reference or period.
        text = re.sub(r"\s*\(see [A-Z]+\)", "", text).rstrip(".")
        listed[int(number)] = text[0].lower() + text[1:]
    assert listed == MODULE_OPCODES
    assert MODULE_OPCODES[1026] == "bus stuck (I2C Data or clock shorted)"


def test_seed000_healthy_port_in_the_mft_4_15_layout():
    report = parse_mlxlink(sample("mlxlink_seed000_up.txt"))
    assert report.up and not report.issue
    assert (report.speed, report.width) == ("100GbE", "4x")
    assert report.fec == "Standard RS-FEC - RS(528,514)"
    assert report.enabled_speeds == "0xfafc0003 (100G,50G,25G,1G)"
    assert report.effective_errors == 0
    assert report.raw_errors_per_lane == (0, 0, 0, 0)
    assert report.minutes_since_clear == pytest.approx(2.1)
    assert report.effective_ber == pytest.approx(15e-255)
    assert report.link_down_counter is None  # MFT 4.15 prints no such row
    assert report.module is None


def test_mstflint_layout_with_colours_counters_and_module():
    report = parse_mlxlink(sample("mstlink_mstflint_up_color.txt"), command="mstlink")
    assert report.state == "Active" and report.speed == "100G"
    assert report.raw_errors_per_lane == (12, 0, 3, 0)
    assert report.raw_ber == pytest.approx(1e-13)
    assert (report.link_down_counter, report.recovery_counter) == (2, 0)
    module = report.module
    assert (module.vendor, module.part_number) == ("Mellanox", "MCP1600-E002")
    assert module.cable_type == "Passive copper cable" and module.length == "2"
    assert module.temperature_c is None  # a passive DAC has no DDM


def test_public_cx6_capture_with_extended_speed_masks():
    report = parse_mlxlink(sample("mlxlink_cx6_capture.txt"))
    assert report.up and report.speed == "200G"
    assert report.fec == "Standard RS-FEC (544,514)"
    assert report.enabled_speeds.startswith("0x000017f2(200G")
    assert report.cable_speeds.startswith("0x000017d0(200G")


def test_module_temperature_with_thresholds():
    text = sample("mstlink_mstflint_up_color.txt").replace(
        "Temperature [C]                 : N/A", "Temperature [C]                 : 41 [-5..75]"
    )
    assert parse_mlxlink(text).module.temperature_c == 41.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-E- Failed to open device: 0000:99:00.0, No such file or directory\n", "an error"),
        ("", "no 'Operational Info' section"),
        ("Operational Info\n----------------\nSpeed    : 100G\n", "State row"),
    ],
)
def test_mlxlink_fails_closed_naming_the_command(text, message):
    with pytest.raises(MlxlinkParseError, match=message) as caught:
        parse_mlxlink(text, command="mlxlink -d 0000:99:00.0 -c")
    assert "mlxlink" in str(caught.value)


def test_ber_notation():
    assert parse_ber("15E-255") == pytest.approx(1.5e-254)
    assert parse_ber("2E-9") == pytest.approx(2e-9)
    assert parse_ber("N/A") is None and parse_ber(None) is None


# ---------------------------------------------------------------- mlxcables


def test_seed000_mlxcables_block():
    (cable,) = parse_mlxcables(sample("mlxcables_seed000.txt"))
    assert cable.name == "mt4115_pciconf0.1_cable_1" and cable.port_index == 1
    assert (cable.vendor, cable.part_number) == ("OPTCORE", "Q-100G-DAC-P2M")
    assert cable.identifier == "QSFP28 (11h)"
    assert cable.technology == "Copper cable unequalized (a0h)"
    assert cable.compliance == "Unspecified" and cable.length == "2 m"
    assert cable.oui == "0xfc7ce7" and cable.revision == "5"
    # Continuation lines belong to the row above them.
    assert cable.fields["Attenuation"].startswith("2.5GHz:   4dB; 5.0GHz:   6dB")


def test_two_cables_and_no_cables():
    text = sample("mlxcables_seed000.txt")
    block = text.split("Cable #1:", 1)[1]
    second = block.replace("pciconf0.1_cable_1", "pciconf0_cable_0").replace("OPTCORE", "Mellanox")
    cables = parse_mlxcables(text + "\nCable #2:" + second)
    assert [(c.port_index, c.vendor) for c in cables] == [(1, "OPTCORE"), (0, "Mellanox")]
    assert parse_mlxcables("Querying Cables ....\n\n-W- No cables were found\n") == []


@pytest.mark.parametrize(
    "text", ["", "-E- Cable mt4115_pciconf0_cable_9 was not found\n", "Querying Cables ....\n"]
)
def test_mlxcables_fails_closed(text):
    with pytest.raises(MlxcablesParseError):
        parse_mlxcables(text)


# ---------------------------------------------------------------- PCIe


def _link_files(tmp_path, speed, width, max_speed, max_width):
    device = tmp_path / "0000:17:00.0"
    device.mkdir()
    for name, value in (
        ("current_link_speed", speed),
        ("current_link_width", width),
        ("max_link_speed", max_speed),
        ("max_link_width", max_width),
    ):
        (device / name).write_text(value + "\n")
    return device


def test_seed000_narrow_slot_from_sysfs(tmp_path):
    link = read_link(str(_link_files(tmp_path, "8.0 GT/s PCIe", "8", "8.0 GT/s PCIe", "16")))
    assert link.degraded
    assert link.gbps == pytest.approx(63.008) and link.max_gbps == pytest.approx(126.016)
    assert link.observed() == ("8 GT/s x8 (63.008 Gb/s), capable of 8 GT/s x16 (126.016 Gb/s)")


def test_full_link_and_old_kernel_speed_format():
    values = {
        "current_link_speed": "8 GT/s",
        "current_link_width": "16",
        "max_link_speed": "8 GT/s",
        "max_link_width": "16",
    }
    link = parse_link(values)
    assert not link.degraded and link.as_dict()["gbps"] == 126.016
    slower = parse_link({**values, "current_link_speed": "5.0 GT/s PCIe"})
    assert slower.degraded and slower.gbps == 64.0


def test_pcie_fails_closed(tmp_path):
    with pytest.raises(PcieReadError, match="no current_link_speed"):
        read_link(str(tmp_path))
    with pytest.raises(PcieReadError, match="not a known PCIe rate"):
        parse_speed("Unknown")
    device = _link_files(tmp_path, "Unknown speed", "0", "8.0 GT/s PCIe", "16")
    with pytest.raises(PcieReadError, match=r"0000:17:00\.0"):
        read_link(str(device))


# ---------------------------------------------------------------- ethtool -S


def test_mlx5_counters_grouped_by_kind():
    counters = parse_ethtool_stats(sample("ethtool_mlx5.txt"))
    assert counters["rx_crc_errors_phy"] == 3 and len(counters) == 26
    grouped = health_counters(counters)
    assert grouped["error"] == {"rx_crc_errors_phy": 3, "rx_symbol_err_phy": 0, "tx_errors_phy": 0}
    assert grouped["discard"] == {
        "rx_discards_phy": 5,
        "rx_out_of_buffer": 17,
        "tx_discards_phy": 0,
    }
    assert grouped["pause"] == {
        "rx_pause_ctrl_phy": 0,
        "rx_prio3_pause": 120,
        "tx_pause_ctrl_phy": 0,
        "tx_prio3_pause": 44,
    }
    # Traffic of each priority: what verify's lossless check requires to move under load.
    assert grouped["priority"] == {
        "rx_prio3_bytes": 5120000,
        "rx_prio3_packets": 5000,
        "tx_prio3_bytes": 4096000,
        "tx_prio3_packets": 4000,
    }
    assert grouped["link_down"] == {"link_down_events_phy": 1}
    # per-queue copies and durations are not counted twice
    assert kind("rx0_wqe_err") is None and kind("tx_queue_dropped") is None
    assert kind("rx_prio3_pause_duration") is None


def test_virtio_capture_has_drops_only():
    grouped = health_counters(parse_ethtool_stats(sample("ethtool_virtio.txt")))
    assert set(grouped) == {"discard"}
    assert "rx_drops" in grouped["discard"]
    assert not [name for name in grouped["discard"] if name.startswith(("rx0_", "tx0_"))]


@pytest.mark.parametrize("text", ["no stats available\n", ""])
def test_ethtool_fails_closed(text):
    with pytest.raises(EthtoolParseError, match="ethtool -S ens4"):
        parse_ethtool_stats(text, command="ethtool -S ens4")
