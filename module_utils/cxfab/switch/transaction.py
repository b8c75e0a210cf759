"""Deploy one switch pair: a gate, then a transaction per peer, one session per switch.

OS-neutral: everything here goes through the driver interface (driver.py). For
the peers to change, in pair order:

  gate      the partner must be reachable, readable and - when this switch
            already runs MLAG with it - in a healthy MLAG (Up, IPL Up, same
            system MAC, both VIP nodes). Otherwise nothing is sent, unless
            `repair` (bringing a dead pair back) is set.
  stage     intended vs running config, limited to the selected sections (tags).
  snapshot  the full running config, unredacted, mode 0600, in a directory
            outside any git work tree.
  commit    the staged lines; a refused line stops the batch. Then read back:
            nothing staged may be left.
  health    the pair's checks (scope: pair_health.post_scope) must pass within `wait`.
  save      only now, then the saved state is read. The first peer's save is
            held while its partner is still to change in this run (see below).
  revert    on a refused line, a failed read-back or failed health: the driver
            brings the peer back to the snapshot, and the running config read
            again must equal it statement for statement. The run fails with the
            refused line, the switch's message, what was reverted and the proof.

The pair changes as one. When both peers are in the run and the second is
reachable, the first peer's change is not saved: it is held until the second
peer is changed and the pair is healthy, then both are saved, the first, then
the second. Any failure in the second peer's turn reverts the second (when it
was changed) and then the first, each proven against its own snapshot; the
first's saved config was never overwritten. When nothing differs on the second
peer, the first is saved as soon as its turn is healthy (as a lone peer is).
The partner of a peer whose change failed is otherwise never touched.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .driver import ChangeRefused, DriverError, RunningConfig, SwitchDriver, UntrustedSwitch
from .pair_health import blocking, health_round, host_dependent, post_scope, wait_healthy, waived
from .secrets import redact_record
from .snapshot import SnapshotRefused, write_snapshot


class DeployError(RuntimeError):
    """The run stops; the message says why and what state each switch is in."""

    def __init__(self, message: str, record: dict | None = None):
        super().__init__(message)
        self.record = record


@dataclass
class Options:
    # The sections to reconcile (the play's tags). No default: "all" is the driver's
    # SECTIONS, which the transaction does not know.
    sections: tuple
    check_mode: bool = False
    diff: bool = False  # --diff: in check mode, also the switch's own diff (device_diff)
    repair: bool = False
    wait: float = 90.0
    interval: float = 1.0
    snapshot_dir: str = ""
    secrets: list = field(default_factory=list)


# ------------------------------------------------------------------ the pair
def deploy_pair(
    drivers: dict[str, SwitchDriver], order: list[str], intended_for, login: dict,
    options: Options, warn,
) -> dict:  # fmt: skip
    """Change the peers in `order` (pair order), each over the session opened here.

    `drivers` holds both peers (the ones not in `order` are only read);
    `intended_for(name)` gives a peer's intended config; `login` is what each
    driver's open() takes. Returns {changed, switches: record per peer, sessions,
    msg when the run failed}, without any of `options.secrets`.
    """
    records: dict = {}
    result = {"changed": False, "switches": records, "sessions": {}}
    held: Held | None = None  # the first peer, changed, healthy, its save waiting
    try:
        for name in sorted(drivers, key=lambda n: drivers[n].structured["peer_index"]):
            try:
                drivers[name].open(**login)
            except UntrustedSwitch as exc:
                raise DeployError(str(exc)) from None
            result["sessions"][name] = 0 if drivers[name].unreachable else 1
            for note in drivers[name].notes:
                warn(note)
        for index, name in enumerate(order):
            partner = drivers[drivers[name].structured["partner"]]
            intended = intended_for(name)
            pending = partner.name in order[index + 1 :]
            hold = pending and partner.unreachable is None
            try:
                records[name], kept = change_peer(
                    drivers[name], partner, intended, pending, options, hold=hold, held=held
                )
            except DeployError as exc:
                records[name] = {**(exc.record or {"switch": name, "lines": []}), "error": str(exc)}
                raise
            if kept is not None:
                held = kept
            elif held is not None:  # the second peer's turn went through
                if not records[name]["lines"]:
                    _save_held(held)  # nothing differed on it: saved as today
                held = None
            if records[name]["lines"]:
                result["changed"] = True
            for warning in records[name]["warnings"]:
                warn(f"{name}: {warning}")
            for check in records[name].get("post_waived") or []:
                warn(f"{check['target']} {check['id']}: {check['observed']} ({check['waived']})")
            failed = records[name].get("post_failed")
            if failed:
                raise DeployError(
                    f"{name}: the pair is not healthy: "
                    + "; ".join(f"{c['target']} {c['id']}: {c['observed']}" for c in failed[:6])
                )
    except (DeployError, DriverError) as exc:
        result["msg"] = str(exc)
        if held is not None and not held.record.get("saved"):
            result["msg"] += " " + _take_back(held, records, result)
    finally:
        for driver in drivers.values():
            driver.close()
    return redact_record(result, options.secrets)


# ------------------------------------------------------------------ gate
def gate_problems(partner: SwitchDriver, my_config: RunningConfig) -> list[str]:
    """Why `partner` must not be relied on while this switch changes (empty: go).

    Unreachable or unreadable: always a problem. When both run MLAG, the partner
    must see its MLAG Operational Up, an IPL Up and a system MAC not marked
    mismatched, and - when it has an MLAG VIP - two active nodes, one master and
    one standby.
    """
    if partner.unreachable is not None:
        return [f"partner {partner.name} is unreachable: {partner.unreachable}"]
    try:
        partner_config = partner.read_config()
    except DriverError as exc:
        return [f"partner {partner.name}: running-config unreadable: {exc}"]
    if not (my_config.runs_mlag and partner_config.runs_mlag):
        return []  # no MLAG between them yet: nothing to break
    state = partner.mlag_state(partner_config)
    if state["read_errors"]:
        return [f"partner {partner.name}: {error}" for error in state["read_errors"]]
    problems = []
    for part, judge in (("mlag", _mlag_problem), ("vip", _vip_problem)):
        seen = state.get(part)
        if seen is None:
            continue
        if isinstance(seen, str):  # the reply could not be read: why
            problems.append(f"partner {partner.name}: {seen}")
            continue
        problem = judge(seen)
        if problem:
            problems.append(f"partner {partner.name} {problem}")
    return problems


def _mlag_problem(mlag: dict) -> str | None:
    if mlag["oper"] == "Up" and mlag["ipl_up"] and not mlag["mismatched"]:
        return None
    return (
        f"MLAG is not healthy: Operational status {mlag['oper']}, "
        f"IPL {'Up' if mlag['ipl_up'] else 'not Up'}, System-mac {mlag['system_mac']}"
    )


def _vip_problem(vip: dict) -> str | None:
    states = sorted(vip["states"])
    if vip["active_nodes"] == 2 and states == ["master", "standby"]:
        return None
    return (
        f"MLAG-VIP is not healthy: Active nodes {vip['active_nodes']}, "
        f"states {', '.join(states) or 'none'}"
    )


# ------------------------------------------------------------------ revert and its proof
def proof(target: RunningConfig, now: RunningConfig) -> dict:
    """Statement-for-statement comparison of a running config with the snapshot."""
    missing = [st.line for k, st in target.statements.items() if now.statements.get(k) != st]
    extra = [st.line for k, st in now.statements.items() if k not in target.statements]
    other_missing = [line for line in target.other_lines if line not in now.other_lines]
    other_extra = [line for line in now.other_lines if line not in target.other_lines]
    return {
        "equal": not (missing or extra or other_missing or other_extra),
        "statements": len(target.statements),
        "other_lines": len(target.other_lines),
        "missing": missing + other_missing,
        "extra": extra + other_extra,
    }


def revert(driver: SwitchDriver, snapshot: RunningConfig, was_saved: bool) -> dict:
    """Bring the switch back to the snapshot; returns what was sent and the proof."""
    started = time.monotonic()
    lines, refused = driver.revert(snapshot)
    record: dict = {"lines": lines, "refused": refused}
    try:
        record["proof"] = proof(snapshot, driver.read_config())
    except DriverError as exc:
        # No proof without a read: the revert is reported as unproven, never as done.
        record["proof"] = {"equal": False, "unreadable": str(exc), "missing": [], "extra": []}
    if record["proof"]["equal"] and was_saved and driver.unsaved_changes():
        # The running config is proven equal to the saved snapshot: saving it stores
        # the same configuration and clears the unsaved flag.
        driver.save()
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


# ------------------------------------------------------------------ the held first peer
@dataclass
class Held:
    """A peer changed and healthy whose save waits for its partner's turn."""

    driver: SwitchDriver
    snapshot: RunningConfig
    was_saved: bool
    partner: str
    record: dict  # the held peer's record, completed when it is saved or reverted


