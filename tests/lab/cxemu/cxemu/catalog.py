"""Static facts the cxfab lab emulator builds its devices from.

Device types, their configuration parameters (as the real mlxconfig database names them),
known firmware releases, cable EEPROM contents and the starting-state profiles used by
``cxemu-admin seed``. Values are taken from seed 000 (a Lenovo-OEM ConnectX-4 EDR card) and
the public mstflint sources; nothing here is read from hardware.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Param:
    """One mlxconfig parameter: name, kind and default value."""

    name: str
    kind: str  # "enum", "bool" or "int"
    default: int
    choices: dict[str, int] = field(default_factory=dict)  # enum names -> values
    maximum: int = 0xFFFF

    def render(self, value: int) -> str:
        """Format a value the way mlxconfig prints it: ``ETH(2)``, ``True(1)``, ``8``."""
        if self.kind == "bool":
            return f"{'True' if value else 'False'}({value})"
        if self.kind == "enum":
            for label, number in self.choices.items():
                if number == value:
                    return f"{label}({value})"
        return str(value)

    def parse(self, text: str) -> int:
        """Parse a value given on the command line; raise ValueError with mlxconfig's words."""
        raw = text.strip()
        if self.kind == "bool":
            lowered = raw.lower()
            if lowered in ("true", "1"):
                return 1
            if lowered in ("false", "0"):
                return 0
            raise ValueError("Cannot parse the value")
        if self.kind == "enum":
            for label, number in self.choices.items():
                if raw.upper() == label.upper():
                    return number
            if raw.isdigit() and int(raw) in self.choices.values():
                return int(raw)
            raise ValueError("Cannot parse the value")
        try:
            value = int(raw, 0)
        except ValueError:
            raise ValueError("Cannot parse the value") from None
        if value < 0 or value > self.maximum:
            raise ValueError(f"The value {raw} is not valid,  as its size is 16 bits")
        return value


_LINK_TYPE = {"IB": 1, "ETH": 2}
_LINK_TYPE_CX3 = {"IB": 1, "ETH": 2, "VPI": 3}
_PAYLOAD = {"AUTOMATIC": 0, "_4KB": 12}
_CQE = {"BALANCED": 0, "AGGRESSIVE": 1}
_BOOT = {"NONE": 0, "PXE": 1, "iSCSI": 2}

# Listed in the order a real ConnectX-4 query prints them.
CX4_PARAMS = (
    Param("NUM_OF_VFS", "int", 0, maximum=127),
    Param("FPP_EN", "bool", 1),
    Param("SRIOV_EN", "bool", 0),
    Param("PF_LOG_BAR_SIZE", "int", 5, maximum=31),
    Param("VF_LOG_BAR_SIZE", "int", 1, maximum=31),
    Param("NUM_PF_MSIX", "int", 63, maximum=2047),
    Param("NUM_VF_MSIX", "int", 11, maximum=2047),
    Param("INT_LOG_MAX_PAYLOAD_SIZE", "enum", 0, _PAYLOAD),
    Param("CQE_COMPRESSION", "enum", 0, _CQE),
    Param("LRO_LOG_TIMEOUT0", "int", 6, maximum=15),
    Param("LINK_TYPE_P1", "enum", 1, _LINK_TYPE),
    Param("KEEP_ETH_LINK_UP_P1", "bool", 1),
    Param("KEEP_IB_LINK_UP_P1", "bool", 0),
    Param("LINK_TYPE_P2", "enum", 1, _LINK_TYPE),
    Param("KEEP_ETH_LINK_UP_P2", "bool", 1),
    Param("KEEP_IB_LINK_UP_P2", "bool", 0),
    # PCIe tuning and ATS (nic-configuration-operator's pciPerformanceOptimized and
    # gpuDirectOptimized). Their defaults on a ConnectX-4 are UNCONFIRMED (no public
    # capture of this card prints them); a real query hides MAX_ACC_OUT_READ while
    # ADVANCED_PCI_SETTINGS is off, which the emulator does not reproduce.
    Param("ATS_ENABLED", "bool", 0),
    Param("ADVANCED_PCI_SETTINGS", "bool", 0),
    Param("MAX_ACC_OUT_READ", "int", 0, maximum=255),
    # Congestion control (DCQCN): defaults as public `mlxconfig -e q` captures of
    # ConnectX-4 Lx/5 print them (mask 255, CNP priority 6, CNP DSCP 48).
    Param("ROCE_CC_PRIO_MASK_P1", "int", 255, maximum=255),
    Param("ROCE_CC_PRIO_MASK_P2", "int", 255, maximum=255),
    Param("CNP_802P_PRIO_P1", "int", 6, maximum=7),
    Param("CNP_DSCP_P1", "int", 48, maximum=63),
    Param("CNP_802P_PRIO_P2", "int", 6, maximum=7),
    Param("CNP_DSCP_P2", "int", 48, maximum=63),
    Param("LLDP_NB_DCBX_P1", "bool", 0),
    Param("LLDP_NB_DCBX_P2", "bool", 0),
    Param("BOOT_OPTION_ROM_EN_P1", "bool", 1),
    Param("LEGACY_BOOT_PROTOCOL_P1", "enum", 1, _BOOT),
    Param("BOOT_OPTION_ROM_EN_P2", "bool", 1),
    Param("LEGACY_BOOT_PROTOCOL_P2", "enum", 1, _BOOT),
)

