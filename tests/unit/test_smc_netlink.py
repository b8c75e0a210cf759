"""tests/tools/smc_netlink.py: the requests it builds are the ones the kernel takes."""

import struct

import pytest

from tests.tools import smc_netlink as smc


def test_a_ueid_is_32_blank_padded_characters_and_a_nul():
    value = smc.ueid("CXFAB-LAB.1")
    assert len(value) == smc.MAX_EID_LEN + 1  # smc_nl_add_ueid refuses any other length
    assert value == b"CXFAB-LAB.1" + b" " * 21 + b"\0"


@pytest.mark.parametrize("bad", ["", "cxfab", "-CXFAB", "CX FAB", "X" * 33, "CXFAB_LAB"])
def test_a_ueid_the_kernel_would_refuse_is_refused_here(bad):
    with pytest.raises(SystemExit):
        smc.ueid(bad)


def test_attributes_are_aligned_and_read_back():
    body = smc.text(smc.PNETID_NAME, "NET") + smc.attr(smc.PNETID_IBPORT, struct.pack("B", 1))
    first_length = struct.unpack_from("H", body)[0]
    assert first_length == 4 + 4 and len(body) == 8 + 8  # "NET\0", then a u8 padded to 4
    assert smc.attrs(body) == [(smc.PNETID_NAME, b"NET\0"), (smc.PNETID_IBPORT, b"\x01")]
