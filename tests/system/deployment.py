"""The lab after site.yml: the playbooks run against `inventories/lab` as `make demo`
runs them, once per pytest session (the `deployed` fixture in conftest.py).

The suites that need the roles' result (the demo's promise, the host roles, the
native programs over soft-RoCE, the planted faults) share that one run: under TCG
site.yml takes several minutes, so running it per suite would dominate the tier.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.lab.vm.topology import INVENTORY_DIR, REPO_ROOT
from tests.tools.inventory import load as load_inventory

ANSIBLE_BIN = REPO_ROOT / ".venv" / "bin"
RECAP = re.compile(
    r"^(\S+)\s*:\s*ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.MULTILINE
)
PLAYBOOK_TIMEOUT = 2400
TIMING_DIR = REPO_ROOT / "build" / "timing"


@dataclass
class PlaybookRun:
    playbook: str
    returncode: int
    output: str

    @property
    def recap(self) -> dict[str, dict[str, int]]:
        """PLAY RECAP per host: changed, unreachable, failed."""
        return {
            m[1]: {"changed": int(m[2]), "unreachable": int(m[3]), "failed": int(m[4])}
            for m in RECAP.finditer(self.output)
        }

    def changed_hosts(self) -> dict[str, int]:
        return {h: s["changed"] for h, s in self.recap.items() if s["changed"] and h != "localhost"}

    def tail(self, chars: int = 4000) -> str:
        return f"{self.playbook} exited {self.returncode}:\n{self.output[-chars:]}"


class Running:
    """A playbook started by Deployment.spawn; its Ansible log tells how far it got."""

    def __init__(self, playbook: str, proc: subprocess.Popen, log: Path):
        self.playbook, self.proc, self.log = playbook, proc, log

    def wait_for(self, pattern: str, timeout: float = 600) -> None:
        """Wait until `pattern` (a regex) matches the Ansible log; fail if the run ends first."""
        regex = re.compile(pattern, re.MULTILINE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.log.exists() and regex.search(self.log.read_text(errors="replace")):
                return
            if self.proc.poll() is not None:
                ended = self.finish().tail()
                raise AssertionError(f"{self.playbook} ended before {pattern!r}: {ended}")
            time.sleep(0.2)
        raise AssertionError(f"{self.playbook}: no {pattern!r} in {timeout} s")

    def finish(self) -> PlaybookRun:
        self.proc.wait(timeout=PLAYBOOK_TIMEOUT)
        output = self.log.with_suffix(".out").read_text(errors="replace")
        return PlaybookRun(self.playbook, self.proc.returncode, output)


class Deployment:
    """ansible-playbook on an inventory of the lab (the lab's own unless told)."""

    def __init__(self, inventory: Path = INVENTORY_DIR):
        self.inventory = inventory
        self.first_site: PlaybookRun | None = None
        # build/deploy/<switch>.json as the first site.yml left them (later runs rewrite them).
        self.first_site_deploy_records: dict[str, dict] = {}

    def _command(self, playbook, extra, reports, inventory) -> tuple[Path, list[str], dict]:
        path = Path(playbook)
        if not path.is_absolute():
            path = REPO_ROOT / "playbooks" / path
        argv = [str(ANSIBLE_BIN / "ansible-playbook"), "-i", str(inventory or self.inventory)]
        argv += [str(path), *extra]
        if reports is not None:
            argv += ["-e", f"cxfab_reports_dir={reports}"]
        env = dict(
            os.environ,
            ANSIBLE_CONFIG=str(REPO_ROOT / "ansible.cfg"),
            ANSIBLE_NOCOLOR="1",
            PATH=f"{ANSIBLE_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            # Ansible's own log, one file per run: every line timed, for
            # `python -m tests.tools.play_timing build/timing`.
            ANSIBLE_LOG_PATH=str(TIMING_DIR / f"{path.stem}-{time.time():.0f}.log"),
        )
        TIMING_DIR.mkdir(parents=True, exist_ok=True)
        return path, argv, env

    def play(
        self,
        playbook: str | Path,
        *extra: str,
        reports: Path | None = None,
        inventory: Path | None = None,
    ) -> PlaybookRun:
        path, argv, env = self._command(playbook, extra, reports, inventory)
        proc = subprocess.run(
            argv,
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=PLAYBOOK_TIMEOUT,
            check=False,
        )
        return PlaybookRun(path.name, proc.returncode, proc.stdout + proc.stderr)

    def spawn(self, playbook: str | Path, *extra: str, reports: Path | None = None) -> Running:
        """Start a playbook without waiting: a test acts while it runs (Running.wait_for)."""
        path, argv, env = self._command(playbook, extra, reports, None)
        log = Path(env["ANSIBLE_LOG_PATH"])
        # The child keeps its own descriptor: the file may be closed here.
        with log.with_suffix(".out").open("w") as output:
            proc = subprocess.Popen(
                argv, cwd=REPO_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, text=True
            )
        return Running(path.name, proc, log)

    def healthy(self, playbook: str | Path, *extra: str) -> PlaybookRun:
        run = self.play(playbook, *extra)
        assert run.returncode == 0, run.tail()
        return run

    def deploy_records(self) -> dict[str, dict]:
        """The switch deploy module's record of each switch's last deploy."""
        return {
            path.stem: json.loads(path.read_text())
            for path in sorted((REPO_ROOT / "build" / "deploy").glob("*.json"))
        }

    def image_patch(self, host: str) -> dict:
        """A write_copy patch giving `host`'s firmware image as an absolute path: in this
        inventory it is relative to the inventory, and a copy lives elsewhere."""
        image = self.intent(host)["cxfab_host"]["nics"][0]["firmware"]["image"]
        return {
            "host": host,
            "path": "cxfab_host.nics[0].firmware.image",
            "value": str((self.inventory / image).resolve()),
        }

    def intent(self, host: str) -> dict:
        """The intent the inventory gives `host`: group_vars/all under its host_vars."""
        inventory = load_inventory(self.inventory)
        return {**inventory.all_vars, **inventory.host_vars.get(host, {})}
