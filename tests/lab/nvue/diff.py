"""`GET /nvue_v1/<path>?rev=<A>&diff=<B>` of the emulated switch: what takes tree A to B.

The NVUE API page ("View Differences Between Configurations") says this GET is
`nv config diff <A> <B>`; the command reference ("Config Commands") names A the
base and B the target. Neither page shows the API's JSON answer. The API page's
"Convert CLI Changes to Use the API" shows `nv config diff -o json`: a list of
operations, each `{"set": <tree>}`, whose tree a root PATCH takes as it is. The
emulator answers that form, the one the page implies: `[{"set": ...}]` for what B
adds or changes, then `[{"unset": ...}]` for what B lacks, as the PATCH unset
form (`null` at the topmost node B lacks, "Unset a Configuration Change"); an
empty list when A and B are equal. UNCONFIRMED: the answer's shape, the unset
form, the order of the two entries (docs/switches-nvue.md, docs/lab-nvue.md).
"""

from __future__ import annotations

import copy


def _sets(base, target) -> dict:
    """The part of `target` that `base` lacks or holds another value for."""
    out: dict = {}
    for key, value in target.items():
        have = base.get(key, _MISSING) if isinstance(base, dict) else _MISSING
        if isinstance(value, dict) and value and isinstance(have, dict):
            inner = _sets(have, value)
            if inner:
                out[key] = inner
        elif have != value or have is _MISSING:
            out[key] = copy.deepcopy(value)
    return out


def _unsets(base: dict, target) -> dict:
    """`null` at each topmost node of `base` that `target` lacks."""
    out: dict = {}
    for key, value in base.items():
        want = target.get(key, _MISSING) if isinstance(target, dict) else _MISSING
        if want is _MISSING:
            out[key] = None
        elif isinstance(value, dict) and value and isinstance(want, dict) and want:
            inner = _unsets(value, want)
            if inner:
                out[key] = inner
    return out


_MISSING = object()


def diff(base, target) -> list[dict]:
    """[{"set": tree}] and/or [{"unset": tree}]: what takes `base` to `target`."""
    base = base if isinstance(base, dict) else {}
    target = target if isinstance(target, dict) else {}
    out = []
    sets, unsets = _sets(base, target), _unsets(base, target)
    if sets:
        out.append({"set": sets})
    if unsets:
        out.append({"unset": unsets})
    return out
