#!/usr/bin/env bash
# Builds the discovery ISO template (DESIGN §11) from Debian packages:
#   - a Debian kernel (linux-image-amd64) and the modules discovery needs;
#   - a root with systemd, udev, systemd-networkd and muster-agent, packed as
#     the initramfs (the whole live system lives in RAM: no second download,
#     no root file system to find at boot);
#   - GRUB for BIOS and UEFI (grub-mkrescue: a hybrid ISO for CD and USB);
#   - /muster/config.img: BOOTCFG_AREA_SIZE zero bytes, whose byte offset in
#     the ISO goes into the sidecar OUT/muster-discovery.iso.json.
#
# Usage: iso/build.sh OUTDIR AGENT_BINARY [UNITS_DIR]
#   OUTDIR        gets muster-discovery.iso and muster-discovery.iso.json
#   AGENT_BINARY  the muster-agent to put in the image (stripped on the way)
#   UNITS_DIR     where muster-agent.service and run-muster-boot.mount are
#                 (default: systemd/ beside this folder)
# Packages are fetched with apt-get download into $MUSTER_ISO_CACHE
# (default /var/cache/muster/iso-debs) and reused. Nothing is installed on
# this machine and no maintainer script runs: the root is assembled here.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: iso/build.sh OUTDIR AGENT_BINARY [UNITS_DIR]}
agent=${2:?usage: iso/build.sh OUTDIR AGENT_BINARY [UNITS_DIR]}
units=${3:-$here/../systemd}
cache=${MUSTER_ISO_CACHE:-/var/cache/muster/iso-debs}
area_size=$((256 * 1024))   # BOOTCFG_AREA_SIZE (common/bootcfg.h)
volid=MUSTER_DISCOVERY

say() { echo "iso: $*" >&2; }
die() { echo "iso: error: $*" >&2; exit 1; }

for t in apt-get apt-cache dpkg-deb dpkg depmod cpio zstd grub-mkrescue xorriso mformat readelf strip ldconfig; do
  command -v "$t" >/dev/null || die "$t is missing (scripts/install-deps.sh iso installs it)"
done
[[ -x $agent ]] || die "no agent binary at $agent (build first)"
for u in muster-agent.service run-muster-boot.mount; do
  [[ -f $units/$u ]] || die "no $units/$u"
done

mkdir -p "$out" "$cache"
out=$(cd "$out" && pwd)
work=$out/work
rm -rf "$work"
mkdir -p "$work"
root=$work/root
mkdir -p "$root"

# ---- packages -------------------------------------------------------------

