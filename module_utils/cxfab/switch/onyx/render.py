"""Render the intended config from a structured config, outside Ansible.

The role switch_fabric renders the same assembler (templates/switch_fabric.cfg.j2)
with ansible.builtin.template; this module reproduces that (same Jinja2 settings:
trim_blocks, trailing newline kept) for the golden tests and for tools.
tests/integration checks both give identical files.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

ROLE = "switch_fabric"
ASSEMBLER = "switch_fabric.cfg.j2"


@cache
def _assembler(templates: str):
    """The compiled assembler of a templates directory: compiled once, not per switch."""
    import jinja2  # controller-only dependency, imported where it is used

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        trim_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    return env.get_template(ASSEMBLER)


def render_config(roles_dir: str | Path, structured: dict) -> str:
    """The whole intended config of one switch, sections in build order."""
    templates = str(Path(roles_dir).resolve() / ROLE / "templates")
    return _assembler(templates).render(switch_fabric_structured=structured)
