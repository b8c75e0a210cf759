"""Read the link, cable and card health of a host's ConnectX adapters (one call per host).

Per adapter (`nics` of the host's intent): the PCIe link current vs capable
(sysfs), the ASIC temperature where something reports it (hwmon, or `mget_temp`),
and every mlxconfig parameter the intent pins (`LINK_TYPE_P<n>` from the ports,
plus `nv_config`), Current and Next Boot. Per port: `mlxlink`/`mstlink` (state,
speed, FEC, troubleshooting opcode, BER and counters, module), the cable identity
(mlxlink's Module Info, else `mlxcables`), `carrier_changes`, the bond's link
failure count of a member port and the `ethtool -S` error/discard/pause/link-down
counters.

Phase `start` reads only what moves (counters), phase `end` reads everything; the
checks compare the two. Nothing here judges: every read either gives a value or
an `error` naming the command and its output, and the checks fail on errors.
"""

from __future__ import annotations

import glob
import os
import re

from ..net import read_text as _read
from . import tools
from .mlxcables import MlxcablesParseError, parse_mlxcables
from .mlxlink import LinkReport, MlxlinkParseError, parse_mlxlink
from .nicstats import EthtoolParseError, health_counters, parse_ethtool_stats
from .nv_params import matches
from .nvconfig import NvConfigParseError, parse_nvconfig_query
from .pcie import PcieReadError, read_link
from .runner import Runner

PHASES = ("start", "end")
LINK_CANDIDATES = ("mlxlink", "mstlink")
CABLES_CANDIDATES = ("mlxcables",)
# MFT names it mget_temp, mstflint (4.31 and later) mstmget_temp.
TEMP_CANDIDATES = ("mget_temp", "mstmget_temp")
ETHTOOL_CANDIDATES = ("ethtool",)
_PARAM_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
# ethtool's own words for a driver without statistics (not a read failure).
NO_STATS = "no stats available"


class HealthInputError(ValueError):
    """A NIC entry of the intent is not usable; the message names its path."""


def port_function(pci: str, port: int) -> str:
    """PCI function of a port: ConnectX exposes port N as function N-1 of the first one."""
    return f"{pci[:-1]}{port - 1}"


def pinned_parameters(nic: dict, where: str) -> dict[str, str]:
    """{PARAM: desired} the intent pins: LINK_TYPE_P<n> of each port, then `nv_config`."""
    pins: dict[str, str] = {}
    for index, port in enumerate(nic.get("ports") or []):
        link_type = port.get("link_type")
        if link_type:
            pins[f"LINK_TYPE_P{port['port']}"] = str(link_type).upper()
        elif not isinstance(port.get("port"), int):
            raise HealthInputError(f"{where}.ports[{index}].port: expected a port number")
    extra = nic.get("nv_config") or {}
    if not isinstance(extra, dict):
        raise HealthInputError(f"{where}.nv_config: expected a mapping PARAM: value")
    for name, value in extra.items():
        if not _PARAM_RE.match(str(name)):
            raise HealthInputError(f"{where}.nv_config.{name}: not an mlxconfig parameter name")
        if isinstance(value, bool):
            value = "True" if value else "False"
        pins[str(name)] = str(value)
    return pins


def _failure(argv: list[str], rc: int, out: str, err: str) -> str:
    detail = (err.strip() or out.strip() or "no output").splitlines()
    return f"`{' '.join(argv)}` failed (rc={rc}): {' | '.join(detail[:3])}"


