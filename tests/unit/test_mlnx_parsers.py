"""Parsers of the ConnectX tool outputs, fed with the real formats."""

import pytest
from cxfab.host.mlnx.flint import FlintParseError, parse_flint_query
from cxfab.host.mlnx.fwmanager import (
    FwManagerParseError,
    find_device,
    parse_fwmanager,
    parse_fwmanager_text,
    parse_fwmanager_xml,
)
from cxfab.host.mlnx.nvconfig import NvConfigParseError, NvValue, parse_nvconfig_query
from cxfab.host.mlnx.versions import VersionError, compare_versions, parse_version, same_version

FLINT_DEVICE = """\
Image type:            FS3
FW Version:            12.23.1020
FW Release Date:       18.4.2018
Product Version:       12.23.1020
Rom Info:              type=UEFI version=14.16.17 cpu=AMD64
                       type=PXE version=3.5.504 cpu=AMD64
Description:           UID                GuidsNumber
Base GUID:             7cfe900300a1b2c4        4
Base MAC:              7cfe90a1b2c4            4
Image VSD:             N/A
Device VSD:            N/A
PSID:                  LNV2190110032
Security Attributes:   N/A
"""

FLINT_PENDING = FLINT_DEVICE.replace(
    "FW Version:            12.23.1020\n",
    "FW Version:            12.28.1002\nFW Version(Running):   12.23.1020\n",
)

# Old FS2 cards (ConnectX-3) under some releases print only the running line.
FLINT_CX3 = """\
Image type: FS2
FW Version(Running): 2.36.5000
FW Release Date: 5.9.2017
Device ID: 4099
PSID: MT_1080120023
"""

# Seed 000: the Lenovo OEM ConnectX-4 before its update.
FWMANAGER_TEXT = """\
Querying Mellanox devices firmware ...

Device #1:
----------

  Device Type:      ConnectX4
  Part Number:      00MM962_Ax
  Description:      ConnectX-4 EDR IB; dual-port QSFP28; PCIe3.0 x16
  PSID:             LNV2190110032
  PCI Device Name:  /dev/mst/mt4115_pciconf0
  Base MAC:         7cfe90a1b2c4
  Versions:         Current        Available
     FW             12.23.1020     12.28.1002
     PXE            3.5.0504       3.6.0101
     UEFI           14.16.0017     14.21.0016

  Status:           Update required

---------
Found 1 device(s) requiring firmware update...
"""

FWMANAGER_TWO_DEVICES = """\
Device #1:
----------
  Device Type:      ConnectX4
  PSID:             LNV2190110032
  PCI Device Name:  0000:65:00.0
  Versions:         Current        Available
     FW             12.28.1002     N/A
     FW (Running)   12.23.1020     N/A
  Status:           No matching image found

Device #2:
----------
  Device Type:      ConnectX5
  PSID:             MT_0000000011
  PCI Device Name:  0000:b3:00.0
  Versions:         Current        Available
     FW             16.28.2006     16.28.2006
  Status:           Up to date
"""

FWMANAGER_XML = """\
<Devices>
    <Device pciName="0000:65:00.0" type="ConnectX4" psid="LNV2190110032" partNumber="00MM962_Ax">
      <Versions>
        <FW current="12.23.1020" available="12.28.1002"/>
        <PXE current="3.5.0504" available="3.6.0101"/>
        <UEFI current="14.16.0017" available="14.21.0016"/>
      </Versions>
      <MACs Base_Mac="7cfe90a1b2c4" />
      <Status>Update required</Status>
      <Description>ConnectX-4 EDR IB; dual-port QSFP28; PCIe3.0 x16</Description>
    </Device>
</Devices>
"""

NVCONFIG_E = """\

Device #1:
----------

Device type:    ConnectX4
Name:           00MM962_Ax
Description:    ConnectX-4 EDR IB; dual-port QSFP28; PCIe3.0 x16
Device:         0000:65:00.0

Configurations:                              Default         Current         Next Boot
         SRIOV_EN                            False(0)        False(0)        False(0)
*        NUM_OF_VFS                          0               16              8
         LINK_TYPE_P1                        ETH(2)          ETH(2)          ETH(2)
*        LINK_TYPE_P2                        ETH(2)          IB(1)           IB(1)
         ESWITCH_HAIRPIN_DESCRIPTORS         Array[0..7]     Array[0..7]     Array[0..7]
The '*' shows parameters with next value different from default/current value.
"""


class TestVersions:
    def test_numeric_not_lexical(self):
        # The string comparison the onyx collection made would say the opposite.
        assert compare_versions("3.10.2102", "3.6.6000") == 1
        assert compare_versions("12.28.1002", "12.23.1020") == 1
        assert compare_versions("12.23.1020", "12.28.1002") == -1

    def test_leading_zeros_and_width(self):
        assert same_version("3.6.0101", "3.6.101")
        assert compare_versions("12.28", "12.28.0") == 0
        assert parse_version(" 16.35.2000 ") == (16, 35, 2000)

    @pytest.mark.parametrize("bad", ["", "12.x.1", "v12.1", "12..1", "N/A"])
    def test_rejects_non_versions(self, bad):
        with pytest.raises(VersionError):
            parse_version(bad)

    def test_same_version_none(self):
        assert not same_version(None, "1.0")


