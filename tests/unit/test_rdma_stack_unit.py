"""The soft-RoCE boot unit of cxfab_rdma_stack: every pasted word stays one argument."""

import shlex

import pytest
from cxfab.host.stages import rdma as rdma_stack


def exec_argv(line: str) -> list[str]:
    """An Exec line's argv as systemd reads it: words split and unquoted like a POSIX
    shell's double quotes, then `$$` and `%%` undone (systemd's own escapes)."""
    command = line.split("=", 1)[1].removeprefix("-")
    return [word.replace("$$", "$").replace("%%", "%") for word in shlex.split(command)]


def test_the_unit_names_each_device_and_netdev_as_one_quoted_argument():
    devices = [{"name": "rxe0", "netdev": "ens1f0"}, {"name": "rxe1", "netdev": "bond0.10"}]
    text = rdma_stack.unit_text("/usr/sbin/rdma", "/usr/sbin/modprobe", devices)
    execs = [line for line in text.splitlines() if line.startswith("ExecStart")]
    assert execs[0] == 'ExecStartPre="/usr/sbin/modprobe" rdma_rxe'
    assert execs[1] == 'ExecStart=-"/usr/sbin/rdma" link add "rxe0" type rxe netdev "ens1f0"'
    assert exec_argv(execs[2]) == [
        "/usr/sbin/rdma", "link", "add", "rxe1", "type", "rxe", "netdev", "bond0.10",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "word", ["a b", 'a"b', "a$(id)", "a${HOME}", "a%n", "a\\nb", "a;b", "a'b", "a`id`"]
)
def test_a_word_systemd_would_split_or_expand_stays_one_argument(word):
    text = rdma_stack.unit_text("/usr/sbin/rdma", "/sbin/modprobe", [{"name": word, "netdev": "x"}])
    (line,) = [line for line in text.splitlines() if line.startswith("ExecStart=")]
    assert exec_argv(line)[3] == word


@pytest.mark.parametrize("word", ["a\nExecStart=/bin/sh", "a\rb", "a\x00b"])
def test_a_control_character_is_refused_not_written(word):
    with pytest.raises(ValueError, match="control character"):
        rdma_stack.unit_quote(word)
