"""Distribution facts: package and service names per OS family, the unsupported refused."""

from pathlib import Path

import pytest
import yaml
from cxfab.host import distro

LOGICAL = list(distro.PACKAGES["debian"])


def test_families_name_the_same_logical_packages():
    assert set(distro.PACKAGES["redhat"]) == set(distro.PACKAGES["debian"])
    assert set(distro.SERVICES["redhat"]) == set(distro.SERVICES["debian"])


def test_debian_names():
    assert distro.packages("debian", LOGICAL) == [
        "rdma-core", "ibverbs-providers", "ibverbs-utils", "rdmacm-utils", "infiniband-diags",
        "perftest", "qperf", "iperf3", "mstflint", "lldpd", "ethtool",
        "build-essential", "make", "libibverbs-dev", "librdmacm-dev",
    ]  # fmt: skip
    assert distro.extra_repositories("debian", ["lldpd", "qperf"]) == {}
    assert distro.service("debian", "lldpd") == "lldpd"
    assert distro.MODULES_LOAD_DIR["debian"] == "/etc/modules-load.d"


def test_ubuntu_shares_debians_names():
    assert distro.family_of("Debian", "Ubuntu") == "debian"
    assert distro.packages(distro.family_of("Debian", "Ubuntu"), ["verbs-utils"]) == [
        "ibverbs-utils"
    ]


def test_redhat_names():
    assert distro.packages("redhat", LOGICAL) == [
        "rdma-core", "libibverbs", "libibverbs-utils", "librdmacm-utils", "infiniband-diags",
        "perftest", "qperf", "iperf3", "mstflint", "lldpd", "ethtool",
        "gcc", "make", "rdma-core-devel",  # one -devel package for both libraries' headers
    ]  # fmt: skip
    assert distro.extra_repositories("redhat", LOGICAL) == {"lldpd": "epel", "qperf": "epel"}
    assert distro.service("redhat", "networkmanager") == "NetworkManager"
    assert distro.MODULES_LOAD_DIR["redhat"] == "/etc/modules-load.d"


@pytest.mark.parametrize(
    ("os_family", "distribution"),
    [("RedHat", "RedHat"), ("RedHat", "Rocky"), ("RedHat", "AlmaLinux"), ("RedHat", "CentOS"),
     ("RedHat", "Fedora"), ("Rocky", ""), ("AlmaLinux", "")],
)  # fmt: skip
def test_rhel_and_rebuilds_are_redhat(os_family, distribution):
    assert distro.family_of(os_family, distribution) == "redhat"


def test_names_are_deduplicated_in_order():
    assert distro.packages("Debian", ["lldpd", "ethtool", "lldpd"]) == ["lldpd", "ethtool"]


@pytest.mark.parametrize(
    ("os_family", "distribution"), [("Suse", "openSUSE Leap"), ("Archlinux", "")]
)
def test_unsupported_family_is_refused_naming_it(os_family, distribution):
    with pytest.raises(distro.DistroError) as caught:
        distro.packages(os_family, ["rdma-core"])
    message = str(caught.value)
    assert os_family in message and "debian, redhat" in message
    with pytest.raises(distro.DistroError, match="unsupported OS family"):
        distro.family_of(os_family, distribution)


def test_unknown_package_is_refused_naming_it():
    with pytest.raises(distro.DistroError, match="'opensm'"):
        distro.packages("debian", ["opensm"])
    with pytest.raises(distro.DistroError, match="'rdma'"):
        distro.service("redhat", "rdma")


@pytest.mark.parametrize(
    ("family", "wanted"),
    [
        ("Debian", ["build-essential", "make", "libibverbs-dev", "librdmacm-dev"]),
        ("Rocky", ["gcc", "make", "rdma-core-devel"]),
    ],
)
def test_the_workloads_build_packages_per_family(family, wanted):
    """rdma_workloads' defaults (build on the host) by each family's names."""
    defaults = Path(__file__).resolve().parents[2] / "roles/rdma_workloads/defaults/main.yml"
    names = yaml.safe_load(defaults.read_text())["rdma_workloads_build_package_names"]
    assert distro.packages(distro.family_of(family, family), names) == wanted
