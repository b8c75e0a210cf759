"""CPU list parsing/formatting and spreading IRQs over CPUs."""

import pytest
from cxfab.host.net import IntentError
from cxfab.host.net.cpulist import format_cpulist, parse_cpulist, spread


@pytest.mark.parametrize(
    ("text", "cpus"),
    [("0-3,8", [0, 1, 2, 3, 8]), ("2-3", [2, 3]), ("5", [5]), ("", []), ("1,0,1", [0, 1])],
)
def test_parse(text, cpus):
    assert parse_cpulist(text) == cpus


@pytest.mark.parametrize("text", ["3-1", "a", "1,,2", "-1"])
def test_parse_rejects_garbage_with_key_path(text):
    with pytest.raises(IntentError) as caught:
        parse_cpulist(text, "cxfab_host.irq_affinity.cpus")
    assert caught.value.path == "cxfab_host.irq_affinity.cpus"


def test_format_round_trips_kernel_form():
    assert format_cpulist([8, 0, 1, 2, 3, 10, 11]) == "0-3,8,10-11"
    assert format_cpulist([]) == ""
    assert parse_cpulist(format_cpulist([2, 3, 7])) == [2, 3, 7]


def test_spread_round_robins_in_irq_order():
    assert spread([40, 38, 39, 41, 42], [2, 3]) == {38: 2, 39: 3, 40: 2, 41: 3, 42: 2}
    with pytest.raises(ValueError):
        spread([1], [])
