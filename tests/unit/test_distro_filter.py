"""cxfab_distro_packages: rdma_stack's package list per OS family (host/distro.py)."""

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from plugin_loading import REPO, load_plugin

filters = load_plugin("filter_plugins", "cxfab_distro")
to_packages = filters.FilterModule().filters()["cxfab_distro_packages"]
NAMES = yaml.safe_load((REPO / "roles/rdma_stack/defaults/main.yml").read_text())[
    "rdma_stack_package_names"
]


def test_rdma_stack_on_debian_installs_what_it_always_did():
    assert to_packages(NAMES, "Debian", "Debian") == [
        "rdma-core", "ibverbs-providers", "ibverbs-utils", "rdmacm-utils", "infiniband-diags",
        "perftest", "qperf", "iperf3", "lldpd",
    ]  # fmt: skip
    assert to_packages(NAMES, "Debian", "Ubuntu") == to_packages(NAMES, "Debian", "Debian")


def test_rdma_stack_on_rocky():
    assert to_packages(NAMES, "RedHat", "Rocky")[:4] == [
        "rdma-core", "libibverbs", "libibverbs-utils", "librdmacm-utils",
    ]  # fmt: skip


def test_unsupported_family_fails_the_task_naming_it():
    with pytest.raises(AnsibleFilterError, match="'Suse'"):
        to_packages(NAMES, "Suse", "SLES")
