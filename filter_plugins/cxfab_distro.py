"""Package names of a host's OS family from cxfab's logical names (host/distro.py).

`{{ ['rdma-core', 'verbs-utils'] | cxfab_distro_packages(ansible_facts.os_family,
ansible_facts.distribution) }}` is ['rdma-core', 'ibverbs-utils'] on Debian and Ubuntu,
['rdma-core', 'libibverbs-utils'] on RHEL, Rocky, Alma and Fedora; an unsupported
family fails the task naming it.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from ansible.errors import AnsibleFilterError
from cxfab.host import distro


def cxfab_distro_packages(names, os_family, distribution=""):
    try:
        return distro.packages(distro.family_of(os_family, distribution or ""), names)
    except distro.DistroError as error:
        raise AnsibleFilterError(str(error)) from error


class FilterModule:
    def filters(self):
        return {"cxfab_distro_packages": cxfab_distro_packages}
