"""The shape of a planned pair: what the fleet's plan, its rounds and a pair's runs share.

A hand-written pair of `workloads.pairs` and a test of the fleet's plan
(fleet_plan.TestMaker) are the same thing to pair_runs.plan_pair: a server, a client
and the VLAN between them. They stay plain dicts (TypedDicts, not dataclasses): the
plan travels through Ansible as JSON (fleet_runs.publish) and comes back as dicts in
every filter and module that reads it.
"""

from __future__ import annotations

from typing import TypedDict


class _Ends(TypedDict):
    name: str
    server: str
    client: str


class PlannedPair(_Ends, total=False):
    """`name` is `server~client` unless the pair is named; `vlan` the VLAN the client
    reaches the server on (None: neither host carries one)."""

    vlan: int | None
    phase: str  # the plan's phase (fleet_plan: ring, rack, across, given)
    routed: bool  # the client reaches the server's VLAN through its gateway


class ScheduledTest(PlannedPair, total=False):
    """A test as a client host reads it from the published plan (fleet_runs.test_of)."""

    round: int
    slot: int  # its place in the round: moves its ports
    round_tests: int
    address: str  # the server's on `vlan`
    error: str  # why it cannot run (no address): its result is "not measured"
