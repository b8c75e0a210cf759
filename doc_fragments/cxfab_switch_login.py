"""The login options of every module that opens a session to a switch."""


class ModuleDocFragment:
    # One description for the deploy, the health read and the drill: the same login,
    # the same host-key rules.
    DOCUMENTATION = r"""
options:
  username:
    description: CLI user.
    type: str
    required: true
  password:
    description: CLI password (never logged).
    type: str
    required: true
    no_log: true
  known_hosts:
    description:
      - Operator-owned known-hosts file; the switches' keys must be in it.
      - An unknown or changed key stops the module before anything is sent.
    type: path
    default: ~/.ssh/known_hosts
  host_key_checking:
    description:
      - C(false) accepts any host key (UNSAFE, a man in the middle gets the password).
    type: bool
    default: true
"""
