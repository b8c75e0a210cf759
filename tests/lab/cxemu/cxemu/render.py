"""Output formats of the emulated tools (cxfab lab emulator).

Column widths, labels and wording follow the real tools (mstflint 4.21 sources, MFT
outputs quoted in seed 000); the functions are pure: card dict in, text out.
"""

import time

from . import catalog
from .state import device_type, mst_name, port_protocol


def rom_version(version: str) -> str:
    """flint prints ROM versions without zero padding: 3.5.0504 -> 3.5.504."""
    return ".".join(str(int(part)) for part in version.split("."))


# ---------------------------------------------------------------- mstflint query
def flint_query(card: dict) -> str:
    kind = device_type(card)
    fw = card["firmware"]
    lines = [f"{'Image type:':<23}{kind.image_type}", f"{'FW Version:':<23}{fw['flash']}"]
    if fw["running"] != fw["flash"]:
        lines.append(f"{'FW Version(Running):':<23}{fw['running']}")
    release = catalog.RELEASES.get(fw["flash"])
    if release:
        lines.append(f"{'FW Release Date:':<23}{release.date}")
    if kind.image_type == "FS2":
        if fw["pxe"]:
            lines.append(f"{'Rom Info:':<23}type=PXE version={rom_version(fw['pxe'])}")
        lines.append(f"{'Device ID:':<23}{kind.device_id}")
        lines.append(f"{'Description:':<23}Node             Port1            Port2")
        guid = card["base_guid"]
        lines.append(f"{'GUIDs:':<23}{guid}    {guid[:-1]}1 {guid[:-1]}2")
        lines.append(f"{'MACs:':<23}{'':<21}{card['base_mac']}     {card['base_mac']}")
        lines.append(f"{'VSD:':<23}")
        lines.append(f"{'PSID:':<23}{card['psid']}")
        return "\n".join(lines) + "\n"
    lines.append(f"{'Product Version:':<23}{fw['flash']}")
    roms = []
    if fw["uefi"]:
        roms.append(f"type=UEFI version={rom_version(fw['uefi'])} cpu=AMD64")
    if fw["pxe"]:
        roms.append(f"type=PXE version={rom_version(fw['pxe'])} cpu=AMD64")
    for index, rom in enumerate(roms):
        lines.append(f"{'Rom Info:' if index == 0 else '':<23}{rom}")
    lines.append(f"{'Description:':<23}UID                GuidsNumber")
    lines.append(f"{'Base GUID:':<23}{card['base_guid']:<24}4")
    lines.append(f"{'Base MAC:':<23}{card['base_mac']:<24}4")
    lines.append(f"{'Image VSD:':<23}N/A")
    lines.append(f"{'Device VSD:':<23}N/A")
    lines.append(f"{'PSID:':<23}{card['psid']}")
    lines.append(f"{'Security Attributes:':<23}N/A")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- mstconfig / mlxconfig
def config_opening(card: dict, device_name: str, index: int = 1) -> str:
    lines = [
        "",
        f"Device #{index}:",
        "----------",
        "",
        f"{'Device type:':<16}{card['device_type']:<16}",
    ]
    if device_type(card).image_type != "FS2":  # 4th generation cards have no Name/Description
        lines.append(f"{'Name:':<16}{card['part_number']:<16}")
        lines.append(f"{'Description:':<16}{card['description']:<16}")
    lines.append(f"{'Device:':<16}{device_name:<16}")
    return "\n".join(lines) + "\n"


def config_header(show_default: bool, show_current: bool, show_new: bool) -> str:
    head = f"{'Configurations:':<16}"
    if show_default and show_current:
        head += f"{'Default':>36}{'Current':>16}{'Next Boot':>18}"
    elif show_default:
        head += f"{'Default':>36}{'Next Boot':>18}"
    elif show_current:
        head += f"{'Current':>36}{'Next Boot':>18}"
    else:
        head += f"{'Next Boot':>38}"
    if show_new:
        head += "       New"
    return head + "\n"


def config_row(
    param: catalog.Param,
    entry: dict,
    show_default: bool,
    show_current: bool,
    new_value: int | None = None,
) -> tuple[str, bool]:
    """One parameter line and whether it differs (the ``*`` marker)."""
    differs = (show_default and entry["next"] != entry["default"]) or (
        show_current and entry["next"] != entry["current"]
    )
    line = ("*        " if differs else "         ") + f"{param.name:<36}"
    columns = []
    if show_default:
        columns.append(entry["default"])
    if show_current:
        columns.append(entry["current"])
    columns.append(entry["next"])
    if new_value is not None:
        columns.append(new_value)
    previous_width = 0
    for value in columns:
        cell = f"{param.render(value):<16}"
        if previous_width > 16:
            line += " "
        line += cell
        previous_width = len(cell)
    return line + "\n", differs