class HealthReader:
    """Runs the reads of one host; `tools_found` maps a role to a path or None."""

    def __init__(self, runner: Runner, tools_found: dict[str, str | None], root: str = "/"):
        self.run, self.tools, self.root = runner, tools_found, root

    # ------------------------------------------------------------ sysfs
    def sysfs(self, *parts: str) -> str:
        return os.path.join(self.root, "sys", *parts)

    def carrier_changes(self, netdev: str) -> dict:
        path = self.sysfs("class", "net", netdev, "carrier_changes")
        text = _read(path)
        if text is None or not text.isdigit():
            return {"carrier_error": f"{path}: unreadable ({text!r})"}
        return {"carrier_changes": int(text)}

    def bond_link_failures(self, netdev: str) -> dict:
        """The bond's `Link Failure Count` of a member port: the bond counts every time it
        saw the port go down, an administrative down included (which a virtio or other
        driver that keeps its carrier does not count in carrier_changes)."""
        master = self.sysfs("class", "net", netdev, "master")
        if not os.path.islink(master):
            return {}
        bond = os.path.basename(os.path.realpath(master))
        text = _read(os.path.join(self.root, "proc", "net", "bonding", bond))
        if text is None:
            return {}  # the master is no bond (a bridge, a VRF)
        for block in re.split(r"^Slave Interface:\s*", text, flags=re.M)[1:]:
            name, _, rest = block.partition("\n")
            if name.strip() == netdev:
                count = re.search(r"^Link Failure Count: (\d+)", rest, re.M)
                return {"bond": bond, "bond_link_failures": int(count.group(1))} if count else {}
        return {}

    def pcie(self, pci: str) -> dict:
        device = self.sysfs("bus", "pci", "devices", pci)
        if not os.path.isdir(device):
            return {"error": f"{device}: no such PCI device"}
        if _read(os.path.join(device, "current_link_speed")) is None:
            return {"absent": f"the kernel shows no PCIe link for {pci} (not a PCIe device)"}
        try:
            return read_link(device).as_dict()
        except PcieReadError as exc:
            return {"error": str(exc)}

    def temperature(self, pci: str) -> dict:
        """ASIC temperature: hwmon of the PCI function, else `mget_temp -d <pci>`."""
        pattern = self.sysfs("bus", "pci", "devices", pci, "hwmon", "hwmon*", "temp1_input")
        for path in sorted(glob.glob(pattern)):
            text = _read(path)
            if text and text.lstrip("-").isdigit():
                return {"celsius": int(text) / 1000.0, "source": "hwmon temp1_input"}
        tool = self.tools.get("temp")
        if not tool:
            return {"absent": "no hwmon sensor and no mget_temp"}
        argv = [tool, "-d", pci]
        rc, out, err = self.run(argv)
        value = out.strip().split()[0] if out.strip() else ""
        if rc != 0 or not value.lstrip("-").isdigit():
            return {"error": _failure(argv, rc, out, err)}
        return {"celsius": float(value), "source": os.path.basename(tool)}

    # ------------------------------------------------------------ tools
    def link(self, function: str, full: bool) -> dict:
        tool = self.tools.get("link")
        if not tool:
            return {"absent": "neither mlxlink (MFT) nor mstlink (mstflint) is installed"}
        argv = [tool, "-d", function, *(["-m"] if full else []), "-c"]
        rc, out, err = self.run(argv)
        if rc != 0:
            return {"error": _failure(argv, rc, out, err)}
        try:
            report = parse_mlxlink(out, command=" ".join(argv))
        except MlxlinkParseError as exc:
            return {"error": str(exc)}
        return link_dict(report)

    def cables(self) -> tuple[list, str]:
        tool = self.tools.get("cables")
        if not tool:
            return [], "mlxcables is not installed"
        rc, out, err = self.run([tool])
        if rc != 0:
            return [], _failure([tool], rc, out, err)
        try:
            return parse_mlxcables(out, command=tool), ""
        except MlxcablesParseError as exc:
            return [], str(exc)

    def counters(self, netdev: str) -> dict:
        tool = self.tools.get("ethtool")
        if not tool:
            return {"counters_absent": "ethtool is not installed"}
        argv = [tool, "-S", netdev]
        rc, out, err = self.run(argv)
        if NO_STATS in (out + err).lower():
            return {"counters_absent": f"{netdev}: the driver has no statistics"}
        if rc != 0:
            return {"counters_error": _failure(argv, rc, out, err)}
        try:
            return {"counters": health_counters(parse_ethtool_stats(out, " ".join(argv)))}
        except EthtoolParseError as exc:
            return {"counters_error": str(exc)}

    def config(self, pci: str, pins: dict[str, str]) -> dict:
        if not pins:
            return {}
        tool = self.tools.get("config")
        if not tool:
            return {"error": "no mstconfig/mlxconfig installed to read " + ", ".join(pins)}
        argv = tools.config_query(tool, pci, [])
        rc, out, err = self.run(argv)
        if rc != 0:
            return {"error": _failure(argv, rc, out, err)}
        try:
            query = parse_nvconfig_query(out)
        except NvConfigParseError as exc:
            return {"error": f"`{' '.join(argv)}`: {exc}"}
        params = {}
        for name, desired in pins.items():
            param = query.params.get(name)
            if param is None:
                params[name] = {"desired": desired, "supported": False}
                continue
            entry = {"desired": desired, "supported": True}
            for column, key in (("Current", "current"), ("Next Boot", "next_boot")):
                value = param.get(column)
                entry[key] = value.raw if value else None
                entry[f"{key}_ok"] = matches(value, desired)
            params[name] = entry
        return {"params": params}


