"""library/cxfab_onyx_health.py picks the driver by the pair's platform (its structured
config): an unknown one is a clear error, and a cumulus pair whose NVUE API does not
answer fails every check closed, each naming why."""

from __future__ import annotations

from pathlib import Path

import yaml
from plugin_loading import load_plugin, run_module

from tests.unit.nvue_helpers import cumulus

health_module = load_plugin("library", "cxfab_onyx_health")


def write_pair(directory: Path, structured: dict[str, dict]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in structured.items():
        (directory / f"{name}.yml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return directory


def run(monkeypatch, capsys, structured_dir: Path, **extra) -> dict:
    args = {"structured_dir": str(structured_dir), "switch": "sw-a", "username": "cumulus",
            "password": "S3cret-pw", **extra}  # fmt: skip
    return run_module(health_module, args, monkeypatch, capsys)


def test_an_unknown_platform_is_a_clear_error(monkeypatch, capsys, tmp_path):
    pair = {name: {**cumulus("example", name), "platform": "junos"} for name in ("sw-a", "sw-b")}
    result = run(monkeypatch, capsys, write_pair(tmp_path, pair))
    assert result["failed"] is True
    assert result["msg"] == (
        "structured config of sw-a: platform 'junos': no switch driver for it "
        "(known: ['cumulus', 'onyx'])"
    )


def test_a_cumulus_pair_that_does_not_answer_fails_every_check(monkeypatch, capsys, tmp_path):
    pair = {name: cumulus("example", name) for name in ("sw-a", "sw-b")}
    for data in pair.values():
        data["management"] = {"address": "127.0.0.1", "port": 1}  # nothing listens there
    result = run(monkeypatch, capsys, write_pair(tmp_path, pair), fail_on_unhealthy=False)
    checks = result["checks"]
    assert result["healthy"] is False and result["releases"] == {"sw-a": None, "sw-b": None}
    assert {"config.saved", "mlag.oper", "mlag.backup", "magp.10.state", "pfc.1/1"} <= {
        c["id"] for c in checks
    }  # fmt: skip
    assert all(c["status"] == "fail" for c in checks)
    unread = [c for c in checks if c["id"] not in ("mlag.mpo_status", "mlag.system_mac_equal")]
    assert all("no NVUE session" in c["observed"] for c in unread), unread
    assert "S3cret-pw" not in str(result)
