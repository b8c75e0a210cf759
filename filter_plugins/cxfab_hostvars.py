"""One variable of several hosts, by host name: what verify.yml and drill.yml collect.

`hostvars | cxfab_per_host(groups['hosts'], 'verify_health', {})` is
`{host: hostvars[host].verify_health}` for every host, the default where a host
never set the variable (an unreachable host, a skipped play). It replaces the
Jinja `dict(names | zip(names | map('extract', hostvars) | map(attribute=key,
default=...)))` each report's play spelt out for itself.
"""

from __future__ import annotations

import copy


def per_host(hostvars, names, key: str, default=None) -> dict:
    """{name: hostvars[name][key]} for each of names, a copy of `default` where it is unset."""
    if isinstance(names, str) or not isinstance(key, str):
        raise TypeError("cxfab_per_host: expects a list of host names and a variable name")
    out = {}
    for name in names:
        try:
            host = hostvars[name]
        except KeyError:
            host = {}
        out[name] = host[key] if key in host else copy.deepcopy(default)
    return out


class FilterModule:
    """Host variables collected by host name."""

    def filters(self):
        return {"cxfab_per_host": per_host}
