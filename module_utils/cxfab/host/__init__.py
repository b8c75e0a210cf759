"""What runs on a host: the stages (`stages/`), the kernel network (`net/`), the
ConnectX card tools (`mlnx/`).

Layer 3, beside `switch`: it may import `structured`, `intent` and `common`, never
`switch`, `workloads` or `verify`. Parts of `net/` are installed on hosts as a
standalone package (the QoS/IRQ agent, the network watchdog): those import only
within `host`.
"""
