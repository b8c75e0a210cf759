"""The experiments' settings (rdma_experiments_settings) and the --tags that select them.

Bad input raises ValueError naming its key path, before anything runs.
"""

from __future__ import annotations

EXPERIMENTS = ("pingpong_matrix", "reference_tools", "numa", "rcat", "latency", "smc", "rsocket")
NETWORK_TRANSPORTS = ("rdma", "tcp", "rsocket", "smc")
# Tags Ansible itself gives a run: none named (all) or the always-tagged plays.
_ANSIBLE_TAGS = ("all", "always")

# Small defaults: every experiment in a few minutes, even on slow virtual hosts.
DEFAULTS = {
    "experiments": list(EXPERIMENTS),
    "transports": ["rdma", "tcp"],
    "sizes": [65536, 1048576],
    "pairs": [1, 2],
    "compute": [False, True],
    # Data each way per client/server pair, as in seed 000 (10.48 GB = 10000 MiB at
    # every size): a run's iterations are this over its message size.
    "mib_per_pair": 8,
    "duration": 2,
    # iperf3 processes per NUMA placement (seed 001: 1 and 12).
    "numa_processes": [1, 12],
    "rcat_mib": [16],
    "rcat_chunk": 1048576,
    "latency_iterations": 200,
    "port_base": 18600,
}
_INT_RANGES = {
    "mib_per_pair": (1, 1 << 20),
    "duration": (1, 600),
    "rcat_chunk": (4096, 1 << 30),
    "latency_iterations": (1, 10_000_000),
    "port_base": (1024, 65000),
}
_LIST_RANGES = {
    "sizes": (4096, 1 << 30),
    "pairs": (1, 64),
    "numa_processes": (1, 64),
    "rcat_mib": (1, 65536),
}


def _int_in(value, low: int, high: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and low <= value <= high


def settings_with_defaults(given: dict | None, path: str = "experiments_settings") -> dict:
    """The settings merged over DEFAULTS; bad input raises naming its key path."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"{path}.{unknown[0]}: unknown setting (known: {', '.join(DEFAULTS)})")
    settings = {**DEFAULTS, **given}
    for key, (low, high) in _INT_RANGES.items():
        if not _int_in(settings[key], low, high):
            raise ValueError(
                f"{path}.{key}: {settings[key]!r} is not an integer in [{low}, {high}]"
            )
    for key, (low, high) in _LIST_RANGES.items():
        values = settings[key]
        if not isinstance(values, list) or not values:
            raise ValueError(f"{path}.{key}: must be a non-empty list")
        for i, value in enumerate(values):
            if not _int_in(value, low, high):
                raise ValueError(
                    f"{path}.{key}[{i}]: {value!r} is not an integer in [{low}, {high}]"
                )
    for key, allowed in (("experiments", EXPERIMENTS), ("transports", NETWORK_TRANSPORTS)):
        values = settings[key]
        if not isinstance(values, list):
            raise ValueError(f"{path}.{key}: must be a list")
        for i, value in enumerate(values):
            if value not in allowed:
                raise ValueError(f"{path}.{key}[{i}]: {value!r} is not one of {', '.join(allowed)}")
    for i, value in enumerate(settings["compute"]):
        if not isinstance(value, bool):
            raise ValueError(f"{path}.compute[{i}]: {value!r} is not true or false")
    return settings


def iterations_for(settings: dict, size: int) -> int:
    """Round trips moving mib_per_pair each way at this message size (at least one)."""
    return max(1, (settings["mib_per_pair"] << 20) // size)


def unknown_tags(run_tags) -> list[str]:
    """The --tags that name no experiment (a misspelt tag must not run everything)."""
    return sorted(t for t in (run_tags or []) if t not in EXPERIMENTS and t not in _ANSIBLE_TAGS)


def experiments_from_tags(run_tags, given: dict | None = None) -> list[str]:
    """The experiments to run: those named in --tags, else the settings' (default: all).

    Raises ValueError naming the valid tags when a tag names no experiment.
    """
    wrong = unknown_tags(run_tags)
    if wrong:
        raise ValueError(
            f"--tags {', '.join(wrong)}: not an experiment; the tags are "
            f"{', '.join(EXPERIMENTS)} (none: all of them)"
        )
    named = [e for e in EXPERIMENTS if e in (run_tags or [])]
    return named or list((given or {}).get("experiments") or EXPERIMENTS)
