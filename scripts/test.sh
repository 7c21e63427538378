#!/usr/bin/env bash
# README command (b): build and run every test, then the sanitizer pass over the tests that read
# untrusted bytes (the GGUF, template and HTTP fuzz targets) or drive the cache index at random,
# then the kernel tests of an AArch64 cross build under qemu (the NEON tables).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --arm64
(cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
scripts/build.sh
tools/check_layers.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600

# The fuzz targets run longer here than in ctest: DS_FUZZ_SECONDS each test. -O0 without debug
# information keeps this second build short (3.5 minutes on 2 cores against 7 at -O1); the
# reports still name the functions.
sanitized_tests=(gguf_fuzz_test state_test cache_test jinja_fuzz_test http_fuzz_test)
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" \
  -DDS_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)" --target "${sanitized_tests[@]}"
for t in "${sanitized_tests[@]}"; do
  echo "== $t (ASan+UBSan)"
  DS_FUZZ_SECONDS=15 DS_SHARED_DIR="$PWD/../shared" \
    "$(find build-asan/src -name "$t" -type f -executable)"
done

scripts/test-arm64.sh
