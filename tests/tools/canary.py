"""The canary-password check: run a playbook with a unique switch password, then look for it.

    password = canary.new_password()
    inv = canary.inventory(tmp_path, password)              # example inventory, TEST-NET hosts
    run = canary.run_playbook("validate.yml", inv, "-vvvv")  # any playbook, any arguments
    canary.assert_not_leaked(password, [run], [REPO_ROOT / "build", tmp_path / "reports"])

`assert_not_leaked` greps the captured stdout/stderr of every run and every
file under the given directories (missing ones are skipped) and fails naming
each place the password was found. The password is made unique per test so a
hit can only come from that run.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.tools import inventory as inventory_tools

REPO_ROOT = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = REPO_ROOT / ".venv" / "bin" / "ansible-playbook"
PASSWORD_PATH = "cxfab_switch_pairs[0].credentials.password"
# The same value may appear encoded in files: check these forms too.
_ENCODINGS = ("utf-8", "utf-16-le")


@dataclass
class Run:
    command: list[str]
    returncode: int
    stdout: str
    stderr: str


def new_password() -> str:
    """A password no other run uses (printable, valid for the schema's secret format)."""
    return f"Canary-{uuid.uuid4().hex[:16]}"


def inventory(
    tmp_path: Path, password: str, patches: Iterable[dict] = (), yaml_text: str | None = None
) -> Path:
    """A copy of the example inventory with `password` as the switch password.

    Every host and switch is given its own TEST-NET-1 address (RFC 5737): any
    connection attempt goes nowhere. More patches (tests/tools/inventory.py
    syntax) can break the inventory to exercise failure paths. `yaml_text`: the
    password's value exactly as written in group_vars/all/fabric.yml (e.g. unquoted,
    or with a tag) instead of the quoted dump of `password`.
    """
    placeholder = f"canary-placeholder-{uuid.uuid4().hex}"
    directory = inventory_tools.write_copy(
        inventory_tools.EXAMPLE,
        tmp_path / "inventory",
        [{"path": PASSWORD_PATH, "value": placeholder if yaml_text else password}, *patches],
    )
    if yaml_text is not None:
        fabric_file = directory / inventory_tools.FABRIC_FILE
        text = fabric_file.read_text(encoding="utf-8")
        assert text.count(placeholder) == 1, "the placeholder is written once"
        fabric_file.write_text(text.replace(placeholder, yaml_text), encoding="utf-8")
    hosts_file = directory / "hosts.yml"
    data = yaml.safe_load(hosts_file.read_text(encoding="utf-8"))
    groups = data["all"]["children"]
    names = list(dict.fromkeys(h for group in groups.values() for h in group["hosts"]))
    for group in groups.values():
        for name in group["hosts"]:
            group["hosts"][name] = {"ansible_host": f"192.0.2.{names.index(name) + 1}"}
    hosts_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    return directory


def run_playbook(
    playbook: str, inventory_dir: Path, *extra: str, env: dict | None = None, timeout: int = 300
) -> Run:
    """ansible-playbook playbooks/<playbook> -i <inventory_dir> <extra...> from the repo root."""
    environment = dict(
        os.environ,
        ANSIBLE_CONFIG=str(REPO_ROOT / "ansible.cfg"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        **(env or {}),
    )
    command = [str(ANSIBLE_PLAYBOOK), f"playbooks/{playbook}", "-i", str(inventory_dir), *extra]
    proc = subprocess.run(
        command,
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Run(command, proc.returncode, proc.stdout, proc.stderr)


def leaks(password: str, runs: Iterable[Run], directories: Iterable[Path]) -> list[str]:
    """Every place `password` appears: '<command> stdout|stderr' or a file path."""
    found = []
    for run in runs:
        for stream in ("stdout", "stderr"):
            if password in getattr(run, stream):
                found.append(f"{' '.join(run.command[1:3])} {stream}")
    needles = [password.encode(encoding) for encoding in _ENCODINGS]
    for directory in directories:
        directory = Path(directory)
        if not directory.exists():
            continue
        files = [directory] if directory.is_file() else _files_under(directory)
        for path in files:
            if path.is_file() and any(needle in _contents(path) for needle in needles):
                found.append(str(path))
    return found


def _files_under(directory: Path) -> list[Path]:
    """Every file below `directory` (os.walk passes over a folder removed mid-walk, where
    rglob may raise)."""
    return sorted(Path(top, name) for top, _dirs, names in os.walk(directory) for name in names)


def _contents(path: Path) -> bytes:
    """A file's bytes; none for a file removed since the directory was listed. The repo's
    build/ and reports/ are shared with anything else running from the same tree (a demo,
    a lab run): a file removed while the scan runs holds no password any more."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def assert_not_leaked(password: str, runs: Iterable[Run], directories: Iterable[Path]) -> None:
    runs = list(runs)
    assert runs, "no run to check"
    found = leaks(password, runs, directories)
    assert not found, f"the switch password leaked into: {', '.join(found)}"
