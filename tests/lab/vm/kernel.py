"""Fetch the lab guests' kernel from Debian's packages (part of `make setup`).

The newest `linux-image-6.1.0-<abi>-amd64` is downloaded with `apt-get download` into
.cache/lab/, unpacked with `dpkg-deb -x` (never installed as the machine's boot
kernel) and indexed with `depmod`. The guests share the controller's root file
system, so `modprobe` inside a guest looks in /lib/modules/<guest version> of the
controller: that path is made a symlink to the unpacked modules tree.

Idempotent: a second run with the kernel in place changes nothing.
usage: python3 -m tests.lab.vm.kernel [--check]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.lab.vm.topology import CACHE_DIR, KERNEL_INFO

PACKAGE_RE = re.compile(r"^(linux-image-6\.1\.0-(\d+)-amd64) ")
MODULES_ROOT = Path("/lib/modules")


def newest_package() -> str:
    def search() -> list[tuple[int, str]]:
        out = subprocess.run(
            ["apt-cache", "search", "--names-only", r"^linux-image-6\.1\.0-[0-9]+-amd64$"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return sorted(
            (int(m.group(2)), m.group(1)) for m in map(PACKAGE_RE.match, out.splitlines()) if m
        )

    found = search()
    if not found:
        print(">> lab kernel: no linux-image-6.1.0-*-amd64 in apt lists, running apt-get update")
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        found = search()
    if not found:
        sys.exit("lab kernel: apt knows no package linux-image-6.1.0-*-amd64 (Debian 12 lists?)")
    return found[-1][1]


def modules_ok(version: str, modules_dir: Path) -> bool:
    """/lib/modules/<version> serves this tree's modules: it is our unpack, or another
    clone's unpack of the same package (the same modules.dep), which modprobe in a
    guest reads alike. Two clones on one machine relink it in turn."""
    link = MODULES_ROOT / version
    ours = modules_dir / "modules.dep"
    theirs = link / "modules.dep"
    if not theirs.is_file() or not ours.is_file():
        return False
    return link.resolve() == modules_dir.resolve() or theirs.read_bytes() == ours.read_bytes()


def current() -> dict | None:
    """The unpacked kernel recorded by the last fetch, if it is still complete."""
    try:
        info = json.loads(KERNEL_INFO.read_text())
    except (OSError, ValueError):
        return None
    if not Path(info["vmlinuz"]).is_file():
        return None
    if not modules_ok(info["version"], Path(info["modules"])):
        return None
    return info


def link_modules(version: str, modules_dir: Path) -> None:
    link = MODULES_ROOT / version
    if link.exists() and not link.is_symlink():
        if (link / "modules.dep").is_file():
            return  # a real tree of that version is installed: modprobe already works
        sys.exit(f"lab kernel: {link} exists and is not a modules tree; remove it and retry")
    if os.geteuid() != 0:
        sys.exit(f"lab kernel: linking {link} -> {modules_dir} needs root")
    MODULES_ROOT.mkdir(parents=True, exist_ok=True)
    tmp = link.with_name(link.name + ".lab-tmp")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(modules_dir)
    tmp.replace(link)


def fetch() -> dict:
    package = newest_package()
    version = package.removeprefix("linux-image-")
    unpack_dir = CACHE_DIR / f"kernel-{version}"
    vmlinuz = unpack_dir / "boot" / f"vmlinuz-{version}"
    modules_dir = unpack_dir / "lib" / "modules" / version
    if not (modules_dir / "modules.dep").is_file() or not vmlinuz.is_file():
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        debs = sorted(CACHE_DIR.glob(f"{package}_*.deb"))
        if not debs:
            print(f">> lab kernel: apt-get download {package}")
            subprocess.run(["apt-get", "download", "-q", package], cwd=CACHE_DIR, check=True)
            debs = sorted(CACHE_DIR.glob(f"{package}_*.deb"))
        print(f">> lab kernel: unpacking {debs[-1].name}")
        subprocess.run(["rm", "-rf", str(unpack_dir)], check=True)
        subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(unpack_dir)], check=True)
        subprocess.run(["depmod", "-b", str(unpack_dir), version], check=True)
    link_modules(version, modules_dir)
    info = {"version": version, "vmlinuz": str(vmlinuz), "modules": str(modules_dir)}
    KERNEL_INFO.write_text(json.dumps(info, indent=2) + "\n")
    return info


def main(argv: list[str]) -> int:
    info = current()
    if "--check" in argv:
        print(json.dumps(info) if info else "lab kernel: not fetched (run `make setup`)")
        return 0 if info else 1
    if info is None:
        info = fetch()
    print(f">> lab kernel: {info['version']} ready (modules at {MODULES_ROOT / info['version']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
