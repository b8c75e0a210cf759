"""Host network helpers: intent -> desired state, comparison, QoS and IRQ planning.

Pure Python (no Ansible import) so the modules and the unit tests share one
implementation. Anything that touches the system takes its inputs as arguments
(parsed command output, a sysfs root) so it can be tested on fixtures.
"""


class IntentError(ValueError):
    """Bad input: `path` names the offending key (`cxfab_host.bond.mode`)."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def read_text(path: str, default=None):
    """A sysfs or proc file's text, stripped; `default` when it cannot be read."""
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return default
