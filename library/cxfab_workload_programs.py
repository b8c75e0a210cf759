#!/usr/bin/python
"""Ansible module: install the workload programs the controller built, and prove they run."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: cxfab_workload_programs
short_description: Install the controller's build of native/ on a host and prove it runs there
description:
  - The action plugin of the same name compares the sha256 of the archive installed on
    the host with the controller's and ships the archive only when they differ; then this
    module checks the shipped archive, unpacks it into a fresh directory, moves the
    programs into O(dest)C(/native/build), keeps the archive as O(dest)C(/native-bin.tar)
    (what the next run compares) and runs C(pingpong --help).
  - When the archives are equal the action plugin runs C(pingpong --help) itself, with no
    module call - a no-op run costs one remote command.
  - A host that cannot run the programs (another architecture, an older glibc, no
    rdma-core) fails with the loader's own words and the fix.
options:
  src:
    description: The archive on the controller (action plugin); the module gets O(archive).
    type: path
  archive: {description: Path of the shipped archive on the host, type: path}
  sha256: {description: Expected sha256 of the archive, type: str}
  dest: {description: Install directory on the host, type: path, required: true}
author: cxfab
"""

EXAMPLES = r"""
- name: Install the programs the controller built
  cxfab_workload_programs:
    src: build/native-bin.tar
    dest: /opt/cxfab
"""

RETURN = r"""
sha256: {description: sha256 of the installed archive, returned: always, type: str}
cannot_run:
  description: rc and output of the check program when it does not run (failure)
  returned: failure
  type: dict
programs: {description: The installed programs, returned: changed, type: list}
"""

# The program that links the most libraries of the three: if it runs, they all do.
CHECK_PROGRAM = "pingpong"


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "src": {"type": "path"},
            "archive": {"type": "path"},
            "sha256": {"type": "str"},
            "dest": {"type": "path", "required": True},
        },
        required_together=[("archive", "sha256")],
        supports_check_mode=False,
    )
    p = module.params
    if p["src"] or not p["archive"]:
        module.fail_json(
            msg="archive: the cxfab_workload_programs action plugin ships src and sets it "
            "(action_plugins/ in ansible.cfg)"
        )
    actual = sha256_of(p["archive"])
    if actual != p["sha256"]:
        module.fail_json(msg=f"the shipped archive has sha256 {actual}, expected {p['sha256']}")
    native = os.path.join(p["dest"], "native")
    build = os.path.join(native, "build")
    os.makedirs(build, mode=0o755, exist_ok=True)
    # Unpacked beside its destination, then moved program by program: a run never
    # sees a half-written program, and a failed unpack leaves the old ones in place.
    staging = tempfile.mkdtemp(prefix=".unpack-", dir=native)
    try:
        module.run_command(
            ["tar", "--no-same-owner", "-xf", p["archive"], "-C", staging], check_rc=True
        )
        programs = sorted(os.listdir(staging))
        for name in programs:
            if os.sep in name or name.startswith("."):
                module.fail_json(msg=f"the archive holds an unexpected entry {name!r}")
            os.chmod(os.path.join(staging, name), 0o755)
            os.replace(os.path.join(staging, name), os.path.join(build, name))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    shutil.copyfile(p["archive"], os.path.join(p["dest"], "native-bin.tar"))
    try:
        rc, out, err = module.run_command(
            [os.path.join(build, CHECK_PROGRAM), "--help"], handle_exceptions=False
        )
    except OSError as exc:  # e.g. a loader (ELF interpreter) the host does not have
        rc, out, err = 126, "", str(exc)
    if rc != 0:
        # The action plugin words the failure with the host's inventory name.
        module.fail_json(
            msg=f"{CHECK_PROGRAM} --help exited {rc}",
            cannot_run={"rc": rc, "output": (err or out).strip()[-300:]},
            sha256=actual,
        )
    module.exit_json(
        changed=True,
        sha256=actual,
        programs=programs,
        msg=f"installed {', '.join(programs)} (archive sha256 {actual[:12]})",
    )


if __name__ == "__main__":
    main()