# ---------------------------------------------------------------- mlxfwmanager
def fwmanager_status(card: dict, available: dict | None, force: bool = False) -> str:
    if not available:
        return "No matching image found"
    newer = catalog.version_key(available["fw"]) > catalog.version_key(card["firmware"]["flash"])
    if newer:
        return "Update required"
    return "Forced update required" if force else "Up to date"


def _rom_rows(card: dict, available: dict | None) -> list[tuple[str, str, str]]:
    rows = []
    for key, label in (("pxe", "PXE"), ("uefi", "UEFI")):
        current = card["firmware"][key] or "N/A"
        offered = (available or {}).get(key) or "N/A"
        if current != "N/A" or offered != "N/A":
            rows.append((label, current, offered))
    return rows


def fwmanager_text(
    index: int, card: dict, devname: str, available: dict | None, status: str
) -> str:
    out = [
        f"Device #{index}:",
        "----------",
        "",
        f"  Device Type:      {card['device_type']}",
        f"  Part Number:      {card['part_number']}",
        f"  Description:      {card['description']}",
        f"  PSID:             {card['psid']}",
        f"  PCI Device Name:  {devname}",
    ]
    if port_protocol(card, 0) == "IB":
        out.append(f"  Base GUID:        {card['base_guid']}")
    else:
        out.append(f"  Base MAC:         {card['base_mac']}")
    offered_fw = available["fw"] if available else "N/A"
    out.append(f"  Versions:         {'Current':<14} {'Available':<14}")
    out.append(f"     FW             {card['firmware']['flash']:<14} {offered_fw:<14}")
    for label, current, offered in _rom_rows(card, available):
        out.append(f"     {label:<12}   {current:<14} {offered:<14}")
    out += ["", f"  Status:           {status}", "", ""]
    return "\n".join(out)


def fwmanager_xml_device(card: dict, devname: str, available: dict | None, status: str) -> str:
    offered_fw = available["fw"] if available else "N/A"
    description = card["description"]
    for char in "\"&'<>":  # mlxfwmanager strips these instead of escaping them
        description = description.replace(char, "")
    out = [
        f'    <Device pciName="{devname}" type="{card["device_type"]}" psid="{card["psid"]}" '
        f'partNumber="{card["part_number"]}">',
        "      <Versions>",
        f'        <FW current="{card["firmware"]["flash"]}" available="{offered_fw}"/>',
    ]
    for label, current, offered in _rom_rows(card, available):
        out.append(f'        <{label} current="{current}" available="{offered}"/>')
    out.append("      </Versions>")
    if port_protocol(card, 0) == "IB":
        out.append(f'      <GUIDs Base_Guid="{card["base_guid"]}" />')
    else:
        out.append(f'      <MACs Base_Mac="{card["base_mac"]}" />')
    out.append(f"      <Status>{status}</Status>")
    out.append(f"      <Description>{description}</Description>")
    out.append("    </Device>")
    return "\n".join(out)


# ---------------------------------------------------------------- mlxlink
_ETH_SPEEDS = "0xfafc0003 (100G,50G,25G,1G)"
_IB_SPEEDS = "0x0000003f (EDR,FDR,FDR10,QDR,DDR,SDR)"
_CABLE_SPEEDS = "0xf8f1f1d3 (100G,56G,50G,40G,25G,10G,1G)"


def _speed_label(mask: str) -> str:
    names = {"0xfafc0003": "(100G,50G,25G,1G)", "0xf8fc0000": "(100G,50G,25G)"}
    return f"{mask} {names.get(mask, '')}".rstrip()


def link_state(card: dict, port: int, carrier: bool | None) -> str:
    """``up``, ``unplugged``, ``wrong_module`` or ``down`` for one port."""
    state = card["ports"][port]
    cable = state.get("cable")
    if not cable:
        return "unplugged"
    if not catalog.CABLES[cable]["genuine"]:
        return "wrong_module"
    if state.get("link") == "down" or carrier is False:
        return "down"
    return "up"