def _save_held(held: Held) -> None:
    """Save the held peer (its partner's turn went through); raise if it stays unsaved."""
    record = held.record
    held.driver.save()
    record["saved"] = held.driver.unsaved_changes() is False
    record["save_held"] = False
    if not record["saved"]:
        raise DeployError(
            f"{held.driver.name}: the configuration was saved but the switch still reports "
            "unsaved changes",
            record,
        )


def _take_back(held: Held, records: dict, result: dict) -> str:
    """The partner's turn failed: revert the held peer too; what happened, for the message."""
    name, failed = held.driver.name, held.partner
    record = held.record
    record["revert"] = revert(held.driver, held.snapshot, held.was_saved)
    record["reverted_because"] = f"{failed} failed in its turn; the pair changes as one"
    verdict = _verdict(record["revert"])
    record["error"] = f"{name}: {failed} failed, the pair changes as one: {verdict}"
    reverts = {n: records[n]["revert"] for n in (failed, name) if "revert" in records.get(n, {})}
    proven = [n for n, done in reverts.items() if done["proof"]["equal"]]
    result["reverted"], result["reverted_proven"] = list(reverts), proven
    both = "both peers were reverted" if len(proven) == 2 else f"reverted and proven: {proven}"
    return (
        f"Then {name} (changed earlier in this run, not saved): {verdict}; {both}, "
        f"neither was saved"
    )


