"""The repo runs as an AWX / AAP project: ansible-builder produces the EE's build context
with the controller's own pins (no container runtime is needed for `create`)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BUILDER = REPO / ".venv" / "bin" / "ansible-builder"


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", line.strip())
        if match:
            found[match[1].lower()] = match[2]
    return found


@pytest.mark.integration
def test_ansible_builder_creates_the_context_with_the_runtime_pins(tmp_path):
    if not BUILDER.exists():
        pytest.skip("ansible-builder is not in .venv (make setup)")
    context = tmp_path / "context"
    result = subprocess.run(
        [str(BUILDER), "create", "-f", str(REPO / "execution-environment.yml"), "-c", str(context)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    containerfile = next(
        p for p in (context / "Containerfile", context / "Dockerfile") if p.exists()
    )
    runtime = pins(REPO / "requirements-runtime.txt")
    assert pins(context / "_build" / "requirements.txt") == runtime
    # ansible-core is pinned once for the venv and once for the EE: they must agree.
    definition = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    core = definition["dependencies"]["ansible_core"]["package_pip"]
    assert core == f"ansible-core=={runtime['ansible-core']}"
    assert core in containerfile.read_text()
    bindep = (context / "_build" / "bindep.txt").read_text()
    assert "openssh-client" in bindep
    shutil.rmtree(context)


def test_every_runtime_pin_is_in_the_venv_requirements():
    text = (REPO / "requirements.txt").read_text()
    assert "-r requirements-runtime.txt" in text.splitlines()
    overlap = set(pins(REPO / "requirements.txt")) & set(pins(REPO / "requirements-runtime.txt"))
    assert not overlap, f"pinned twice: {sorted(overlap)}"
