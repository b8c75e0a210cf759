"""Apply cxfab's NetworkManager profiles: keyfiles, `nmcli connection load`, `up`, stale ones out.

The profiles are the keyfiles structured/nmkeyfile.py renders from the structured
config (one `cxfab-<interface>.nmconnection` per interface, 0600, in
/etc/NetworkManager/system-connections). On this backend NetworkManager owns the links,
so the module does not change them over netlink: it writes the files, has
NetworkManager load them and activates them, then reads the links back over netlink and
compares them with the intent (stages/network_nm.py).

    plan(directory, files)  -> what making the directory hold exactly `files` does
    apply(runner, ...)      -> stale profiles deleted, files written and loaded, activated
    read_back(directory)    -> the cxfab keyfiles on disk as persisted.comparable's form

`runner` is subprocess.run-like (argv, capture_output=True, text=True, check=False).
"""

from __future__ import annotations

import os

from ...structured import nmkeyfile, persisted

PREFIX = f"{persisted.FILE_PREFIX}-"
# Activation order: a port needs its bond, a VLAN its parent (NetworkManager would bring
# them up itself, but one at a time says which profile failed).
ORDER = {"bond": 0, "ethernet": 1, "802-3-ethernet": 1, "vlan": 2, "infiniband": 3}
ACTIVATE_WAIT = 30  # nmcli --wait, seconds per profile


class NMApplyError(RuntimeError):
    """nmcli refused a step; the message names it and carries nmcli's error."""


def render(structured: dict) -> dict[str, str]:
    return nmkeyfile.render_keyfiles(structured["network"], structured.get("ipoib") or [])


def _ours(name: str) -> bool:
    return name.startswith(PREFIX) and name.endswith(nmkeyfile.SUFFIX)


def plan(directory: str, files: dict[str, str]) -> list[str]:
    """`write <path>` for each file missing or differing (text or mode), `remove <path>` for
    each cxfab keyfile not wanted any more."""
    changes = []
    for name, text in files.items():
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as handle:
                same = handle.read() == text
            if same and os.stat(path).st_mode & 0o7777 == nmkeyfile.KEYFILE_MODE:
                continue
        except FileNotFoundError:
            pass
        changes.append(f"write {path}")
    if os.path.isdir(directory):
        for name in sorted(n for n in os.listdir(directory) if _ours(n) and n not in files):
            changes.append(f"remove {os.path.join(directory, name)}")
    return changes


def _nmcli(runner, *args) -> str:
    done = runner(["nmcli", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        step = " ".join(args)
        raise NMApplyError(f"nmcli {step}: {(done.stderr or done.stdout).strip()[:400]}")
    return done.stdout


def _split(line: str) -> list[str]:
    """nmcli -t fields: ':' separates, '\\:' is a literal colon."""
    fields, current, escaped = [], "", False
    for char in line:
        if escaped:
            current, escaped = current + char, False
        elif char == "\\":
            escaped = True
        elif char == ":":
            fields.append(current)
            current = ""
        else:
            current += char
    return [*fields, current]


def profiles(runner) -> list[dict]:
    """Every profile NetworkManager knows: name, uuid, file, device (active on), state."""
    out = _nmcli(runner, "-t", "-f", "NAME,UUID,FILENAME,DEVICE,STATE", "connection", "show")
    keys = ("name", "uuid", "file", "device", "state")
    rows = []
    for line in out.splitlines():
        fields = _split(line)
        if len(fields) == len(keys):
            rows.append({key: fields[n] for n, key in enumerate(keys)})
    return rows


def _kind(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("type="):
            return line.split("=", 1)[1].strip()
    return ""


def _write(path: str, text: str) -> None:
    temporary = f"{path}.cxfab-new"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, nmkeyfile.KEYFILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(temporary, nmkeyfile.KEYFILE_MODE)
    os.replace(temporary, path)


def apply(runner, directory: str, files: dict[str, str], relink=(), done=None) -> list[str]:
    """Make NetworkManager run exactly cxfab's `files`; returns the steps taken.

    Stale cxfab profiles are deleted through NetworkManager (which deactivates them and
    removes their file), a file it does not know is unlinked; changed files are written
    (0600) and loaded; every profile whose file changed, that is not active, or whose
    interface is in `relink` (its live link differs from the intent), is brought up.
    `done`, when given, collects the steps as they happen (what a failure half way had
    already done).
    """
    done = [] if done is None else done
    known = profiles(runner)
    by_file = {row["file"]: row for row in known}
    if os.path.isdir(directory):
        for name in sorted(n for n in os.listdir(directory) if _ours(n) and n not in files):
            path = os.path.join(directory, name)
            row = by_file.get(path)
            if row:
                _nmcli(runner, "connection", "delete", "uuid", row["uuid"])
            if os.path.lexists(path):
                os.unlink(path)
            done.append(f"removed profile {row['name'] if row else name} ({path})")
    os.makedirs(directory, mode=0o755, exist_ok=True)
    written = [
        os.path.join(directory, name)
        for name in files
        if f"write {os.path.join(directory, name)}" in plan(directory, {name: files[name]})
    ]
    for path in written:
        _write(path, files[os.path.basename(path)])
    if written:
        _nmcli(runner, "connection", "load", *written)
        done += [f"wrote and loaded {path}" for path in written]
    active = {row["file"] for row in profiles(runner) if row["state"] == "activated"}
    relinked = {nmkeyfile.connection_id(interface) + nmkeyfile.SUFFIX for interface in relink}
    ordered = sorted(files, key=lambda n: (ORDER.get(_kind(files[n]), 9), n))
    for name in ordered:
        path = os.path.join(directory, name)
        if name in relinked or path in written or path not in active:
            profile = name[: -len(nmkeyfile.SUFFIX)]
            _nmcli(runner, "--wait", str(ACTIVATE_WAIT), "connection", "up", "id", profile)
            done.append(f"activated {profile}")
    return done


def read_back(directory: str) -> dict:
    """The cxfab keyfiles in `directory`, read as persisted.comparable's form."""
    texts = {}
    if os.path.isdir(directory):
        for name in sorted(n for n in os.listdir(directory) if _ours(n)):
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                texts[name] = handle.read()
    return nmkeyfile.read_keyfiles(texts)
