"""Emulated NVIDIA Cumulus Linux (NVUE REST API) switches for the lab and the tests.

`server.py` is one switch's HTTPS API, `model.py` its applied tree, revisions and
confirm timer, `fixtures.py` starts them for pytest. See docs/lab-nvue.md.
"""
