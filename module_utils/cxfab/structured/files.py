"""Structured config on disk: one stable YAML file per device."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
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


# Dumping is Python work per node; past this many devices it is spread over the CPUs.
PARALLEL_FROM = 200
_PENDING: list = []


def _dump_slice(bounds: tuple[int, int]) -> list[str]:
    return [dump(_PENDING[i][1]) for i in range(*bounds)]


def _dump_all(pending: list) -> list[str]:
    """The texts of `pending` [(name, structured, digest)], in order. A first run on a
    fabric of thousands of devices forks one worker per CPU (they inherit the data;
    only the texts travel back), the common small run stays in this process."""
    workers = min(os.cpu_count() or 1, 8)
    if len(pending) < PARALLEL_FROM or workers < 2 or not hasattr(os, "fork"):
        return [dump(structured) for _name, structured, _digest in pending]
    global _PENDING
    _PENDING = pending
    step = -(-len(pending) // workers)
    slices = [(start, min(start + step, len(pending))) for start in range(0, len(pending), step)]
    try:
        with multiprocessing.get_context("fork").Pool(len(slices)) as pool:
            parts = pool.map(_dump_slice, slices)
    finally:
        _PENDING = []
    return [text for part in parts for text in part]


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
    pending = []
    for name, structured in devices.items():
        path = os.path.join(directory, name + SUFFIX)
        digest, known = _digest(structured), index.get(name) or {}
        if known.get("digest") == digest and known.get("file") == _stamp(path):
            fresh[name] = known
        else:
            pending.append((name, structured, digest))
    written = []
    for (name, _structured, digest), text in zip(pending, _dump_all(pending), strict=True):
        path = os.path.join(directory, name + SUFFIX)
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
