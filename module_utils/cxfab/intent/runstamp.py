"""The identity of the running ansible-playbook process, stamped on the facts it computes.

A fact cache (jsonfile, redis, AWX's) keeps `cxfab_fabric` and `cxfab_structured`
from one run to the next; a stage that skipped its work because such a fact was
defined would deploy what an earlier run (or anyone who can write the cache)
left there. The validator and the structured-config writer stamp their facts
with `current()` and redo their work unless the stamp is this process's.

Action plugins run in worker processes forked from the main ansible-playbook
process: the parent's pid, its start time and the boot id name that run, and
no earlier process (nor an inventory file) can hold the same stamp.
"""

from __future__ import annotations

import os
from pathlib import Path

# The facts holding the stamp of the run that computed cxfab_fabric (the validator)
# and cxfab_structured (the structured-config writer).
FABRIC_STAMP_FACT = "cxfab_fabric_run"
STRUCTURED_STAMP_FACT = "cxfab_structured_run"


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return "?"


def current() -> str:
    """`<pid>:<start time>:<boot id>` of the process that runs the playbook."""
    pid = os.getppid()
    stat = _read(f"/proc/{pid}/stat")
    fields = stat.rsplit(")", 1)[-1].split()
    start = fields[19] if len(fields) > 19 else "?"  # field 22 of proc(5): starttime
    return f"{pid}:{start}:{_read('/proc/sys/kernel/random/boot_id')}"
