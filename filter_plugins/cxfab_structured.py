"""One device's structured config from validate.yml's published fact (see
module_utils/cxfab/structured/packed.py: each device is published as a JSON text)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from ansible.errors import AnsibleFilterError
from cxfab.structured import packed


def cxfab_device(published, name):
    """{{ hostvars['localhost'].cxfab_structured | cxfab_device(inventory_hostname) }}"""
    try:
        return packed.device(published, name)
    except packed.NoStructuredConfig as error:
        raise AnsibleFilterError(str(error)) from error


class FilterModule:
    def filters(self):
        return {"cxfab_device": cxfab_device}
