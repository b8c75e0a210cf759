"""The host stages of site.yml, each a `run(module)` with its `ARGUMENT_SPEC`.

Each stage's Ansible module is a thin wrapper around its `run`; `check.read_host` runs
the stages in check mode one after the other in one process, so a run with nothing to
change reads a whole host in one module call.
"""


def serve(argument_spec: dict, run) -> None:
    """A stage module's whole main: check mode supported, the stage's result returned."""
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    module.exit_json(**run(module))
