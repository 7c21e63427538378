#!/usr/bin/env bash
# Cross-builds the libraries up to the kernels for AArch64 and runs their tests under qemu-aarch64:
# the NEON tables, with and without the dot-product instructions (qemu's "max" CPU has them, and
# every kernel test runs once per table), checked on an x86 machine. Needs `scripts/install-deps.sh
# --arm64`. Correctness only: qemu says nothing about speed.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-arm64 -G Ninja -DCMAKE_BUILD_TYPE=Release -DDS_KERNELS_ONLY=ON \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake >/dev/null
cmake --build build-arm64 -j"$(nproc)"
tests=$(qemu-aarch64 -cpu max build-arm64/src/kernels/kernels_test --gtest_list_tests)
if ! grep -q neon_dotprod <<<"$tests"; then
  echo "test-arm64: the neon_dotprod table is not under test; qemu lacks SDOT?" >&2
  exit 1
fi
echo "== AArch64 tests under qemu"
ctest --test-dir build-arm64 --output-on-failure -j"$(nproc)" --timeout 600