CX3_PARAMS = (
    Param("SRIOV_EN", "bool", 0),
    Param("NUM_OF_VFS", "int", 16, maximum=126),
    Param("LINK_TYPE_P1", "enum", 3, _LINK_TYPE_CX3),
    Param("LINK_TYPE_P2", "enum", 3, _LINK_TYPE_CX3),
    Param("LOG_BAR_SIZE", "int", 5, maximum=31),
    Param("BOOT_OPTION_ROM_EN_P1", "bool", 1),
)


@dataclass(frozen=True)
class DeviceType:
    """A ConnectX generation as the tools identify it."""

    name: str  # mlxfwmanager/mlxconfig "Device type"
    mst_prefix: str  # /dev/mst/<prefix>_pciconf0
    device_id: int  # flint "Device ID", also the mst number
    pci_id: str  # vendor:device as lspci shows it
    image_type: str  # flint "Image type"
    fwreset_supported: bool
    mlxconfig_supported: bool
    params: tuple[Param, ...]
    eth_speed: str
    ib_speed: str

    def param(self, name: str) -> Param | None:
        for candidate in self.params:
            if candidate.name == name:
                return candidate
        return None


DEVICE_TYPES = {
    "ConnectX4": DeviceType(
        name="ConnectX4",
        mst_prefix="mt4115",
        device_id=4115,
        pci_id="15b3:1013",
        image_type="FS3",
        fwreset_supported=True,
        mlxconfig_supported=True,
        params=CX4_PARAMS,
        eth_speed="100GbE",
        ib_speed="IB-EDR",
    ),
    # mstflint >= 4.26 dropped ConnectX-3 from mstconfig and mstfwreset never supported it:
    # the lab uses it for the "unsupported device" paths.
    "ConnectX3": DeviceType(
        name="ConnectX3",
        mst_prefix="mt4099",
        device_id=4099,
        pci_id="15b3:1003",
        image_type="FS2",
        fwreset_supported=False,
        mlxconfig_supported=False,
        params=CX3_PARAMS,
        eth_speed="40GbE",
        ib_speed="IB-FDR",
    ),
}


@dataclass(frozen=True)
class Release:
    """What a firmware release carries besides its number."""

    date: str  # flint prints day.month.year without padding
    pxe: str
    uefi: str


# The expansion ROMs shipped with each firmware release (seed 000 table).
RELEASES = {
    "12.23.1020": Release("26.7.2018", "3.5.0504", "14.16.0017"),
    "12.28.1002": Release("15.9.2020", "3.6.0101", "14.21.0016"),
    "12.28.2006": Release("12.11.2020", "3.6.0102", "14.21.0017"),
    "2.42.5000": Release("5.9.2017", "3.4.0752", ""),
}

CABLES = {
    "mellanox": {
        "identifier": "QSFP28 (11h)",
        "technology": "Copper cable unequalized (a0h)",
        "compliance": "100GBASE-CR4 or 25GBASE-CR CA-L, 40GBASE-CR4",
        "attenuation": (3, 4, 5, 7, 0),
        "oui": "0x0002c9",
        "vendor": "Mellanox",
        "part_number": "MCP1600-E002",
        "revision": "A2",
        "length_m": 2,
        "genuine": True,
    },
    # The third-party DAC of seed 000 that the ConnectX-4 refuses to link up with.
    "optcore": {
        "identifier": "QSFP28 (11h)",
        "technology": "Copper cable unequalized (a0h)",
        "compliance": "Unspecified",
        "attenuation": (4, 6, 8, 11, 0),
        "oui": "0xfc7ce7",
        "vendor": "OPTCORE",
        "part_number": "Q-100G-DAC-P2M",
        "revision": "5",
        "length_m": 2,
        "genuine": False,
    },
}

# Starting states for ``cxemu-admin seed``. ``config`` values are (current, next).
PROFILES = {
    "seed000": {
        "device_type": "ConnectX4",
        "part_number": "00MM962_Ax",
        "description": "ConnectX-4 EDR IB; dual-port QSFP28; PCIe3.0 x16",
        "psid": "LNV2190110032",
        "fw": "12.23.1020",
        "available": "12.28.1002",
        # one port in IB mode so that the port-type role has work to do
        "config": {"LINK_TYPE_P1": 2, "LINK_TYPE_P2": 1},
        "cables": ("mellanox", "mellanox"),
    },
    "mellanox-cx4": {
        "device_type": "ConnectX4",
        "part_number": "MCX456A-ECA_Ax",
        "description": (
            "ConnectX-4 VPI adapter card; EDR IB (100Gb/s) and 100GbE; dual-port QSFP28; "
            "PCIe3.0 x16; ROHS R6"
        ),
        "psid": "MT_2190110032",
        "fw": "12.28.2006",
        "available": "12.28.2006",
        "config": {"LINK_TYPE_P1": 2, "LINK_TYPE_P2": 2},
        "cables": ("mellanox", "mellanox"),
    },
    "cx3": {
        "device_type": "ConnectX3",
        "part_number": "MCX354A-FCB_A2-A5",
        "description": "ConnectX-3 VPI adapter card; dual-port QSFP; FDR IB (56Gb/s) and 40GigE",
        "psid": "MT_1090120019",
        "fw": "2.42.5000",
        "available": None,
        "config": {},
        "cables": ("mellanox", "mellanox"),
    },
}


def version_key(version: str) -> tuple[int, ...]:
    """Compare firmware versions numerically (never as strings)."""
    return tuple(int(part) for part in version.split("."))
