#!/usr/bin/env bash
# Idempotent set-up: installs the Debian packages and npm dev dependencies the build and tests need.
# As root it runs apt-get itself; otherwise it prints the exact command and stops.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(emscripten libxsimd-dev doctest-dev cmake g++ chromium clang libclang-rt-14-dev)  # the last two: libFuzzer
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: run as root:  $cmd" >&2
    exit 1
  fi
fi

# npm ci only when the lock file changed since the last install.
stamp=node_modules/.setup-stamp
if [[ ! -f $stamp || package-lock.json -nt $stamp ]]; then
  npm ci --no-audit --no-fund >&2
  touch "$stamp"
fi
