# ruff: noqa: E501
"""The NVUE spec parts cxfab keeps, as JSON text in a Python module.

A Python module, not a .json file: Ansible ships only Python files of module_utils
to a module (AnsiballZ), and the deploy module validates every body it sends.
Laid out a node a line: a node's own values (type, range, source) on the line that
opens it, its children below, so a path reads top-down without a page of brackets.

# NVUE spec parts kept by cxfab

`TEXT` holds the parts of the NVUE object tree (Cumulus Linux 5.9; the
same paths hold through 5.14) that cxfab's renderer writes: each node's `source`
names the file of the NVIDIA documentation repository **CumulusNetworks/docs**
and the command or `/etc/nvue.d/startup.yaml` lines it comes from; `SOURCE.commits`
gives the stored commit of each file.

UNCONFIRMED: the published OpenAPI spec (`static/cumulus-linux-59/api/openapi.json`)
was not available in the stored index (only 5.0-5.3 and 4.4 specs are), so types
and ranges not stated in the user guide (e.g. the MTU minimum) are cxfab's own and
marked so in their `source`.
"""

TEXT = r"""{
 "SOURCE": {"repository": "CumulusNetworks/docs", "release": "Cumulus Linux 5.9 (5.9-5.14 share these paths: NVUE command reference notes 'In Cumulus Linux 5.14 and earlier')", "files": ["content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md", "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md", "content/cumulus-linux-59/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md", "content/cumulus-linux-59/Layer-2/Bonding-Link-Aggregation.md", "content/cumulus-linux-59/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE.md", "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md"], "commits": {"content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md": "15835b8a01aaeaf3152f30e53cbe38e523e770f4", "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md": "1dff9dc0b2b9d55c1d66828a83209ee3b8d6eae2", "content/cumulus-linux-59/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md": "161d364e3288f1dadd7bc175fab9556d7b843f00", "content/cumulus-linux-59/Layer-2/Bonding-Link-Aggregation.md": "a4ecc6efd628c7418b81ebaa2dcc609ef266f53d", "content/cumulus-linux-59/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE.md": "574cc095bca09e1f94cf8a0b0ba2ac6c00157657", "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md": "2d3c1c14849e4c0c80019f31fb7a52e139a83adc"}, "note": "Hand-kept parts of the NVUE object tree for the paths cxfab writes, taken from the user guide's NVUE commands and /etc/nvue.d/startup.yaml examples (CLI path = tree path). Not yet cross-checked against static/cumulus-linux-59/api/openapi.json (not in the stored index; 5.0-5.3 specs are): UNCONFIRMED against the openapi spec."

 },
 "tree": {"type": "object",
  "properties": {
   "interface": {"type": "map", "key": "interface-name", "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml interface:)",
    "values": {"type": "object",
     "properties": {"type": {"type": "string", "enum": ["swp", "bond", "peerlink", "sub", "svi"], "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: type swp/bond/peerlink/sub/svi)"}, "description": {"type": "string", "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (nv set interface bond1 description bond1-on-swp1)"}, "base-interface": {"type": "string", "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: peerlink.4094 base-interface: peerlink)"}, "vlan": {"type": "integer", "minimum": 1, "maximum": 4094, "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: vlan10 vlan: 10; peerlink.4094 vlan: 4094)"},
      "bond": {"type": "object",
       "properties": {"mode": {"type": "string", "enum": ["lacp", "static"], "source": "content/cumulus-linux-59/Layer-2/Bonding-Link-Aggregation.md (nv set interface bond1 bond mode static|lacp)"},
        "member": {"type": "map", "key": "interface-name", "values": {"type": "object", "properties": {}}, "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (nv set interface bond1 bond member swp1)"

        },
        "mlag": {"type": "object", "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (startup.yaml: mlag: enable: on, id: 1)",
         "properties": {"enable": {"type": "string", "enum": ["on", "off"], "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: enable: on)"}, "id": {"type": "integer", "minimum": 1, "maximum": 65535, "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (bond mlag id; 1-65535)"}

         }
        }
       }
      },
      "bridge": {"type": "object",
       "properties": {
        "domain": {"type": "map", "key": "bridge-name", "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: bond1 bridge: domain: br_default: {})",
         "values": {"type": "object",
          "properties": {"access": {"type": "integer", "minimum": 1, "maximum": 4094, "source": "content/cumulus-linux-59/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md (nv set interface swp1 bridge domain br_default access 10)"}, "untagged": {"type": ["integer", "string"], "enum_strings": ["none"], "minimum": 1, "maximum": 4094, "source": "content/cumulus-linux-59/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md (bridge domain br_default untagged 1 | none)"},
           "vlan": {"type": "map", "key": "vlan-id", "values": {"type": "object", "properties": {}}, "source": "content/cumulus-linux-59/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md (nv set interface swp3 bridge domain br_default vlan 20)"

           }
          }
         }
        }
       }
      },
      "link": {"type": "object",
       "properties": {"mtu": {"type": "integer", "minimum": 552, "maximum": 9216, "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (nv set interface bond1 link mtu 1500; default 9216); minimum UNCONFIRMED"}

       }
      },
      "ip": {"type": "object",
       "properties": {
        "address": {"type": "map", "key": "ipv4-prefix", "values": {"type": "object", "properties": {}}, "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (nv set interface vlan10 ip address 10.1.10.2/24)"

        },
        "vrr": {"type": "object",
         "properties": {"mac-address": {"type": "string", "format": "mac", "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (nv set interface vlan10 ip vrr mac-address 00:00:5E:00:01:00)"}, "enable": {"type": "string", "enum": ["on", "off"], "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: enable: on)"},
          "address": {"type": "map", "key": "ipv4-prefix", "values": {"type": "object", "properties": {}}, "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (nv set interface vlan10 ip vrr address 10.1.10.1/24)"

          },
          "state": {"type": "map", "key": "state", "values": {"type": "object", "properties": {}}, "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: state: up: {})"

          }
         }
        },
        "vrrp": {"type": "object", "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (nv set interface <interface-id> ip vrrp; 5.14 and earlier: ip, not ipv4)",
         "properties": {"enable": {"type": "string", "enum": ["on", "off"], "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (nv set interface swp1 ip vrrp enable on; default off)"},
          "virtual-router": {"type": "map", "key": "vrid", "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (nv set interface <interface-id> ip vrrp virtual-router <virtual-router-id>); VRID range 1-255 from RFC 5798 and the user guide's 00:00:5E:00:01:XX MAC (XX = VRID): UNCONFIRMED in NVUE's own words",
           "values": {"type": "object",
            "properties": {"priority": {"type": "integer", "minimum": 1, "maximum": 254, "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (ip vrrp virtual-router 44 priority 254; between 1 and 254, default 100)"}, "preempt": {"type": "string", "enum": ["on", "off"], "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (ip vrrp virtual-router 44 preempt off; default on)"}, "advertisement-interval": {"type": "integer", "minimum": 10, "maximum": 40950, "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (ip vrrp virtual-router 44 advertisement-interval 2000; 10-40950 milliseconds, default 1000)"}, "version": {"type": "integer", "minimum": 2, "maximum": 3, "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (ip vrrp virtual-router <id> version; 2 or 3, default 3; not sent by cxfab)"},
             "address": {"type": "map", "key": "ipv4-address", "values": {"type": "object", "properties": {}}, "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (ip vrrp virtual-router 44 address 10.0.0.1; <ip-address-id> an IPv4 or IPv6 address, no prefix in the example)"

             }
            }
           }
          }
         }
        }
       }
      }
     }
    }
   },
   "bridge": {"type": "object",
    "properties": {
     "domain": {"type": "map", "key": "bridge-name", "source": "content/cumulus-linux-59/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md",
      "values": {"type": "object",
       "properties": {"untagged": {"type": "integer", "minimum": 1, "maximum": 4094, "source": "content/cumulus-linux-59/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md (nv set bridge domain br_default untagged 1)"},
        "vlan": {"type": "map", "key": "vlan-id", "values": {"type": "object", "properties": {}}, "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: br_default vlan: '10': {})"

        }
       }
      }
     }
    }
   },
   "mlag": {"type": "object",
    "properties": {"enable": {"type": "string", "enum": ["on", "off"], "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: enable: on)"}, "mac-address": {"type": "string", "format": "mac", "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (nv set mlag mac-address 44:38:39:BE:EF:AA)"}, "peer-ip": {"type": "string", "format": "linklocal-or-ipv4", "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (nv set mlag peer-ip linklocal)"}, "init-delay": {"type": "integer", "minimum": 0, "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (nv set mlag init-delay 100)"}, "priority": {"type": "integer", "minimum": 0, "maximum": 65535, "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (nv set mlag priority 2084; 0-65535)"},
     "backup": {"type": "map", "key": "ipv4-address", "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (nv set mlag backup 10.10.10.2)",
      "values": {"type": "object",
       "properties": {"vrf": {"type": "string", "source": "content/cumulus-linux-59/Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (nv set mlag backup 10.10.10.2 vrf mgmt)"}

       }
      }
     }
    }
   },
   "router": {"type": "object",
    "properties": {
     "vrr": {"type": "object", "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: router: vrr: enable: on)",
      "properties": {"enable": {"type": "string", "enum": ["on", "off"], "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: enable: on)"}

      }
     },
     "vrrp": {"type": "object", "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (nv set router vrrp: VRRP globally on the switch)",
      "properties": {"enable": {"type": "string", "enum": ["on", "off"], "source": "content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (nv set router vrrp enable on; default off)"}

      }
     }
    }
   },
   "qos": {"type": "object",
    "properties": {
     "roce": {"type": "object", "source": "content/cumulus-linux-59/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE.md (nv show qos roce: enable on, mode lossless)",
      "properties": {"enable": {"type": "string", "enum": ["on", "off"], "source": "content/cumulus-linux-59/Layer-2/Virtual-Router-Redundancy-VRR.md (startup.yaml: enable: on)"}, "mode": {"type": "string", "enum": ["lossless", "lossy"], "source": "content/cumulus-linux-59/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE.md (nv set qos roce mode lossless|lossy)"}

      }
     }
    }
   }
  }
 }
}
"""
