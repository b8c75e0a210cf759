"""Onyx release strings, compared as numbers.

`3.10.2102` is newer than `3.6.6000`; comparing the strings says the opposite,
which is how mellanox.onyx ended up choosing the wrong JSON parser on 3.10.
"""

from __future__ import annotations

import re

from ...common.versions import compare_numbers

# Release where `show ... | json-print` switched from a list of dicts carrying a
# "header" key to a list of {"<name>": [ {...} ]} items.
JSON_NAMED_LIST_SINCE = "3.6.6000"

# A release has three numbers (3.6.8010, 3.10.2102); an uptime `0d 1h` never matches.
_RELEASE = re.compile(r"(?<![\d.])(\d+\.\d+\.\d+)(?![\d.])")
_PRODUCT_RELEASE = re.compile(r"^\s*Product release\s*:\s*(\S+)", re.MULTILINE)


class VersionError(ValueError):
    """A string that holds no Onyx release number."""


def parse_version(text: str) -> tuple[int, ...]:
    """`3.6.8010` or `onyx-3.10.2102-X86_64` -> (3, 6, 8010) / (3, 10, 2102)."""
    match = _RELEASE.search(text or "")
    if not match:
        raise VersionError(f"no release number in {text!r}")
    return tuple(int(part) for part in match.group(1).split("."))


def compare(left: str, right: str) -> int:
    """-1, 0 or 1 as release `left` is older than, equal to or newer than `right`."""
    return compare_numbers(parse_version(left), parse_version(right))


def at_least(release: str, minimum: str) -> bool:
    return compare(release, minimum) >= 0


def _first_lines(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()][:3]
    return (" | ".join(lines) or "(empty reply)")[:200]


def release_from_show_version(output: str) -> str:
    """The release in `show version`: the `Product release:` line, or in `| json-print`
    output (which may have no such key) the `Product release` / `Version summary` value.
    An error names what is missing and shows the first lines of the output."""
    text = (output or "").strip()
    if text.startswith("{"):
        import json

        try:
            data = json.loads(text)
        except ValueError as exc:
            raise VersionError(
                f"`show version | json-print` is not JSON ({exc}); first lines: "
                + _first_lines(text)
            ) from None
        for key in ("Product release", "Version summary"):
            if isinstance(data, dict) and key in data:
                try:
                    return ".".join(map(str, parse_version(str(data[key]))))
                except VersionError:
                    continue
        raise VersionError(
            "`show version | json-print` has no release field; first lines: " + _first_lines(text)
        )
    match = _PRODUCT_RELEASE.search(text)
    if not match:
        raise VersionError(
            "`show version` has no 'Product release:' line; first lines: " + _first_lines(text)
        )
    try:
        parse_version(match.group(1))
    except VersionError:
        raise VersionError(
            f"`show version`: {match.group(1)!r} is not a release; first lines: "
            + _first_lines(text)
        ) from None
    return match.group(1)


def json_print_shape(release: str) -> str:
    """`named-list` from 3.6.6000 on, `header-list` before."""
    return "named-list" if at_least(release, JSON_NAMED_LIST_SINCE) else "header-list"


def normalise_json_print(data, release: str) -> dict[str, dict]:
    """Either json-print shape -> {"<item name>": {fields}}.

    header-list: [{"header": "MAGP 10", "State": "Master", ...}, ...]
    named-list:  [{"MAGP 10": [{"State": "Master", ...}]}, ...]
    A single dict (commands with one item) is accepted in both releases. An entry
    carrying "header" is read as header-list and one whose values are all lists as
    named-list whatever the release; the release decides only the other entries.
    """
    if isinstance(data, dict):
        data = [data] if "header" in data else [{name: value} for name, value in data.items()]
    items: dict[str, dict] = {}
    shape = json_print_shape(release)
    for entry in data or []:
        named = bool(entry) and all(isinstance(value, list) for value in entry.values())
        if "header" in entry or (shape == "header-list" and not named):
            fields = {k: v for k, v in entry.items() if k != "header"}
            items[str(entry.get("header", len(items)))] = fields
            continue
        for name, value in entry.items():
            if isinstance(value, list):
                merged: dict = {}
                for part in value:
                    if isinstance(part, dict):
                        merged.update(part)
                items[name] = merged
            else:
                items[name] = value if isinstance(value, dict) else {"value": value}
    return items
