"""The NVUE (Cumulus Linux 5.x) switch driver: what exists without a transport.

Rendering, planning and health normalisation are real (render.py, plan.py,
health.py); every call that needs a session to the switch (the NVUE REST API
with revisions and `apply --confirm`, issue 27's next slice) raises
NotImplementedError saying so. The deploy module refuses `platform: cumulus`
before it gets here (library/cxfab_onyx_deploy.py), so nothing half-works.
"""

from __future__ import annotations

from ..driver import HealthReading, RunningConfig, Staged, SwitchDriver
from . import health, plan, render

TRANSPORT_MISSING = (
    "NVUE transport not yet implemented (issue 27): cxfab renders and plans Cumulus "
    "Linux configs but cannot reach an NVUE switch yet"
)


class NvueDriver(SwitchDriver):
    """One Cumulus Linux switch of a pair (no session yet: see TRANSPORT_MISSING)."""

    SECTIONS = ("mlag", "vlans", "gateway")

    def desired(self) -> dict:
        """The NVUE tree this switch should hold (render.render)."""
        return render.render(self.structured)

    def stage_tree(self, applied: dict) -> Staged:
        """The operations from `applied` (`nv config show -o json`) to the desired tree."""
        desired = self.desired()
        ops = plan.plan(self.structured, desired, applied)
        return Staged(lines=plan.cli_lines(ops), private={"desired": desired, "ops": ops})

    def health_from(self, outputs: dict) -> HealthReading:
        """This switch's checks from show outputs read by a transport."""
        checks = health.switch_checks(self.structured, outputs)
        return HealthReading(self.name, self.structured, checks, private=outputs)

    def pair_checks(self, readings: list[HealthReading]) -> list[dict]:
        pair = readings[0].structured["pair"] if readings else ""
        structured = {r.switch: r.structured for r in readings}
        outputs = {r.switch: r.private or {} for r in readings}
        return health.pair_checks(pair, structured, outputs)

    # ------------------------------------------------ transport-dependent (next slice)
    def _missing(self, what: str):
        raise NotImplementedError(f"{what}: {TRANSPORT_MISSING}")

    def open(self, username, password, known_hosts, check_host_key):
        self._missing("open")

    def close(self) -> None:
        return None

    def read_config(self) -> RunningConfig:
        self._missing("read_config")

    def mlag_state(self, config: RunningConfig) -> dict:
        self._missing("mlag_state")

    def unsaved_changes(self) -> bool | None:
        self._missing("unsaved_changes")

    def health(self) -> HealthReading:
        self._missing("health")

    def stage(self, intended, sections, current: RunningConfig) -> Staged:
        self._missing("stage")

    def commit(self, staged: Staged) -> list[str]:
        self._missing("commit")

    def revert(self, snapshot: RunningConfig):
        self._missing("revert")

    def save(self) -> None:
        self._missing("save")
