#!/bin/bash
# Main program of a lab guest (started by virtme-ng --exec): give the management NIC
# its address, prepare root's environment, seed the emulated ConnectX device (host
# guests), start sshd and stay up until the controller stops the guest.
#
# Everything written here lands in the guest's tmpfs overlays (/etc, /var, /root):
# the controller's own files are shared read-only and never change.
#
# usage: guest-init.sh <ssh-dir> <cxemu-bin-dir|-> <mgmt-mac> <data-mac>...
#   cxemu-bin-dir "-": no emulated ConnectX (the fabric guest of the switch pair)
set -u

ssh_dir=$1
cxemu_bin=$2
mgmt_mac=$3
data_macs=("${@:4}")
state_dir=/var/lib/cxemu
mgmt_address=10.0.2.15/24
mgmt_gateway=10.0.2.2

log() { echo "lab-guest $(hostname): $*"; }

# virtme-ng mounts the controller's root over 9p without a cache, so every stat and
# read of a guest program crosses to the host: python3 took 1 s to start and 20 s to
# import pyroute2. The lab also exports /usr (tag cxfab_usr) for a second mount with
# the page and dentry caches on (loose: /usr does not change while a lab is up),
# stacked under a tmpfs so that /usr stays writable inside the guest as before.
# virtme-ng's /usr/lib/modules (the guest kernel's modules) is put back on top.
cached_9p=ro,trans=virtio,version=9p2000.L,cache=loose,msize=512000
usr_lower=/run/cxfab-usr/lower usr_rw=/run/cxfab-usr/rw usr_modules=/run/cxfab-usr/modules
mkdir -p "$usr_lower" "$usr_rw" "$usr_modules"
if mount --bind /usr/lib/modules "$usr_modules" &&
    mount -t 9p -o "$cached_9p" \
        cxfab_usr "$usr_lower" && mount -t tmpfs cxfab-usr-rw "$usr_rw" &&
    mkdir -p "$usr_rw/upper" "$usr_rw/work" &&
    mount -t overlay cxfab-usr \
        -o "lowerdir=$usr_lower,upperdir=$usr_rw/upper,workdir=$usr_rw/work" /usr &&
    mount --bind "$usr_modules" /usr/lib/modules; then
    log "/usr cached (9p cache=loose)"
else
    log "/usr cache FAILED: the uncached root stays"
fi
# The same for the emulated ConnectX tools (Python, started for every tool call).
if [ "$cxemu_bin" = - ]; then
    cxemu_bin=/nonexistent
elif mount -t 9p -o "$cached_9p" \
        cxfab_emu "$(dirname "$cxemu_bin")"; then
    log "emulator cached (9p cache=loose)"
else
    log "emulator cache FAILED: the uncached copy stays"
fi

# A host guest's disk (tag cxfab_disk: the run directory's <guest>/disk on the
# controller, read-write). The guest's /etc, /var and /usr are tmpfs overlays that a
# reboot forgets; these paths are bound from the disk instead, so a reboot keeps what an
# installed host keeps of them: the network's files (NetworkManager keyfiles and its
# dispatcher hook, networkd's files), cxfab's host agent (its package, launcher, unit
# and settings) and the emulated card's state (its flash; the emulator has no power-cycle
# model, so its runtime settings are kept too). The first boot after `lab up` copies the
# install's contents of each path onto the empty disk.
disk=/run/cxfab-disk
kept_paths="/etc/NetworkManager /etc/systemd /etc/networkd-dispatcher /etc/cxfab
    /usr/local/lib/cxfab /usr/local/sbin $state_dir"
if [ "$cxemu_bin" != /nonexistent ] && mkdir -p "$disk" &&
    mount -t 9p -o trans=virtio,version=9p2000.L,rw cxfab_disk "$disk"; then
    for path in $kept_paths; do
        kept=$disk/root$path
        if [ ! -d "$kept" ]; then
            mkdir -p "$kept" &&
                { [ ! -d "$path" ] || cp -dR --preserve=mode,ownership,timestamps "$path/." "$kept/"; } ||
                log "disk: copying $path FAILED"
        fi
        mkdir -p "$path" && mount --bind "$kept" "$path" || log "disk: binding $path FAILED"
    done
    echo "$(date -u +%FT%TZ) $(cat /proc/sys/kernel/random/boot_id)" >>"$disk/boots"
    log "disk: boot $(wc -l <"$disk/boots") of this install; kept: $(echo $kept_paths)"
elif [ "$cxemu_bin" != /nonexistent ]; then
    log "disk FAILED: a reboot of this guest loses its configuration"
