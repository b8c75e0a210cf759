"""The Onyx (MLNX-OS) driver: the switch seam over one netmiko session.

Onyx has no candidate config or commit-confirm: a change is lines sent in
order (the first `%` stops the batch) and a revert is the inverse plan from the
snapshot, built by the same planner (plan.make_plan, restore=True). The
statements the planner compares come from parser.py; the shows are asked as
text or `| json-print` by release (shows.py) and judged by health.py.
"""

from __future__ import annotations

from ...common.addressing import same_subnet
from ..driver import (
    ChangeRefused,
    HealthReading,
    RunningConfig,
    Staged,
    SwitchDriver,
    UntrustedSwitch,
)
from . import health, shows
from .parser import ParsedConfig, parse_running_config
from .plan import SECTIONS, Scope, make_plan, only_sections
from .readerror import ReadError, unreadable
from .session import HostKeyError, OnyxSession, SessionError
from .version import VersionError, release_from_show_version

RUNNING = "show running-config"


class OnyxDriver(SwitchDriver):
    SECTIONS = SECTIONS

    def __init__(self, name: str, structured: dict, session: OnyxSession | None = None):
        super().__init__(name, structured)
        self.session = session
        if session is not None:
            self.unreachable = None

    # ---------------------------------------------------------------- session
    def open(self, username, password, known_hosts, check_host_key=True) -> None:
        management = self.structured["management"]
        try:
            session = OnyxSession(
                management["address"], management["port"], username, password,
                known_hosts=known_hosts, check_host_key=check_host_key,
            )  # fmt: skip
            session.open()
        except HostKeyError as exc:
            raise UntrustedSwitch(str(exc)) from None
        except SessionError as exc:
            self.unreachable = str(exc)
            return
        self.session, self.unreachable = session, None
        # known_hosts lines Paramiko cannot use, each with its file:line.
        self.notes = list(session.known_hosts_notes)
        text, error = session.try_show("show version")
        try:
            self.release = release_from_show_version(text or "")
        except VersionError as exc:
            # Reads then go as text (the oldest layouts are read too); the record says why.
            self.release, self.release_error = None, error or str(exc)

    def close(self) -> None:
        if self.session:
            self.session.close()

    # ---------------------------------------------------------------- reads
    def read_shows(self, names: list[str]) -> tuple[dict, dict]:
        """({show name: output or None}, {show name: error})."""
        outputs, errors = {}, {}
        for name in names:
            if self.session is None:
                outputs[name], errors[name] = None, self.unreachable or "no session"
                continue
            outputs[name], error = self.session.try_show(shows.show_command(name, self.release))
            if error:
                errors[name] = error
        return outputs, errors

    def _parsed_running(self) -> tuple[str, ParsedConfig]:
        """Every release prints `## Running database "<name>"` first: a reply without it
        was cut or is something else, and a plan, snapshot or revert target built on it
        would treat the switch as blank."""
        text = self.session.show(RUNNING)
        parsed = parse_running_config(text)
        if "running database" not in parsed.header:
            error = unreadable(
                RUNNING, text, "no `## Running database` header (empty or cut reply)"
            )
            raise SessionError(f"{self.name}: {error}")
        return text, parsed

    def read_config(self) -> RunningConfig:
        return _config(*self._parsed_running())

    def mlag_state(self, config: RunningConfig) -> dict:
        names = ["mlag"] + (["mlag_vip"] if ("mlag_vip",) in config.statements else [])
        outputs, errors = self.read_shows(names)
        if errors:
            return {"read_errors": [errors[name] for name in errors]}
        state: dict = {"read_errors": [], "vip": None}
        for name in names:
            try:
                parsed = shows.parse(name, outputs[name], self.release)
            except ReadError as exc:
                said = f"release {self.release or 'unknown'}"
                part = "mlag" if name == "mlag" else "vip"
                state[part] = str(exc) + ("" if said in str(exc) else f" ({said})")
                continue
            if name == "mlag":
                state["mlag"] = {
                    "oper": parsed["oper"],
                    "ipl_up": any(row["state"] == "Up" for row in parsed["ipls"]),
                    "system_mac": parsed["system_mac_raw"],
                    "mismatched": parsed["mismatched"],
                }
            else:
                state["vip"] = {
                    "active_nodes": parsed["active_nodes"],
                    "states": [node["state"] for node in parsed["nodes"]],
                }
        return state

    def unsaved_changes(self) -> bool | None:
        """`show configuration files` read for the release; raises on an unreadable reply."""
        text = self.session.show(shows.show_command("files", self.release))
        try:
            return shows.parse("files", text, self.release)["unsaved"]
        except ReadError as exc:
            raise SessionError(f"{self.name}: {exc}") from None

    def health(self) -> HealthReading:
        outputs, errors = self.read_shows(health.needed_shows(self.structured))
        checks = health.switch_checks(self.structured, outputs, errors, self.release)
        return HealthReading(self.name, self.structured, checks, (outputs, self.release))

    def pair_checks(self, readings: list[HealthReading]) -> list[dict]:
        structures = {reading.switch: reading.structured for reading in readings}
        outputs = {reading.switch: reading.private[0] for reading in readings}
        releases = {reading.switch: reading.private[1] for reading in readings}
        return health.pair_checks(self.structured["pair"], structures, outputs, releases)

    # ---------------------------------------------------------------- changes
    def stage(self, intended_text: str, sections: tuple, current: RunningConfig) -> Staged:
        intended = parse_running_config(intended_text)
        if intended.unknown:
            raise ChangeRefused(
                "intended config has lines cxfab cannot compare: " + "; ".join(intended.unknown[:5])
            )
        ipl_vlans = _ipl_vlans(self.structured, current)
        intended = only_sections(intended, sections, ipl_vlans)
        scope = Scope.from_structured(self.structured)
        parsed = _parsed(current)
        plan = make_plan(intended, only_sections(parsed, sections, ipl_vlans), scope)
        _guard(plan, parsed, self.structured["management"]["address"])
        staged = Staged(plan.lines, plan.warnings, plan.before, plan.after)
        staged.private = (intended, sections, ipl_vlans, scope)
        return staged

    def commit(self, staged: Staged) -> list[str]:
        intended, sections, ipl_vlans, scope = staged.private
        self.session.configure(staged.lines)
        now = only_sections(self._parsed_running()[1], sections, ipl_vlans)
        return make_plan(intended, now, scope).lines

    def revert(self, snapshot: RunningConfig) -> tuple[list[str], str | None]:
        target = parse_running_config(snapshot.text)
        lines: list[str] = []
        try:
            now = self._parsed_running()[1]
            plan = make_plan(target, now, Scope.all(), restore=True)
            # Lines cxfab does not parse but a removal took with it: the switch's own text.
            lines = plan.lines + [line for line in target.unknown if line not in now.unknown]
            if lines:
                self.session.configure(lines)
        except SessionError as exc:
            return lines, str(exc)
        return lines, None

    def save(self) -> None:
        self.session.save()


