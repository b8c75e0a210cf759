"""nv_config pins: the Next Boot / Current rule on any parameter, and the module's input check."""

import pytest
from cxfab.host.mlnx.link_type import ACTION_ACTIVATE, ACTION_NONE, ACTION_SET
from cxfab.host.mlnx.nv_params import NvParamError, decide_params, matches, set_words
from cxfab.host.mlnx.nvconfig import NvValue, parse_nvconfig_query
from cxfab.host.mlnx.port_config import PortConfigError, check_pins

# `mstconfig -d <bdf> -e q` layout (mstflint mlxcfg: Default, Current, Next Boot columns,
# `*` where the next value differs), values of a ConnectX-4 with SR-IOV set but not
# yet active.
QUERY = """
Device #1:
----------

Device type:    ConnectX4
Name:           MCX416A-CCA_Ax
Device:         0000:65:00.0

Configurations:                              Default         Current         Next Boot
*        SRIOV_EN                            False(0)        False(0)        True(1)
*        NUM_OF_VFS                          0               8               8
         LINK_TYPE_P1                        ETH(2)          ETH(2)          ETH(2)
The '*' shows parameters with next value different from default/current value.
"""


def decide(pins):
    return {d.param: d for d in decide_params(parse_nvconfig_query(QUERY), pins, "65:00.0")}


def test_each_pin_by_the_rule():
    found = decide({"SRIOV_EN": "True", "NUM_OF_VFS": "8", "LINK_TYPE_P1": "ETH"})
    assert found["SRIOV_EN"].action == ACTION_ACTIVATE  # in Next Boot, not Current
    assert found["NUM_OF_VFS"].action == ACTION_NONE
    assert found["LINK_TYPE_P1"].action == ACTION_NONE  # label against ETH(2)
    assert (found["SRIOV_EN"].current, found["SRIOV_EN"].next_boot) == ("False(0)", "True(1)")
    changed = decide({"NUM_OF_VFS": "16", "SRIOV_EN": "1"})
    assert changed["NUM_OF_VFS"].action == ACTION_SET
    assert changed["SRIOV_EN"].action == ACTION_ACTIVATE  # 1 matches True(1) by number
    assert set_words(list(changed.values())) == ["NUM_OF_VFS=16"]  # only what Next Boot lacks


def test_values_match_by_number_else_by_label():
    assert matches(NvValue.parse("True(1)"), "true")
    assert matches(NvValue.parse("16"), "0x10")
    assert not matches(NvValue.parse("False(0)"), "True")
    assert not matches(None, "8")


def test_an_unsupported_parameter_is_named_and_nothing_decided():
    with pytest.raises(NvParamError, match=r"nv_config\.PF_NUM_OF_VF: 65:00.0 \(ConnectX4\)"):
        decide({"PF_NUM_OF_VF": "4"})


@pytest.mark.parametrize(
    ("pins", "message"),
    [
        ({"sriov_en": "True"}, "nv_config.sriov_en: not an mlxconfig parameter name"),
        ({"SRIOV_EN": "True;reboot"}, "nv_config.SRIOV_EN: 'True;reboot' is not an mlxconfig"),
        ({"LINK_TYPE_P2": "IB"}, "nv_config.LINK_TYPE_P2: the port protocol is set through"),
    ],
)
def test_the_module_refuses_pins_without_mlxconfig_syntax(pins, message):
    with pytest.raises(PortConfigError, match=message.replace(".", r"\.").replace("'", "'")):
        check_pins(pins)


def test_yaml_booleans_become_labels():
    assert check_pins({"SRIOV_EN": True, "NUM_OF_VFS": 8}) == {
        "SRIOV_EN": "True",
        "NUM_OF_VFS": "8",
    }
