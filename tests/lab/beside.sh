#!/usr/bin/env bash
# Run a command beside the lab's own tests, on the CPU time the lab leaves idle.
#
#   beside.sh start LOG COMMAND...   start it in a session of its own, its output in
#                                    LOG (exit 3, nothing started: no autogroups here)
#   beside.sh finish LOG             give it a full share, wait for it, print LOG and
#                                    exit 0 if the command did, else 1
#
# Why a session: with kernel.sched_autogroup_enabled (the default on this machine kind)
# the scheduler shares the CPUs between sessions first, and every QEMU guest of the lab
# runs in a session of its own. A nice value or SCHED_IDLE inside our session changes
# nothing against the guests; the nice value of the session's autogroup does. At 19 the
# command's whole session weighs 15 against each guest's 1024, so it runs in the lab's
# idle time. Measured 2026-11-29 (the lab's own tests, then the integration tier):
#   one after the other              302 s + 489 s
#   beside, a session at nice 0      502 s (the lab slowed by 200 s), 450 s
#   beside, a session at nice 19     324 s, 75 % of the integration tier done by then
# The lab's deployed suites leave little idle (0-8 % during site.yml) and their files
# (build/) are what the integration tier would write, so `finish` comes before them.
set -euo pipefail

case "${1:-}" in
start)
    log=$2
    shift 2
    autogroup_on=$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)
    [ "$autogroup_on" = 1 ] || exit 3
    rm -f "$log" "$log.pid"
    # The new session's leader writes its pid (setsid may have forked), lowers its own
    # autogroup, runs the command and writes its status last.
    setsid bash -c 'echo $$ > "$0.pid" && echo 19 > /proc/self/autogroup || exit 1
        rc=0; "$@" || rc=$?; echo ">> beside: exit $rc"' "$log" "$@" \
        > "$log" 2>&1 < /dev/null &
    for _ in $(seq 50); do [ -s "$log.pid" ] && exit 0; sleep 0.1; done
    echo "beside.sh: the command did not start (see $log)" >&2
    exit 1
    ;;
finish)
    log=$2
    pid=$(cat "$log.pid")
    { echo 0 > "/proc/$pid/autogroup"; } 2>/dev/null || true  # ended already: nothing to lift
    while kill -0 "$pid" 2>/dev/null; do sleep 1; done
    cat "$log"
    tail -n 1 "$log" | grep -qx ">> beside: exit 0"
    ;;
*)
    echo "usage: beside.sh start LOG COMMAND... | finish LOG" >&2
    exit 2
    ;;
esac
