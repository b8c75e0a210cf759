"""Verification: checks built from the structured config and the readings, and the report.

Layer 5 (the highest): it may import every other package; none imports it.
"""
