"""NVIDIA Onyx (MLNX-OS) switch support: intent -> structured config -> CLI, and back.

Modules:
    version     release strings compared numerically
    addressing  IPv4/MAC/port/range normalisation shared by the parser and the builder
    structured  fabric document -> per-switch structured config
    statements  the statement table: one row per Onyx statement kind cxfab manages
                (read pattern, set and remove lines, rank, owner, section)
    table       the table's machinery (Row, Table, Statement); the parser and the
                planner ask it, an unknown kind, owner or section raises
    parser      running-config text -> statements
    plan        intended vs current statements -> ordered lines to send
    render      structured config -> intended config text (the roles' templates)
    shows       which show command, asked how, and its text output parsed
    health_json the same reads from `| json-print` (both shapes), chosen by release
    health      the post-deploy checks of a switch and its pair, from those reads
    readerror   the "could not read" error every show parser raises
    session     the netmiko session (the only code that talks to a switch)
    driver      the switch driver (../driver.py) the pair transaction calls
"""
