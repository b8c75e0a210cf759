"""Structured config on disk: one stable YAML file per device."""

from __future__ import annotations

import os

import yaml

SUFFIX = ".yml"


class _Dumper(yaml.SafeDumper):
    """No &anchors: a list shared by two sections is written out in both."""

    def ignore_aliases(self, data):
        return True

    def increase_indent(self, flow=False, indentless=False):
        # Lists indented under their key, as yamllint and people expect.
        return super().increase_indent(flow, False)


def _text(dumper, value):
    # File contents (networkd files) as literal blocks: readable, diffable.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def dump(structured: dict) -> str:
    """Stable text: key order as built, block style, so diffs read line by line."""
    return "---\n" + yaml.dump(
        structured, Dumper=_Dumper, sort_keys=False, default_flow_style=False
    )


def write_structured(directory: str, devices: dict[str, dict]) -> tuple[list[str], list[str]]:
    """Write `<directory>/<device>.yml` where the text differs; remove other devices' files.

    Returns the device names written and removed.
    """
    os.makedirs(directory, exist_ok=True)
    written = []
    for name, structured in devices.items():
        path = os.path.join(directory, name + SUFFIX)
        text = dump(structured)
        try:
            with open(path, encoding="utf-8") as handle:
                if handle.read() == text:
                    continue
        except FileNotFoundError:
            pass
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        written.append(name)
    removed = []
    for entry in sorted(os.listdir(directory)):
        name = entry[: -len(SUFFIX)]
        if entry.endswith(SUFFIX) and name not in devices:
            os.unlink(os.path.join(directory, entry))
            removed.append(name)
    return written, removed
