"""cxfab_nic_firmware, controller side: query first, ship the image only for a burn.

With `src` (the image on the controller) one task does the whole card:
  1. the module queries the card (one module call on the host);
  2. when the flash already holds the target with the expected PSID, that is the
     answer: nothing is shipped (the activation may still be pending);
  3. otherwise the image is checked on the controller (it exists, its sha256 is the
     inventory's), transferred into the task's temporary directory on the host (a
     file transfer, no module call) and the module burns from there, after checking
     sha256, version and PSID again on the host. The temporary copy is removed
     whatever happened, so no image is left on the host. Check mode ships it too (and
     removes it): the image's PSID and version are then checked in check mode as well.
Without `src` the module runs as written (an image already on the host).
"""

from __future__ import annotations

import hashlib
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

MODULE = "cxfab_nic_firmware"
# The module options a query needs (no image, no burn policy).
QUERY_OPTIONS = ("device", "version", "query_tool", "flint_path", "fwmanager_path", "fwreset_path")


def sha256_of(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def image_problem(path: str, expected_sha256: str) -> str | None:
    """Why the controller's image must not be shipped, or None."""
    if not os.path.isfile(path):
        return f"image {path} does not exist on the controller"
    actual = sha256_of(path)
    if actual != expected_sha256.strip().lower():
        return (
            f"sha256 mismatch for {path}: the file has {actual}, "
            f"the inventory expects {expected_sha256.strip().lower()}"
        )
    return None


def nothing_to_burn(state: dict, psid: str | None) -> bool:
    """The query shows the target in flash with the PSID the inventory expects."""
    return bool(state.get("target_in_flash")) and (not psid or psid == state.get("psid"))


class ActionModule(ActionBase):
    TRANSFERS_FILES = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp  # unused: the transfer makes its own temporary directory
        args = dict(self._task.args)
        src = args.pop("src", None)
        base_dir = args.pop("src_base_dir", None)
        error_path = args.pop("error_path", None) or "firmware"
        if src is None:
            result.update(self._execute_module(MODULE, module_args=args, task_vars=task_vars))
            return result
        if args.get("state", "present") != "present":
            raise AnsibleActionFail("src: only with state=present (a query needs no image)")
        for name in ("version", "sha256"):
            if not args.get(name):
                raise AnsibleActionFail(f"{name}: required with src")

        query = {k: args[k] for k in QUERY_OPTIONS if args.get(k) is not None}
        query["state"] = "query"
        state = self._execute_module(MODULE, module_args=query, task_vars=task_vars)
        if state.get("failed"):
            result.update(state)
            return result
        if nothing_to_burn(state, args.get("psid")):
            result.update(state)
            result["changed"] = False
            device, running = state["device"], state["running_version"]
            result["msg"] = (
                f"{device}: {args['version']} in flash, activation pending (running {running})"
                if state.get("pending_activation")
                else f"{device}: running {args['version']}, nothing to do"
            )
            return result

        path = src if os.path.isabs(src) else os.path.join(base_dir or "", src)
        problem = image_problem(path, args["sha256"])
        if problem:
            result.update(failed=True, msg=f"{error_path}: {problem}; nothing was copied or burned")
            return result
        remote_tmp = self._make_tmp_path()
        try:
            remote_image = self._connection._shell.join_path(remote_tmp, os.path.basename(path))
            self._transfer_file(path, remote_image)
            self._fixup_perms2((remote_tmp, remote_image))
            args["image"] = remote_image
            result.update(self._execute_module(MODULE, module_args=args, task_vars=task_vars))
        finally:
            self._remove_tmp_path(remote_tmp)
        return result