class TestFlint:
    def test_device_query(self):
        info = parse_flint_query(FLINT_DEVICE)
        assert info.fw_version == "12.23.1020"
        assert info.psid == "LNV2190110032"
        assert info.running_version is None
        assert info.active_version == "12.23.1020"
        assert not info.activation_pending
        assert info.image_type == "FS3"
        assert "type=PXE" in info.fields["Rom Info"]

    def test_pending_activation(self):
        info = parse_flint_query(FLINT_PENDING)
        assert info.fw_version == "12.28.1002"
        assert info.running_version == "12.23.1020"
        assert info.active_version == "12.23.1020"
        assert info.activation_pending

    def test_running_only_output(self):
        info = parse_flint_query(FLINT_CX3)
        assert info.fw_version == "2.36.5000"
        assert info.device_id == "4099"
        assert not info.activation_pending

    def test_error_output(self):
        with pytest.raises(FlintParseError, match="Cannot open"):
            parse_flint_query("-E- Cannot open Device: 0000:99:00.0. No such file or directory\n")

    def test_missing_psid(self):
        with pytest.raises(FlintParseError, match="PSID"):
            parse_flint_query("FW Version:  1.2.3\n")


class TestFwManager:
    def test_seed_text(self):
        (device,) = parse_fwmanager_text(FWMANAGER_TEXT)
        assert device.device_type == "ConnectX4"
        assert device.part_number == "00MM962_Ax"
        assert device.psid == "LNV2190110032"
        assert device.fw_version == "12.23.1020"
        assert device.available_version == "12.28.1002"
        assert device.versions["UEFI"] == ("14.16.0017", "14.21.0016")
        assert device.status == "Update required"
        assert not device.activation_pending

    def test_narrowed_query_with_mst_name_matches(self):
        devices = parse_fwmanager_text(FWMANAGER_TEXT)
        assert find_device(devices, "0000:17:00.0") is devices[0]

    def test_running_row_and_na(self):
        devices = parse_fwmanager_text(FWMANAGER_TWO_DEVICES)
        first = find_device(devices, "65:00.0")
        assert first.psid == "LNV2190110032"
        assert first.running_version == "12.23.1020"
        assert first.available_version is None
        assert first.activation_pending
        assert first.status == "No matching image found"
        assert find_device(devices, "0000:b3:00.0").fw_version == "16.28.2006"
        assert find_device(devices, "0000:01:00.0") is None

    def test_xml(self):
        (device,) = parse_fwmanager_xml("Querying...\n" + FWMANAGER_XML)
        assert device.pci_name == "0000:65:00.0"
        assert device.psid == "LNV2190110032"
        assert device.fw_version == "12.23.1020"
        assert device.available_version == "12.28.1002"
        assert device.status == "Update required"
        assert parse_fwmanager(FWMANAGER_XML)[0].part_number == "00MM962_Ax"

    def test_xml_running(self):
        xml = FWMANAGER_XML.replace(
            '<FW current="12.23.1020" available="12.28.1002"/>',
            '<FW current="12.28.1002" available="N/A"/><FW_Running current="12.23.1020"/>',
        )
        (device,) = parse_fwmanager_xml(xml)
        assert device.activation_pending
        assert device.available_version is None

    @pytest.mark.parametrize(
        "text", ["", "<Devices><Device", "-E- No devices found\n", "nothing here\n"]
    )
    def test_bad_output(self, text):
        with pytest.raises(FwManagerParseError):
            parse_fwmanager(text)


class TestNvConfig:
    def test_columns_and_values(self):
        query = parse_nvconfig_query(NVCONFIG_E)
        assert query.device_type == "ConnectX4"
        assert query.columns == ("Default", "Current", "Next Boot")
        p2 = query.params["LINK_TYPE_P2"]
        assert p2.marked
        assert p2.get("Default") == NvValue("ETH(2)", "ETH", 2)
        assert p2.get("Current").label == "IB"
        assert p2.get("Next Boot").number == 1
        assert not query.params["LINK_TYPE_P1"].marked
        vfs = query.params["NUM_OF_VFS"]
        assert (vfs.get("Current").number, vfs.get("Next Boot").number) == (16, 8)

    def test_array_rows_are_kept_as_text(self):
        query = parse_nvconfig_query(NVCONFIG_E)
        assert query.params["ESWITCH_HAIRPIN_DESCRIPTORS"].get("Current").number is None

    def test_without_e_only_next_boot(self):
        header = "Configurations:" + " " * 30
        text = NVCONFIG_E.replace(
            header + "Default         Current         Next Boot", header + "Next Boot"
        ).replace("ETH(2)          IB(1)           IB(1)", "IB(1)")
        query = parse_nvconfig_query(text)
        assert query.columns == ("Next Boot",)
        assert query.params["LINK_TYPE_P2"].get("Next Boot").label == "IB"
        # Three-value rows do not fit one column: they are skipped, not misread.
        assert "LINK_TYPE_P1" not in query.params

    def test_value_equality(self):
        value = NvValue.parse("ETH(2)")
        assert value.equals(number=2)
        assert value.equals(label="eth")
        assert not value.equals(label="IB", number=1)
        assert NvValue.parse("_256KB(1)").label == "_256KB"

    def test_errors(self):
        with pytest.raises(NvConfigParseError, match="doesn't support"):
            parse_nvconfig_query("-E- The Device doesn't support LINK_TYPE_P3 parameter\n")
        with pytest.raises(NvConfigParseError, match="Configurations"):
            parse_nvconfig_query("Device #1:\n")


def test_nvconfig_wide_value_single_space():
    text = (
        "Configurations:                              Default         Current         Next Boot\n"
        "         PF_BAR2_SIZE                        SIZE_1234567890 SIZE_1234567890 "
        "SIZE_1234567890\n"
    )
    row = parse_nvconfig_query(text).params["PF_BAR2_SIZE"]
    assert row.get("Next Boot").raw == "SIZE_1234567890"
