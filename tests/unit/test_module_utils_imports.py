"""module_utils/cxfab must import itself relatively: inside an Ansible module it is
`ansible.module_utils.cxfab`, and an absolute `cxfab.` import only works on the
controller (where tests put module_utils on sys.path) - it fails on the host."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "module_utils" / "cxfab"


def absolute_cxfab_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [f"{path.name}:{node.lineno} {n}" for n in names if n.split(".")[0] == "cxfab"]
    return found


def test_module_utils_imports_itself_relatively():
    offenders = [hit for path in PACKAGE.rglob("*.py") for hit in absolute_cxfab_imports(path)]
    assert offenders == []
