"""library/cxfab_onyx_deploy.py picks the driver by the pair's platform; an unknown one stops
the module before any file is read or any switch is opened."""

from __future__ import annotations

from pathlib import Path

from plugin_loading import load_plugin, run_module

deploy_module = load_plugin("library", "cxfab_onyx_deploy")
REPO = Path(__file__).resolve().parents[2]


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
    return run_module(deploy_module, args, monkeypatch, capsys)


def test_an_unknown_platform_is_a_clear_error_before_anything_is_read(
    monkeypatch, capsys, tmp_path
):
    result = run(monkeypatch, capsys, tmp_path, platform="nvue")
    assert result["failed"] is True
    assert result["msg"] == (
        "platform 'nvue': no switch driver for it (known: ['cumulus', 'onyx'])"
    )
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


def test_the_cumulus_platform_gets_the_nvue_driver_and_a_confirm_timer_that_outlasts_a_turn(
    monkeypatch, capsys, tmp_path
):
    assert deploy_module.DRIVERS["cumulus"].SECTIONS == ("mlag", "vlans", "gateway")
    result = run(monkeypatch, capsys, tmp_path, platform="cumulus", wait=90, confirm_timeout=200)
    assert result["msg"] == (
        "confirm_timeout 200: must be at least 2 x wait + 60 = 240 s (the first peer waits "
        "unconfirmed through its partner's turn)"
    )
    assert not (tmp_path / "deploy").exists()  # nothing was read, opened or recorded
    result = run(monkeypatch, capsys, tmp_path, platform="cumulus", wait=90, confirm_timeout=240)
    assert result["msg"].startswith(
        f"structured {tmp_path / 'structured' / 'sw-a.yml'}: cannot read"
    )


def test_the_nvue_driver_gets_its_own_pin_and_the_shared_ca(monkeypatch):
    p = {"tls_ca": "/ca.pem", "tls_fingerprints": {"sw-b": "ab" * 32}, "confirm_timeout": 300}
    a = deploy_module._driver(deploy_module.NvueDriver, "sw-a", {}, p)
    b = deploy_module._driver(deploy_module.NvueDriver, "sw-b", {}, p)
    assert (a.trust.ca_file, a.trust.fingerprint) == ("/ca.pem", None)
    assert b.trust.fingerprint == "ab" * 32 and b.confirm_seconds == 300


def test_a_cumulus_peer_without_mgmt_port_gets_the_nvue_api_port():
    """22 is SSH's port (the schema default, right for onyx); NVUE's API listens on 8765."""
    import copy

    import yaml
    from cxfab.intent import fabric as cxfab_fabric

    group_vars: dict = {}
    for path in sorted((REPO / "inventories" / "example" / "group_vars" / "all").glob("*.yml")):
        group_vars.update(yaml.safe_load(path.read_text()) or {})
    document = cxfab_fabric.assemble(group_vars, {})  # no peer gives mgmt_port
    onyx = cxfab_fabric.normalise(document)
    assert [p["mgmt_port"] for p in onyx["switch_pairs"][0]["peers"]] == [22, 22]
    cumulus = copy.deepcopy(document)
    cumulus["switch_pairs"][0]["platform"] = "cumulus"
    cumulus["switch_pairs"][0]["peers"][1]["mgmt_port"] = 9443
    ports = [p["mgmt_port"] for p in cxfab_fabric.normalise(cumulus)["switch_pairs"][0]["peers"]]
    assert ports == [8765, 9443]
    assert "mgmt_port" not in cumulus["switch_pairs"][0]["peers"][0]  # the input is untouched
