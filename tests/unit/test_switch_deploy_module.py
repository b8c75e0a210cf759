"""library/cxfab_onyx_deploy.py picks the driver by the pair's platform; an unknown one stops
the module before any file is read or any switch is opened."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ansible.module_utils import basic
from plugin_loading import load_plugin

deploy_module = load_plugin("library", "cxfab_onyx_deploy")


def run(monkeypatch, capsys, tmp_path: Path, **extra) -> dict:
    args = {
        "switches": ["sw-a", "sw-b"],
        "structured_dir": str(tmp_path / "structured"),  # absent: reading it would fail
        "configs_dir": str(tmp_path / "configs"),
        "record_dir": str(tmp_path / "deploy"),
        "snapshot_dir": str(tmp_path / "snapshots"),
        "username": "admin",
        "password": "S3cret-pw",
        **extra,
    }
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode())
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy")
    with pytest.raises(SystemExit):
        deploy_module.main()
    return json.loads(capsys.readouterr().out)


def test_an_unknown_platform_is_a_clear_error_before_anything_is_read(
    monkeypatch, capsys, tmp_path
):
    result = run(monkeypatch, capsys, tmp_path, platform="nvue")
    assert result["failed"] is True
    assert result["msg"] == "platform 'nvue': no switch driver for it (known: ['onyx'])"
    assert not (tmp_path / "deploy").exists()  # nothing was read, opened or recorded


def test_the_onyx_platform_gets_the_onyx_driver_and_its_sections(monkeypatch, capsys, tmp_path):
    assert deploy_module.DRIVERS["onyx"].SECTIONS == ("mlag", "vlans", "gateway")
    result = run(monkeypatch, capsys, tmp_path, platform="onyx", sections=["vlans", "acl"])
    assert result["msg"] == "sections: ['acl'] are not among ['mlag', 'vlans', 'gateway']"
    # With known sections, it goes on to read the structured configs (absent here).
    result = run(monkeypatch, capsys, tmp_path, platform="onyx")
    assert result["msg"].startswith(
        f"structured {tmp_path / 'structured' / 'sw-a.yml'}: cannot read"
    )
    assert result["sessions"] == {} and (tmp_path / "deploy").is_dir()


def test_the_cumulus_platform_is_refused_until_its_transport_exists(monkeypatch, capsys, tmp_path):
    result = run(monkeypatch, capsys, tmp_path, platform="cumulus")
    assert result["failed"] is True
    assert result["msg"].startswith("platform 'cumulus': NVUE transport not yet implemented")
    assert not (tmp_path / "deploy").exists()  # nothing was read, opened or recorded
