"""Deterministic fake firmware images for the cxfab lab emulator.

Layout (all integers big-endian)::

    0    8   magic b"CXEMU-FW"
    8    2   format version (1)
    10   2   PCI device id the image is built for (4115 = ConnectX-4)
    12   16  PSID, NUL padded
    28   16  FW version, NUL padded
    44   16  PXE version (empty = image carries no PXE ROM)
    60   16  UEFI version
    76   4   payload length
    80   48  zero
    128  n   payload: SHA-256 counter stream seeded by the header (stands for the FW)
    -32  32  SHA-256 of everything before it (the checksum burn verifies)

The same inputs always give the same bytes, hence the same sha256 for the lab inventory.
"""

import hashlib
import struct
from dataclasses import dataclass

MAGIC = b"CXEMU-FW"
HEADER_SIZE = 128
PAYLOAD_SIZE = 64 * 1024
_HEADER = struct.Struct(">8sHH16s16s16s16sI48x")


class ImageError(Exception):
    """The file is not a usable image; the message is flint's wording."""


@dataclass(frozen=True)
class Image:
    device_id: int
    psid: str
    fw: str
    pxe: str
    uefi: str


def _field(text: str, name: str) -> bytes:
    data = text.encode("ascii")
    if len(data) > 16:
        raise ValueError(f"{name}: at most 16 ASCII characters, got {text!r}")
    return data


def build(image: Image) -> bytes:
    header = _HEADER.pack(
        MAGIC,
        1,
        image.device_id,
        _field(image.psid, "psid"),
        _field(image.fw, "version"),
        _field(image.pxe, "pxe"),
        _field(image.uefi, "uefi"),
        PAYLOAD_SIZE,
    )
    blocks = []
    for counter in range(PAYLOAD_SIZE // 32):
        blocks.append(hashlib.sha256(header + counter.to_bytes(4, "big")).digest())
    body = header + b"".join(blocks)
    return body + hashlib.sha256(body).digest()


def parse(data: bytes) -> Image:
    if len(data) < HEADER_SIZE or data[:8] != MAGIC:
        raise ImageError("Invalid Image signature.")
    _magic, _fmt, device_id, psid, fw, pxe, uefi, length = _HEADER.unpack(data[:HEADER_SIZE])
    body_end = HEADER_SIZE + length
    if len(data) != body_end + 32 or hashlib.sha256(data[:body_end]).digest() != data[body_end:]:
        raise ImageError("Bad CRC.")

    def text(raw: bytes) -> str:
        return raw.rstrip(b"\0").decode("ascii")

    return Image(device_id, text(psid), text(fw), text(pxe), text(uefi))


def load(path: str) -> Image:
    """Read and validate an image file; ImageError carries the reason flint would print."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ImageError(f'Can not open file "{path}" - {exc.strerror}') from None
    return parse(data)
