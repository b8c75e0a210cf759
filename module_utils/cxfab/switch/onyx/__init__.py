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
    health      parsers of the show commands and the post-deploy checks
    health_json the same reads from `| json-print` (both shapes), chosen by release
    readerror   the "could not read" error every show parser raises
    session     the netmiko session (the only code that talks to a switch)
"""
