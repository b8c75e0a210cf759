"""Structured config on disk: one stable YAML file per device."""

from __future__ import annotations

import hashlib
import json
import os

import yaml

SUFFIX = ".yml"


# libyaml's emitter when PyYAML has it (the pinned wheel does): a fabric of 100 pairs
# and 2,000 hosts writes 2,200 files of ~1,000 nodes each, and the pure-Python emitter
# took most of validate.yml's time there. Both emitters write the same text.
_BASE = yaml.CSafeDumper if getattr(yaml, "__with_libyaml__", False) else yaml.SafeDumper


class _Dumper(_BASE):
    """No &anchors: a list shared by two sections is written out in both."""

    def ignore_aliases(self, data):
        return True


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


# What was written last, per device: the digest of its data and the file's size and
# mtime. A device whose data and file are both unchanged is not dumped again: dumping
# is most of the cost of a fabric of thousands of devices, and most runs change little.
INDEX = ".written.json"


def _digest(structured: dict) -> str:
    canonical = json.dumps(structured, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _stamp(path: str) -> list | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return [stat.st_size, stat.st_mtime_ns]


def _read_index(directory: str) -> dict:
    try:
        with open(os.path.join(directory, INDEX), encoding="utf-8") as handle:
            index = json.load(handle)
    except (FileNotFoundError, ValueError):
        return {}
    return index if isinstance(index, dict) else {}


def write_structured(directory: str, devices: dict[str, dict]) -> tuple[list[str], list[str]]:
    """Write `<directory>/<device>.yml` where the text differs; remove other devices' files.

    A device whose data has the digest recorded when its file was last written, and
    whose file still has the size and mtime recorded then, is skipped unread.
    Returns the device names written and removed.
    """
    os.makedirs(directory, exist_ok=True)
    index, fresh = _read_index(directory), {}
    written = []
    for name, structured in devices.items():
        path = os.path.join(directory, name + SUFFIX)
        digest, known = _digest(structured), index.get(name) or {}
        if known.get("digest") == digest and known.get("file") == _stamp(path):
            fresh[name] = known
            continue
        text = dump(structured)
        try:
            with open(path, encoding="utf-8") as handle:
                same = handle.read() == text
        except FileNotFoundError:
            same = False
        if not same:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            written.append(name)
        fresh[name] = {"digest": digest, "file": _stamp(path)}
    removed = []
    for entry in sorted(os.listdir(directory)):
        name = entry[: -len(SUFFIX)]
        if entry.endswith(SUFFIX) and name not in devices:
            os.unlink(os.path.join(directory, entry))
            removed.append(name)
    with open(os.path.join(directory, INDEX), "w", encoding="utf-8") as handle:
        json.dump(fresh, handle, sort_keys=True)
    return written, removed
