"""Filters that turn workload outputs into numbers (parsers live in module_utils/cxfab)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab import workloads


class FilterModule:
    """Parsers of workload outputs and the plan of a host pair's runs."""

    def filters(self):
        return {
            "cxfab_iperf3_bps": workloads.iperf3_bps,
            "cxfab_perftest_bps": workloads.perftest_bps,
            "cxfab_qperf_bps": workloads.qperf_bps,
            "cxfab_pingpong": workloads.pingpong_result,
            "cxfab_workload_plan": workloads.plan_pair,
            "cxfab_workload_result": workloads.run_result,
            "cxfab_workload_client_error": workloads.client_error,
        }
