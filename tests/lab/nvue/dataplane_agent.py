"""An emulated NVUE switch's hand on its namespace in the lab's fabric guest.

The Onyx twin's agent (tests/lab/onyx/dataplane_agent.py) does the work: read the
namespace back, converge it, follow its link events. Only what it converges to differs:
here the plan of the switch's applied NVUE tree (dataplane.nvue_plan), with the pair's
state from peering.py: the peer's bonds while it is alive, the peer-link members down
while the lab cuts the peer link, the MLAG bonds down on the secondary that lost the
peer link while the backup link answers.
"""

from __future__ import annotations

from tests.lab.onyx.dataplane import Plan, pair_state
from tests.lab.onyx.dataplane_agent import DataplaneAgent

from .dataplane import nvue_plan


class NvueDataplaneAgent(DataplaneAgent):
    def wanted(self) -> Plan:
        switch = self.switch
        with switch.lock:
            peering = switch.peering
            peer = peering.peer() if peering.peer_alive() else None
            want = nvue_plan(switch.applied, switch.name, self.target.cabled, peer)
            return pair_state(
                want, ipl_cut=peering.ipl_cut, mpos_suspended=peering.bonds_suspended()
            )
