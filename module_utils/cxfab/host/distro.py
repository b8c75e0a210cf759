"""Distribution facts in one place: package and service names per OS family.

`packages(family, names)` turns cxfab's logical package names into the family's
package names; `family_of(facts)` maps Ansible's ansible_os_family /
ansible_distribution to a family here. An unsupported family is refused naming it
and the supported ones. Pure data + lookups (no I/O): the roles read it through the
cxfab_distro_packages filter.

Sources (docs/host-network.md repeats them):
- debian (Debian, Ubuntu): rdma-core's debian/control (packages rdma-core,
  ibverbs-providers, ibverbs-utils, rdmacm-utils, infiniband-diags) in
  linux-rdma/rdma-core; packages.debian.org for perftest, qperf; Debian's package
  names for iperf3, mstflint, lldpd, ethtool (the lab's own requirements-apt.txt
  installs rdma-core, perftest, qperf, iperf3, ethtool, lldpd under these names).
- redhat (RHEL, Rocky, Alma, CentOS Stream, Fedora): rdma-core's redhat/rdma-core.spec
  (rdma-core, libibverbs carrying the providers, libibverbs-utils, librdmacm-utils,
  infiniband-diags); packages.fedoraproject.org for perftest and qperf (qperf: EPEL 9
  on RHEL 9); lldpd comes from EPEL on RHEL and its rebuilds.
"""

from __future__ import annotations

# Logical name -> package name per family (None: the family ships no such package).
# Most tools carry the same package name in both families; only the verbs and RDMA-CM
# packages are split and named differently.
_SAME_NAME = (
    "rdma-core", "infiniband-diags", "perftest", "qperf", "iperf3", "mstflint", "lldpd",
    "ethtool", "make",
)  # fmt: skip
_ORDER = (
    "rdma-core", "verbs-providers", "verbs-utils", "rdmacm-utils", "infiniband-diags",
    "perftest", "qperf", "iperf3", "mstflint", "lldpd", "ethtool",
    "c-compiler", "make", "verbs-dev", "rdmacm-dev",
)  # fmt: skip
_NAMED_APART = {
    "debian": {
        "verbs-providers": "ibverbs-providers",
        "verbs-utils": "ibverbs-utils",
        "rdmacm-utils": "rdmacm-utils",
        # native/'s build (rdma_workloads_build_on: host): the C toolchain (gcc, libc's
        # headers, make) and the verbs and RDMA-CM headers, split per library.
        "c-compiler": "build-essential",
        "verbs-dev": "libibverbs-dev",
        "rdmacm-dev": "librdmacm-dev",
    },
    "redhat": {
        "verbs-providers": "libibverbs",
        "verbs-utils": "libibverbs-utils",
        "rdmacm-utils": "librdmacm-utils",
        # gcc pulls glibc-devel; rdma-core.spec's `devel` subpackage carries the headers
        # of both libraries (its Provides: libibverbs-devel, librdmacm-devel).
        "c-compiler": "gcc",
        "verbs-dev": "rdma-core-devel",
        "rdmacm-dev": "rdma-core-devel",
    },
}
PACKAGES = {
    family: {name: apart.get(name, name) for name in _ORDER if name in apart or name in _SAME_NAME}
    for family, apart in _NAMED_APART.items()
}
# Packages a family's base repositories lack (the host needs EPEL enabled on RHEL and
# its rebuilds; Fedora has them in its own repositories).
EXTRA_REPOSITORY = {"redhat": {"lldpd": "epel", "qperf": "epel"}}
SERVICES = {
    "debian": {
        "lldpd": "lldpd",
        "networkd": "systemd-networkd",
        "networkmanager": "NetworkManager",
    },
    "redhat": {
        "lldpd": "lldpd",
        "networkd": "systemd-networkd",
        "networkmanager": "NetworkManager",
    },
}
# Kernel modules at boot: both families read /etc/modules-load.d/*.conf
# (systemd-modules-load.service), which is what cxfab_rdma_stack writes.
MODULES_LOAD_DIR = {"debian": "/etc/modules-load.d", "redhat": "/etc/modules-load.d"}

# ansible_os_family (and, for a family Ansible names otherwise, ansible_distribution)
FAMILY_OF = {
    "Debian": "debian",
    "Ubuntu": "debian",
    "RedHat": "redhat",
    "Rocky": "redhat",
    "AlmaLinux": "redhat",
    "CentOS": "redhat",
    "Fedora": "redhat",
}


class DistroError(ValueError):
    """An OS family or package cxfab has no names for; the message names both."""


def family_of(os_family: str, distribution: str = "") -> str:
    """cxfab's family of a host from Ansible's ansible_os_family / ansible_distribution."""
    for key in (os_family, distribution):
        if key in FAMILY_OF:
            return FAMILY_OF[key]
    if os_family in PACKAGES:
        return os_family
    raise DistroError(
        f"unsupported OS family {os_family!r} ({distribution or 'distribution unknown'}): "
        f"cxfab knows {', '.join(sorted(PACKAGES))} (module_utils/cxfab/host/distro.py)"
    )


def packages(family: str, names) -> list[str]:
    """The family's package names of cxfab's logical `names`, in order, without repeats."""
    family = family_of(family)
    table = PACKAGES[family]
    out: list[str] = []
    for name in names:
        if name not in table:
            raise DistroError(f"{family}: no package name for {name!r} (known: {', '.join(table)})")
        if table[name] and table[name] not in out:
            out.append(table[name])
    return out


def service(family: str, name: str) -> str:
    table = SERVICES[family_of(family)]
    if name not in table:
        raise DistroError(f"{family}: no service name for {name!r} (known: {', '.join(table)})")
    return table[name]


def extra_repositories(family: str, names) -> dict[str, str]:
    """{package: repository} of `names` the family's base repositories lack."""
    extra = EXTRA_REPOSITORY.get(family_of(family), {})
    return {name: extra[name] for name in names if name in extra}
