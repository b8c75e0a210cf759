"""Deploy one switch pair: a gate, then a transaction per peer, one session per switch.

For the peers to change, in pair order:

  gate      the partner must be reachable, readable and - when this switch
            already runs MLAG with it - in a healthy MLAG (Up, IPL Up, same
            system MAC, both VIP nodes). Otherwise nothing is sent, unless
            `repair` (bringing a dead pair back) is set.
  plan      intended vs parsed running-config (plan.make_plan), limited to
            the selected sections (tags).
  snapshot  the full running-config, unredacted, mode 0600, in a directory
            outside any git work tree.
  send      line by line; the first `%` stops the batch.
  converge  read back: nothing of the plan may be left.
  health    the pair's checks (scope: see _post_scope) must pass within `wait`.
  save      `configuration write`, only now, then `Unsaved changes: no` is read.
  revert    on a refused line, a failed read-back or failed health: the
            inverse plan from the snapshot (same planner, teardown order, every
            object in scope), read back, and the proof that the running-config
            equals the snapshot statement for statement. The run fails with
            the refused line, the switch's message, what was reverted and the proof.

The partner of a peer whose change failed is never touched: the run stops.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from ..secrets import REDACTED
from . import health, shows
from .parser import ParsedConfig, parse_running_config
from .plan import SECTIONS, Scope, make_plan, only_sections
from .readerror import ReadError, unreadable
from .session import HostKeyError, OnyxSession, SessionError
from .version import VersionError, release_from_show_version

RUNNING = "show running-config"


class DeployError(RuntimeError):
    """The run stops; the message says why and what state each switch is in."""

    def __init__(self, message: str, record: dict | None = None):
        super().__init__(message)
        self.record = record


@dataclass
class Peer:
    name: str
    structured: dict
    session: OnyxSession | None = None
    error: str | None = None  # why there is no session
    release: str | None = None
    release_error: str | None = None  # why the release could not be read


@dataclass
class Options:
    sections: tuple = SECTIONS
    check_mode: bool = False
    repair: bool = False
    wait: float = 90.0
    interval: float = 1.0
    snapshot_dir: str = ""
    secrets: list = field(default_factory=list)


# ------------------------------------------------------------------ reading
def open_peer(
    peer: Peer, username: str, password: str, known_hosts: str | None, check_host_key: bool = True
) -> None:
    """A session to the peer; an unknown or changed host key stops the whole run."""
    management = peer.structured["management"]
    try:
        session = OnyxSession(
            management["address"], management["port"], username, password,
            known_hosts=known_hosts, check_host_key=check_host_key,
        )  # fmt: skip
        session.open()
    except HostKeyError as exc:
        raise DeployError(str(exc)) from None
    except SessionError as exc:
        peer.error = str(exc)
        return
    peer.session = session
    text, error = session.try_show("show version")
    try:
        peer.release = release_from_show_version(text or "")
    except VersionError as exc:
        # Reads then go as text (the oldest layouts are read too); the record says why.
        peer.release, peer.release_error = None, error or str(exc)


def read_shows(peer: Peer, names: list[str]) -> tuple[dict, dict]:
    """({show name: output or None}, {show name: error})."""
    outputs, errors = {}, {}
    for name in names:
        if peer.session is None:
            outputs[name], errors[name] = None, peer.error or "no session"
            continue
        outputs[name], error = peer.session.try_show(shows.show_command(name, peer.release))
        if error:
            errors[name] = error
    return outputs, errors


def saved_state(peer: Peer) -> dict:
    """`show configuration files` read for the peer's release; raises on an unreadable reply."""
    text = peer.session.show(shows.show_command("files", peer.release))
    try:
        return shows.parse("files", text, peer.release)
    except ReadError as exc:
        raise SessionError(f"{peer.name}: {exc}") from None