def _module_info(card: dict, port: int) -> dict:
    """Module Info (``-m``): the cable EEPROM as mlxlink decodes it (PDDR module page)."""
    name = card["ports"][port].get("cable")
    if not name:
        return {"Identifier": "N/A", "Vendor Name": "N/A", "Vendor Part Number": "N/A"}
    cable = catalog.CABLES[name]
    return {
        "Identifier": cable["identifier"].split(" (")[0],
        "Compliance": cable["compliance"],
        "Cable Technology": cable["technology"].split(" (")[0],
        "Cable Type": "Passive copper cable",
        "OUI": cable["vendor"] if cable["genuine"] else "Other",
        "Vendor Name": cable["vendor"],
        "Vendor Part Number": cable["part_number"],
        "Vendor Serial Number": cable_serial(card, port),
        "Rev": cable["revision"],
        "Wavelength [nm]": "N/A",
        "Transfer Distance [m]": str(cable["length_m"]),
        "Attenuation (5g,7g,12g) [dB]": ",".join(str(db) for db in cable["attenuation"][1:4]),
        "FW Version": "N/A",
        "Digital Diagnostic Monitoring": "No",
        "Power Class": "N/A",
        "CDR RX": "N/A",
        "CDR TX": "N/A",
        "LOS Alarm": "N/A",
        "Temperature [C]": "N/A",
    }


def _ber_rows(card: dict, port: int, up: bool, flavour: str, protocol: str) -> dict:
    """Physical Counters and BER Info, in the row order of the tool that prints it.

    MFT 4.15 (seed 000): Effective errors, Effective BER, Raw BER, Raw errors per lane.
    mstflint 4.21-4.26 (prepareBerInfoEDR): per-lane errors second, and a Link Down
    Counter row only on an InfiniBand port.
    """
    if up:
        minutes = max(0.0, (time.time() - card.get("counters_cleared_at", time.time())) / 60)
        values = {
            "Time Since Last Clear [Min]": f"{minutes:.1f}",
            "Effective Physical Errors": "0",
            "Effective Physical BER": "15E-255",
            "Raw Physical BER": "15E-255",
            "Raw Physical Errors Per Lane": "0,0,0,0",
        }
    else:
        values = dict.fromkeys(
            (
                "Time Since Last Clear [Min]",
                "Effective Physical Errors",
                "Effective Physical BER",
                "Raw Physical BER",
                "Raw Physical Errors Per Lane",
            ),
            "N/A",
        )
    if flavour == "mft":
        return values
    order = (
        "Time Since Last Clear [Min]",
        "Effective Physical Errors",
        "Raw Physical Errors Per Lane",
        "Effective Physical BER",
        "Raw Physical BER",
    )
    rows = {name: values[name] for name in order}
    if protocol == "IB":
        downs = card["ports"][port].get("link_down_events", 0)
        rows["Link Down Counter"] = str(downs) if up else "N/A"
    return rows


_GREEN, _RED, _RESET = "\x1b[32m", "\x1b[31m", "\x1b[0m"


def mlxlink(
    card: dict,
    port: int,
    carrier: bool | None,
    counters: bool,
    module: bool = False,
    flavour: str = "mft",
) -> str:
    """``mlxlink`` (flavour ``mft``, MFT 4.15 as in seed 000) or ``mstlink`` (``mstflint``:
    the same sections, values in ANSI colours, the mstflint BER row order)."""
    kind = device_type(card)
    protocol = port_protocol(card, port)
    state = link_state(card, port, carrier)
    cable_speeds = _CABLE_SPEEDS if card["ports"][port].get("cable") else "N/A"
    enabled = (
        _IB_SPEEDS if protocol == "IB" else _speed_label(card["ports"][port]["eth_enabled_speeds"])
    )
    if protocol == "IB":
        cable_speeds = _IB_SPEEDS if card["ports"][port].get("cable") else "N/A"
    up = state == "up"
    if up:
        operational = {
            "State": "Active",
            "Physical state": "LinkUp",
            "Speed": kind.ib_speed if protocol == "IB" else kind.eth_speed,
            "Width": "4x",
            "FEC": (
                "Standard LL RS-FEC - RS(271,257)"
                if protocol == "IB"
                else "Standard RS-FEC - RS(528,514)"
            ),
            "Loopback Mode": "No Loopback",
            "Auto Negotiation": "ON",
        }
    else:
        operational = {
            "State": "Disable" if state == "wrong_module" else "Polling",
            "Physical state": "Polling" if protocol == "IB" else "ETH_AN_FSM_ENABLE",
            "Speed": "N/A",
            "Width": "N/A",
            "FEC": "N/A",
            "Loopback Mode": "N/A",
            "Auto Negotiation": "ON",
        }
    trouble = {
        "up": ("0", "N/A", "No issue was observed."),
        "down": ("2", "PHY FW", "Negotiation failure."),
        "unplugged": ("1024", "MNG FW", "Cable is unplugged."),
        "wrong_module": (
            "1036",
            "MNG FW",
            "Connected wrong module type. Change to a different module type.",
        ),
    }[state]
    sections = [
        ("Operational Info", operational, True),
        (
            "Supported Info",
            {"Enabled Link Speed": enabled, "Supported Cable Speed": cable_speeds},
            True,
        ),
        (
            "Troubleshooting Info",
            {"Status Opcode": trouble[0], "Group Opcode": trouble[1], "Recommendation": trouble[2]},
            True,
        ),
    ]
    if module:
        sections.append(("Module Info", _module_info(card, port), False))
    if counters:
        rows = _ber_rows(card, port, up, flavour, protocol)
        sections.append(("Physical Counters and BER Info", rows, False))
    colour = _GREEN if up else _RED
    out = [""]
    for title, fields, coloured in sections:
        out += [title, "-" * len(title)]
        for name, value in fields.items():
            if flavour == "mstflint" and coloured:
                value = f"{colour}{value}{_RESET}"
            out.append(f"{name:<32}: {value}")
        out.append("")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- mlxcables
