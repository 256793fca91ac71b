#!/usr/bin/env bash
# Installs what building and testing wasm-llm needs on a Debian machine:
# the C++ toolchain, GoogleTest, Emscripten (and clang 19 for the relaxed-SIMD
# kernels, cmake/relaxed-simd-cxx.sh), the aarch64 cross compiler and
# qemu (tools/test-arm-kernels.sh), and Chromium (for the browser tests; never
# a downloaded browser) from apt, and the npm dependencies.
# Idempotent and quick when everything is already there.
#   --no-npm   skip the npm dependencies (the native build needs none)
set -euo pipefail
cd "$(dirname "$0")/.."

with_npm=1
for arg in "$@"; do
  case "$arg" in
    --no-npm) with_npm=0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

apt_packages=(cmake g++ make libgtest-dev emscripten clang-19 g++-aarch64-linux-gnu qemu-user chromium)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} with apt-get"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "$with_npm" = 1 ]; then
  # Install from the lock file when node_modules is missing or older than it.
  # Not `npm ci`: node-llama-cpp 3.22.1 lists optional per-platform packages
  # that were never published (mac, win, riscv64), and `npm ci` rejects a
  # lock file without them; `npm install` skips them and follows the lock.
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "setup: npm install (from package-lock.json)"
    npm install --no-save --no-audit --no-fund --loglevel=error
  fi
fi
