"""The pairwise plan of a fleet: which hosts measure each other, in rounds.

A round is a set of tests run at the same time, no host in two of them. The plan is
built from the hosts' switch pairs (racks) and sized by a time budget:

1. the ring: hosts in rack order, each with its two neighbours (2 rounds, 3 for an
   odd count). Always planned, whatever the budget: every host is tested twice with
   two different partners, and every rack meets the next one at its ends. Two hosts
   are the ring's least case: their pair both ways, so that each host is a client
   once as in any ring, and a slow direction (one host's transmit) shows against the
   other;
2. inside the racks: a round-robin tournament (circle method) in every rack at once,
   round k of each rack in round k of the plan (a perfect matching per round; an odd
   rack gives one host a bye);
3. across the racks: the same tournament over the whole fleet, hosts interleaved rack
   by rack so that most pairs cross racks; pairs of one rack are left to phase 2.

Phases 2 and 3 add rounds while they fit in the budget (`budget_s // test_s`);
a pair is never planned twice. Hand-written pairs (`workloads.pairs`) win when given:
they are only packed into rounds.
"""

from __future__ import annotations

from .planned import PlannedPair

RING, RACK, ACROSS, GIVEN = "ring", "rack", "across", "given"


def fleet_members(fabric: dict, cpus: dict | None = None) -> dict:
    """host -> {rack, vlans, cpus} of a validated fabric (`cpus`: host -> NUMA-local
    CPU list from the facts); a host without a switch pair is its own rack."""
    cpus = cpus or {}
    members = {}
    for name, host in fabric["hosts"].items():
        rack = (host.get("bond") or {}).get("switch_pair") or f"-{name}"
        members[name] = {
            "rack": rack,
            "vlans": sorted(int(v["id"]) for v in host.get("vlans") or []),
            "cpus": cpus.get(name, ""),
        }
    return members


