"""A bytecode cache for modules Python imports from zip files, for the lab's TCG guests.

guest-init.sh appends this file to the guest's sitecustomize (its /etc is a tmpfs of
its own), so it runs at the start of every Python process of a lab guest, and only
there: the controller and real hosts never load it.

Why: an Ansible module reaches a host as an AnsiballZ zip that Python imports with
zipimport, and zipimport never writes bytecode, so every task compiles
ansible.module_utils (and cxfab's module_utils) from source again. Under TCG that
compile is most of a task: `ansible.builtin.ping` took 4 s a task on a lab guest, and
its payload run by hand 3.4 s, 2.4 s of it importing ansible.module_utils.basic
(python -X importtime, 2026-11-27), where the guest answers a `raw` task in 0.2 s.

What it does is what Python does for any .py on disk: the compiled code of a source is
kept in a cache directory and reused while the source is byte-for-byte the same. The
key is a SHA-256 over the interpreter's magic number, the path inside the zip and the
source, so a changed module_utils file is compiled afresh; the cached code gets the
current zip's path as its file name (`_imp._fix_co_filename`, as importlib does for a
.pyc), so tracebacks name the running payload. Any failure of the cache (unreadable,
corrupt, full disk) falls back to compiling: the cache can slow nothing but itself.
"""

import os
import zipimport

# Imported once a zip's module is compiled, not by every Python process of the guest
# (the emulated ConnectX tools start one per call): sitecustomize runs in all of them.
_imp = _sha256 = marshal = None

CACHE_DIR = os.environ.get("CXFAB_LAB_PYCACHE", "/var/cache/cxfab-lab-pycache")
_compile_source = zipimport._compile_source


def _inner_path(pathname):
    """The file's path inside its archive (a zip's own path changes with every task)."""
    _archive, sep, tail = pathname.rpartition(".zip" + os.sep)
    return tail if sep else pathname


def _cache_file(pathname, source):
    global _imp, _sha256, marshal
    if marshal is None:
        import _imp
        import _sha256
        import marshal
    from _frozen_importlib_external import MAGIC_NUMBER

    digest = _sha256.sha256(MAGIC_NUMBER)
    digest.update(_inner_path(pathname).encode("utf-8", "surrogateescape") + b"\0")
    digest.update(source)
    return os.path.join(CACHE_DIR, digest.hexdigest() + ".code")


def _cached_compile_source(pathname, source):
    try:
        path = _cache_file(pathname, source)
    except Exception:
        return _compile_source(pathname, source)
    try:
        with open(path, "rb") as cached:
            code = marshal.loads(cached.read())
        _imp._fix_co_filename(code, pathname)
        return code
    except Exception:  # absent, unreadable or corrupt: compile as zipimport would
        pass
    code = _compile_source(pathname, source)
    try:
        os.makedirs(CACHE_DIR, mode=0o700, exist_ok=True)
        partial = f"{path}.{os.getpid()}.tmp"
        with open(partial, "wb") as out:
            out.write(marshal.dumps(code))
        os.replace(partial, path)  # whole or not at all, for a concurrent reader
    except Exception:
        pass
    return code


zipimport._compile_source = _cached_compile_source
