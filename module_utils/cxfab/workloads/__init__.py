"""Workloads: the standard tools' runs, our transport's runs, the seeds' experiments.

Layer 4: it may import `host`, `structured`, `intent` and `common`, never `switch`
or `verify`.
"""
