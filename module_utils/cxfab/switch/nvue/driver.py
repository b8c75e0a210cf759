"""The NVUE (Cumulus Linux 5.x) switch driver: the seam over the NVUE REST API.

NVUE has what Onyx lacks, and the driver uses it the NVUE way (user guide 5.9,
"NVUE API"; NVUE command reference, "Config Commands"):

  read     GET /nvue_v1/?rev=applied&filled=false: the applied tree, as statements
           (one per leaf, `nv set ...` lines) for the plan and the revert proof.
  stage    plan.py's set/unset operations in cxfab's scope, as one root PATCH body
           (sets as values, unsets as `null`), checked against the kept spec parts
           before anything is sent. Nothing differs: no revision is created at all.
  commit   POST /revision, PATCH the body at ?rev=<id> (a refusal detaches the
           revision: nothing was applied), then apply with a confirm timer
           (`nv config apply --confirm <time>`: the switch rolls back by itself
           unless confirmed). A controller that dies from here on leaves a switch
           that returns to its previous config when the timer runs out.
  diff     check mode with --diff, only when the plan differs: NVUE's own diff of the
           planned change, as `nv config diff` makes it: a scratch revision, the body
           PATCHed into it, GET ?rev=applied&diff=<id> (`nv config diff applied <id>`:
           base, then target), the revision DELETEd whatever happened; never applied.
  save     the confirm, sent once the transaction found the pair healthy (for the
           first peer: once its partner is healthy too). 5.9 saves what it applies
           by itself (auto-save, "Config Commands"), so the confirm is the save.
  revert   the confirm answered no (the switch rolls back at once, as at the
           timer's end); if the applied tree still differs from the snapshot, the
           snapshot's tree is applied whole ("Replace an Entire Configuration":
           DELETE and PATCH at the root of a new revision). The transaction proves
           it by reading the applied tree again.

The JSON form of NVUE's diff is not on the API page: UNCONFIRMED, read as the
`nv config diff -o json` list that page shows ([{"set": tree}, {"unset": tree}],
diff_lines). The API form of the confirm timer and of the confirm answer is not on any NVIDIA
page cxfab found: UNCONFIRMED (docs/lab-nvue.md), kept in one place (CONFIRM_*).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

from ..driver import ChangeRefused, DriverError, HealthReading, RunningConfig, Staged, SwitchDriver
from ..secrets import REDACTED
from . import health, plan, render, spec
from .transport import DEFAULT_PORT, NvueClient, TransportError, Trust, Unreachable

APPLY = {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}  # the NVUE API page's body
APPLIED = ("applied", "applied_and_saved")  # the revision states of a finished apply
AWAITING = health.AWAITING  # UNCONFIRMED: applied, the timer running
CONFIRM_YES = {**APPLY, "auto-prompt": {"ays": "ays_yes", "confirm": "confirm_yes"}}  # UNCONFIRMED
CONFIRM_NO = {**APPLY, "auto-prompt": {"ays": "ays_yes", "confirm": "confirm_no"}}  # UNCONFIRMED
FAILED = ("invalid", "apply_fail", "ays_fail", "confirm_fail")  # the API page shows the first 3
# `GET ?rev=<A>&diff=<B>` is `nv config diff <A> <B>` ([API] "View Differences"), A the
# base and B the target ([CFG] `nv config diff <revision-base> <revision-target>`).
DIFF_BASE = "applied"
_BUILD = re.compile(r"Cumulus Linux (\d+\.\d+)")


@dataclass(frozen=True)
class Leaf:
    """One leaf of the applied tree: what the revert proof compares (`line` is shown)."""

    line: str
    value: object


# Leaves whose value is a secret (`system aaa user X hashed-password`, SNMP communities,
# keys): their line shows REDACTED, their value is still compared. A revert proof
# prints the lines that differ, and the applied tree holds the whole switch.
_SECRET_KEY = re.compile(r"(^|-)(password|secret|key|community|passphrase)$")


def _line(path: tuple, value) -> str:
    if any(_SECRET_KEY.search(str(part)) for part in path):
        value = REDACTED
    return plan.cli_lines([{"op": "set", "path": list(path), "value": value}])[0]


def statements(tree: dict) -> dict:
    return {path: Leaf(_line(path, value), value) for path, value in plan.leaves(tree).items()}


def patch_body(ops: list[dict]) -> dict:
    """One root PATCH: the sets' values and `null` at each unset path (NVUE API page,
    "Unset a Configuration Change"). plan.py never sets below a path it unsets."""
    body: dict = {}
    for op in ops:
        node = body
        for key in op["path"][:-1]:
            node = node.setdefault(key, {})
        node[op["path"][-1]] = op["value"] if op["op"] == "set" else None
    return body


def _show_path(command: str) -> str:
    """`nv show interface vlan10 ip vrr -o json` -> `interface/vlan10/ip/vrr` (the CLI path
    is the API path: NVUE API page, "Use the API")."""
    words = command.split()
    return "/".join(words[2:-2])


class NvueDriver(SwitchDriver):
    """One Cumulus Linux switch of a pair, over its NVUE REST API."""

    SECTIONS = ("mlag", "vlans", "gateway")

    def __init__(self, name: str, structured: dict, trust: Trust | None = None,
                 confirm_seconds: int = 600, apply_timeout: float = 120.0,
                 poll: float = 0.2):  # fmt: skip
        super().__init__(name, structured)
        self.trust = trust or Trust()
        self.confirm_seconds = int(confirm_seconds)
        self.apply_timeout, self.poll = apply_timeout, poll
        self.client: NvueClient | None = None
        self.awaiting: str | None = None  # our revision applied, its confirm not yet sent
        self.revisions: list[str] = []  # revisions created in this run

    # ---------------------------------------------------------------- session
    def open(self, username, password, known_hosts=None, check_host_key=True) -> None:
        """`known_hosts` is the SSH file of the Onyx driver: NVUE checks `self.trust`;
        `check_host_key=False` is the same explicit opt-out (any certificate)."""
        management = self.structured["management"]
        trust = self.trust if check_host_key else Trust(verify=False)
        if not check_host_key:
            self.notes.append(
                f"{self.name}: the TLS certificate is NOT checked "
                "(cxfab_switch_host_key_checking: false): UNSAFE, a man in the middle gets "
                "the password"
            )
        client = NvueClient(management["address"], management.get("port") or DEFAULT_PORT,
                            username, password, trust)  # fmt: skip
        try:
            system = client.get_object("system")
        except (Unreachable, TransportError) as exc:
            self.unreachable = str(exc)
            return
        self.client, self.unreachable = client, None
        match = _BUILD.search(str(system.get("build", "")))
        if match is None:
            self.release_error = (
                f"GET system: no `Cumulus Linux N.M` in build {system.get('build')!r}"
            )
            return
        self.release = match.group(1)
        wanted = self.structured.get("release")
        if wanted and wanted != self.release:
            self.notes.append(
                f"{self.name}: runs Cumulus Linux {self.release}, the pair's cumulus_release "
                f"is {wanted}: the tree is rendered for {wanted}"
            )

    def close(self) -> None:
        self.client = None

    def _client(self) -> NvueClient:
        if self.client is None:
            raise DriverError(f"{self.name}: no NVUE session: {self.unreachable}")
        return self.client

    # ---------------------------------------------------------------- reads
    def applied_tree(self) -> dict:
        return self._client().get_object("", rev="applied")

    def read_config(self) -> RunningConfig:
        tree = self.applied_tree()
        text = json.dumps(tree, indent=2, sort_keys=True)
        runs_mlag = (tree.get("mlag") or {}).get("enable") == render.ON
        return RunningConfig(text, statements(tree), [], runs_mlag, private=tree)

    def mlag_state(self, config: RunningConfig) -> dict:
        try:
            mlag = self._client().get_object("mlag")
            peerlink = self._client().get_object("interface/peerlink")
        except DriverError as exc:
            return {"read_errors": [str(exc)]}
        state: dict = {"read_errors": [], "vip": None}
        try:
            alive = health.field(mlag, "peer-alive")
            state["mlag"] = {
                "oper": "Up" if health._truth(alive) else "Down",
                "ipl_up": health._link_up(peerlink),
                "system_mac": str(health.field(mlag, "mac-address")),
                "mismatched": False,  # NVUE has no such flag; mlag.system_mac_equal compares
            }
        except health.Unreadable as exc:
            state["mlag"] = f"nv show mlag / interface peerlink: {exc}"
        return state

    def unsaved_changes(self) -> bool | None:
        """True while a revision waits for its confirm (applied, not yet kept)."""
        answer = self._client().get_object("revision")
        try:
            states = [record["state"] for record in answer.values()]
        except (TypeError, KeyError):
            raise TransportError(f"{self.name}: GET revision: not {{id: {{state}}}}") from None
        return AWAITING in states

    def health(self) -> HealthReading:
        outputs = {}
        for command in health.needed_shows(self.structured):
            try:
                outputs[command] = json.dumps(self._client().request("GET", _show_path(command)))
            except DriverError as exc:
                outputs[command] = health.Failed(str(exc))  # its checks fail with why
        return self.health_from(outputs)

    def health_from(self, outputs: dict) -> HealthReading:
        checks = health.switch_checks(self.structured, outputs)
        return HealthReading(self.name, self.structured, checks, private=outputs)

    def pair_checks(self, readings: list[HealthReading]) -> list[dict]:
        pair = readings[0].structured["pair"] if readings else ""
        structured = {r.switch: r.structured for r in readings}
        outputs = {r.switch: r.private or {} for r in readings}
        return health.pair_checks(pair, structured, outputs)

    # ---------------------------------------------------------------- changes
    def desired(self) -> dict:
        return render.render(self.structured)

    def stage_tree(self, applied: dict) -> Staged:
        desired = self.desired()
        ops = plan.plan(self.structured, desired, applied)
        lines = plan.cli_lines(ops)
        body = patch_body(ops)
        problems = spec.validate(body)
        if problems:
            raise ChangeRefused(
                f"{self.name}: the NVUE body fails the kept spec parts: " + "; ".join(problems[:5]),
                lines,
            )
        before = [line for op in ops for line in _before(applied, op)]
        return Staged(lines, before=before, after=lines,
                      private={"desired": desired, "ops": ops, "body": body})  # fmt: skip

    def stage(self, intended, sections, current: RunningConfig) -> Staged:
        """`intended` (build/configs' `nv set` lines, plan.intended_lines) is not used:
        the tree is rendered from the structured config. NVUE applies one revision for
        cxfab's whole scope, so a subset of sections (tags) is refused rather than
        half-planned."""
        if set(sections) != set(self.SECTIONS):
            raise ChangeRefused(
                f"{self.name}: sections {sorted(sections)}: a cumulus pair is reconciled "
                f"whole ({list(self.SECTIONS)}); run without switch_* tags"
            )
        return self.stage_tree(current.private if current.private is not None else {})

    def _revision_state(self, rev: str) -> tuple[str, str]:
        answer = self._client().get_object(("revision", rev))
        record = answer.get(rev, answer) if "state" not in answer else answer
        if not isinstance(record, dict) or not isinstance(record.get("state"), str):
            raise TransportError(f"{self.name}: GET revision/{rev}: no state in the answer")
        issues = ((record.get("transition") or {}).get("issue")) or {}
        said = "; ".join(str(i.get("message", i)) for i in issues.values() if isinstance(i, dict))
        return record["state"], said

    def _wait(self, rev: str, done: tuple) -> str:
        """Poll the revision until its state is one of `done`; a failed state raises."""
        deadline = time.monotonic() + self.apply_timeout
        while True:
            state, said = self._revision_state(rev)
            if state in done:
                return state
            if state in FAILED or time.monotonic() > deadline:
                raise DriverError(
                    f"{self.name}: revision {rev} is {state}" + (f": {said}" if said else "")
                    + ("" if state in FAILED else f" after {self.apply_timeout:.0f} s")
                )  # fmt: skip
            time.sleep(self.poll)

    def _create_revision(self) -> str:
        answer = self._client().request("POST", "revision")
        if not isinstance(answer, dict) or len(answer) != 1:
            raise TransportError(f"{self.name}: POST revision: not one {{id: {{...}}}} answer")
        rev = str(next(iter(answer)))
        self.revisions.append(rev)
        return rev

    def _discard(self, rev: str) -> str | None:
        """DELETE /revision/<rev> (`nv config detach`): None, or why it is still there."""
        try:
            self._client().request("DELETE", ("revision", rev))
        except DriverError as exc:
            return str(exc)
        self.revisions.remove(rev)
        return None

    def device_diff(self, staged: Staged) -> list[str]:
        """NVUE's own diff of the staged body (check mode, --diff): a scratch revision is
        made, patched, diffed against the applied one and always deleted; never applied."""
        client, failure, lines = self._client(), None, []
        rev = self._create_revision()
        try:
            try:
                client.request("PATCH", "", {"rev": rev}, staged.private["body"])
                answer = client.request("GET", "", {"rev": DIFF_BASE, "diff": rev})
                lines = diff_lines(answer, f"GET ?rev={DIFF_BASE}&diff={rev}")
            except DriverError as exc:
                failure = exc
        finally:
            left = self._discard(rev)
        if failure is None and left is None:
            return lines
        kept = "deleted" if left is None else f"NOT deleted ({left})"
        raise DriverError(f"{self.name}: NVUE's diff of the plan (check mode): "
                          f"{failure or 'read'}; scratch revision {rev} {kept}, nothing "
                          "applied")  # fmt: skip

    def commit(self, staged: Staged) -> list[str]:
        client, private = self._client(), staged.private
        rev = self._create_revision()
        try:
            client.request("PATCH", "", {"rev": rev}, private["body"])
        except TransportError as exc:
            try:
                client.request("DELETE", ("revision", rev))  # `nv config detach`
                left = "detached, nothing applied"
            except DriverError as detach:
                left = f"NOT detached ({detach}), nothing applied"
            raise DriverError(f"{self.name}: the switch refused the change: {exc}; "
                              f"revision {rev} {left}") from None  # fmt: skip
        client.request("PATCH", ("revision", rev), body={**APPLY,
                       "confirm": f"{self.confirm_seconds}s"})  # fmt: skip
        # From here the switch rolls back by itself unless the confirm comes (save()).
        state = self._wait(rev, (AWAITING, *APPLIED))
        self.awaiting = rev if state == AWAITING else None
        now = self.applied_tree()
        return plan.cli_lines(plan.plan(self.structured, private["desired"], now))

    def save(self) -> None:
        """Confirm the revision that waits (5.9 saves an apply by itself)."""
        if self.awaiting is None:
            return
        rev = self.awaiting
        self._client().request("PATCH", ("revision", rev), body=CONFIRM_YES)
        self._wait(rev, APPLIED)
        self.awaiting = None

    def revert(self, snapshot: RunningConfig) -> tuple[list[str], str | None]:
        """Undo this run's revisions as the switch reports them, then prove nothing is
        left: a revision waiting for its confirm is answered no, one still pending is
        detached; the applied tree is then compared with the snapshot."""
        sent: list[str] = []
        try:
            for rev in self.revisions:
                state, _ = self._revision_state(rev)
                if state == AWAITING:
                    self._client().request("PATCH", ("revision", rev), body=CONFIRM_NO)
                    self._wait(rev, ("confirm_fail",))
                    sent.append(f"revision {rev}: confirm answered no (the switch rolled it back)")
                elif state == "pending":
                    self._client().request("DELETE", ("revision", rev))
                    sent.append(f"revision {rev}: detached (never applied)")
            self.awaiting = None
            target = json.loads(snapshot.text)
            if self.applied_tree() != target:
                rev = self._create_revision()
                self._client().request("DELETE", "", {"rev": rev})
                self._client().request("PATCH", "", {"rev": rev}, target)
                self._client().request("PATCH", ("revision", rev), body=APPLY)
                self._wait(rev, APPLIED)
                sent.append(f"revision {rev}: the snapshot's tree applied whole")
        except DriverError as exc:
            return sent, str(exc)
        return sent, None


def diff_lines(answer, shown: str) -> list[str]:
    """NVUE's diff answer as `nv set`/`nv unset` lines (secrets REDACTED). UNCONFIRMED
    form: the `nv config diff -o json` list, [{"set": tree} | {"unset": tree}], an unset
    tree holding `null` (or `{}`) at each node removed; anything else raises."""
    entries = answer if isinstance(answer, list) else None
    if entries is None or not all(
        isinstance(e, dict) and len(e) == 1 and next(iter(e)) in ("set", "unset")
        and isinstance(next(iter(e.values())), dict) for e in entries
    ):  # fmt: skip
        raise TransportError(f"{shown}: not a list of {{set|unset: {{...}}}} (UNCONFIRMED form)")
    lines = []
    for entry in entries:
        for op, tree in entry.items():
            for path, value in plan.leaves(tree).items():
                if op == "set":
                    lines.append(_line(path, value))
                else:
                    lines += plan.cli_lines([{"op": "unset", "path": list(path)}])
    return lines


def _before(applied: dict, op: dict) -> list[str]:
    """The applied lines an operation replaces or removes (the diff's `before`)."""
    node = applied
    for key in op["path"]:
        if not isinstance(node, dict) or key not in node:
            return []
        node = node[key]
    found = plan.leaves(node, tuple(op["path"])) if isinstance(node, dict) and node else {
        tuple(op["path"]): node}  # fmt: skip
    return [_line(path, value) for path, value in found.items()]
