"""Shared pytest setup: make the cxfab package importable as `cxfab.*`."""

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "module_utils"))
