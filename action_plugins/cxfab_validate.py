"""Validate the whole fabric intent on the controller; never contacts a device.

Reads cxfab_fabric_name, cxfab_switch_pairs, cxfab_vlans, cxfab_workloads, cxfab_supported_cables
(group_vars/all) and cxfab_host of every host of group `hosts`, validates the
assembled fabric document (schema + semantic rules) and either fails listing
every error, one per line with its inventory key path, or sets the fact
`cxfab_fabric`: the normalised fabric every later stage reads
(`hostvars['localhost'].cxfab_fabric`).

The fact holds no switch credentials (`credentials: {}` in every pair): a fact
lives on in hostvars, fact caches and `-m debug var=hostvars` dumps. A task that
logs in to a switch reads the login from `cxfab_switch_pairs` itself (filter
`cxfab_switch_credentials`) and hands it only to a no_log module parameter.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ansible.errors import AnsibleActionFail, AnsibleError, AnsibleUndefinedVariable
from ansible.plugins.action import ActionBase

# cxfab.* lives in <repo>/module_utils; controller code imports it directly.
_MODULE_UTILS = str(Path(__file__).resolve().parent.parent / "module_utils")
if _MODULE_UTILS not in sys.path:
    sys.path.insert(0, _MODULE_UTILS)

from cxfab.intent import fabric as cxfab_fabric  # noqa: E402
from cxfab.intent import runstamp, secret_text  # noqa: E402
from cxfab.intent.validate import is_cxfab_name, make_error, paused_gc, validate_inventory  # noqa: E402
from cxfab.structured import public_fabric  # noqa: E402

try:  # ansible-core >= 2.19: only trusted strings are rendered (!unsafe ones are not)
    from ansible.template import is_trusted_as_template
except ImportError:  # pragma: no cover - older ansible-core renders every string

    def is_trusted_as_template(_value):
        return True


DOCUMENTATION = r"""
action: cxfab_validate
short_description: Validate the cxfab fabric intent and publish the normalised fabric
description:
  - Assembles the fabric document from the inventory variables of the whole
    inventory, checks it against the schema in C(module_utils/cxfab/intent/schema/) and the
    semantic cross-device rules, and returns it normalised as fact C(cxfab_fabric).
  - Runs on the controller only; no device is contacted.
options:
  hosts_group:
    description: Inventory group whose hosts carry C(cxfab_host).
    type: str
    default: hosts