def running(peer: Peer) -> tuple[str, ParsedConfig]:
    """The running-config; an empty or header-less reply raises (never a blank snapshot).

    Every release prints `## Running database "<name>"` first: a reply without it was
    cut or is something else, and a plan, snapshot or revert target built on it
    would treat the switch as blank.
    """
    text = peer.session.show(RUNNING)
    parsed = parse_running_config(text)
    if "running database" not in parsed.header:
        error = unreadable(RUNNING, text, "no `## Running database` header (empty or cut reply)")
        raise SessionError(f"{peer.name}: {error}")
    return text, parsed


# ------------------------------------------------------------------ gate
def gate_problems(me: Peer, partner: Peer, my_config: ParsedConfig) -> list[str]:
    """Why `partner` must not be relied on while `me` changes (empty: go).

    Unreachable or unreadable: always a problem. When both run MLAG, the partner's
    `show mlag` must say Operational Up, IPL Up and a System-mac without
    `[Mismatched]`, and - when it has an MLAG VIP - its `show mlag-vip` two active
    nodes, one master and one standby.
    """
    if partner.session is None:
        return [f"partner {partner.name} is unreachable: {partner.error}"]
    try:
        partner_config = running(partner)[1]
    except SessionError as exc:
        return [f"partner {partner.name}: running-config unreadable: {exc}"]
    mlag_here = ("protocol", "mlag") in my_config.statements
    mlag_there = ("protocol", "mlag") in partner_config.statements
    if not (mlag_here and mlag_there):
        return []  # no MLAG between them yet: nothing to break
    names = ["mlag"] + (["mlag_vip"] if ("mlag_vip",) in partner_config.statements else [])
    outputs, errors = read_shows(partner, names)
    if errors:
        return [f"partner {partner.name}: {errors[n]}" for n in errors]
    problems = []
    for name, judge in (("mlag", _mlag_problem), ("mlag_vip", _vip_problem)):
        if name not in names:
            continue
        try:
            problem = judge(shows.parse(name, outputs[name], partner.release))
        except ReadError as exc:
            said = f"release {partner.release or 'unknown'}"
            problems.append(
                f"partner {partner.name}: {exc}" + ("" if said in str(exc) else f" ({said})")
            )
            continue
        if problem:
            problems.append(f"partner {partner.name} {problem}")
    return problems


def _mlag_problem(state: dict) -> str | None:
    ipl_up = any(row["state"] == "Up" for row in state["ipls"])
    if state["oper"] == "Up" and ipl_up and not state["mismatched"]:
        return None
    return (
        f"MLAG is not healthy: Operational status {state['oper']}, "
        f"IPL {'Up' if ipl_up else 'not Up'}, System-mac {state['system_mac_raw']}"
    )


def _vip_problem(vip: dict) -> str | None:
    states = sorted(node["state"] for node in vip["nodes"])
    if vip["active_nodes"] == 2 and states == ["master", "standby"]:
        return None
    return (
        f"MLAG-VIP is not healthy: Active nodes {vip['active_nodes']}, "
        f"states {', '.join(states) or 'none'}"
    )


# ------------------------------------------------------------------ health after a change
def _post_scope(me: Peer, partner_pending: bool, partner_has_mlag: bool, partner_ok: bool) -> str:
    """local: the partner is blank or not usable (repair); core: it waits for its
    turn in this run; pair: everything on both peers."""
    if not partner_ok or (me.structured.get("mlag") and not partner_has_mlag):
        return "local"
    return "core" if partner_pending else "pair"


CORE_CHECKS = frozenset({"mlag.enabled", "mlag.oper", "mlag.ipl_state", "mlag_vip.nodes"})


def _selected(check: dict, own: bool, scope: str) -> bool:
    if check["id"] == "config.saved":
        return False  # judged after `configuration write`
    if scope == "local":
        return own and check["scope"] == "local"
    if scope == "core":
        return (own and check["scope"] == "local") or check["id"] in CORE_CHECKS
    return own or check["scope"] == "pair"


