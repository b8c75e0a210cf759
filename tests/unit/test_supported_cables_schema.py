"""The `supported_cables` schema fragment (inventory `cxfab_supported_cables`)."""

from pathlib import Path

import jsonschema
import pytest
import yaml
from cxfab.intent import schema

FRAGMENT = Path(schema.SCHEMA_DIR) / "supported_cables.schema.yml"


def json_schema():
    data = yaml.safe_load(FRAGMENT.read_text())
    assert list(data) == ["supported_cables"]
    node = data["supported_cables"]
    assert set(node) <= schema.DIALECT_KEYS
    return schema.to_json_schema(node)


def test_qualified_cables_validate():
    entries = [
        {"vendor": "Mellanox", "part_number": "MCP1600-*", "description": "100G DAC"},
        {"vendor": "NVIDIA", "part_number": "MMA1B00-C100D"},
    ]
    jsonschema.validate(entries, json_schema())


@pytest.mark.parametrize(
    "entry",
    [
        {"vendor": "Mellanox"},
        {"vendor": "", "part_number": "X"},
        {"vendor": "Mellanox", "part_number": "MCP1600-E002", "pn": "x"},
        {"vendor": "A-VENDOR-NAME-LONGER", "part_number": "X"},
    ],
)
def test_bad_entries_are_refused(entry):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([entry], json_schema())
