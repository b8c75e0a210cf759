"""Filters that turn workload outputs into numbers (parsers live in module_utils/cxfab)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.workloads import batch, fleet_plan, fleet_runs
from cxfab.workloads import marking as workload_marking
from cxfab.workloads import pair_runs as workloads


def fleet_plan_published(fabric: dict, cpus: dict | None = None) -> dict:
    """The fabric's pairwise plan, computed once on the controller, as verify carries it."""
    return fleet_runs.publish(fleet_plan.plan_for_fabric(fabric, cpus=cpus), fabric)


class FilterModule:
    """The plan of a host pair's runs and the parsing of each run's output."""

    def filters(self):
        return {
            "cxfab_workload_plan": workloads.plan_pair,
            "cxfab_workload_marking": workload_marking.roce_marking,
            "cxfab_workload_result": workloads.run_result,
            "cxfab_workload_client_error": workloads.client_error,
            "cxfab_workload_batch": workloads.batch,
            "cxfab_workload_records": workloads.batch_records,
            "cxfab_workload_retry_plan": workloads.retry_plan,
            "cxfab_workload_with_retries": workloads.with_retries,
            # roles/rdma_workloads/tasks/batch.yml: the one path of a batch of runs
            "cxfab_batch_client_runs": batch.client_runs,
            "cxfab_batch_servers_to_wait_for": batch.servers_to_wait_for,
            "cxfab_batch_servers_by_run": batch.servers_by_run,
            "cxfab_qos_iperf3_server": workloads.qos_iperf3_server,
            # roles/rdma_workloads/tasks/fleet*.yml: the generated plan, round by round
            "cxfab_fleet_plan": fleet_plan_published,
            "cxfab_fleet_test_of": fleet_runs.test_of,
            "cxfab_fleet_test_runs": fleet_runs.test_runs,
            "cxfab_fleet_test_result": fleet_runs.test_result,
        }
