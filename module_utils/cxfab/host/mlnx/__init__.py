"""Parsers and decision rules for the ConnectX tools (mstflint and MFT).

Everything here is pure Python: it turns the text the tools print into data and
decides what has to change. Running the tools is the job of the Ansible modules.
"""