def health_round(me: Peer, partner: Peer, scope: str) -> list[dict]:
    peers = [me] if scope == "local" else [me, partner]
    checks, outputs = [], {}
    for peer in peers:
        names = health.needed_shows(peer.structured)
        outs, errors = read_shows(peer, names)
        outputs[peer.name] = outs
        found = health.switch_checks(peer.structured, outs, errors, peer.release)
        checks += [c for c in found if _selected(c, peer is me, scope)]
    if scope != "local":
        structures = {p.name: p.structured for p in peers}
        releases = {p.name: p.release for p in peers}
        pair_checks = health.pair_checks(me.structured["pair"], structures, outputs, releases)
        if scope == "core":
            pair_checks = [c for c in pair_checks if c["id"] == "mlag.system_mac_equal"]
        checks += pair_checks
    return checks


def host_dependent(check: dict) -> bool:
    """Checks the far end decides too: an MPO is up only when its host's bond answers LACP."""
    return check["id"] == "mlag.mpo_status" or check["id"].startswith("mpo.")


def blocking(checks: list[dict], before: dict[tuple[str, str], str] | None) -> list[dict]:
    """The failed checks that block a change.

    A host-dependent check blocks only when this change made it worse: it passed before
    the change (`before`: (target, id) -> status) and fails after. On a first rollout
    the hosts' bonds come after the switches, so their MPOs cannot be up yet; with no
    change made (`before` None) nothing was made worse. verify.yml checks them all.
    """
    return [
        c for c in checks
        if c["status"] == "fail"
        and not (host_dependent(c) and (before or {}).get((c["target"], c["id"])) != "pass")
    ]  # fmt: skip


def waived(checks: list[dict], blocked: list[dict]) -> list[dict]:
    return [
        {**c, "waived": "not up before this change either: an MPO comes up when its host's "
                        "bond answers LACP (verify.yml checks it)"}
        for c in checks if c["status"] == "fail" and c not in blocked
    ]  # fmt: skip


def wait_healthy(
    me: Peer, partner: Peer, scope: str, options: Options, before: dict | None = None
) -> list[dict]:
    deadline = time.monotonic() + max(options.wait, 0)
    while True:
        checks = health_round(me, partner, scope)
        if not blocking(checks, before) or time.monotonic() >= deadline:
            return checks
        time.sleep(options.interval)


# ------------------------------------------------------------------ snapshot and revert
def _inside_git(path: str) -> str | None:
    current = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _private_dirs(folder: str) -> None:
    """Every directory this creates is 0700 (os.makedirs gives the parents the umask's
    mode); the per-switch folder is made 0700 even when it existed."""
    missing = []
    current = os.path.abspath(folder)
    while not os.path.isdir(current):
        missing.append(current)
        current = os.path.dirname(current)
    for path in reversed(missing):
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700)  # mkdir's mode is masked by the umask
    os.chmod(folder, 0o700)


def write_snapshot(directory: str, switch: str, text: str) -> str:
    """The unredacted running-config, 0600, outside any git work tree."""
    work_tree = _inside_git(directory)
    if work_tree:
        raise DeployError(
            f"snapshot directory {directory} is inside the git work tree {work_tree}; "
            "an unredacted switch config must not be there (set cxfab_switch_snapshot_dir)"
        )
    folder = os.path.join(directory, switch)
    _private_dirs(folder)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = os.path.join(folder, f"{stamp}-{time.monotonic_ns() % 10**6:06d}.cfg")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def proof(target: ParsedConfig, now: ParsedConfig) -> dict:
    """Statement-for-statement comparison of a running-config with the snapshot."""
    missing = [st.line for k, st in target.statements.items() if now.statements.get(k) != st]
    extra = [st.line for k, st in now.statements.items() if k not in target.statements]
    unknown_missing = [line for line in target.unknown if line not in now.unknown]
    unknown_extra = [line for line in now.unknown if line not in target.unknown]
    return {
        "equal": not (missing or extra or unknown_missing or unknown_extra),
        "statements": len(target.statements),
        "other_lines": len(target.unknown),
        "missing": missing + unknown_missing,
        "extra": extra + unknown_extra,
    }


