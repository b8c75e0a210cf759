"""The strict reading of safety switches, and the known-hosts lines Paramiko can use."""

from __future__ import annotations

import pytest

from module_utils.cxfab.common.flags import FlagError, flag
from module_utils.cxfab.switch.onyx import known_hosts

# A real ed25519 public key (any valid key will do: only its parse matters).
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIeb+otvO+x40oqlAbg+1gzDadK0Zj2G8UUyTKjBxG6N"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), ("yes", True), ("On", True), (1, True), ("false", False), ("0", False)],
)
def test_the_spellings_ansible_and_yaml_agree_on_are_read(value, expected):
    assert flag(value, "x") is expected


@pytest.mark.parametrize("value", ["ture", "flase", "", None, 2, "enabled", [True]])
def test_anything_else_is_an_error_naming_the_variable(value):
    with pytest.raises(FlagError, match=r"^cxfab_switch_host_key_checking: .* is not a boolean"):
        flag(value, "cxfab_switch_host_key_checking")


def test_a_file_paramiko_can_read_is_used_as_it_is(tmp_path):
    path = tmp_path / "known_hosts"
    path.write_text(f"# comment\n[127.0.0.1]:2201 {KEY}\n", encoding="utf-8")
    assert known_hosts.usable(str(path)) == (str(path), [])


def test_marker_and_unreadable_lines_are_left_out_and_reported(tmp_path):
    path = tmp_path / "known_hosts"
    path.write_text(
        f"@cert-authority *.example.net {KEY}\nsw-a ssh-ed25519 not-base64!\nsw-b {KEY}\n",
        encoding="utf-8",
    )
    copy, notes = known_hosts.usable(str(path))
    try:
        assert copy != str(path)
        with open(copy, encoding="utf-8") as handle:
            assert handle.read() == f"sw-b {KEY}\n"
        assert notes[0].startswith(f"{path}:1: @cert-authority lines are not supported")
        assert notes[1].startswith(f"{path}:2: Paramiko cannot read this line")
    finally:
        known_hosts.os.unlink(copy)


def test_a_revoked_line_stops_naming_file_and_line(tmp_path):
    path = tmp_path / "known_hosts"
    path.write_text(f"sw-b {KEY}\n@revoked * {KEY}\n", encoding="utf-8")
    with pytest.raises(known_hosts.RevokedLineError, match=rf"^{path}:2: @revoked lines"):
        known_hosts.usable(str(path))
