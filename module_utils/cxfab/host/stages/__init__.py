"""The host stages of site.yml, each a `run(module)` with its `ARGUMENT_SPEC`.

Each stage's Ansible module is a thin wrapper around its `run`; `check.read_host` runs
the stages in check mode one after the other in one process, so a run with nothing to
change reads a whole host in one module call.
"""
