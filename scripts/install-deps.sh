#!/usr/bin/env bash
# Installs the Debian packages muster needs that are missing on this machine.
# Usage: scripts/install-deps.sh [build|iso|deb|bench|all]   (default: build)
# Idempotent: packages already installed are not touched, apt is not called.
# libsystemd-dev: musterd's sd_notify. systemd: systemd-analyze, which the
# systemd suite runs; in a container without systemd as PID 1 installing it
# starts nothing (no init is replaced: systemd-sysv is not pulled in).
# clang + libclang-rt-14-dev: the libFuzzer targets (make test-fuzz); python3:
# tests/fixtures/derive.py, which derives the golden inventories from the facts.
# postgresql: the server the tests start, throw-away, in a temporary folder
# (scripts/pg-test-server; the package's own cluster is never used); openssl:
# that server's certificate for TLS on loopback. cpio: the unit test of the
# initramfs archives musterd appends for PXE reads them back with it.
# zlib1g-dev: the agent gzips the logs it uploads (logs-gather); tar and gzip
# read the bundles back in the tests, grub-common's grub-editenv the GRUB
# environment a reclaim writes. zsh and fish: the tests load musterctl's
# completion scripts in them (bash is there already). help2man: the man
# pages (scripts/make-man). promtool (checks /metrics in the tests) is
# taken out of the prometheus package's .deb alone: see promtool_from_deb.
# libsmartcols-dev: util-linux's table library, which prints musterctl's
# tables (coordinator/ctl/table.c). python3-yaml: scripts/openapi-compat and
# the openapi suites read the API document with it; python3-jsonschema:
# tests/tools/openapi-answers validates every answer the suites get against
# it (JSON Schema 2020-12). nodejs and npm: Redocly
# CLI, which lints the API document (scripts/openapi-lint), from the npm
# registry at the version tools/openapi-lint/package-lock.json pins: see
# redocly_from_npm.
set -euo pipefail

build_pkgs=(
  build-essential cmake pkg-config
  libudev-dev libblkid-dev libnl-3-dev libnl-route-3-dev libjson-c-dev
  libcurl4-openssl-dev libmbedtls-dev libmicrohttpd-dev libgnutls28-dev libsqlite3-dev
  libpq-dev postgresql openssl libyaml-dev libsolv-dev libsolvext-dev libcriterion-dev
  libsmartcols-dev python3-yaml python3-jsonschema
  util-linux iproute2 kmod fdisk e2fsprogs mount
  libsystemd-dev systemd
  clang libclang-rt-14-dev python3 cpio zlib1g-dev tar gzip grub-common
  zsh fish help2man
)
# The discovery ISO (iso/build.sh: GRUB for BIOS and UEFI, xorriso, the
# initramfs tools) and its boot test (QEMU with OVMF; socat carries the
# guest's one forwarded connection to musterd on loopback; ipxe-qemu: the
# NIC ROM that PXE-boots it; openssh-client: ssh into the guest with the
# infra-env's key). bench/iso
# compares against a per-infra-env xorriso rebuild.
iso_pkgs=(
  grub-common grub-pc-bin grub-efi-amd64-bin xorriso mtools cpio zstd kmod binutils
  qemu-system-x86 ovmf ipxe-qemu socat curl openssh-client
)
# `make deb` (scripts/make-deb: dpkg-buildpackage, debian/rules with
# debhelper compat 13) and the deb suite, which checks the packages with
# lintian. The package build needs no fakeroot (Rules-Requires-Root: no).
deb_pkgs=(dpkg-dev debhelper lintian)
# Peers the probe benchmark measures against.
bench_pkgs=(lshw hwinfo inxi facter)

want=()
case "${1:-build}" in
  build) want=("${build_pkgs[@]}") ;;
  iso)   want=("${iso_pkgs[@]}") ;;
  deb)   want=("${deb_pkgs[@]}") ;;
  bench) want=("${bench_pkgs[@]}") ;;
  all)   want=("${build_pkgs[@]}" "${iso_pkgs[@]}" "${deb_pkgs[@]}" "${bench_pkgs[@]}") ;;
  *) echo "usage: $0 [build|iso|deb|bench|all]" >&2; exit 2 ;;
esac

# promtool, which `make test` runs over musterd's /metrics (Prometheus's
# naming rules), from Debian's prometheus package: only the one static
# binary is taken out of the .deb (into .tools/bin, beside the tree's
# build folders), so that no Prometheus server is installed or started.
promtool_from_deb() {
  local root dest tmp
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  dest=$root/.tools/bin/promtool
  [[ -x $dest ]] && return 0
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  echo "install-deps: taking promtool out of Debian's prometheus package" >&2
  if ! (cd "$tmp" && apt-get download -qq prometheus 2>/dev/null); then
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    (cd "$tmp" && apt-get download -qq prometheus)
  fi
  dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
  mkdir -p "$root/.tools/bin"
  install -m 0755 "$tmp/x/usr/bin/promtool" "$dest.new"
  mv "$dest.new" "$dest"
}
case "${1:-build}" in build|all) promtool_from_deb ;; esac

missing=()
for p in "${want[@]}"; do
  st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ $st == installed ]] || missing+=("$p")
done
# Node.js and npm for redocly_from_npm: Debian's nodejs and npm packages
# where the machine has no node or npm. A Node.js that came from elsewhere
# (one that carries its own npm) is kept: Debian's npm would not install
# over its files.
case "${1:-build}" in
  build|all)
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
      missing+=(nodejs npm)
    fi ;;
esac

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine has no package lists; an old list may miss current versions.
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Redocly CLI, which `make test` runs over openapi/muster.yaml
# (scripts/openapi-lint): `npm ci` into tools/openapi-lint/node_modules,
# exactly what that folder's package-lock.json pins (its integrity hashes
# checked). A copy of the lock file beside the packages tells that they are
# installed at those versions; a changed lock file installs them again.
redocly_from_npm() {
  local dir stamp
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tools/openapi-lint
  stamp=$dir/node_modules/.installed-package-lock.json
  if [[ -f $stamp ]] && cmp -s "$stamp" "$dir/package-lock.json" &&
     [[ -f $dir/node_modules/@redocly/cli/bin/cli.js ]]; then
    return 0
  fi
  echo "install-deps: installing Redocly CLI into tools/openapi-lint (npm ci)" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$dir/package-lock.json" "$stamp"
}
case "${1:-build}" in build|all) redocly_from_npm ;; esac