def revert(peer: Peer, snapshot_text: str, was_saved: bool) -> dict:
    """Bring `peer` back to the snapshot; returns what was sent and the proof."""
    started = time.monotonic()
    target = parse_running_config(snapshot_text)
    record: dict = {"lines": [], "refused": None}
    try:
        now = running(peer)[1]
        plan = make_plan(target, now, Scope.all(), restore=True)
        # Lines cxfab does not parse but a removal took with it: the switch's own text.
        record["lines"] = plan.lines + [line for line in target.unknown if line not in now.unknown]
        if record["lines"]:
            peer.session.configure(record["lines"])
    except SessionError as exc:
        record["refused"] = str(exc)
    try:
        record["proof"] = proof(target, running(peer)[1])
    except SessionError as exc:
        # No proof without a read: the revert is reported as unproven, never as done.
        record["proof"] = {"equal": False, "unreadable": str(exc), "missing": [], "extra": []}
    if record["proof"]["equal"] and was_saved:
        files = saved_state(peer)
        if files["unsaved"]:
            # The running-config is proven equal to the saved snapshot: writing it
            # stores the same configuration and clears the flag.
            peer.session.save()
            record["saved_again"] = True
    record["seconds"] = round(time.monotonic() - started, 2)
    return record


def _verdict(reverted: dict) -> str:
    """What the revert did and its proof, for the run's error message."""
    shown = "; ".join(reverted["lines"][:8]) + (" ..." if len(reverted["lines"]) > 8 else "")
    sent = f"{len(reverted['lines'])} line(s) ({shown or 'none needed'})"
    check = reverted["proof"]
    if check["equal"]:
        return (
            f"reverted with {sent} in {reverted['seconds']} s; running-config equals the "
            f"snapshot statement for statement ({check['statements']} statements, "
            f"{check['other_lines']} other lines)"
        )
    refused = f"; revert refused: {reverted['refused']}" if reverted["refused"] else ""
    if "unreadable" in check:
        return f"REVERT NOT PROVEN after {sent}{refused}: {check['unreadable']}"
    return (
        f"REVERT INCOMPLETE after {sent}{refused}: differs from the snapshot: missing "
        f"{check['missing'][:5]}, extra {check['extra'][:5]}"
    )


# ------------------------------------------------------------------ one peer
def _guard(plan, current: ParsedConfig, address: str) -> None:
    """Refuse to touch the SVI whose subnet holds the management connection."""
    from ...common.addressing import same_subnet

    for key, statement in current.statements.items():
        if key[0] != "svi_ip" or not same_subnet(statement.value, address):
            continue
        vlan = key[1]
        touched = [st for st in plan.removals if st.key in (("svi", vlan), ("svi_ip", vlan))]
        touched += [st for st in plan.additions if st.key == ("svi_ip", vlan)]
        if touched:
            raise DeployError(
                f"interface vlan {vlan} carries the management connection to {address}; "
                "cxfab does not change or remove it"
            )


def _ipl_vlans(structured: dict, current: ParsedConfig) -> set:
    vlans = {key[1] for key in current.statements if key[0] == "svi_ipl_peer"}
    if structured.get("mlag"):
        vlans.add(structured["mlag"]["ipl"]["vlan"])
    return vlans


