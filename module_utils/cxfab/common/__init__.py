"""Small helpers every layer shares: addresses, MACs, port names, natural sort.

Imports nothing of cxfab; every other package may import it.
"""
