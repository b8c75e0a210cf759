"""The lab guests' bytecode cache for zip imports (tests/lab/vm/guest_pycache.py).

Each case runs a fresh interpreter that loads the cache the way a guest's
sitecustomize does, then imports a module from a zip, as an AnsiballZ payload does.
`zipimport.compile` is shadowed by a counter, so a case can tell a compile from a hit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

CACHE_CODE = Path(__file__).resolve().parents[1] / "lab" / "vm" / "guest_pycache.py"

PROBE = """
import json, sys, traceback, zipimport
compiles = []
def counting_compile(*args, **kwargs):
    compiles.append(args[1])
    return compile(*args, **kwargs)
zipimport.compile = counting_compile  # the name zipimport's own compile step looks up
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), {"__name__": "sitecustomize"})
sys.path.insert(0, sys.argv[2])
import payload_mod
try:
    payload_mod.fail()
except ValueError:
    where = traceback.extract_tb(sys.exc_info()[2])[-1].filename
print(json.dumps({"compiles": compiles, "answer": payload_mod.ANSWER, "where": where}))
"""


def write_zip(path: Path, answer: int) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "payload_mod.py", f"ANSWER = {answer}\n\ndef fail():\n    raise ValueError('x')\n"
        )
    return path


def run(archive: Path, cache: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-S", "-c", PROBE, str(CACHE_CODE), str(archive)],
        capture_output=True,
        text=True,
        check=True,
        env={"CXFAB_LAB_PYCACHE": str(cache)},
    )
    return json.loads(done.stdout)


def test_a_second_import_from_another_zip_reuses_the_bytecode_and_names_the_new_zip(
    tmp_path,
):
    cache = tmp_path / "cache"
    first = run(write_zip(tmp_path / "a.zip", 1), cache)
    # One compile, whereas zipimport alone compiles twice (spec, then code).
    assert first["compiles"] == [str(tmp_path / "a.zip" / "payload_mod.py")]
    assert len(list(cache.glob("*.code"))) == 1
    second = run(write_zip(tmp_path / "b.zip", 1), cache)
    assert second["compiles"] == []
    assert second["answer"] == 1
    # The cached code carries the zip it was loaded from, not the one it was made from.
    assert second["where"] == str(tmp_path / "b.zip" / "payload_mod.py")


def test_a_changed_source_is_compiled_again_never_served_stale(tmp_path):
    cache = tmp_path / "cache"
    run(write_zip(tmp_path / "a.zip", 1), cache)
    changed = run(write_zip(tmp_path / "b.zip", 2), cache)
    assert changed["answer"] == 2 and len(changed["compiles"]) == 1
    assert len(list(cache.glob("*.code"))) == 2


def test_a_corrupt_entry_or_an_unusable_cache_falls_back_to_compiling(tmp_path):
    cache = tmp_path / "cache"
    run(write_zip(tmp_path / "a.zip", 1), cache)
    (entry,) = cache.glob("*.code")
    entry.write_bytes(b"not marshal data")
    corrupt = run(write_zip(tmp_path / "b.zip", 1), cache)
    assert corrupt["answer"] == 1 and len(corrupt["compiles"]) == 1
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    unusable = run(write_zip(tmp_path / "c.zip", 3), blocked / "cache")
    # zipimport (3.11) compiles a module twice, for its spec and for its code: without a
    # cache both compiles happen.
    assert unusable["answer"] == 3 and len(unusable["compiles"]) >= 1


CONTROLLER_SITE = Path(__file__).resolve().parents[1] / "tools" / "pycache_site"


def test_the_test_tiers_controller_loads_the_same_cache_from_its_pythonpath(tmp_path):
    """make's test tiers put tests/tools/pycache_site first on PYTHONPATH: a plain
    interpreter (site enabled, no -S) then keeps a zip import's bytecode, reads it back
    the next time, and imports the same code."""
    cache = tmp_path / "cache"
    archive = write_zip(tmp_path / "payload.zip", 7)
    probe = (
        "import sys, zipimport; sys.path.insert(0, sys.argv[1]); import payload_mod; "
        "print(payload_mod.ANSWER, zipimport._compile_source.__module__)"
    )
    env = {"PYTHONPATH": str(CONTROLLER_SITE), "CXFAB_LAB_PYCACHE": str(cache)}
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", probe, str(archive)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        assert done.stdout.split() == ["7", "cxfab_zip_pycache"], done
        assert len(list(cache.glob("*.code"))) == 1
