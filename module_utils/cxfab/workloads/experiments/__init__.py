"""Experiments: plan, parsers of the reference tools and the report tables."""
