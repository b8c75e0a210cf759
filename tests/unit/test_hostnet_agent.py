"""The host agent: installed from the package's own code, re-applies what it is given."""

import json
import os
import sys

import pytest
from cxfab.host.net import agent, irq


def sources():
    return agent.sources()


def test_package_sources_are_the_modules_own_code():
    files = sources()
    assert list(files) == list(agent.PACKAGE_FILES)
    with open(irq.__file__, encoding="utf-8") as handle:
        assert files["cxfab/host/net/irq.py"] == handle.read()


def test_install_writes_once_keeps_other_sections_and_is_idempotent(tmp_path):
    root = str(tmp_path)
    changed = agent.install("irq", {"interfaces": ["ens1f0"], "policy": "numa-local"},
                            sources(), root)  # fmt: skip
    assert agent.LAUNCHER in changed and agent.UNIT in changed and agent.CONFIG in changed
    assert agent.install("irq", {"interfaces": ["ens1f0"], "policy": "numa-local"},
                         sources(), root) == []  # fmt: skip
    qos = {"commands": {"ens1f0": [["true"]]}}
    assert agent.install("qos", qos, sources(), root) == [agent.CONFIG]
    config = json.loads((tmp_path / agent.CONFIG.lstrip("/")).read_text())
    assert set(config) == {"irq", "qos"}
    assert agent.install("qos", None, sources(), root, apply=False) == [agent.CONFIG]
    launcher = tmp_path / agent.LAUNCHER.lstrip("/")
    assert os.stat(launcher).st_mode & 0o777 == 0o755


def test_hook_passes_the_interface_as_an_argument_never_as_shell_code():
    hook = agent.wanted_files(sources(), {})[os.path.join(agent.HOOK_DIRS[0], agent.HOOK_NAME)]
    assert '--interface "${IFACE:-}"' in hook[0]
    assert "case" not in hook[0]


@pytest.fixture
def installed(tmp_path):
    """The agent installed under tmp_path and its config file path."""
    root = str(tmp_path)
    marker = tmp_path / "ran"
    qos = {
        "commands": {"ens1f0": [[sys.executable, "-c", f"open({str(marker)!r}, 'a').write('x')"]]}
    }
    agent.install("qos", qos, sources(), root)
    return tmp_path / agent.CONFIG.lstrip("/"), marker


def test_main_reapplies_qos_for_its_own_ports_only(installed):
    config, marker = installed
    assert agent.main(["--config", str(config), "--interface", "eth9"]) == 0
    assert not marker.exists()
    assert agent.main(["--config", str(config), "--interface", "ens1f0"]) == 0
    assert agent.main(["--config", str(config)]) == 0
    assert marker.read_text() == "xx"


def test_main_reports_a_failing_command(tmp_path, capsys):
    root = str(tmp_path)
    agent.install("qos", {"commands": {"p0": [["false"]]}}, sources(), root)
    assert agent.main(["--config", str(tmp_path / agent.CONFIG.lstrip("/"))]) == 1
    assert "qos p0: false" in capsys.readouterr().err


def test_irqbalance_policy_bans_only_the_pinned_functions(tmp_path, capsys):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"irq": {"pci": ["0000:65:00.0"]}}))
    agent.main(["--config", str(config), "/sys/devices/pci0000:64/0000:65:00.0", "40"])
    agent.main(["--config", str(config), "/sys/devices/pci0000:00/0000:00:03.0", "50"])
    assert capsys.readouterr().out.split() == ["ban=true", "ban=false"]