# ------------------------------------------------------------------ one peer
def _device_diff(me: SwitchDriver, staged, record: dict) -> None:
    """Check mode with --diff: the switch's own diff next to cxfab's lines; a difference
    between the two is a warning (the switch would change something else)."""
    try:
        shown = me.device_diff(staged)
    except DriverError as exc:
        raise DeployError(str(exc), record) from None
    if shown is None:
        return
    record["device_diff"] = shown
    ours, theirs = set(staged.lines), set(shown)
    if ours != theirs:
        record["warnings"].append(
            f"the switch's own diff differs from cxfab's plan: only the switch's "
            f"{sorted(theirs - ours)[:5]}, only cxfab's {sorted(ours - theirs)[:5]}"
        )


def _judge(record: dict, checks: list[dict], before: dict | None) -> None:
    record["post_health"] = checks
    record["post_failed"] = blocking(checks, before)
    record["post_waived"] = waived(checks, record["post_failed"])


def change_peer(
    me: SwitchDriver, partner: SwitchDriver, intended_text: str, pending: bool, o: Options,
    hold: bool = False, held: Held | None = None,
) -> tuple[dict, Held | None]:  # fmt: skip
    """One peer's turn: the record, and the Held change when `hold` kept it unsaved.

    `held`: the partner's change waiting for this turn; it is saved just before
    this peer's own save (the pair is healthy), reverted by the caller otherwise."""
    record: dict = {"switch": me.name, "check_mode": o.check_mode, "lines": [], "warnings": []}
    if me.unreachable is not None:
        raise DeployError(f"{me.name} is unreachable: {me.unreachable}")
    record["release"] = me.release or f"unknown: {me.release_error}"
    current = me.read_config()
    problems = gate_problems(partner, current)
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
    if partner.unreachable is None:
        try:
            partner_has_mlag = partner.read_config().runs_mlag
        except DriverError:
            partner_ok = False

    try:
        staged = me.stage(intended_text, o.sections, current)
    except ChangeRefused as exc:
        raise DeployError(f"{me.name}: {exc}", {**record, "lines": exc.lines}) from None
    record.update(
        lines=staged.lines, warnings=staged.warnings, before=staged.before, after=staged.after
    )
    scope = post_scope(me, pending, partner_has_mlag, partner_ok)
    record["post_scope"] = scope
    if o.check_mode:
        if o.diff and staged.lines:
            _device_diff(me, staged, record)
        return record, None
    if not staged.lines:
        _judge(record, health_round(me, partner, scope), None)
        return record, None

    was_saved = me.unsaved_changes() is False
    try:
        record["snapshot"] = write_snapshot(o.snapshot_dir, me.name, current.text)
    except SnapshotRefused as exc:
        raise DeployError(str(exc)) from None
    # The host-dependent checks as they stand before the change (pair scope only: a
    # local round has none), so that the gate below blocks only what the change broke.
    before = None
    if scope != "local":
        before = {(c["target"], c["id"]): c["status"] for c in health_round(me, partner, scope)
                  if host_dependent(c)}  # fmt: skip
    failure = None
    started = time.monotonic()
    try:
        left = me.commit(staged)
        if left:
            failure = "the switch took the lines but still differs: " + "; ".join(left[:10])
        else:
            _judge(record, wait_healthy(me, partner, scope, o.wait, o.interval, before), before)
            if record["post_failed"]:
                failure = "the pair is not healthy after the change: " + "; ".join(
                    f"{c['target']} {c['id']}: expected {c['expected']}, observed {c['observed']}"
                    for c in record["post_failed"][:6]
                )
    except DriverError as exc:
        failure = str(exc)
        record["refused"] = str(exc)
    record["apply_seconds"] = round(time.monotonic() - started, 2)
    if failure:
        record["revert"] = revert(me, current, was_saved)
        partner_state = f"{partner.name} was not touched" if held is None else ""
        raise DeployError(
            f"{me.name}: {failure}. {_verdict(record['revert'])}; snapshot {record['snapshot']}"
            + (f"; {partner_state}" if partner_state else "."),
            record,
        )
    if hold:  # the partner changes next: save both only once it is healthy too
        record["save_held"] = True
        return record, Held(me, current, was_saved, partner.name, record)
    if held is not None:  # the pair is healthy: the held partner is saved first
        try:
            _save_held(held)
        except DeployError as exc:
            record["revert"] = revert(me, current, was_saved)
            raise DeployError(f"{exc}. {me.name}: {_verdict(record['revert'])}", record) from None
    me.save()
    record["saved"] = me.unsaved_changes() is False
    if not record["saved"]:
        raise DeployError(
            f"{me.name}: the configuration was saved but the switch still reports unsaved changes",
            record,
        )
    return record, None
