"""Write the structured config of every device (build/structured/<device>.yml).

Runs once on the controller right after validation (playbooks/validate.yml):
derives each switch's and each host's structured config from the validated
fabric (fact `cxfab_fabric`) and publishes them as the fact `cxfab_structured`
(device name -> the JSON text of its structured config: one node per device for
Ansible to carry, see cxfab/structured/packed.py), which every role and verify's
checks read through the `cxfab_device` filter.
Nothing is contacted; the files are build outputs, written in check mode too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

_MODULE_UTILS = str(Path(__file__).resolve().parent.parent / "module_utils")
if _MODULE_UTILS not in sys.path:
    sys.path.insert(0, _MODULE_UTILS)

from cxfab.intent import runstamp  # noqa: E402
from cxfab.intent.fabric import plain  # noqa: E402
from cxfab.structured import build_all  # noqa: E402
from cxfab.structured.files import write_structured  # noqa: E402
from cxfab.structured.packed import pack  # noqa: E402
from cxfab.structured.switch import StructuredConfigError  # noqa: E402

DOCUMENTATION = r"""
action: cxfab_structured
short_description: Derive and write the structured config of every switch and host
description:
  - Reads the validated fabric (fact C(cxfab_fabric) of localhost), derives one
    structured config per device and writes C(<dest>/<device>.yml); files of
    devices no longer in the fabric are removed.
  - Publishes the fact C(cxfab_structured) (device name -> JSON text of its
    structured config; decode one with the C(cxfab_device) filter). It holds no
    credentials.
options:
  dest:
    description: Directory of the structured files.
    type: path
    required: true
  prune:
    description: Switch pruning (see C(cxfab_switch_prune)).
    type: bool
    default: true
"""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _, args = self.validate_argument_spec(
            argument_spec={
                "dest": {"type": "path", "required": True},
                "prune": {"type": "bool", "default": True},
            }
        )
        task_vars = task_vars or {}
        stamp = runstamp.current()
        # Only facts this run computed count: a fact cache may hold older (or planted) ones.
        written_now = task_vars.get(runstamp.STRUCTURED_STAMP_FACT) == stamp
        if written_now and task_vars.get("cxfab_structured"):
            result.update(changed=False, msg="structured config written earlier in this run")
            return result
        fabric = task_vars.get("cxfab_fabric")
        if not isinstance(fabric, dict) or task_vars.get(runstamp.FABRIC_STAMP_FACT) != stamp:
            raise AnsibleActionFail(
                "cxfab_structured: no fabric validated in this run (run cxfab_validate first)"
            )
        try:
            # plain(): Ansible hands over tagged str/dict subclasses that YAML cannot dump.
            devices = build_all(plain(fabric), prune=args["prune"])
        except StructuredConfigError as error:
            raise AnsibleActionFail(f"cxfab_structured: fabric {error}") from error
        written, removed = write_structured(os.path.expanduser(args["dest"]), devices)
        result.update(
            changed=False,
            written=written,
            removed=removed,
            ansible_facts={
                "cxfab_structured": pack(devices),
                runstamp.STRUCTURED_STAMP_FACT: stamp,
            },
            msg=f"structured config of {len(devices)} device(s) in {args['dest']}",
        )
        return result
