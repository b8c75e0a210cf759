#!/usr/bin/python
"""Write the structured config of every Onyx switch of the validated fabric."""

from __future__ import annotations

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.onyx.structured import StructuredConfigError, build

DOCUMENTATION = r"""
module: cxfab_onyx_structured
short_description: Write build/structured/<switch>.yml for every switch of the fabric
description:
  - Derives each switch's structured config (MLAG, MPOs, VLANs, SVIs, MAGP,
    VRRP, managed scope) from the validated, normalised fabric and writes it
    as YAML, once per run for all switches. It is the only input of the
    templates, the deploy and the health checks.
  - Pure computation on the controller; it never contacts a switch.
options:
  fabric:
    description: The normalised fabric (C(switch_pairs) and C(vlans) are read; credentials are not).
    type: dict
    required: true
  prune:
    description: >-
      Remove VLANs, MPOs and gateways found on a switch but not described by
      the fabric.
    type: bool
    default: true
  dest_dir:
    description: Directory the files are written to (C(build/structured)).
    type: path
    required: true
"""

RETURN = r"""
structured:
  description: Structured config per switch name.
  returned: success
  type: dict
"""


def _write(path: str, text: str, check_mode: bool) -> tuple[bool, str]:
    before = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            before = handle.read()
    if before != text and not check_mode:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    return before != text, before


def main():
    module = AnsibleModule(
        argument_spec={
            "fabric": {"type": "dict", "required": True},
            "prune": {"type": "bool", "default": True},
            "dest_dir": {"type": "path", "required": True},
        },
        supports_check_mode=True,
    )
    import yaml

    params = module.params
    fabric = params["fabric"]
    names = [peer["name"] for pair in fabric["switch_pairs"] for peer in pair["peers"]]
    result = {"changed": False, "structured": {}, "diff": []}
    os.makedirs(params["dest_dir"], exist_ok=True)
    for name in names:
        try:
            structured = build(fabric, name, prune=params["prune"])
        except StructuredConfigError as exc:
            module.fail_json(msg=f"fabric {exc}")
        text = "---\n" + yaml.safe_dump(structured, sort_keys=False, default_flow_style=False)
        path = os.path.join(params["dest_dir"], f"{name}.yml")
        # Build outputs are written in check mode too: --check compares with this inventory.
        changed, before = _write(path, text, check_mode=False)
        result["structured"][name] = structured
        if changed:
            result["changed"] = True
            result["diff"].append(
                {"before": before, "after": text, "before_header": path, "after_header": path}
            )
    module.exit_json(**result)


if __name__ == "__main__":
    main()
