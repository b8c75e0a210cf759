"""The operator's intent: the schema, its semantic rules, assembly and validation.

Layer 1 (the lowest). Reads inventory data, never a device. Imports only `common`.
"""