"""


_CONNECTION_VARS = ("ansible_host", "ansible_port")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        # Reading thousands of hosts' variables allocates like validation does.
        with paused_gc():
            return self._validate(tmp, task_vars)

    def _validate(self, tmp, task_vars):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        # Validated earlier in this very run (site.yml imports validate.yml per stage):
        # only a stamp of this process counts, never a fact from a cache or inventory.
        stamp = runstamp.current()
        validated_now = task_vars.get(runstamp.FABRIC_STAMP_FACT) == stamp
        if validated_now and isinstance(task_vars.get("cxfab_fabric"), dict):
            result.update(changed=False, msg="the fabric was validated earlier in this run")
            return result
        _, args = self.validate_argument_spec(
            argument_spec={"hosts_group": {"type": "str", "default": cxfab_fabric.HOSTS_GROUP}}
        )
        groups = {name: list(hosts) for name, hosts in task_vars.get("groups", {}).items()}
        hostvars = task_vars["hostvars"]

        # Every cxfab_* variable of group_vars/all: the fabric ones are read, any
        # other one that is no run setting is reported (a misspelled section name
        # would otherwise drop the whole section silently).
        fabric_vars = {}
        self._secret_errors = []
        for var in self._fabric_var_names(task_vars):
            found, value = self._group_var(var, task_vars, hostvars, groups)
            if found:
                fabric_vars[var] = value

        # One raw read per inventory host (no templating of the whole host: with
        # thousands of hosts that cost more than the validation itself); only the
        # strings that hold a template are rendered, in that host's context.
        host_vars, host_settings = {}, {}
        members = groups.get(args["hosts_group"], [])
        for host in dict.fromkeys(members + groups.get(cxfab_fabric.SWITCHES_GROUP, [])):
            raw = hostvars.raw_get(host)
            templar = _LazyHostTemplar(self._templar, raw)
            settings = {var: templar.render(raw[var]) for var in _CONNECTION_VARS if var in raw}
            settings.update(
                dict.fromkeys(
                    var
                    for var in raw
                    if is_cxfab_name(var) and var not in cxfab_fabric.FABRIC_VARS.values()
                )
            )
            settings.pop(cxfab_fabric.HOST_VAR, None)
            host_settings[host] = settings
            if host in members:
                host_vars[host] = templar.render(raw.get(cxfab_fabric.HOST_VAR))

        try:
            outcome = validate_inventory(fabric_vars, host_vars, groups, host_settings)
        except Exception as error:  # a defect in a rule must still fail cleanly
            raise AnsibleActionFail(
                f"cxfab_validate: internal error {type(error).__name__}: {error}"
            ) from error
        if self._secret_errors or not outcome.ok:
            lines = [str(error) for error in [*self._secret_errors, *outcome.errors]]
            result.update(
                failed=True,
                changed=False,
                msg=f"The fabric intent has {len(lines)} error(s):\n" + "\n".join(lines),
            )
            return result

        result.update(
            changed=False,
            ansible_facts={
                "cxfab_fabric": public_fabric(outcome.fabric),
                runstamp.FABRIC_STAMP_FACT: stamp,
            },
            msg=f"fabric {outcome.fabric['fabric_name']} is valid",
        )
        return result

    @staticmethod
    def _fabric_var_names(task_vars):
        names = {var for var in task_vars if is_cxfab_name(var)}
        names -= {
            cxfab_fabric.HOST_VAR,
            "cxfab_fabric",
            runstamp.FABRIC_STAMP_FACT,
            runstamp.STRUCTURED_STAMP_FACT,
        }
        return sorted(names | set(cxfab_fabric.FABRIC_VARS.values()))

    def _group_var(self, var, task_vars, hostvars, groups):
        """(found, value) of a variable of group_vars/all, templated (vault values decrypted)."""
        if var in task_vars:
            value = task_vars[var]
            if var == cxfab_fabric.FABRIC_VARS["switch_pairs"]:
                value = self._passwords_as_written(value, task_vars)
            try:
                return True, _render(self._templar, value)
            except AnsibleError as error:
                raise AnsibleError(f"{var}: cannot be templated: {error}") from error
        # Not visible on this host (e.g. defined for group 'all' of another inventory
        # source only): take it from the first inventory host, which group_vars/all
        # reaches like every other. One host, not all of them: a variable absent from
        # the fabric (an optional section) cost a full read of every host's variables.
        for host in groups.get("all", [])[:1]:
            raw = hostvars.raw_get(host)
            if var in raw:
                return True, _LazyHostTemplar(self._templar, raw).render(raw[var])
        return False, None

    def _passwords_as_written(self, pairs, task_vars):
        """`pairs` with each password taken as written (or its reference rendered), never
        rendered by the whole-variable pass; refused ones are listed in _secret_errors."""
        if not isinstance(pairs, list):
            return pairs
        templar = self._templar

        def is_template(value):
            return is_trusted_as_template(value) and templar.is_possibly_template(value)

        def lookup(name):
            return task_vars[name]

        guarded = []
        for index, pair in enumerate(pairs):
            login = pair.get("credentials") if isinstance(pair, dict) else None
            if not isinstance(login, dict) or "password" not in login:
                guarded.append(pair)
                continue
            raw = login["password"]
            reason = secret_text.problem(raw, is_template, lookup)
            value = raw
            if reason is None and (is_template(raw) or not isinstance(raw, str)):
                try:
                    value = templar.template(raw)
                    reason = secret_text.rendered_problem(value)
                except AnsibleUndefinedVariable:
                    reason = "<hidden>: the variable it names is not defined (is the vault loaded?)"
                except AnsibleError as error:
                    reason = f"<hidden>: cannot be rendered ({type(error).__name__})"
            if reason:
                path = ("switch_pairs", index, "credentials", "password")
                self._secret_errors.append(make_error(path, reason, rule="secret-as-written"))
                value = secret_text.REFUSED
            guarded.append({**pair, "credentials": {**login, "password": _AsWritten(value)}})
        return guarded


class _AsWritten:
    """A value `_render` hands on untouched."""

    def __init__(self, value):
        self.value = value


_PLAIN_LEAVES = (int, float, bool, type(None))


def _render(templar, value):
    """`value` with the strings that hold a template rendered (everything else as is).

    Equivalent to templating the whole value, but a tree of thousands of plain
    strings is walked once instead of through the template engine.
    """
    if isinstance(value, str):
        return templar.template(value) if templar.is_possibly_template(value) else value
    if isinstance(value, dict):
        return {key: _render(templar, item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_render(templar, item) for item in value]
    if isinstance(value, _PLAIN_LEAVES):
        return value
    if isinstance(value, _AsWritten):
        return value.value
    return templar.template(value)  # e.g. a vault-encrypted string: decrypt it


class _LazyHostTemplar:
    """Renders values in one host's variable context; the templar is made on first use."""

    def __init__(self, templar, host_vars):
        self._parent = templar
        self._host_vars = host_vars
        self._templar = None

    def template(self, value):
        if self._templar is None:
            self._templar = self._parent.copy_with_new_env(available_variables=self._host_vars)
        return self._templar.template(value)

    def is_possibly_template(self, value):
        return self._parent.is_possibly_template(value)

    def render(self, value):
        return _render(self, value)
