"""Render the intended config from a structured config, outside Ansible.

The roles render the same templates with ansible.builtin.template and join
the three fragments with ansible.builtin.assemble; this module reproduces
that (same Jinja2 settings: trim_blocks, trailing newline kept) for the golden
tests and for tools. tests/integration checks both give identical files.
"""

from __future__ import annotations

from pathlib import Path

# Role order = section order of the assembled config (NVIDIA's build order).
ROLE_ORDER = ("switch_mlag", "switch_vlans", "switch_gateway")
FRAGMENT_NAMES = {role: f"{10 * (i + 1)}-{role}.cfg" for i, role in enumerate(ROLE_ORDER)}


def render_fragment(roles_dir: str | Path, role: str, structured: dict) -> str:
    import jinja2  # controller-only dependency, imported where it is used

    templates = Path(roles_dir) / role / "templates"
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        trim_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    context = {f"{name}_structured": {"structured": structured} for name in ROLE_ORDER}
    return env.get_template(f"{role}.cfg.j2").render(**context)


def render_config(roles_dir: str | Path, structured: dict) -> str:
    """The whole intended config: the three role fragments in build order."""
    return "".join(render_fragment(roles_dir, role, structured) for role in ROLE_ORDER)
