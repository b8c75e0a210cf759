"""The workload stage's no-op probe: one remote command, read fail-closed."""

from __future__ import annotations

import hashlib
import shlex
import subprocess

from plugin_loading import load_plugin

action = load_plugin("action_plugins", "cxfab_workload_programs")

SHA = hashlib.sha256(b"programs").hexdigest()


def test_an_installed_archive_and_a_running_program_are_read():
    out = f"{SHA}  /opt/cxfab/native-bin.tar\ncxfab-runs=0\n"
    assert action.parse_probe(out) == (SHA, 0)


def test_nothing_installed_reads_as_no_archive_and_the_program_status():
    assert action.parse_probe("none\ncxfab-runs=127\n") == (None, 127)


def test_output_it_cannot_read_is_never_an_up_to_date_archive():
    for garbage in ("", "sha256sum: command not found\n", "deadbeef x\ncxfab-runs=zero\n"):
        installed, runs = action.parse_probe(garbage)
        assert installed is None and runs is None


def test_the_probe_runs_as_a_shell_command_with_the_directory_quoted(tmp_path):
    # A directory with a space and a command substitution in its name stays a name.
    dest = tmp_path / "opt $(touch pwned) x"
    build = dest / "native" / "build"
    build.mkdir(parents=True)
    (dest / "native-bin.tar").write_bytes(b"archive")
    program = build / "pingpong"
    program.write_text("#!/bin/sh\nexit 3\n")
    program.chmod(0o755)
    run = subprocess.run(
        ["/bin/sh", "-c", action.probe_command(str(dest))],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    installed, runs = action.parse_probe(run.stdout)
    assert installed == hashlib.sha256(b"archive").hexdigest()
    assert runs == 3
    assert not (tmp_path / "pwned").exists()
    assert shlex.quote(str(dest / "native-bin.tar")) in action.probe_command(str(dest))
