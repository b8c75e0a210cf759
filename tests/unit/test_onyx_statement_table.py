"""The statement table: one row per Onyx statement kind, and nothing else lists kinds.

A row added in one place is read, planned, removed, ordered and tagged by the
parser and the planner without another edit; a kind, owner or section no row
knows is an error, never a silent "not managed".
"""

import pytest
from cxfab.switch.onyx.parser import parse_running_config
from cxfab.switch.onyx.plan import Scope, make_plan, only_sections
from cxfab.switch.onyx.statements import ROWS, TABLE, Context, Row, Statement, Table, UnknownKind
from onyx_helpers import GOLDEN, every_kind_config

from tests.lab.onyx.model import SwitchConfig
from tests.lab.onyx.runcfg import render

SVI = "interface vlan {key[1]}"
# Two kinds cxfab does not manage today: an SVI description (owned by its VLAN, removed
# with its SVI) and NTP on or off per switch (a protocol: always in scope).
EXTRA = [
    Row("svi_description", "vlan", r"^description (.+)$", SVI + " description {value}",
        SVI + " no description", 49, ("vlan", 1), "vlans", value=lambda m: m.group(1),
        parent="svi"),
    Row("ntp", "global", r"^ntp$", "ntp", "no ntp", 85, ("protocol", None), "mlag"),
]  # fmt: skip
EXTENDED = Table(ROWS + EXTRA)
RUNNING = "ntp\nvlan 10\ninterface vlan 10\ninterface vlan 10 description uplink\n"


def _plan(intended_text, running_text, table, scope=None):
    return make_plan(
        parse_running_config(intended_text, table),
        parse_running_config(running_text, table),
        scope or Scope(),
        table=table,
    )


def test_a_row_added_to_the_table_is_parsed():
    parsed = parse_running_config(RUNNING, EXTENDED)
    assert parsed.unknown == []
    assert parsed.get(("svi_description", 10)) == "uplink"
    assert ("ntp",) in parsed.statements
    # The product table does not know them: the lines stay unknown, never touched.
    plain = parse_running_config(RUNNING)
    assert plain.unknown == ["ntp", "interface vlan 10 description uplink"]


def test_a_row_added_to_the_table_is_set_changed_and_removed_in_its_rank():
    changed = "vlan 10\ninterface vlan 10\ninterface vlan 10 description storage\n"
    assert _plan(changed, RUNNING, EXTENDED).lines == [
        "no ntp",
        "interface vlan 10 description storage",
    ]
    # Both removals, ordered by rank: the description (49) before the SVI (52) would
    # go, NTP (85) after it.
    bare = "vlan 10\ninterface vlan 10\n"
    assert _plan(bare, RUNNING, EXTENDED).lines == ["interface vlan 10 no description", "no ntp"]
    assert _plan(RUNNING, "vlan 10\n", EXTENDED).lines == [
        "ntp",
        "interface vlan 10",
        "interface vlan 10 description uplink",
    ]


def test_a_row_added_to_the_table_goes_with_its_parent_and_its_owner():
    # The SVI goes: its description goes with it, no removal line of its own.
    assert _plan("ntp\nvlan 10\n", RUNNING, EXTENDED).lines == ["no interface vlan 10"]
    # Without prune, VLAN 10 is not the fabric's: its description stays; NTP is a
    # protocol, always the fabric's.
    scope = Scope(prune=False)
    assert _plan("vlan 10\ninterface vlan 10\n", RUNNING, EXTENDED, scope).lines == ["no ntp"]


def test_a_row_added_to_the_table_belongs_to_its_section():
    parsed = parse_running_config(RUNNING, EXTENDED)
    vlans = only_sections(parsed, ["vlans"], ipl_vlans=(), table=EXTENDED)
    mlag = only_sections(parsed, ["mlag"], ipl_vlans=(), table=EXTENDED)
    assert ("svi_description", 10) in vlans.statements and ("ntp",) not in vlans.statements
    assert ("ntp",) in mlag.statements and ("svi_description", 10) not in mlag.statements


