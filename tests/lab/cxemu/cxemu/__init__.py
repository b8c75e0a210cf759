"""cxemu: the cxfab lab emulator of ConnectX adapters and their host tools.

Nothing here talks to hardware. Each command in ``tests/lab/cxemu/bin`` reproduces the
command line, output format and state machine of one NVIDIA/Mellanox tool (mstflint,
mstconfig/mlxconfig, mstfwreset, mlxfwmanager, mlxlink, mlxcables, mlnx_qos) over a small
JSON device model kept under ``$CXEMU_STATE_DIR`` (default ``/var/lib/cxemu``), so that the
cxfab roles can be exercised in lab guests that have no ConnectX NIC. It is installed only
into the lab guests' PATH, never on a real host.

Modules: ``catalog`` (static facts: device types, parameters, cables, profiles), ``state``
(locked per-card JSON store and device-name resolution), ``image`` (deterministic fake
firmware images), ``render`` (output formats), ``shaper`` (kernel tc programming for
mlnx_qos), ``sysfs`` (netdev -> PCI function), ``tools/*`` (one module per command).
"""

EMULATOR_TAG = "cxfab lab emulator"
