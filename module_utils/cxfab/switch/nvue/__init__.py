"""The NVUE driver core (Cumulus Linux 5.x): structured config -> NVUE object tree,
plan against the applied tree, health from `nv show ... -o json`, spec validation.

transport.py is the HTTPS session to the NVUE REST API and driver.py the driver behind
the seam (switch/driver.py); switch/drivers.py picks it for a `cumulus` pair.
"""
