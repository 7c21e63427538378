#!/usr/bin/env bash
# README command (a): build, then run deltaserve on the default model embedded in the binary.
# Extra arguments go to `deltaserve run` (for example -p "your prompt" -n 64).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
if (($# == 0)); then
  set -- -p "Once upon a time" -n 64
fi
exec build/src/apps/deltaserve run "$@"
