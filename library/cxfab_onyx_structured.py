#!/usr/bin/python
"""Build the structured config of one Onyx switch from the fabric."""

from __future__ import annotations

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.onyx.structured import StructuredConfigError, build

DOCUMENTATION = r"""
module: cxfab_onyx_structured
short_description: Build the structured config of one Onyx switch from the fabric
description:
  - Derives the per-switch structured config (MLAG, MPOs, VLANs, SVIs, MAGP,
    VRRP, managed scope) from the validated fabric and writes it as YAML.
  - Pure computation on the controller; it never contacts the switch.
options:
  fabric:
    description: The normalised fabric (C(switch_pairs) and C(vlans) are read; credentials are not).
    type: dict
    required: true
  switch:
    description: Inventory hostname of the switch (a peer name in C(switch_pairs[].peers[].name)).
    type: str
    required: true
  prune:
    description: >-
      Remove VLANs, MPOs and gateways found on the switch but not described by
      the fabric.
    type: bool
    default: true
  dest:
    description: File the structured config is written to (C(build/structured/<switch>.yml)).
    type: path
    required: true
"""

RETURN = r"""
structured:
  description: The structured config.
  returned: success
  type: dict
"""


def main():
    module = AnsibleModule(
        argument_spec={
            "fabric": {"type": "dict", "required": True},
            "switch": {"type": "str", "required": True},
            "prune": {"type": "bool", "default": True},
            "dest": {"type": "path", "required": True},
        },
        supports_check_mode=True,
    )
    import yaml

    params = module.params
    try:
        structured = build(params["fabric"], params["switch"], prune=params["prune"])
    except StructuredConfigError as exc:
        module.fail_json(msg=f"fabric {exc}")
    text = "---\n" + yaml.safe_dump(structured, sort_keys=False, default_flow_style=False)
    before = ""
    if os.path.exists(params["dest"]):
        with open(params["dest"], encoding="utf-8") as handle:
            before = handle.read()
    changed = before != text
    if changed and not module.check_mode:
        os.makedirs(os.path.dirname(params["dest"]) or ".", exist_ok=True)
        with open(params["dest"], "w", encoding="utf-8") as handle:
            handle.write(text)
    module.exit_json(
        changed=changed,
        structured=structured,
        dest=params["dest"],
        diff={
            "before": before,
            "after": text,
            "before_header": params["dest"],
            "after_header": params["dest"],
        },
    )


if __name__ == "__main__":
    main()