def link_dict(report: LinkReport) -> dict:
    module = report.module
    return {
        "state": report.state,
        "up": report.up,
        "physical_state": report.physical_state,
        "speed": report.speed,
        "width": report.width,
        "fec": report.fec,
        "enabled_speeds": report.enabled_speeds,
        "cable_speeds": report.cable_speeds,
        "opcode": report.opcode,
        "group": report.group,
        "recommendation": report.recommendation,
        "cause": report.cause(),
        "effective_errors": report.effective_errors,
        "effective_ber": report.effective_ber,
        "raw_ber": report.raw_ber,
        "raw_errors_per_lane": list(report.raw_errors_per_lane),
        "link_down_counter": report.link_down_counter,
        "module": None if module is None else dict(module.__dict__),
    }


def _metres(length: str | None) -> str | None:
    """mlxlink's `Transfer Distance [m]` is a bare number; mlxcables says `2 m`."""
    return f"{length} m" if length and length.replace(".", "", 1).isdigit() else length


def _cable_from(link: dict, cables: list, port: int) -> dict:
    module = link.get("module") or {}
    if module.get("vendor") or module.get("part_number"):
        return {
            "vendor": module.get("vendor"),
            "part_number": module.get("part_number"),
            "type": module.get("cable_type") or module.get("technology"),
            "length": _metres(module.get("length")),
            "compliance": module.get("compliance"),
            "source": "mlxlink Module Info",
        }
    matches = [cable for cable in cables if cable.port_index == port - 1]
    if len(matches) != 1:
        return {}
    cable = matches[0]
    return {
        "vendor": cable.vendor,
        "part_number": cable.part_number,
        "type": cable.technology or cable.identifier,
        "length": cable.length,
        "compliance": cable.compliance,
        "source": f"mlxcables {cable.name}",
    }


def gather(nics: list[dict], phase: str, reader: HealthReader) -> dict:
    """The snapshot of one host in one phase: {phase, nics: {name: {...}}}."""
    if phase not in PHASES:
        raise HealthInputError(f"phase: {phase!r} is not one of {', '.join(PHASES)}")
    full = phase == "end"
    cable_list, cable_error = reader.cables() if full else ([], "")
    snapshot: dict = {"phase": phase, "nics": {}}
    for index, nic in enumerate(nics):
        where = f"nics[{index}]"
        if not isinstance(nic, dict) or not nic.get("name") or not nic.get("pci"):
            raise HealthInputError(f"{where}: needs name and pci")
        entry: dict = {"pci": nic["pci"], "ports": {}}
        if full:
            entry["pcie"] = reader.pcie(nic["pci"])
            entry["temperature"] = reader.temperature(nic["pci"])
            entry["config"] = reader.config(nic["pci"], pinned_parameters(nic, where))
        for port in nic.get("ports") or []:
            function = port_function(nic["pci"], int(port["port"]))
            data = {"netdev": port["netdev"], "function": function}
            data.update(reader.carrier_changes(port["netdev"]))
            data.update(reader.bond_link_failures(port["netdev"]))
            data.update(reader.counters(port["netdev"]))
            data["link"] = reader.link(function, full)
            if full:
                data["cable"] = _cable_from(data["link"], cable_list, int(port["port"]))
                if not data["cable"] and cable_error:
                    data["cable_error"] = cable_error
            entry["ports"][str(port["port"])] = data
        snapshot["nics"][nic["name"]] = entry
    return snapshot


def find_tools(find, configured: dict[str, str | None]) -> dict[str, str | None]:
    """Each tool role -> its path or None (all optional: a missing one is reported, not fatal)."""
    candidates = {
        "link": LINK_CANDIDATES,
        "cables": CABLES_CANDIDATES,
        "config": tools.CONFIG_CANDIDATES,
        "ethtool": ETHTOOL_CANDIDATES,
        "temp": TEMP_CANDIDATES,
    }
    return {
        role: tools.find_optional(configured.get(role), names, find)
        for role, names in candidates.items()
    }
