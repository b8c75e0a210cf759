"""Workload servers started together and collected together, as real processes."""

import json
import os
import signal
import subprocess
import time

import pytest
from cxfab.workloads import servers


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            stat = handle.read()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _first_line(path: str, within: float = 10.0) -> int:
    """The number a server printed first, once it has printed it (bounded wait)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with open(path, encoding="utf-8") as handle:
            line = handle.readline()
        if line.endswith("\n"):
            return int(line)
        time.sleep(0.01)
    raise AssertionError(f"{path}: nothing printed within {within} s")


def _sessions(run_dir) -> list:
    with open(os.path.join(run_dir, servers.MANIFEST), encoding="utf-8") as handle:
        return [e and e["session"] for e in json.load(handle)["servers"]]


def test_every_server_reports_its_status_and_output_and_the_directory_goes(tmp_path):
    run_dir = tmp_path / "p1"
    started = servers.start(
        str(run_dir),
        [["sh", "-c", "echo out; echo err >&2; exit 3"], None, ["sh", "-c", "echo fine"]],
        60,
    )
    assert started["started"][1] is None and all(started["started"][i] for i in (0, 2))
    collected = servers.collect(str(run_dir), [0, 2], 30)
    assert collected[0] == {
        "rc": 3,
        "stdout": "out\n",
        "stderr": "err\n",
        "killed": False,
        "error": "non-zero return code 3",
    }
    assert collected[1] is None
    assert collected[2]["rc"] == 0 and collected[2]["error"] == ""
    assert collected[2]["stdout"] == "fine\n"
    assert not run_dir.exists()


def test_a_server_without_a_client_is_killed_at_once_with_its_children(tmp_path):
    run_dir = str(tmp_path / "p1")
    # The server forks: its child must go too (the whole session is ended).
    servers.start(run_dir, [["sh", "-c", "sleep 600 & echo $!; wait"]], 60)
    session = _sessions(run_dir)[0]
    child = _first_line(os.path.join(run_dir, "0.out"))
    (collected,) = servers.collect(run_dir, [], 30)
    assert collected["killed"] and collected["rc"] is None
    assert collected["error"] == "still running without a client: killed"
    assert collected["stdout"] == f"{child}\n"
    assert not _alive(child) and not _alive(session)


def test_a_server_still_running_at_the_deadline_is_killed_and_says_so(tmp_path):
    run_dir = str(tmp_path / "p1")
    servers.start(run_dir, [["sleep", "600"], ["true"]], 60)
    session = _sessions(run_dir)[0]
    hung, done = servers.collect(run_dir, [0, 1], 0.3)
    assert hung["killed"]
    assert hung["error"] == "still running 0.3 s after its client finished: killed"
    assert done == {"rc": 0, "stdout": "", "stderr": "", "killed": False, "error": ""}
    assert not _alive(session)


def test_a_server_past_its_lifetime_is_ended_by_its_wrapper(tmp_path):
    run_dir = str(tmp_path / "p1")
    servers.start(run_dir, [["sleep", "600"]], 1)
    (collected,) = servers.collect(run_dir, [0], 30)
    assert collected["rc"] == servers.LIFETIME_EXPIRED and not collected["killed"]
    assert collected["error"] == "ran past its lifetime of 1 s and was killed"


def test_a_new_batch_kills_the_leftovers_of_the_previous_one_and_nothing_else(tmp_path):
    run_dir = str(tmp_path / "p1")
    servers.start(run_dir, [["sleep", "600"]], 60)
    leftover = _sessions(run_dir)[0]
    # A process that is not a server of this directory, its pid planted in the manifest
    # (as when a pid is reused after a reboot): it must survive.
    stranger = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        manifest = os.path.join(run_dir, servers.MANIFEST)
        with open(manifest, encoding="utf-8") as handle:
            data = json.load(handle)
        data["servers"].append({"session": stranger.pid, "argv": ["sleep", "600"]})
        with open(manifest, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        started = servers.start(run_dir, [["true"]], 60)
        assert started["stale_killed"] == [leftover]
        assert not _alive(leftover)
        assert stranger.poll() is None
    finally:
        os.kill(stranger.pid, signal.SIGKILL)
        stranger.wait()
    (collected,) = servers.collect(run_dir, [0], 30)
    assert collected["rc"] == 0


def test_collect_refuses_what_was_not_started(tmp_path):
    with pytest.raises(ValueError, match=r"no manifest\.json: the servers were not started here"):
        servers.collect(str(tmp_path / "nothing"), [], 1)
    run_dir = str(tmp_path / "p1")
    servers.start(run_dir, [None, ["true"]], 60)
    unknown = r"wait_for: \[0, 5\] name no started server \(of 2 runs\)"
    with pytest.raises(ValueError, match=unknown):
        servers.collect(run_dir, [0, 5], 1)
    assert servers.collect(run_dir, [1], 30)[1]["rc"] == 0