fi
# Ansible's modules reach a host as zips, whose Python files zipimport compiles again
# on every task: under TCG most of a small task. guest_pycache.py (beside this script,
# see its docstring) keeps their bytecode; it goes into the guest's sitecustomize, which
# Debian keeps in /etc (this guest's own tmpfs), so the controller never loads it.
guest_site=$(readlink -f "$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')/sitecustomize.py")
if [ -f "$guest_site" ] && [ "${guest_site#/etc/}" != "$guest_site" ] &&
    cat "$(dirname "$0")/guest_pycache.py" >>"$guest_site"; then
    log "zip bytecode cache on ($guest_site)"
else
    log "zip bytecode cache FAILED: modules compile on every task"
fi


netdev_by_mac() {
    local want=$1 dev
    for dev in /sys/class/net/*; do
        if [ "$(cat "$dev/address")" = "$want" ]; then
            basename "$dev"
            return 0
        fi
    done
    return 1
}

# udev names the NICs asynchronously: wait until every expected MAC has its final name.
all_named() {
    local mac dev
    mgmt=$(netdev_by_mac "$mgmt_mac") && [[ $mgmt != eth* ]] || return 1
    data=()
    for mac in "${data_macs[@]}"; do
        dev=$(netdev_by_mac "$mac") || return 1
        data+=("$dev")
    done
}
for _ in $(seq 1 100); do
    udevadm settle -t 5 2>/dev/null
    all_named && break
    sleep 0.2
done
log "netdevs mgmt=$mgmt data=$(IFS=,; echo "${data[*]}")"

# Both guests share the controller's /etc/machine-id, so udev would give a new bond or
# VLAN the same "persistent" MAC on both hosts (LACP then sees an illegal loopback).
# Each guest gets its own id (in its /etc overlay), and udevd restarts to read it.
printf 'cxfab-lab %s' "$(hostname)" | md5sum | cut -c1-32 >/etc/machine-id
udevadm control --exit
/usr/lib/systemd/systemd-udevd --daemon

ip address add "$mgmt_address" dev "$mgmt"
ip link set "$mgmt" up
ip route add default via "$mgmt_gateway" dev "$mgmt"

# root's home must be writable (Ansible's remote tmp) and must not show the controller's.
mount -t tmpfs -o mode=0700 roothome /root
mkdir -p "$state_dir" /run/sshd

# The ConnectX tools exist only inside the guest: first in root's PATH for every shell.
guest_path="$cxemu_bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
cat >/etc/environment <<EOF
PATH=$guest_path
CXEMU_STATE_DIR=$state_dir
EOF
cat >/etc/profile.d/zz-lab-tools.sh <<EOF
export PATH=$guest_path
export CXEMU_STATE_DIR=$state_dir
EOF
export PATH=$guest_path CXEMU_STATE_DIR=$state_dir

if [ -x "$cxemu_bin/cxemu-admin" ] && [ -n "$(ls -A "$state_dir")" ]; then
    log "cxemu: the card as the disk kept it (a reboot)"
elif [ -x "$cxemu_bin/cxemu-admin" ]; then
    if "$cxemu_bin/cxemu-admin" seed --profile seed000 --netdevs "${data[0]},${data[1]}"; then
        log "cxemu seeded (seed000 on ${data[0]},${data[1]})"
        # TCG guests move 0.1-0.3 Gb/s, not 100: the emulated NIC's shaper runs at
        # 1/200 of the configured rate (1 Gb/s shapes to 5 Mb/s), so the highest lab
        # limit (25 Mb/s) stays far under what a starved guest still pushes; the lab
        # intent's host_qos_measure_rate_scale tells the measurement the same factor.
        "$cxemu_bin/cxemu-admin" set -d /dev/mst/mt4115_pciconf0 \
            netdev1.shaper_scale=0.005 netdev2.shaper_scale=0.005 || log "cxemu shaper scale FAILED"
    else
        log "cxemu seed FAILED"
    fi
fi

# virtme-ng hides /etc/shadow behind a guest-only file where root is locked ("!"), and
# sshd refuses even key logins to a locked account: "*" = no password, not locked.
shadow=$(grep -v '^root:' /etc/shadow 2>/dev/null)
printf 'root:*:19000:0:99999:7:::\n%s\n' "$shadow" >/etc/shadow

cat >/etc/ssh/sshd_config.lab <<EOF
Port 22
ListenAddress ${mgmt_address%/*}
HostKey $ssh_dir/host_ed25519
AuthorizedKeysFile $ssh_dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PidFile /run/sshd.pid
Subsystem sftp internal-sftp
SetEnv PATH=$guest_path CXEMU_STATE_DIR=$state_dir
EOF
/usr/sbin/sshd -f /etc/ssh/sshd_config.lab || log "sshd FAILED to start"
log "ready (uptime $(cut -d' ' -f1 /proc/uptime)s)"

# Stay up: the controller ends the guest through QMP.
while :; do sleep 3600; done
