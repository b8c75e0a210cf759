"""The lab's timing tool reads wall time off Ansible's log, serial batches included."""

from tests.tools.play_timing import spans, summarize

LOG = """\
2026-11-23 10:00:00,000 p=1 u=root n=ansible INFO| PLAY [Roll NICs] ****
2026-11-23 10:00:01,000 p=1 u=root n=ansible INFO| TASK [nic : Query] ****
2026-11-23 10:00:08,500 p=1 u=root n=ansible INFO| ok: [h1]
2026-11-23 10:00:09,000 p=1 u=root n=ansible INFO| TASK [nic : Report] ****
2026-11-23 10:00:09,200 p=1 u=root n=ansible INFO| PLAY [Roll NICs] ****
2026-11-23 10:00:09,300 p=1 u=root n=ansible INFO| TASK [nic : Query] ****
2026-11-23 10:00:15,300 p=1 u=root n=ansible INFO| RUNNING HANDLER [nic : Activate] ****
2026-11-23 10:00:20,300 p=1 u=root n=ansible INFO| PLAY [Switches] ****
2026-11-23 10:00:20,400 p=1 u=root n=ansible INFO| TASK [Deploy] ****
a continuation line without a time
2026-11-23 10:00:30,400 p=1 u=root n=ansible INFO| PLAY RECAP ****
"""


def test_a_task_lasts_until_the_next_header_and_batches_add_up():
    tasks, _, total = spans(LOG.splitlines())
    # Two serial batches of one task: 8.0 s then 6.0 s.
    assert round(tasks[("Roll NICs", "nic : Query")], 1) == 14.0
    assert round(total, 1) == 30.4


def test_plays_and_handlers():
    tasks, plays, _ = spans(LOG.splitlines())
    assert tasks[("Roll NICs", "nic : Activate")] == 5.0
    assert round(plays["Roll NICs"], 1) == 20.3
    assert round(plays["Switches"], 1) == 10.1


def test_a_file_without_timed_task_lines_says_so(tmp_path):
    log = tmp_path / "site-1.log"
    log.write_text("PLAY [x] ****\nTASK [y] ****\n")
    assert "no timed TASK line read" in summarize(log, top=5)
