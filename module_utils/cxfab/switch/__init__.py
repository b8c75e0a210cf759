"""The switch pair: the OS-neutral pair transaction and one driver package per OS.

`switch/onyx/` speaks Onyx (MLNX-OS) over SSH. Layer 3, beside `host`: it may import
`structured`, `intent` and `common`, never `host`, `workloads` or `verify`.
"""
