"""The ConnectX emulator's environment for an integration test: its tools first on PATH,
its state and fake sysfs tree under the test's own directory, and cxemu-admin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EMU_BIN = REPO / "tests" / "lab" / "cxemu" / "bin"


def cxemu_env(root: Path, sysfs: Path) -> dict[str, str]:
    """os.environ with the emulator's tools, state (root/cxemu) and sysfs tree."""
    return {
        **os.environ,
        "PATH": f"{EMU_BIN}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        "CXEMU_STATE_DIR": str(root / "cxemu"),
        "CXEMU_SYSFS_ROOT": str(sysfs),
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
    }


def admin(env: dict[str, str], *args: str) -> None:
    """cxemu-admin with `args` in that environment; a failure fails the test."""
    subprocess.run([str(EMU_BIN / "cxemu-admin"), *args], env=env, check=True)