def change_peer(me: Peer, partner: Peer, intended_text: str, pending: bool, o: Options) -> dict:
    record: dict = {"switch": me.name, "check_mode": o.check_mode, "lines": [], "warnings": []}
    if me.session is None:
        raise DeployError(f"{me.name} is unreachable: {me.error}")
    record["release"] = me.release or f"unknown: {me.release_error}"
    running_text, current = running(me)
    problems = gate_problems(me, partner, current)
    record["gate"] = problems
    if problems and not o.repair:
        raise DeployError(
            f"{me.name}: change blocked before the first line: "
            + "; ".join(problems)
            + ". Set cxfab_switch_repair: true only to bring a dead pair back",
            record,
        )
    partner_ok = not problems
    partner_has_mlag = False
    if partner.session is not None:
        try:
            partner_has_mlag = ("protocol", "mlag") in running(partner)[1].statements
        except SessionError:
            partner_ok = False

    intended = parse_running_config(intended_text)
    if intended.unknown:
        raise DeployError(
            f"{me.name}: intended config has lines cxfab cannot compare: "
            + "; ".join(intended.unknown[:5]),
            record,
        )
    ipl_vlans = _ipl_vlans(me.structured, current)
    intended = only_sections(intended, o.sections, ipl_vlans)
    scoped_current = only_sections(current, o.sections, ipl_vlans)
    scope = Scope.from_structured(me.structured)
    plan = make_plan(intended, scoped_current, scope)
    try:
        _guard(plan, current, me.structured["management"]["address"])
    except DeployError as exc:
        raise DeployError(f"{me.name}: {exc}", {**record, "lines": plan.lines}) from None
    record.update(lines=plan.lines, warnings=plan.warnings, before=plan.before, after=plan.after)
    post_scope = _post_scope(me, pending, partner_has_mlag, partner_ok)
    record["post_scope"] = post_scope
    if o.check_mode:
        return record
    if not plan.lines:
        checks = health_round(me, partner, post_scope)
        record["post_health"] = checks
        record["post_failed"] = blocking(checks, None)
        record["post_waived"] = waived(checks, record["post_failed"])
        return record

    files = saved_state(me)
    record["snapshot"] = write_snapshot(o.snapshot_dir, me.name, running_text)
    # The host-dependent checks as they stand before the change (pair scope only: a
    # local round has none), so that the gate below blocks only what the change broke.
    before = None
    if post_scope != "local":
        before = {(c["target"], c["id"]): c["status"] for c in health_round(me, partner, post_scope)
                  if host_dependent(c)}  # fmt: skip
    failure = None
    started = time.monotonic()
    try:
        me.session.configure(plan.lines)
        left = make_plan(intended, only_sections(running(me)[1], o.sections, ipl_vlans), scope)
        if left.lines:
            failure = "the switch took the lines but still differs: " + "; ".join(left.lines[:10])
        else:
            checks = wait_healthy(me, partner, post_scope, o, before)
            record["post_health"] = checks
            record["post_failed"] = blocking(checks, before)
            record["post_waived"] = waived(checks, record["post_failed"])
            if record["post_failed"]:
                failure = "the pair is not healthy after the change: " + "; ".join(
                    f"{c['target']} {c['id']}: expected {c['expected']}, observed {c['observed']}"
                    for c in record["post_failed"][:6]
                )
    except SessionError as exc:
        failure = str(exc)
        record["refused"] = str(exc)
    record["apply_seconds"] = round(time.monotonic() - started, 2)
    if failure:
        record["revert"] = revert(me, running_text, files["unsaved"] is False)
        reverted = record["revert"]
        verdict = _verdict(reverted)
        raise DeployError(
            f"{me.name}: {failure}. {verdict}; snapshot {record['snapshot']}; "
            f"{partner.name} was not touched",
            record,
        )
    me.session.save()
    saved = saved_state(me)
    record["saved"] = saved["unsaved"] is False
    if not record["saved"]:
        raise DeployError(
            f"{me.name}: `configuration write` ran but Unsaved changes is not `no`", record
        )
    return record


def redact_record(record: dict, secrets) -> dict:
    """The record without any of `secrets` (outputs may echo configuration)."""
    import json

    text = json.dumps(record)
    for secret in secrets:
        if secret:
            text = text.replace(json.dumps(secret)[1:-1], REDACTED)
    return json.loads(text)
