"""playbooks/drill.yml refuses to run without cxfab_drill_confirm and contacts nothing."""

import os
import socket
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = REPO_ROOT / ".venv" / "bin" / "ansible-playbook"


def run_drill(inventory: Path, *extra: str) -> tuple[int, str]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO_ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(
        [str(ANSIBLE_PLAYBOOK), "playbooks/drill.yml", "-i", str(inventory), *extra],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def listener():
    """A TCP port that stands for every device: any connection attempt is counted."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    yield server
    server.close()


def contacted(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            return count
        conn.close()
        count += 1


@pytest.mark.parametrize("extra", [(), ("-e", "cxfab_drill_confirm=false")], ids=["unset", "false"])
def test_refuses_without_confirmation_and_contacts_nothing(tmp_path, listener, extra):
    port = listener.getsockname()[1]
    inventory = tmp_path / "hosts.yml"
    device = f"{{ansible_host: 127.0.0.1, ansible_port: {port}}}"
    inventory.write_text(
        "all:\n  children:\n"
        f"    hosts:\n      hosts:\n        h1: {device}\n"
        f"    switches:\n      hosts:\n        sw1: {device}\n"
    )
    code, output = run_drill(inventory, *extra)
    assert code != 0, output
    assert "Run it only in a maintenance window, with -e cxfab_drill_confirm=true" in output
    assert "Nothing was contacted." in output
    recap = output.split("PLAY RECAP", 1)[1]
    assert "localhost" in recap and "h1" not in recap and "sw1" not in recap, recap
    assert contacted(listener) == 0