def cable_name(card: dict, port: int) -> str:
    return f"{mst_name(card, port).rsplit('/', 1)[-1]}_cable_{port}"


def cable_serial(card: dict, port: int) -> str:
    cable = catalog.CABLES[card["ports"][port]["cable"]]
    return ("MT" if cable["genuine"] else "OC") + card["base_mac"][-6:].upper() + f"{port:02d}"


def mlxcables_block(index: int, card: dict, port: int) -> str:
    cable = catalog.CABLES[card["ports"][port]["cable"]]
    serial = cable_serial(card, port)
    freqs = ("2.5GHz", "5.0GHz", "7.0GHz", "12.9GHz", "25.78GHz")
    attenuation = [
        f"{freq + ':':<10}{db}dB" for freq, db in zip(freqs, cable["attenuation"], strict=True)
    ]
    lines = [
        f"Cable #{index}:",
        "---------",
        f"Cable name    : {cable_name(card, port)}",
        ">> No FW data to show",
        "-------- Cable EEPROM --------",
        f"Identifier    : {cable['identifier']}",
        f"Technology    : {cable['technology']}",
        f"Compliance    : {cable['compliance']}",
        f"Attenuation   : {attenuation[0]}",
        *[f"                {row}" for row in attenuation[1:]],
        f"OUI           : {cable['oui']}",
        f"Vendor        : {cable['vendor']}",
        f"Serial number : {serial}",
        f"Part number   : {cable['part_number']}",
        f"Revision      : {cable['revision']}",
        "Temperature   : N/A",
        f"Length        : {cable['length_m']} m",
        "",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- mlnx_qos
def format_rate(kbps: int) -> str:
    if kbps <= 0:
        return "unlimited"
    return f"{kbps / 1000 / 1000:.1f} Gbps"


def dscp2prio() -> list[str]:
    """The `dscp2prio mapping:` block mlnx_qos prints under trust dscp: the mlx5 default
    map (priority = DSCP / 8), each priority's DSCPs highest first, as in the capture
    att/netarbiter nvmf/OUTPUTSAMPLE.setup-nic-lossless-layer3.sh.md."""
    lines = ["dscp2prio mapping:"]
    for prio in range(8):
        dscps = "".join(f"{dscp:02d}," for dscp in range(prio * 8 + 7, prio * 8 - 1, -1))
        lines.append(f"\tprio:{prio} dscp:{dscps}")
    return lines


def qos(state: dict, show_all: bool) -> str:
    out = [
        "DCBX mode: OS controlled",
        f"Priority trust state: {state['trust']}",
        *(dscp2prio() if state["trust"] == "dscp" else []),
        f"Cable len: {state['cable_len']}",
        "PFC configuration:",
        "\tpriority    0   1   2   3   4   5   6   7",
        "\tenabled     " + "".join(f"{flag:1d}   " for flag in state["pfc"]),
    ]
    tc_to_prios: dict[int, list[int]] = {tc: [] for tc in range(8)} if show_all else {}
    for priority, tc in enumerate(state["prio_tc"]):
        tc_to_prios.setdefault(tc, []).append(priority)
    for tc in sorted(tc_to_prios):
        tsa = state["tsa"][tc]
        line = f"tc: {tc} ratelimit: {format_rate(state['ratelimit_kbps'][tc])}, tsa: "
        line += f"ets, bw: {state['tcbw'][tc]}%" if tsa == "ets" else tsa
        out.append(line)
        out += [f"\t priority:  {priority}" for priority in tc_to_prios[tc]]
    return "\n".join(out) + "\n"
