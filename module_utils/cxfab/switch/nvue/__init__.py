"""The NVUE driver core (Cumulus Linux 5.x): structured config -> NVUE object tree,
plan against the applied tree, health from `nv show ... -o json`, spec validation.

No transport yet (issue 27, later slices): nothing here opens a session.
"""
