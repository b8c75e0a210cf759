"""The TLS trust options of every module that speaks to a Cumulus Linux switch's NVUE API."""


class ModuleDocFragment:
    # One description for the deploy and the health read: the same certificate rules.
    DOCUMENTATION = r"""
options:
  tls_ca:
    description:
      - Cumulus only. PEM file of the CA that signed the switches' NVUE API certificates,
        or of a switch's own self-signed certificate (C(/etc/ssl/certs/cumulus.pem)).
      - Without it and without C(tls_fingerprints) the system CAs are used.
    type: path
  tls_fingerprints:
    description:
      - Cumulus only. Switch name -> SHA-256 of its API certificate (hex, colons allowed);
        a different certificate stops the module before the password is sent.
    type: dict
    default: {}
"""
