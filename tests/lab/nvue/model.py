"""The state of one emulated Cumulus Linux switch as NVUE holds it: the applied tree,
the revisions, the confirm timer, and the operational views the health reads ask for.

Sources (docs/lab-nvue.md has the table): the Cumulus Linux 5.9 user guide's
"NVUE API" page (CumulusNetworks/docs content/cumulus-linux-59/System-Configuration/
NVIDIA-User-Experience-NVUE/NVUE-API.md) for the revision flow, the revision and
issue shapes, `null` unsets and root DELETE; the NVUE command reference "Config
Commands" for `nv config apply --confirm <time>` (rolls back by itself unless
confirmed). What no page shows - the API form of the confirm timer, of the confirm
answer and the state names around it - is this emulator's own and UNCONFIRMED.
"""

from __future__ import annotations

import copy
import json
import os
import re
import threading
import time

from module_utils.cxfab.switch.nvue import spec

from .diff import diff
from .peering import Peering

BUILD = "Cumulus Linux 5.9.2"  # `GET /nvue_v1/system` "build" (NVUE API page shows 5.4.0's)
# `nv config apply` saves by itself from 5.9 (Config Commands): applied and saved at once.
APPLIED = "applied_and_saved"
AWAITING = "confirm"  # UNCONFIRMED: applied, waiting for the confirm answer
ROLLED_BACK = "confirm_fail"  # UNCONFIRMED: the timer ran out or the answer was no
CONFIRM_TIME = re.compile(r"^([1-9][0-9]{0,5})s$")  # UNCONFIRMED API form of `--confirm 300s`
FAULTS = ("peer-down", "vrr-down", "refuse-apply")
VRRP_SHOW = ("ip", "vrrp", "virtual-router")  # nv show interface vlanN ip vrrp virtual-router


class Garbled(str):
    """A show answer the lab cuts short (fault `garble-paths`): sent as text, not JSON."""


class Refused(ValueError):
    """The request is refused with HTTP 400; `problems` are "path: reason" texts."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


class NotFound(LookupError):
    pass


def _walk(tree: dict, path: tuple, create: bool = False):
    node = tree
    for key in path:
        if not isinstance(node, dict):
            raise NotFound("/".join(path))
        if key not in node:
            if not create:
                raise NotFound("/".join(path))
            node[key] = {}
        node = node[key]
    return node


def merge(tree: dict, path: tuple, body) -> None:
    """PATCH semantics: objects merge key by key, `null` removes, anything else replaces."""
    if not path and not isinstance(body, dict):
        raise Refused(["(root): expected an object"])
    if not isinstance(body, dict):
        parent = _walk(tree, path[:-1], create=True)
        if body is None:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = body
        return
    node = _walk(tree, path, create=True)
    for key, value in body.items():
        if value is None:
            node.pop(key, None)
        elif isinstance(value, dict) and value and isinstance(node.get(key), dict):
            merge(node, (key,), value)
        else:
            node[key] = copy.deepcopy(value)


def _issue(code: str, message: str, location: str = "") -> dict:
    """A revision's `transition.issue` entry in the shape of the NVUE API page."""
    return {
        "0": {
            "code": code,
            "data": {"location": location, "reason": message},
            "message": message,
            "severity": "error",
        }
    }