def _config(text: str, parsed: ParsedConfig) -> RunningConfig:
    runs_mlag = ("protocol", "mlag") in parsed.statements
    return RunningConfig(text, parsed.statements, parsed.unknown, runs_mlag, private=parsed)


def _parsed(config: RunningConfig) -> ParsedConfig:
    """What the planner compares: the parse made when the config was read."""
    return config.private if config.private is not None else parse_running_config(config.text)


def _guard(plan, current: ParsedConfig, address: str) -> None:
    """Refuse to touch the SVI whose subnet holds the management connection."""
    for key, statement in current.statements.items():
        if key[0] != "svi_ip" or not same_subnet(statement.value, address):
            continue
        vlan = key[1]
        touched = [st for st in plan.removals if st.key in (("svi", vlan), ("svi_ip", vlan))]
        touched += [st for st in plan.additions if st.key == ("svi_ip", vlan)]
        if touched:
            raise ChangeRefused(
                f"interface vlan {vlan} carries the management connection to {address}; "
                "cxfab does not change or remove it",
                plan.lines,
            )


def _ipl_vlans(structured: dict, current: RunningConfig) -> set:
    vlans = {key[1] for key in current.statements if key[0] == "svi_ipl_peer"}
    if structured.get("mlag"):
        vlans.add(structured["mlag"]["peer_link"]["vlan"])
    return vlans
