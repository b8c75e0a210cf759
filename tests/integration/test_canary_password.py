"""The switch password never reaches an output or a file: validate.yml at -vvvv.

Uses tests/tools/canary.py, which other playbooks' tests reuse with their own
playbook and directories.
"""

import uuid

import pytest

from tests.tools import canary

pytestmark = pytest.mark.integration

# Where a run could write: the repository's build/, backups/ and reports/.
DIRECTORIES = [canary.REPO_ROOT / name for name in ("build", "backups", "reports")]


def test_the_canary_check_finds_a_leak(tmp_path):
    # The check itself must be able to fail: a run that prints the password, and a file.
    password = canary.new_password()
    printed = canary.Run(["x", "y", "z"], 0, f"ok {password}", "")
    (tmp_path / "f.txt").write_text(f"pw: {password}\n", encoding="utf-8")
    found = canary.leaks(password, [printed], [tmp_path])
    assert found == ["y z stdout", str(tmp_path / "f.txt")]


def test_validate_success_path_keeps_the_password_out(tmp_path):
    password = canary.new_password()
    directory = canary.inventory(tmp_path, password)
    run = canary.run_playbook("validate.yml", directory, "-vvvv")
    assert run.returncode == 0, run.stdout[-3000:]
    assert "is valid" in run.stdout
    canary.assert_not_leaked(password, [run], DIRECTORIES)


@pytest.mark.parametrize(
    "patches",
    [
        # a semantic error elsewhere: the error list is printed
        [{"path": "cxfab_vlans[2].svi_addresses.sw-b", "value": "12.0.21.253/24"}],
        # a schema error inside the credentials themselves
        [
            {"path": "cxfab_switch_pairs[0].credentials.extra", "value": 1},
            {"path": "cxfab_switch_pairs[0].credentials.username", "value": "ad min"},
        ],
        # the pair with the password is left out of the rules for another error
        [{"path": "cxfab_switch_pairs[0].mlag.vip", "value": None}],
    ],
    ids=["semantic-error", "credentials-error", "pair-left-out"],
)
def test_validate_failure_paths_keep_the_password_out(tmp_path, patches):
    password = canary.new_password()
    directory = canary.inventory(tmp_path, password, patches)
    run = canary.run_playbook("validate.yml", directory, "-vvvv")
    assert run.returncode != 0
    assert "error(s):" in run.stdout + run.stderr
    canary.assert_not_leaked(password, [run], DIRECTORIES)


def test_an_invalid_password_is_refused_without_being_shown(tmp_path):
    password = canary.new_password() + "x" * 130  # too long for the secret format
    directory = canary.inventory(tmp_path, password)
    run = canary.run_playbook("validate.yml", directory, "-vvvv")
    assert run.returncode != 0
    assert "credentials.password: <hidden> is not 1-128 characters" in run.stdout + run.stderr
    canary.assert_not_leaked(password, [run], DIRECTORIES)


def _templated(marker: str) -> tuple[str, str]:
    password = canary.new_password() + marker
    return password, '"' + password + '"'


# Plaintext passwords Ansible would template or YAML would read as another type:
# (the password as the test greps for it, its YAML text in the inventory).
TEMPLATED_OR_RETYPED = {
    "expression": lambda: _templated("{{ 7*7 }}"),
    "comment": lambda: _templated("{#x"),
    "statement": lambda: _templated("{% if true %}"),
    "undefined-name": lambda: _templated("{{ cxfab_no_such_variable }}"),
    "octal": lambda: (pw := "0" + str(uuid.uuid4().int % 7**18).translate(OCTAL), pw),
    "sexagesimal": lambda: (pw := f"{uuid.uuid4().int % 10**9 + 10**9}:30:45", pw),
}
OCTAL = str.maketrans("89", "01")


@pytest.mark.parametrize("kind", sorted(TEMPLATED_OR_RETYPED))
def test_a_templated_or_retyped_password_is_refused_without_being_shown(tmp_path, kind):
    password, yaml_text = TEMPLATED_OR_RETYPED[kind]()
    directory = canary.inventory(tmp_path, password, yaml_text=yaml_text)
    run = canary.run_playbook("validate.yml", directory, "-vvvv")
    output = run.stdout + run.stderr
    assert run.returncode != 0, output[-3000:]
    assert "is valid" not in output
    assert f"{canary.PASSWORD_PATH}: <hidden>" in output, output[-3000:]
    assert "!unsafe" in output and "vault" in output  # says how to write it
    canary.assert_not_leaked(password, [run], DIRECTORIES)


def test_an_unsafe_tagged_password_with_braces_is_accepted_as_written(tmp_path):
    password = canary.new_password() + "{{ 7*7 }}{#"
    directory = canary.inventory(tmp_path, password, yaml_text=f"!unsafe '{password}'")
    run = canary.run_playbook("validate.yml", directory, "-vvvv")
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    canary.assert_not_leaked(password, [run], DIRECTORIES)
