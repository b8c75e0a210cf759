"""The login options of every module that logs in to a switch, whatever its OS.

The deploy and health modules speak to Onyx (SSH) and Cumulus (NVUE REST) pairs
alike, so their argument spec is not an OS's own: `known_hosts` and
`host_key_checking` are read by the Onyx session (SSH host keys); an NVUE switch
proves itself by its TLS certificate instead (drivers.TLS_OPTIONS). The
documentation is the doc fragment cxfab_switch_login.
"""

from __future__ import annotations

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"
LOGIN_OPTIONS = {
    "username": {"type": "str", "required": True},
    "password": {"type": "str", "required": True, "no_log": True},
    "known_hosts": {"type": "path", "default": DEFAULT_KNOWN_HOSTS},
    "host_key_checking": {"type": "bool", "default": True},
}
