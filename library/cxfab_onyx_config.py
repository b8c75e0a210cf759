#!/usr/bin/python
"""Deploy an intended config to an Onyx switch: only the missing or different lines."""

from __future__ import annotations

import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.onyx.parser import parse_running_config
from ansible.module_utils.cxfab.onyx.plan import Scope, make_plan
from ansible.module_utils.cxfab.onyx.secrets import redact
from ansible.module_utils.cxfab.onyx.session import OnyxSession, SessionError
from ansible.module_utils.cxfab.onyx.version import VersionError, release_from_show_version

DOCUMENTATION = r"""
module: cxfab_onyx_config
short_description: Bring an Onyx switch to its intended config, line by line
description:
  - Reads C(show running-config), parses it and the intended config into the
    same statements, and sends only the missing or different lines, removals
    first in teardown order, then additions in build order.
  - Backs up the running config (secrets redacted) before any change, runs
    C(configuration write) only when something changed, then reads the
    running config again and fails if the switch did not converge.
  - In check mode nothing is sent; C(lines) lists exactly what would be sent.
  - Runs on the controller (C(connection: local)) over SSH with netmiko C(mellanox_mlnxos).
options:
  host:
    description: Management address of the switch.
    type: str
    required: true
  port:
    description: SSH port of the switch CLI.
    type: int
    default: 22
  username:
    description: CLI user.
    type: str
    required: true
  password:
    description: CLI password (never logged).
    type: str
    required: true
    no_log: true
  intended_path:
    description: Rendered intended config (C(build/configs/<switch>.cfg)).
    type: path
    required: true
  structured_path:
    description: Structured config of the switch (managed scope).
    type: path
    required: true
  backup_dir:
    description: Directory for C(<timestamp>.cfg) backups of this switch.
    type: path
    required: true
  save:
    description: Run C(configuration write) after a change.
    type: bool
    default: true
  protected_address:
    description:
      - Address the Ansible connection uses. A change that would remove or
        readdress the SVI holding it is refused.
    type: str
"""

RETURN = r"""
lines:
  description: Lines sent (check mode - lines that would be sent).
  returned: always
  type: list
backup_path:
  description: Backup of the running config before the change.
  returned: changed
  type: str
release:
  description: Onyx release of the switch (C(show version)).
  returned: always
  type: str
"""


def _read(path, what, module):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        module.fail_json(msg=f"{what} {path}: cannot read it ({exc.strerror})")


def _guard(plan, current, address, module):
    """Refuse to touch the SVI whose subnet holds the management connection."""
    if not address:
        return
    from ansible.module_utils.cxfab.onyx.addressing import same_subnet

    for key, statement in current.statements.items():
        if key[0] != "svi_ip" or not same_subnet(statement.value, address):
            continue
        vlan = key[1]
        touched = [st for st in plan.removals if st.key in (("svi", vlan), ("svi_ip", vlan))]
        touched += [st for st in plan.additions if st.key == ("svi_ip", vlan)]
        if touched:
            module.fail_json(
                msg=f"interface vlan {vlan} carries the management connection to {address}; "
                "cxfab does not change or remove it",
                lines=plan.lines,
            )


def main():
    module = AnsibleModule(
        argument_spec={
            "host": {"type": "str", "required": True},
            "port": {"type": "int", "default": 22},
            "username": {"type": "str", "required": True},
            "password": {"type": "str", "required": True, "no_log": True},
            "intended_path": {"type": "path", "required": True},
            "structured_path": {"type": "path", "required": True},
            "backup_dir": {"type": "path", "required": True},
            "save": {"type": "bool", "default": True},
            "protected_address": {"type": "str"},
        },
        supports_check_mode=True,
    )
    import yaml

    p = module.params
    intended_text = _read(p["intended_path"], "intended config", module)
    structured = yaml.safe_load(_read(p["structured_path"], "structured config", module)) or {}
    intended = parse_running_config(intended_text)
    if intended.unknown:
        module.fail_json(
            msg=f"intended config {p['intended_path']}: lines cxfab cannot compare: "
            + "; ".join(intended.unknown[:5])
        )
    scope = Scope.from_structured(structured)
    secrets = [p["password"]]
    result = {"changed": False, "lines": [], "release": None}
    try:
        with OnyxSession(p["host"], p["port"], p["username"], p["password"]) as session:
            try:
                result["release"] = release_from_show_version(session.show("show version"))
            except VersionError as exc:
                module.warn(f"{session.where}: {exc}")
            running = session.show("show running-config")
            current = parse_running_config(running)
            plan = make_plan(intended, current, scope)
            _guard(plan, current, p["protected_address"], module)
            result["lines"] = plan.lines
            result["diff"] = [
                {
                    "before_header": f"{p['host']} running-config (managed statements)",
                    "after_header": f"{p['intended_path']} (managed statements)",
                    "before": plan.before,
                    "after": plan.after,
                },
                {
                    "prepared": "lines to send:\n" + "".join(f"  {line}\n" for line in plan.lines)
                    if plan.lines
                    else "lines to send: none\n"
                },
            ]
            if not plan.lines:
                module.exit_json(**result)
            result["changed"] = True
            if module.check_mode:
                module.exit_json(**result)

            os.makedirs(p["backup_dir"], exist_ok=True)
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            backup = os.path.join(p["backup_dir"], f"{stamp}.cfg")
            with open(backup, "w", encoding="utf-8") as handle:
                handle.write(redact(running, secrets))
            os.chmod(backup, 0o600)
            result["backup_path"] = backup

            session.configure(plan.lines)
            after = parse_running_config(session.show("show running-config"))
            left = make_plan(intended, after, scope)
            if left.lines:
                module.fail_json(
                    msg=f"{session.where}: the switch took the config but still differs "
                    "from the intent; left: " + "; ".join(left.lines[:10]),
                    **result,
                )
            if p["save"]:
                session.save()
    except SessionError as exc:
        module.fail_json(msg=redact(str(exc), secrets), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
