"""cxfab_workload_programs, controller side: ship the programs only when they changed.

One remote command reads the sha256 of the archive installed on the host and runs
`pingpong --help` there. When the archive equals the controller's, that is the whole
task: no module call, no transfer (a no-op run of the workload stage costs one SSH
command per host). Otherwise the archive is transferred into the task's temporary
directory and the module unpacks and checks it (library/cxfab_workload_programs.py).
"""

from __future__ import annotations

import hashlib
import os
import shlex

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

MODULE = "cxfab_workload_programs"
INSTALLED_ARCHIVE = "native-bin.tar"
CHECK_PROGRAM = "pingpong"
# The probe prints the installed archive's sha256 (or "none") and whether the check
# program runs; the program's own complaint goes to stderr.
RUNS_PREFIX = "cxfab-runs="


def probe_command(dest: str) -> str:
    archive = shlex.quote(os.path.join(dest, INSTALLED_ARCHIVE))
    program = shlex.quote(os.path.join(dest, "native", "build", CHECK_PROGRAM))
    return (
        f"{{ sha256sum -- {archive} 2>/dev/null || echo none; }}; "
        f"{program} --help >/dev/null; echo {RUNS_PREFIX}$?"
    )


def parse_probe(stdout: str) -> tuple[str | None, int | None]:
    """(installed sha256 or None, the check program's exit status or None)."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    installed = None
    if lines and lines[0] != "none":
        word = lines[0].split()[0]
        if len(word) == 64 and all(c in "0123456789abcdef" for c in word):
            installed = word
    runs = None
    if lines and lines[-1].startswith(RUNS_PREFIX):
        try:
            runs = int(lines[-1][len(RUNS_PREFIX) :])
        except ValueError:
            runs = None
    return installed, runs


def cannot_run_message(host: str, rc, output: str) -> str:
    return (
        f"{CHECK_PROGRAM} built on the controller does not run on {host} "
        f"(rc {rc}: {output.strip()[-300:]}). Install the runtime libraries "
        "(rdma_stack) or set rdma_workloads_build_on: host."
    )


def sha256_of(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class ActionModule(ActionBase):
    TRANSFERS_FILES = True
    _VALID_ARGS = frozenset(("src", "dest"))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp  # unused: the transfer makes its own temporary directory
        src, dest = self._task.args.get("src"), self._task.args.get("dest")
        if not src or not dest:
            raise AnsibleActionFail("src and dest are required")
        if not os.path.isfile(src):
            raise AnsibleActionFail(f"src: {src} does not exist on the controller")
        host = (task_vars or {}).get("inventory_hostname", "this host")
        wanted = sha256_of(src)
        probe = self._low_level_execute_command(probe_command(dest), sudoable=True)
        installed, runs = parse_probe(probe.get("stdout", ""))
        result["sha256"] = wanted
        if installed == wanted:
            if runs != 0:
                output = probe.get("stderr", "") or "no output"
                result.update(failed=True, msg=cannot_run_message(host, runs, output))
                return result
            result.update(changed=False, msg=f"programs up to date (sha256 {wanted[:12]})")
            return result
        if self._task.check_mode:
            before = installed[:12] if installed else "nothing"
            result.update(changed=True, msg=f"would install {wanted[:12]} over {before}")
            return result
        remote_tmp = self._make_tmp_path()
        try:
            remote = self._connection._shell.join_path(remote_tmp, INSTALLED_ARCHIVE)
            self._transfer_file(src, remote)
            self._fixup_perms2((remote_tmp, remote))
            args = {"archive": remote, "sha256": wanted, "dest": dest}
            installed_now = self._execute_module(MODULE, module_args=args, task_vars=task_vars)
            result.update(installed_now)
            if installed_now.get("cannot_run"):
                failure = installed_now["cannot_run"]
                result["msg"] = cannot_run_message(host, failure["rc"], failure["output"])
        finally:
            self._remove_tmp_path(remote_tmp)
        return result