class Switch:
    def __init__(self, name: str, role: str = "primary"):
        self.name, self.role = name, role
        self.lock = threading.RLock()
        self.applied: dict = {}
        self.applied_rev = "0"
        self.revisions: dict[str, dict] = {}
        self.next_id = 1
        self.created = 0  # revisions created (POST /revision)
        self.refusals: list[dict] = []  # every request answered 400, with why
        self.faults: set[str] = set()
        self.refused_paths: list[str] = []  # lab fault: paths the schema "does not know"
        self.garbled_paths: list[str] = []  # lab fault: show paths answered with cut JSON
        self._timer: threading.Timer | None = None
        # The MLAG peer as the lab pair's keepalive reports it (peering.py); off (the
        # integration tests' lone processes): the peer reads alive while MLAG is on.
        self.peering = Peering(self)
        self.startup_path: str | None = None  # where applies are saved (the lab pair's)

    # ---------------------------------------------------------------- revisions
    def create_revision(self) -> tuple[str, dict]:
        with self.lock:
            rev = str(self.next_id)
            self.next_id += 1
            self.created += 1
            self.revisions[rev] = {
                "state": "pending",
                "tree": copy.deepcopy(self.applied),
                "transition": {"issue": {}, "progress": ""},
                "times": {"created": time.time()},  # the lab's record: one peer at a time
            }
            return rev, self.public(rev)

    def public(self, rev: str) -> dict:
        record = self.revisions[rev]
        return {"state": record["state"], "transition": copy.deepcopy(record["transition"])}

    def pending(self, rev: str) -> dict:
        record = self.revisions.get(rev)
        if record is None:
            raise NotFound(f"revision {rev}")
        if record["state"] != "pending":
            raise Refused([f"revision {rev}: state {record['state']}, not pending"])
        return record

    def check_body(self, path: tuple, body) -> None:
        """Every PATCH/DELETE body against the kept spec parts, plus the lab's refused paths."""
        problems = spec.validate(body, at=path)
        dotted = ".".join(path)
        for refused in self.refused_paths:
            touched = [dotted] if body is None or not isinstance(body, dict) else []
            touched += (
                [".".join((*path, *p)) for p in _paths(body)] if isinstance(body, dict) else []
            )
            if any(t == refused or t.startswith(refused + ".") for t in touched):
                problems.append(f"{refused}: not a path of this release's schema (lab fault)")
        if problems:
            raise Refused(problems)

    def patch(self, rev: str, path: tuple, body) -> dict:
        with self.lock:
            record = self.pending(rev)
            self.check_body(path, body)
            merge(record["tree"], path, body)
            try:
                return copy.deepcopy(_walk(record["tree"], path))
            except NotFound:
                return {}

    def delete(self, rev: str, path: tuple) -> dict:
        with self.lock:
            record = self.pending(rev)
            if path:
                self.check_body(path, None)
                merge(record["tree"], path, None)
            else:
                record["tree"] = {}  # "Replace an Entire Configuration", step 3
            return {}

    def detach(self, rev: str) -> None:
        with self.lock:
            self.pending(rev)
            del self.revisions[rev]

    def change_state(self, rev: str, body) -> dict:
        """PATCH /revision/<rev>: apply (with or without a confirm timer) or answer a
        waiting confirm. Anything else is refused."""
        with self.lock:
            record = self.revisions.get(rev)
            if record is None:
                raise NotFound(f"revision {rev}")
            problems = _state_body_problems(body)
            if problems:
                raise Refused(problems)
            answer = body.get("auto-prompt", {}).get("confirm")
            if record["state"] == AWAITING:
                if answer is None or "confirm" in body:
                    raise Refused(
                        [f"revision {rev}: awaiting confirm; answer confirm_yes or confirm_no"]
                    )
                self._cancel_timer()
                if answer == "confirm_yes":
                    record["state"] = APPLIED
                    self.save_startup()
                    record["times"]["confirmed"] = time.time()
                else:
                    self._roll_back(rev, "Confirm answered no: rolled back")
                return self.public(rev)
            if answer is not None:
                raise Refused([f"revision {rev}: nothing awaits a confirm answer"])
            self.pending(rev)
            if any(r["state"] == AWAITING for r in self.revisions.values()):
                raise Refused(["another revision awaits its confirm"])
            if "refuse-apply" in self.faults:
                record["state"] = "invalid"
                record["transition"] = {
                    "issue": _issue("config_invalid", "Config invalid (lab fault refuse-apply)"),
                    "progress": "Invalid config",
                }
                return self.public(rev)
            record["previous"] = (self.applied_rev, self.applied)
            record["times"]["applied"] = time.time()
            self.applied, self.applied_rev = copy.deepcopy(record["tree"]), rev
            confirm = body.get("confirm")
            if confirm is None:
                record["state"] = APPLIED
                self.save_startup()
            else:
                record["state"] = AWAITING
                seconds = int(CONFIRM_TIME.match(confirm).group(1))
                record["deadline"] = time.monotonic() + seconds
                self._timer = threading.Timer(seconds, self._expire, args=(rev,))
                self._timer.daemon = True
                self._timer.start()
            return self.public(rev)

    def save_startup(self) -> None:
        """From 5.9 `nv config apply` also saves (Config Commands): a switch that restarts
        comes back with what was applied and confirmed, never with a revision awaiting
        its confirm (the lab pair's `revive` reads this file back: --startup)."""
        if self.startup_path:
            partial = self.startup_path + ".tmp"
            with open(partial, "w", encoding="utf-8") as handle:
                json.dump(self.applied, handle)
            os.replace(partial, self.startup_path)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self, rev: str) -> None:
        with self.lock:
            if self.revisions.get(rev, {}).get("state") == AWAITING:
                self._roll_back(rev, "Confirm timer expired: rolled back")

    def _roll_back(self, rev: str, why: str) -> None:
        record = self.revisions[rev]
        self.applied_rev, self.applied = record["previous"]
        record["state"] = ROLLED_BACK
        record["transition"] = {"issue": _issue("confirm_fail", why), "progress": why}
        self._timer = None

    # ---------------------------------------------------------------- reads
    def read(self, path: tuple, rev: str | None):
        with self.lock:
            if rev in (None, "operational"):
                view = self.operational(path)
                if view is not None and "/".join(path) in self.garbled_paths:
                    return Garbled(json.dumps(view)[: len(json.dumps(view)) // 2])
                if view is not None:
                    return view
                rev = "applied"
            if rev in ("applied", "startup"):
                tree = self.applied
            elif rev in self.revisions:
                tree = self.revisions[rev]["tree"]
            else:
                raise NotFound(f"revision {rev}")
            return copy.deepcopy(_walk(tree, path))

    def _tree_of(self, rev: str) -> dict:
        if rev in ("applied", "startup"):
            return self.applied
        if rev in self.revisions:
            return self.revisions[rev]["tree"]
        raise NotFound(f"revision {rev}")

    def diff(self, path: tuple, rev: str, against: str) -> list[dict]:
        """`?rev=<rev>&diff=<against>` (`nv config diff <rev> <against>`, diff.py): what
        takes revision `rev` to `against` below `path`; a path one of them lacks is empty."""
        with self.lock:
            trees = []
            for name in (rev, against):
                try:
                    trees.append(_walk(self._tree_of(name), path))
                except NotFound:
                    if name not in ("applied", "startup") and name not in self.revisions:
                        raise
                    trees.append({})
            return diff(*trees)

    def _peer_alive(self) -> bool:
        mlag = self.applied.get("mlag") or {}
        heard = self.peering.peer_alive() if self.peering.enabled else True
        return mlag.get("enable") == "on" and "peer-down" not in self.faults and heard

    def _backup_answers(self) -> bool:
        if self.peering.enabled:
            return self.peering.peer() is not None and "peer-down" not in self.faults
        return self._peer_alive()

    def operational(self, path: tuple):
        """What `nv show ... -o json` shows for the paths the health reads ask for, None
        otherwise: the applied fields plus the operational ones of the show tables in
        NVIDIA's pages (docs/lab-nvue.md "What it answers"); their JSON nesting follows
        the tables' indentation and is UNCONFIRMED."""
        interfaces = self.applied.get("interface") or {}
        if path == ("mlag",):
            mlag = copy.deepcopy(self.applied.get("mlag") or {})
            if not mlag:
                raise NotFound("mlag")
            alive = self._peer_alive()
            other = "secondary" if self.role == "primary" else "primary"
            mlag.update({
                # The operational column prints the MAC in lower case ("Check MLAG Status").
                "mac-address": str(mlag.get("mac-address", "")).lower(),
                "peer-alive": alive,
                "local-role": self.role if alive else "primary",
                "peer-role": other if alive else "",
                "peer-priority": 32768 if alive else "",
                "local-id": _lab_id(self.name),
                "peer-id": _lab_id(self.name + "-peer") if alive else "",
                # UNCONFIRMED meaning: True while the backup (management) link reaches
                # the peer (peering.py; alone: while the peer reads alive) and one is set.
                "backup-active": self._backup_answers() and bool(mlag.get("backup")),
                "backup-reason": "",
            })  # fmt: skip
            if "peerlink.4094" in interfaces:
                mlag["peer-interface"] = "peerlink.4094"
            return mlag
        if len(path) == 2 and path[0] == "interface":
            if path[1] not in interfaces:
                raise NotFound("/".join(path))
            data = copy.deepcopy(interfaces[path[1]])
            kind = data.get("type")
            up = True
            if kind == "peerlink":
                up = self._peer_alive() and bool((data.get("bond") or {}).get("member"))
            mlag = (data.get("bond") or {}).get("mlag")
            if kind == "bond" and mlag:
                local = self.peering.local_bonds().get(int(mlag.get("id", 0)), False)
                up = local and not self.peering.bonds_suspended()
            data.setdefault("link", {})["oper-status"] = "up" if up else "down"
            if kind == "bond" and mlag:
                dual = (
                    up
                    and self._peer_alive()
                    and (
                        not self.peering.enabled
                        or self.peering.peer_bond_up(int(mlag.get("id", 0)))
                    )
                )
                mlag["status"] = "dual" if dual else "single"
                if dual:
                    mlag["peer-interface"] = path[1]  # the peer's bond of the same MLAG id
            return data
        if len(path) == 4 and path[0] == "interface" and path[2:] == ("ip", "vrr"):
            vrr = copy.deepcopy(_walk(self.applied, path))
            down = "vrr-down" in self.faults or vrr.get("enable") != "on"
            vrr["state"] = "down" if down else "up"
            return vrr
        if len(path) == 5 and path[0] == "interface" and path[2:] == VRRP_SHOW:
            if path[1] not in interfaces:
                raise NotFound("/".join(path))
            if not self.peering.enabled:
                self.peering.tick()  # alone: no keepalive ticks it, no advertisement heard
            return self.peering.elections.show(self.applied, path[1])
        if path == ("qos", "roce"):
            roce = copy.deepcopy(_walk(self.applied, path))
            if roce.get("mode") == "lossless":  # the RoCE page's `nv show qos roce` table
                roce.update({
                    "pfc": {"pfc-priority": 3, "rx-enabled": "enabled", "tx-enabled": "enabled"},
                    "trust": {"trust-mode": "pcp,dscp"},
                    "congestion-control": {"congestion-mode": "ECN", "enabled-tc": "0,3"},
                })  # fmt: skip
            return roce
        if path == ("system",):
            return {"build": BUILD, "hostname": self.name, "timezone": "Etc/UTC", "uptime": 1}
        return None

    def status(self) -> dict:
        with self.lock:
            return {
                "name": self.name,
                "applied_rev": self.applied_rev,
                "applied": copy.deepcopy(self.applied),
                "revisions_created": self.created,
                "revisions": {
                    r: {"state": v["state"], **v["times"]} for r, v in self.revisions.items()
                },
                "refusals": list(self.refusals),
                "faults": sorted(self.faults),
                "refused_paths": list(self.refused_paths),
                "garbled_paths": list(self.garbled_paths),
                "peer_heard": self.peering.peer() is not None,
                "ipl_cut": self.peering.ipl_cut,
            }


def _lab_id(name: str) -> str:
    """A stable local-id/peer-id (a MAC in the show table) for the lab's switch."""
    digest = f"{sum(map(ord, name)) & 0xFFFF:04x}"
    return f"44:38:39:00:{digest[:2]}:{digest[2:]}"


def _paths(body: dict, here: tuple = ()) -> list[tuple]:
    out = []
    for key, value in body.items():
        out.append((*here, str(key)))
        if isinstance(value, dict):
            out += _paths(value, (*here, str(key)))
    return out


def _state_body_problems(body) -> list[str]:
    """The revision PATCH bodies this emulator takes: the API page's apply body, with an
    optional confirm timer or confirm answer (both UNCONFIRMED forms)."""
    if not isinstance(body, dict):
        return ["(root): expected an object"]
    problems = [
        f"{key}: not a revision field"
        for key in body
        if key not in ("state", "auto-prompt", "confirm")
    ]
    if body.get("state") != "apply":
        problems.append(f"state: {body.get('state')!r} is not one of ['apply']")
    prompt = body.get("auto-prompt", {})
    if not isinstance(prompt, dict):
        return [*problems, "auto-prompt: expected an object"]
    problems += [f"auto-prompt.{k}: not a prompt" for k in prompt if k not in ("ays", "confirm")]
    if prompt.get("ays") != "ays_yes":
        problems.append("auto-prompt.ays: must be 'ays_yes' (a prompt would time out: ays_fail)")
    if prompt.get("confirm") not in (None, "confirm_yes", "confirm_no"):
        problems.append(f"auto-prompt.confirm: {prompt['confirm']!r} is not confirm_yes|confirm_no")
    if "confirm" in body and not (
        isinstance(body["confirm"], str) and CONFIRM_TIME.match(body["confirm"])
    ):
        problems.append(f"confirm: {body['confirm']!r} is not a time like '300s'")
    return problems