def test_an_unknown_owner_raises_instead_of_not_managing():
    with pytest.raises(UnknownKind, match="owner"):
        Scope().manages(("ntp",), parse_running_config(""))
    with pytest.raises(UnknownKind, match="owner 'ntp'"):
        Table([*ROWS, Row("ntp", "global", r"^ntp$", "ntp", "no ntp", 85, ("ntp", None),
                         "mlag")])  # fmt: skip


def test_an_unknown_section_place_or_parent_is_refused_when_the_table_is_built():
    row = Row("ntp", "global", r"^ntp$", "ntp", "no ntp", 85, ("protocol", None), "ntp")
    with pytest.raises(UnknownKind, match="section 'ntp'"):
        Table([*ROWS, row])
    with pytest.raises(UnknownKind, match="place 'bridge'"):
        Table([*ROWS, Row("x", "bridge", r"^x$", "x", "no x", 1, ("protocol", None), "mlag")])
    with pytest.raises(UnknownKind, match="parent kind 'ntp_global'"):
        Table([*ROWS, Row("x", "global", r"^x$", "x", "no x", 1, ("protocol", None), "mlag",
                          parent="ntp_global")])  # fmt: skip
    with pytest.raises(UnknownKind, match="second row"):
        Table([*ROWS, ROWS[0]])
    with pytest.raises(UnknownKind, match="sections"):
        only_sections(parse_running_config(RUNNING), ["ntp"], ipl_vlans=())


def test_a_statement_no_row_knows_raises_in_the_planner():
    current = parse_running_config(RUNNING, EXTENDED)  # read with a table that knows NTP
    with pytest.raises(UnknownKind, match="ntp"):
        make_plan(parse_running_config(""), current, Scope())  # planned with one that does not
    with pytest.raises(UnknownKind):
        TABLE.row(("ntp",))


EVERY_KIND = every_kind_config()


@pytest.mark.parametrize(
    "text",
    [EVERY_KIND, *(path.read_text() for path in sorted(GOLDEN.glob("*/*.cfg")))],
    ids=["every-kind", *(path.name for path in sorted(GOLDEN.glob("*/*.cfg")))],
)
def test_every_rendered_line_is_its_rows_set_form(text):
    """The templates render exactly the rows' set forms (the emulator prints them too)."""
    parsed = parse_running_config(text)
    context = Context(current=parsed.statements)
    body = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert [TABLE.set_line(st, context) for st in parsed.statements.values()] == body


def test_the_set_forms_cover_every_row():
    parsed = parse_running_config(EVERY_KIND)
    assert {st.kind for st in parsed.statements.values()} == TABLE.kinds
    assert len({row.prefix for row in ROWS}) == len(ROWS)


def test_a_set_line_reads_back_as_the_same_statement():
    for st in parse_running_config(EVERY_KIND).statements.values():
        again = parse_running_config(TABLE.set_line(st, Context(current={st.key: st})))
        assert again.get(st.key) == st.value, st.key
    bare_vip = Statement(("mlag_vip",), ("rack1", None))
    assert TABLE.set_line(bare_vip) == "mlag-vip rack1"


# What the emulated switch spells as a release prints it, not as cxfab sets it.
RELEASE_SPELLINGS = {"svi_ip", "vlan_name", "mpo_description", "vrrp_no_preempt", "protocol"}


def test_the_emulated_switch_prints_each_managed_line_as_its_row_sets_it():
    switch = SwitchConfig(hostname="sw-a")
    for line in EVERY_KIND.splitlines():
        if line and not line.startswith("#"):
            switch.apply(line)
    parsed = parse_running_config(render(switch, "3.10.2002", expanded=True))
    context = Context(current=parsed.statements)
    printed = [st for st in parsed.statements.values() if st.kind not in RELEASE_SPELLINGS]
    assert {st.kind for st in printed} == TABLE.kinds - RELEASE_SPELLINGS
    assert [st.line for st in printed] == [TABLE.set_line(st, context) for st in printed]
