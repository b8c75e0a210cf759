#!/bin/sh
# apt-get install the given Debian packages without starting any service they ship
# (make setup-apt). network-manager and dbus would start their daemons from their
# maintainer scripts; on the controller NetworkManager must never run (it would take
# over the controller's interfaces). invoke-rc.d and deb-systemd-invoke both ask
# /usr/sbin/policy-rc.d first, and 101 means "action forbidden": a guard answering 101
# is put in place for the install and the previous policy (if any) restored after.
# Afterwards a running NetworkManager is an error.
set -eu
[ "$#" -gt 0 ] || exit 0
policy=/usr/sbin/policy-rc.d
saved="$policy.cxfab-saved"
if [ -e "$policy" ]; then mv "$policy" "$saved"; fi
restore() {
    rm -f "$policy"
    if [ -e "$saved" ]; then mv "$saved" "$policy"; fi
}
trap restore EXIT INT TERM
printf '#!/bin/sh\n# cxfab make setup-apt: no service starts during the install\nexit 101\n' >"$policy"
chmod 0755 "$policy"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
if pgrep -x NetworkManager >/dev/null 2>&1; then
    echo "apt_no_start: a NetworkManager process runs after the install (pgrep -x NetworkManager)" >&2
    exit 1
fi
