#!/usr/bin/env bash
# Installs the Debian 12 packages loopcast needs, only those that are missing.
# Sourced by scripts/run and scripts/test; safe to run on its own.
set -euo pipefail

LOOPCAST_DEBIAN_PACKAGES=(
  cmake g++ make pkg-config
  libfmt-dev nlohmann-json3-dev libboost-dev libeigen3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev zlib1g-dev libzstd-dev libsimdjson-dev
  libhowardhinnant-date-dev tzdata
  python3-dev pybind11-dev python3-numpy python3-pandas python3-matplotlib python3-pytest
  python3-nbclient python3-nbformat python3-ipykernel python3-distributed python3-tqdm
)

missing=()
for p in "${LOOPCAST_DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "loopcast: installing missing Debian packages: ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "loopcast: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
