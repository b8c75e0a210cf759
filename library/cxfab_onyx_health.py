#!/usr/bin/python
"""Health checks of an Onyx switch pair after a deployment."""

from __future__ import annotations

import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.onyx import health
from ansible.module_utils.cxfab.onyx.secrets import redact
from ansible.module_utils.cxfab.onyx.session import OnyxSession, SessionError
from ansible.module_utils.cxfab.onyx.structured import StructuredConfigError, build
from ansible.module_utils.cxfab.onyx.version import VersionError, release_from_show_version

DOCUMENTATION = r"""
module: cxfab_onyx_health
short_description: Check an Onyx MLAG pair (MLAG, VIP, MPOs, MAGP, VRRP, saved config)
description:
  - Connects to one or both peers of a switch pair, reads C(show mlag),
    C(show mlag-vip), C(show interfaces mlag-port-channel summary),
    C(show magp), C(show vrrp) and C(show configuration files), and compares
    them with the structured config built from the fabric.
  - Each check returns C(id), C(target), C(category), C(status) (pass/fail),
    C(expected), C(observed), C(message) and C(scope) (local/pair).
  - Read-only; never reports a change.
options:
  fabric:
    description: The normalised fabric without credentials.
    type: dict
    required: true
  switch:
    description: The switch whose pair is checked.
    type: str
    required: true
  scope:
    description:
      - C(all) checks both peers' own config and everything they share (verify.yml,
        once per pair).
      - C(pair) checks this switch and everything the two peers share;
        C(core) checks this switch's own config plus the MLAG itself (Up, IPL Up,
        VIP nodes, same system MAC), used while the partner waits for its turn;
        C(local) checks only this switch's own config (used while its partner is still blank).
    type: str
    choices: [local, core, pair, all]
    default: pair
  username:
    description: CLI user.
    type: str
    required: true
  password:
    description: CLI password (never logged).
    type: str
    required: true
    no_log: true
  wait:
    description: Seconds to wait for every check to pass before giving up.
    type: int
    default: 0
  interval:
    description: Seconds between two rounds of checks while waiting.
    type: int
    default: 3
  fail_on_unhealthy:
    description: Fail when a check still fails after C(wait).
    type: bool
    default: true
"""

RETURN = r"""
checks:
  description: All checks of the last round.
  returned: always
  type: list
failed_checks:
  description: The checks whose status is fail.
  returned: always
  type: list
healthy:
  description: Every check passed.
  returned: always
  type: bool
partner_has_mlag:
  description: The partner switch runs MLAG (its pair can be checked as a pair).
  returned: always
  type: bool
releases:
  description: Onyx release per switch (numeric comparison is done by cxfab).
  returned: always
  type: dict
"""


def _collect(structured, username, password):
    """Show outputs of one switch: ({name: text or None}, {name: error}, release)."""
    outputs, errors, release = {}, {}, None
    management = structured["management"]
    try:
        with OnyxSession(management["address"], management["port"], username, password) as s:
            text, _ = s.try_show("show version")
            if text:
                try:
                    release = release_from_show_version(text)
                except VersionError:
                    release = None
            for name in [*health.needed_shows(structured), "running"]:
                command = "show running-config" if name == "running" else health.SHOW_COMMANDS[name]
                outputs[name], error = s.try_show(command)
                if error:
                    errors[name] = error
    except SessionError as exc:
        for name in health.needed_shows(structured):
            outputs[name] = None
            errors[name] = str(exc)
    return outputs, errors, release


# What must hold while the partner still waits for its turn: the MLAG itself.
# MPO, MAGP and VRRP states of objects the partner has not got yet are checked
# after the partner's turn.
CORE_CHECKS = frozenset({"mlag.enabled", "mlag.oper", "mlag.ipl_state", "mlag_vip.nodes"})


def _selected(check: dict, own: bool, scope: str) -> bool:
    if scope == "all":
        return True
    if scope == "local":
        return own and check["scope"] == "local"
    if scope == "core":
        return (own and check["scope"] == "local") or check["id"] in CORE_CHECKS
    # pair: everything of this switch; of the partner what the pair shares (its
    # own config is checked on its turn).
    return own or check["scope"] == "pair"


def _round(structures, switch, scope, username, password):
    names = [switch] if scope == "local" else sorted(structures)
    checks, outputs, releases = [], {}, {}
    for name in names:
        outputs[name], errors, releases[name] = _collect(structures[name], username, password)
        found = health.switch_checks(structures[name], outputs[name], errors)
        checks += [c for c in found if _selected(c, name == switch, scope)]
    if scope == "core":
        checks += [
            c
            for c in health.pair_checks(structures[switch]["pair"], structures, outputs)
            if c["id"] == "mlag.system_mac_equal"
        ]
    if scope in ("pair", "all"):
        checks += health.pair_checks(structures[switch]["pair"], structures, outputs)
    return checks, outputs, releases


def main():
    module = AnsibleModule(
        argument_spec={
            "fabric": {"type": "dict", "required": True},
            "switch": {"type": "str", "required": True},
            "scope": {
                "type": "str",
                "choices": ["local", "core", "pair", "all"],
                "default": "pair",
            },
            "username": {"type": "str", "required": True},
            "password": {"type": "str", "required": True, "no_log": True},
            "wait": {"type": "int", "default": 0},
            "interval": {"type": "int", "default": 3},
            "fail_on_unhealthy": {"type": "bool", "default": True},
        },
        supports_check_mode=True,
    )
    p = module.params
    try:
        mine = build(p["fabric"], p["switch"])
        structures = {p["switch"]: mine, mine["partner"]: build(p["fabric"], mine["partner"])}
    except StructuredConfigError as exc:
        module.fail_json(msg=f"fabric {exc}")

    deadline = time.monotonic() + max(p["wait"], 0)
    while True:
        checks, outputs, releases = _round(
            structures, p["switch"], p["scope"], p["username"], p["password"]
        )
        failed = [c for c in checks if c["status"] == "fail"]
        if not failed or time.monotonic() >= deadline:
            break
        time.sleep(max(p["interval"], 1))

    partner_running = outputs.get(mine["partner"], {}).get("running")
    if partner_running is None and p["scope"] == "local":
        partner_outputs, _, _ = _collect(
            {**structures[mine["partner"]], "mlag": None, "magp": [], "vrrp": []},
            p["username"],
            p["password"],
        )
        partner_running = partner_outputs.get("running")
    partner_has_mlag = bool(partner_running) and "protocol mlag" in partner_running

    for check in checks:
        check["observed"] = redact(str(check["observed"]), [p["password"]])
        check["message"] = redact(str(check["message"]), [p["password"]])
    result = {
        "changed": False,
        "checks": checks,
        "failed_checks": failed,
        "healthy": not failed,
        "partner_has_mlag": partner_has_mlag,
        "releases": releases,
    }
    if failed and p["fail_on_unhealthy"]:
        summary = "; ".join(
            f"{c['target']} {c['id']}: expected {c['expected']}, observed {c['observed']}"
            for c in failed[:8]
        )
        module.fail_json(msg=f"pair {mine['pair']} is not healthy: {summary}", **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
