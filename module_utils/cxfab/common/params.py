"""Settings objects built from an Ansible module's parameters."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


def dataclass_from_params(cls: type, params: Mapping[str, Any], **given: Any) -> Any:
    """An instance of the dataclass `cls`: each field a module parameter of its name holds.

    `given` sets the fields that no parameter holds as they are (a value derived from
    the parameters); a field neither names keeps its default.
    """
    fields = {field.name for field in dataclasses.fields(cls)} - set(given)
    return cls(**{name: params[name] for name in fields if name in params}, **given)