def rounds_in_budget(budget_s: float, test_s: float) -> int:
    """How many rounds of `test_s`-second tests fit in `budget_s` seconds."""
    if test_s <= 0:
        raise ValueError(f"a test lasts a positive number of seconds, not {test_s}")
    return int(budget_s // test_s)


def circle_round(count: int, round_index: int) -> list[tuple[int, int]]:
    """Round `round_index` of the circle method over positions 0..count-1: every
    position once (one bye when `count` is odd); rounds 0..count-2 (count-1 for an odd
    count) together hold every pair exactly once."""
    slots = count + (count % 2)
    turning = slots - 1
    if turning < 1:
        return []
    rotated = [(i + round_index) % turning + 1 for i in range(turning)]
    pairs = [(0, rotated[0])]
    pairs += [(rotated[i], rotated[turning - i]) for i in range(1, slots // 2)]
    return [(a, b) for a, b in pairs if a < count and b < count]


def circle_round_count(count: int) -> int:
    return count - 1 if count % 2 == 0 else count


def ring_rounds(count: int) -> list[list[tuple[int, int]]]:
    """The ring 0-1-...-(count-1)-0 as 2 rounds (3 for an odd count), each host the
    client (the pair's second) once; 2 hosts: their pair both ways, in 2 rounds."""
    if count < 2:
        return []
    if count == 2:
        return [[(0, 1)], [(1, 0)]]
    edges = [(i, (i + 1) % count) for i in range(count)]
    if count % 2 == 0:
        return [edges[0::2], edges[1::2]]
    return [edges[0 : count - 1 : 2], edges[1 : count - 1 : 2], [edges[-1]]]


class FleetPlanner:
    """Positions of the hosts in rack order and the pairs already planned."""

    def __init__(self, members: dict):
        self.members = members
        by_rack: dict = {}
        for name in sorted(members):
            by_rack.setdefault(members[name]["rack"], []).append(name)
        self.racks = [by_rack[rack] for rack in sorted(by_rack)]
        self.names = [name for rack in self.racks for name in rack]
        self.index = {name: i for i, name in enumerate(self.names)}
        self.rack_of = [0] * len(self.names)
        for number, rack in enumerate(self.racks):
            for name in rack:
                self.rack_of[self.index[name]] = number
        self.planned: set[int] = set()

    def _new(self, a: int, b: int) -> bool:
        key = a * len(self.names) + b if a < b else b * len(self.names) + a
        if key in self.planned:
            return False
        self.planned.add(key)
        return True

    def ring(self) -> list[list[tuple[int, int]]]:
        """The ring's rounds, all of them (its pairs are distinct but for two hosts, whose
        one pair it tests both ways); the later phases skip its pairs."""
        rounds = ring_rounds(len(self.names))
        for a, b in (pair for pairs in rounds for pair in pairs):
            self._new(a, b)
        return rounds

    def rack_rounds(self):
        """Rounds of the tournaments inside every rack, run side by side."""
        starts, offset = [], 0
        for rack in self.racks:
            starts.append(offset)
            offset += len(rack)
        for k in range(max((circle_round_count(len(r)) for r in self.racks), default=0)):
            pairs = []
            for start, rack in zip(starts, self.racks, strict=True):
                for a, b in circle_round(len(rack), k):
                    if self._new(start + a, start + b):
                        pairs.append((start + a, start + b))
            yield pairs

    def across_rounds(self):
        """Rounds of one tournament over all hosts, interleaved rack by rack; pairs of
        the same rack (phase 2's) and pairs already planned are left out."""
        depth = max((len(r) for r in self.racks), default=0)
        order = [self.index[rack[k]] for k in range(depth) for rack in self.racks if k < len(rack)]
        rack_of = self.rack_of
        for k in range(circle_round_count(len(order))):
            pairs = []
            for a, b in circle_round(len(order), k):
                a, b = order[a], order[b]
                if rack_of[a] != rack_of[b] and self._new(a, b):
                    pairs.append((a, b))
            yield pairs


class TestMaker:
    """Tests of the plan. A test's VLAN is `workloads.fleet.vlan` when set, else the
    lowest both hosts carry, else the server's lowest (the client reaches it through
    its gateway: `routed`); worked out once per pair of distinct VLAN lists, as racks
    share theirs."""

    def __init__(self, members: dict, vlan: int | None = None):
        self.members = members
        self.vlan = vlan  # workloads.fleet.vlan: every test on it (validated on every host)
        self.profile: dict = {}
        self.choice: dict = {}

    def _profile(self, host: str) -> tuple:
        vlans = tuple(self.members.get(host, {}).get("vlans") or ())
        return self.profile.setdefault(vlans, (len(self.profile), vlans))

    def test(self, server: str, client: str, phase: str, vlan: int | None = None) -> PlannedPair:
        test: PlannedPair = {"name": f"{server}~{client}", "server": server, "client": client}
        test["phase"] = phase
        if vlan is None and self.vlan is not None:
            vlan, test["routed"] = self.vlan, False
        if vlan is None:
            (ps, server_vlans), (pc, client_vlans) = self._profile(server), self._profile(client)
            chosen = self.choice.get((ps, pc))
            if chosen is None:
                shared = set(server_vlans).intersection(client_vlans)
                lowest = min(shared) if shared else (server_vlans[0] if server_vlans else None)
                chosen = self.choice[(ps, pc)] = (lowest, not shared)
            vlan, test["routed"] = chosen
        test["vlan"] = vlan
        return test


def pack_given(members: dict, pairs: list[PlannedPair]) -> list[list[PlannedPair]]:
    """Hand-written pairs in rounds: each in the first round where both hosts are free."""
    maker = TestMaker(members)
    rounds: list[list[PlannedPair]] = []
    busy: list[set] = []
    for pair in pairs:
        ends = {pair["server"], pair["client"]}
        slot = next((i for i, used in enumerate(busy) if not used & ends), None)
        if slot is None:
            rounds.append([])
            busy.append(set())
            slot = len(rounds) - 1
        busy[slot] |= ends
        test = maker.test(pair["server"], pair["client"], GIVEN, pair.get("vlan"))
        test["name"] = pair.get("name", test["name"])
        rounds[slot].append(test)
    return rounds


def plan_fleet(
    members: dict,
    budget_s: float,
    test_s: float,
    given: list[PlannedPair] | None = None,
    vlan: int | None = None,
) -> dict:
    """The plan: {source, test_s, rounds: [[test, ...], ...], tests, seconds, budget_s,
    phases: {phase: rounds}, cpus: {host: NUMA-local CPUs}}. The ring is planned even
    past the budget."""
    if given:
        rounds = pack_given(members, given)
        phases = {GIVEN: len(rounds)}
    else:
        planner = FleetPlanner(members)
        names = planner.names
        limit = rounds_in_budget(budget_s, test_s)
        index_rounds = [(RING, r) for r in planner.ring() if r]
        for phase, source in ((RACK, planner.rack_rounds()), (ACROSS, planner.across_rounds())):
            for pairs in source:
                if len(index_rounds) >= limit:
                    break
                if pairs:
                    index_rounds.append((phase, pairs))
        test = TestMaker(members, vlan).test
        rounds = [
            [test(names[a], names[b], phase) for a, b in pairs] for phase, pairs in index_rounds
        ]
        phases = {}
        for phase, _ in index_rounds:
            phases[phase] = phases.get(phase, 0) + 1
    return {
        "source": GIVEN if given else "generated",
        "test_s": test_s,
        "budget_s": budget_s,
        "rounds": rounds,
        "tests": sum(len(r) for r in rounds),
        "seconds": len(rounds) * test_s,
        "phases": phases,
        "cpus": {name: member.get("cpus", "") for name, member in members.items()},
    }


def plan_for_fabric(
    fabric: dict,
    budget_s: float | None = None,
    test_s: float | None = None,
    cpus: dict | None = None,
) -> dict:
    """The plan of a validated fabric. `workloads.plan: generated` generates it whatever
    the hand-written pairs (they run apart, in full); otherwise the hand-written
    `workloads.pairs` packed into rounds, or generated when there are none. The budget
    and a test's length default to `workloads.fleet`'s."""
    workloads = fabric.get("workloads") or {}
    fleet = workloads.get("fleet") or {}
    budget_s = fleet.get("budget_s", 600) if budget_s is None else budget_s
    test_s = fleet.get("test_s", 20) if test_s is None else test_s
    given = None if workloads.get("plan") == "generated" else workloads.get("pairs")
    members = fleet_members(fabric, cpus)
    return plan_fleet(members, budget_s, test_s, given=given, vlan=fleet.get("vlan"))
