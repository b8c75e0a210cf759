"""VRRP election of one emulated switch, with the timers of RFC 3768 (VRRP version 2).

The pair's keepalive carries each instance's state; a peer's instance in state Master
is its advertisement, heard only while the pair has its L2 path (the IPL). What the
timers give the lab, as on a real pair:
- an instance that becomes eligible starts as Backup (priority 255, the address
  owner, is never configured here) and becomes Master only when no advertisement
  reset its master-down timer for 3 x advertisement interval + skew, skew =
  (256 - priority) / 256 s: a backup takes over from a dead master 3.6 s after its
  last advertisement at priority 100 and the default 1 s interval;
- a Master that hears a better Master (higher priority, then higher address)
  becomes Backup at once;
- a Backup resets its timer on every advertisement unless it preempts (`preempt`,
  on by default) and the master's priority is lower than its own: then it lets the
  timer run out and takes over. A tie in priority never preempts.
Pure: the caller passes the clock.
"""

from __future__ import annotations

from dataclasses import dataclass

INIT, BACKUP, MASTER = "Init", "Backup", "Master"


def master_down_interval(priority: int, advertisement_interval: int) -> float:
    """Seconds a Backup waits without an advertisement before it takes over."""
    return 3 * advertisement_interval + (256 - priority) / 256


@dataclass(frozen=True)
class Instance:
    state: str = INIT
    # Backup: when the master-down timer was last (re)started; Master: when it took over.
    timer_from: float = 0.0


@dataclass(frozen=True)
class Local:
    """What this switch's own configuration says about the instance."""

    eligible: bool
    rank: tuple  # (priority, interface address as a tuple of ints)
    preempt: bool
    advertisement_interval: int


def step(
    current: Instance, local: Local, advert: tuple | None, advert_at: float, now: float
) -> Instance:
    """The instance after one tick. advert: the peer Master's rank as last heard (None:
    no advertisement reaches this switch), advert_at: when it was heard."""
    if not local.eligible:
        return Instance()
    if current.state == INIT:
        current = Instance(BACKUP, now)
    if current.state == MASTER:
        # Only an advertisement sent after this switch took over is news (timer_from is
        # then the moment it did): a dead master's last one is still in the view.
        if advert is not None and advert > local.rank and advert_at > current.timer_from:
            return Instance(BACKUP, advert_at)
        return current
    timer_from = current.timer_from
    if advert is not None and (not local.preempt or advert[0] >= local.rank[0]):
        timer_from = max(timer_from, advert_at)
    down = master_down_interval(local.rank[0], local.advertisement_interval)
    if now - timer_from >= down:
        return Instance(MASTER, now)
    return Instance(BACKUP, timer_from)
