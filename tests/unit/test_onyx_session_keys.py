"""Switch SSH host keys are checked unless the operator explicitly opts out."""

from __future__ import annotations

import os

import pytest
from paramiko.ssh_exception import BadHostKeyException, SSHException

from module_utils.cxfab.switch.onyx import session as session_module
from module_utils.cxfab.switch.onyx.session import HostKeyError, OnyxSession


def session(**kwargs) -> OnyxSession:
    return OnyxSession("10.0.0.51", 22, "admin", "not-the-password", **kwargs)


def test_by_default_the_key_must_be_in_the_operators_known_hosts():
    params = session()._params
    assert params["ssh_strict"] is True and params["alt_host_keys"] is True
    assert params["alt_key_file"] == os.path.expanduser("~/.ssh/known_hosts")
    assert params["system_host_keys"] is False  # only the file the operator named


def test_only_the_explicit_opt_out_accepts_any_key():
    params = session(check_host_key=False)._params
    assert params["ssh_strict"] is False and params["alt_host_keys"] is False


@pytest.mark.parametrize("known_hosts", ["", None])
def test_checking_without_a_file_is_refused(known_hosts):
    with pytest.raises(HostKeyError, match="no known-hosts file is given"):
        session(known_hosts=known_hosts)


def refusing(error: Exception):
    """A connection class whose every connection fails with `error`."""

    def connect(**_params):
        raise error

    return lambda: connect


def test_an_unknown_key_names_the_entry_the_file_and_how_to_add_it(monkeypatch, tmp_path):
    known = tmp_path / "known_hosts"
    refused = SSHException("Server '[10.0.0.51]:2201' not found in known_hosts")
    monkeypatch.setattr(session_module, "_connection_class", refusing(refused))
    cli = OnyxSession("10.0.0.51", 2201, "admin", "secret", known_hosts=str(known))
    with pytest.raises(HostKeyError) as caught:
        cli.open()
    message = str(caught.value)
    assert f"[10.0.0.51]:2201 is not in {known} (the file does not exist)" in message
    assert f"ssh-keyscan -p 2201 10.0.0.51 >> {known}" in message
    assert "secret" not in message


def test_a_changed_key_stops_with_its_own_message(monkeypatch, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text("")
    key = type("Key", (), {"get_base64": lambda self: "AAAA", "get_name": lambda self: "rsa"})
    changed = BadHostKeyException("10.0.0.51", key(), key())
    monkeypatch.setattr(session_module, "_connection_class", refusing(changed))
    cli = session(known_hosts=str(known))
    with pytest.raises(HostKeyError, match=r"10.0.0.51:22: the SSH host key CHANGED"):
        cli.open()
