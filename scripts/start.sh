#!/usr/bin/env bash
# README command (a): build, then serve the default model embedded in the binary on
# http://127.0.0.1:8080. Extra arguments go to `deltaserve serve` (see docs/configuration.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
exec build/src/apps/deltaserve serve "$@"
