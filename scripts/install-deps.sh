#!/usr/bin/env bash
# Installs the Debian packages Cueue needs to build and test.
# Usage: scripts/install-deps.sh        (idempotent; uses sudo when not root)
set -euo pipefail
pkgs=(build-essential cmake pkg-config libyaml-dev libjson-c-dev libcmocka-dev libev-dev
      libmicrohttpd-dev libsqlite3-dev libgnutls28-dev clang libclang-rt-dev valgrind
      jq curl libcurl4-openssl-dev prometheus clang-format-14
      python3 python3-yaml gnuplot-nox)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
$SUDO apt-get install -y -qq "${missing[@]}"