# What the live system runs, plus the libraries the agent binary needs, read
# off the binary so a new library cannot be forgotten: its ELF dependencies
# (ldd) and the libraries it dlopen()s on first use (libcurl, for `run`),
# which ldd does not show but its .note.dlopen ELF note names (the FDO
# dlopen-metadata format, agent/curlload.c). Those sonames are resolved as
# the dynamic loader would (its cache) and go through the same dpkg -S.
# dropbear-bin: the SSH server an infra-env with an SSH key gets
# (muster-ssh.service); dash: root's /bin/sh for whoever logs in (with
# coreutils, journalctl, networkctl and systemctl, which are there).
base_pkgs=(systemd udev libc6 mount kmod dropbear-bin dash)
agent_pkgs=()
dlopen_sonames() {
  readelf -p .note.dlopen "$1" 2>/dev/null | grep -o '"soname":\[[^]]*\]' |
    sed 's/^"soname":\[//; s/\]$//' | tr ',' '\n' | tr -d ' "'
}
mapfile -t agent_dlopen < <(dlopen_sonames "$agent")
# Every agent of this tree has the note: without it libcurl would be missed.
((${#agent_dlopen[@]})) || die "$agent names no dlopen()ed library in a .note.dlopen note (not this tree's agent?)"
agent_dlopen_paths=()
for so in "${agent_dlopen[@]}"; do
  p=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ && !n++ {print $NF}')
  [[ -n $p ]] || die "$agent dlopen()s $so, which this machine lacks (libcurl.so.4: apt-get install libcurl4)"
  agent_dlopen_paths+=("$p")
done
while read -r lib; do
  [[ -n $lib ]] || continue
  real=$(readlink -f "$lib")
  pkg=""
  for p in "$lib" "$real" "${real/#\/usr\/lib\//\/lib\/}" "${real/#\/lib\//\/usr\/lib\/}"; do
    pkg=$(dpkg -S "$p" 2>/dev/null | sed -n '1s/:.*//p') && [[ -n $pkg ]] && break
  done
  [[ -n $pkg ]] || die "no Debian package owns $lib (needed by $agent)"
  agent_pkgs+=("$pkg")
done < <(ldd "$agent" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'; printf '%s\n' "${agent_dlopen_paths[@]}")

# Dependencies a RAM-only live system never uses: package management,
# interactive tools, PAM modules (no logins), SELinux policy tools.
skip='^(adduser|cdebconf|debconf|dpkg|install-info|libdebian-installer4|libnewt0\.52|libslang2|libtextwrap1|passwd|tar|readline-common|libreadline8|libpam-modules|libpam-modules-bin|libdb5\.3|libsemanage-common|libsemanage2|libsepol2|perl-base|init-system-helpers|base-passwd|dmsetup)$'

# A fresh machine may have no package lists yet.
policy=$(apt-cache policy linux-image-amd64 2>/dev/null || true)
if [[ $policy != *"Candidate: "[0-9]* ]]; then
  say "no package lists: apt-get update"
  apt-get update -qq
fi
mapfile -t pkgs < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
                      --no-replaces --no-enhances "${base_pkgs[@]}" "${agent_pkgs[@]}" linux-image-amd64 |
                    grep -E '^[a-z0-9]' | grep -Ev "$skip" | grep -Ev '^linux-(image|base)' | sort -u)
((${#pkgs[@]} > 10)) || die "apt-cache found no packages (run apt-get update)"
kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ && !n++ {print $2}')
[[ -n $kpkg ]] || die "cannot tell which kernel linux-image-amd64 depends on"
pkgs+=("$kpkg")

fetch=()
for p in "${pkgs[@]}"; do
  v=$(apt-cache policy "$p" | awk '/Candidate:/{print $2}')
  [[ -n $v && $v != "(none)" ]] || die "package $p has no candidate version"
  f=$(ls "$cache/${p}_"*"_"*.deb 2>/dev/null | grep -F "_${v//:/%3a}_" | sed -n 1p || true)
  [[ -n $f ]] || fetch+=("$p=$v")
done
if ((${#fetch[@]})); then
  say "downloading ${#fetch[@]} packages into $cache"
  (cd "$cache" && apt-get download -qq "${fetch[@]}" 2>&1 | grep -v 'unsandboxed' >&2 || true)
fi

# ---- the root ---------------------------------------------------------------

say "assembling the root from ${#pkgs[@]} packages"
for p in "${pkgs[@]}"; do
  [[ $p == "$kpkg" ]] && continue
  v=$(apt-cache policy "$p" | awk '/Candidate:/{print $2}')
  f=$(ls "$cache/${p}_"*.deb 2>/dev/null | grep -F "_${v//:/%3a}_" | sed -n 1p || true)
  [[ -n $f ]] || die "package $p=$v was not downloaded"
  dpkg-deb -x "$f" "$root"
done

# The kernel and the modules discovery needs (storage, NICs, file systems).
kdeb=$(ls "$cache/${kpkg}_"*.deb | sed -n 1p)
mkdir -p "$work/kernel"
dpkg-deb -x "$kdeb" "$work/kernel"
kver=${kpkg#linux-image-}
kmods=$work/kernel/lib/modules/$kver
[[ -d $kmods ]] || die "no modules for $kver in $kdeb"
depmod -b "$work/kernel" "$kver"   # the package ships no modules.dep (its postinst makes it)
wanted_mods=(
  virtio_pci virtio_blk virtio_net virtio_scsi virtio_rng
  ata_piix ahci sd_mod sr_mod cdrom nvme mptsas megaraid_sas
  usb_storage uas xhci_pci ehci_pci
  e1000 e1000e igb ixgbe tg3 r8169 bnx2 vmxnet3
  bonding 8021q dummy
  isofs ext4 loop efivarfs crc32c_generic nls_utf8
)
declare -A modset=()
add_mod() {
  local name=$1 path dep
  path=$(awk -F: -v m="$name" '{n=$1; sub(/.*\//, "", n); sub(/\.ko.*$/, "", n); gsub(/-/, "_", n)} n == m && !k++ {print $1}' "$kmods/modules.dep")
  if [[ -z $path ]]; then
    grep -qE "/${name//_/[-_]}\.ko" "$kmods/modules.builtin" || die "kernel $kver has no module $name"
    return
  fi
  [[ -n ${modset[$path]:-} ]] && return
  modset[$path]=1
  for dep in $(awk -F: -v p="$path" '$1 == p {print $2}' "$kmods/modules.dep"); do
    dep=${dep##*/}; dep=${dep%%.ko*}; dep=${dep//-/_}
    add_mod "$dep"
  done
}
for m in "${wanted_mods[@]}"; do add_mod "$m"; done
for path in "${!modset[@]}"; do
  install -D -m 0644 "$kmods/$path" "$root/lib/modules/$kver/$path"
done
cp "$kmods"/modules.order "$kmods"/modules.builtin "$kmods"/modules.builtin.modinfo "$root/lib/modules/$kver/"
depmod -b "$root" "$kver"
install -D -m 0644 "$work/kernel/boot/vmlinuz-$kver" "$work/iso/boot/vmlinuz"
say "kernel $kver with ${#modset[@]} modules"

# Drop what a RAM-only system never reads.
rm -rf "$root"/usr/share/{doc,man,info,locale,lintian,bug,bash-completion,zsh,fish,gcc,gdb,polkit-1} \
       "$root"/usr/include "$root"/usr/lib/*/gconv "$root"/usr/lib/*/sasl2 "$root"/var/cache/* "$root"/usr/share/pam-configs

# Live-system configuration.
mkdir -p "$root"/{proc,sys,dev,run,tmp,var/lib,var/log,etc/systemd/system,etc/systemd/network,etc/muster,root}
chmod 1777 "$root/tmp"
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
tty:x:5:
disk:x:6:
lp:x:7:
kmem:x:15:
dialout:x:20:
cdrom:x:24:
floppy:x:25:
tape:x:26:
audio:x:29:
video:x:44:
utmp:x:43:
systemd-journal:x:101:
input:x:102:
sgx:x:103:
kvm:x:104:
render:x:105:
nogroup:x:65534:
EOF
printf 'root:*::0:99999:7:::\n' >"$root/etc/shadow"
chmod 0640 "$root/etc/shadow"
: >"$root/etc/machine-id"
: >"$root/etc/fstab"
printf 'muster-discovery\n' >"$root/etc/hostname"
agent_version=$("$agent" --version 2>/dev/null | sed -n 1p) || agent_version=unknown
cat >"$root/usr/lib/os-release" <<EOF
NAME="muster discovery"
ID=muster-discovery
ID_LIKE=debian
PRETTY_NAME="muster discovery image ($agent_version)"
VERSION_ID="$(. /etc/os-release 2>/dev/null; echo "${VERSION_ID:-12}")"
EOF
ln -sf ../usr/lib/os-release "$root/etc/os-release"
# Name resolution: files only (the agent's domain checks use what DHCP gave
# through /etc/resolv.conf; nothing is configured by default, so the image
# asks no public DNS server). No time sync daemon is installed: the image
# asks no NTP server either.
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"
: >"$root/etc/resolv.conf"

cat >"$root/etc/systemd/network/80-muster-dhcp.network" <<'EOF'
# Every wired NIC: DHCP (IPv4 and IPv6), so the agent can reach its coordinator.
# Not dummy links (they reach nothing); bonds and VLANs come from the kernel
# command line (systemd-network-generator: bond=, vlan=, ip=).
[Match]
Type=ether
Name=!veth* docker* dummy*

[Network]
DHCP=yes

[DHCPv4]
UseNTP=no
UseDNS=yes
EOF
mkdir -p "$root/etc/systemd/system/systemd-networkd-wait-online.service.d"
cat >"$root/etc/systemd/system/systemd-networkd-wait-online.service.d/any.conf" <<'EOF'
# One NIC with an address is enough for discovery.
[Service]
ExecStart=
ExecStart=/lib/systemd/systemd-networkd-wait-online --any --timeout=60
EOF
mkdir -p "$root/etc/systemd/journald.conf.d"
cat >"$root/etc/systemd/journald.conf.d/console.conf" <<'EOF'
# RAM only, and the agent's lines on the console (serial too) for debugging.
[Journal]
Storage=volatile
ForwardToConsole=yes
MaxLevelConsole=info
EOF

install -D -m 0644 "$units/muster-agent.service" "$root/lib/systemd/system/muster-agent.service"
install -D -m 0644 "$units/run-muster-boot.mount" "$root/lib/systemd/system/run-muster-boot.mount"
install -D -m 0644 "$here/muster-boot-setup.service" "$root/lib/systemd/system/muster-boot-setup.service"
install -D -m 0644 "$here/muster-ssh.service" "$root/lib/systemd/system/muster-ssh.service"
mkdir -p "$root/etc/dropbear"
# Root's shell (dash's maintainer script, which would make the link, never runs).
[[ -e $root/bin/sh ]] || ln -s dash "$root/bin/sh"
[[ -x $root/bin/dash ]] || die "no /bin/dash in the root"
printf '/bin/sh\n/bin/dash\n' >"$root/etc/shells"
install -D -m 0755 "$agent" "$root/usr/bin/muster-agent"
strip --strip-unneeded "$root/usr/bin/muster-agent"

wants=$root/etc/systemd/system/multi-user.target.wants
mkdir -p "$wants" "$root/etc/systemd/system/sockets.target.wants" "$root/etc/systemd/system/network-online.target.wants"
ln -sf /lib/systemd/system/muster-agent.service "$wants/muster-agent.service"
ln -sf /lib/systemd/system/muster-ssh.service "$wants/muster-ssh.service"
mkdir -p "$root/etc/systemd/system/sysinit.target.wants"
ln -sf /lib/systemd/system/muster-boot-setup.service \
  "$root/etc/systemd/system/sysinit.target.wants/muster-boot-setup.service"
ln -sf /lib/systemd/system/systemd-networkd.service "$wants/systemd-networkd.service"
# ip=, vlan=, bond=, bridge= on the kernel command line become networkd files
# in /run/systemd/network before networkd starts (static addresses, bonds and
# VLANs where a data centre has no DHCP on the native VLAN).
mkdir -p "$root/etc/systemd/system/sysinit.target.wants"
ln -sf /lib/systemd/system/systemd-network-generator.service \
  "$root/etc/systemd/system/sysinit.target.wants/systemd-network-generator.service"
ln -sf /lib/systemd/system/systemd-networkd.socket "$root/etc/systemd/system/sockets.target.wants/systemd-networkd.socket"
ln -sf /lib/systemd/system/systemd-networkd-wait-online.service \
  "$root/etc/systemd/system/network-online.target.wants/systemd-networkd-wait-online.service"
ln -sf /lib/systemd/system/multi-user.target "$root/etc/systemd/system/default.target"
# No logins on a discovery host (and no getty binary): mask the gettys.
for u in getty@.service serial-getty@.service console-getty.service; do
  ln -sf /dev/null "$root/etc/systemd/system/$u"
done
ln -sf /lib/systemd/systemd "$root/init"
[[ -e $root/sbin/init ]] || ln -sf /lib/systemd/systemd "$root/sbin/init"

# udev's hardware database (vendor and model names) and the loader cache.
if chroot "$root" /bin/systemd-hwdb update --usr 2>/dev/null; then
  rm -rf "$root"/lib/udev/hwdb.d
else
  say "warning: could not compile udev's hwdb; vendor names from it will be missing"
fi
ldconfig -r "$root"

# Every ELF file's libraries must be in the root.
missing=$(find "$root" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
  { xargs -0 readelf -d 2>/dev/null || true; } | awk '/\(NEEDED\)/ {gsub(/[\[\]]/, "", $5); print $5}' | sort -u |
  while read -r so; do
    found=0
    for d in lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu lib usr/lib usr/lib/x86_64-linux-gnu/systemd; do
      [[ -e $root/$d/$so ]] && { found=1; break; }
    done
    ((found)) || echo "$so"
  done)
[[ -z $missing ]] || die "libraries missing from the root: $missing"
# And the agent's dlopen()ed ones, which no DT_NEEDED names.
for so in "${agent_dlopen[@]}"; do
  found=0
  for d in lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu lib usr/lib; do
    [[ -e $root/$d/$so ]] && { found=1; break; }
  done
  ((found)) || die "$so (dlopen()ed by muster-agent) is missing from the root"
done

# ---- initramfs and ISO ------------------------------------------------------

say "packing the initramfs"
(cd "$root" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
  cpio --null -o -H newc --reproducible --owner=0:0 --quiet) | zstd -q -15 -T0 >"$work/iso/boot/initrd.img"

mkdir -p "$work/iso/boot/grub" "$work/iso/muster"
head -c "$area_size" /dev/zero >"$work/iso/muster/config.img"
# The kernel's command line, the same for GRUB and for PXE (boot.ipxe).
cmdline="console=tty0 console=ttyS0,115200 systemd.show_status=auto rd.udev.log_level=3"
cat >"$work/iso/boot/grub/grub.cfg" <<EOF
serial --unit=0 --speed=115200
terminal_input console serial
terminal_output console serial
set timeout=1
set default=0
menuentry "muster discovery" {
        linux /boot/vmlinuz $cmdline
        initrd /boot/initrd.img
}
EOF
say "writing the ISO (BIOS and UEFI)"
iso=$out/muster-discovery.iso
rm -f "$iso" "$iso.json"
grub-mkrescue --compress=xz -o "$iso.tmp" "$work/iso" -- -volid "$volid" >"$work/grub-mkrescue.log" 2>&1 ||
  { cat "$work/grub-mkrescue.log" >&2; die "grub-mkrescue failed"; }

# Where is the config area? xorriso reports the file's first block; the
# check below extracts the file again after marking those bytes.
lba=$(xorriso -indev "$iso.tmp" -find /muster/config.img -exec report_lba -- 2>/dev/null |
      awk -F, '/File data lba:/ && !n++ {gsub(/[^0-9]/, "", $2); print $2}')
[[ -n $lba ]] || die "cannot find /muster/config.img in the ISO"
offset=$((lba * 2048))
size=$(stat -c %s "$iso.tmp")
cp "$iso.tmp" "$work/check.iso"
printf 'MUSTER-AREA-CHECK' | dd of="$work/check.iso" bs=1 seek="$offset" conv=notrunc status=none
xorriso -osirrox on -indev "$work/check.iso" -extract /muster/config.img "$work/check.img" >/dev/null 2>&1
[[ $(head -c 17 "$work/check.img") == MUSTER-AREA-CHECK ]] || die "the config area is not at offset $offset"
cmp -s <(dd if="$iso.tmp" bs=1024 skip=$((offset / 1024)) count=$((area_size / 1024)) status=none) \
       <(head -c "$area_size" /dev/zero) || die "the config area is not zero-filled"

# Where the kernel and the initramfs are, for PXE: musterd serves them from
# the ISO (ISO 9660 keeps a file's bytes in one run); checked byte for byte.
extent() {
  local l
  l=$(xorriso -indev "$iso.tmp" -find "$1" -exec report_lba -- 2>/dev/null |
      awk -F, '/File data lba:/ && !n++ {gsub(/[^0-9]/, "", $2); print $2}')
  [[ -n $l ]] || die "cannot find $1 in the ISO"
  local off=$((l * 2048)) sz
  sz=$(stat -c %s "$2")
  cmp -s <(tail -c +$((off + 1)) "$iso.tmp" | head -c "$sz") "$2" || die "$1 is not in one run at $off in the ISO"
  echo "$off $sz"
}
kernel_extent=$(extent /boot/vmlinuz "$work/iso/boot/vmlinuz")
initrd_extent=$(extent /boot/initrd.img "$work/iso/boot/initrd.img")
read -r kernel_offset kernel_size <<<"$kernel_extent"
read -r initrd_offset initrd_size <<<"$initrd_extent"

mv "$iso.tmp" "$iso"
cat >"$iso.json.tmp" <<EOF
{"format": "muster-iso-template/1", "config_offset": $offset, "config_size": $area_size, "size": $size, "agent_version": "$agent_version", "kernel": "$kver", "cpu_architecture": "$(uname -m)", "pxe": {"kernel_offset": $kernel_offset, "kernel_size": $kernel_size, "initrd_offset": $initrd_offset, "initrd_size": $initrd_size, "cmdline": "$cmdline"}}
EOF
mv "$iso.json.tmp" "$iso.json"
rm -rf "$work"
say "$iso: $size bytes ($((size / 1048576)) MiB), config area at $offset"
