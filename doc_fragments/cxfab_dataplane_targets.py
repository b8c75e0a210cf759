"""The `targets` option of the modules that probe the dataplane from a host."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  targets:
    description: The host's dataplane targets (filter C(cxfab_dataplane_targets)).
    type: dict
    required: true
"""
