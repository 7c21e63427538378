#!/usr/bin/env bash
# Fails when a library under src/ includes a header of a library it may not depend on.
# The allowed edges are the layer diagram of docs/architecture.md; a new edge is a design change
# and belongs there first.
set -euo pipefail
cd "$(dirname "$0")/../src"

declare -A allowed=(
  [base]=""
  [tensor]="base"
  [gguf]="base tensor"
  [kernels]="base tensor"
  [text]="base tensor gguf"
  [state]="base tensor kernels"
  [model]="base tensor gguf kernels state"
  [cache]="base state"
  [engine]="base tensor kernels state model cache"
  [api]="base tensor text engine"
  [server]="base text engine api cache"
  [bench]="base"
  [apps]="base tensor gguf kernels text state model cache engine api server bench"
)

status=0
for dir in */; do
  layer=${dir%/}
  if [[ -z ${allowed[$layer]+set} ]]; then
    echo "check_layers: src/$layer is not in the layer table" >&2
    status=1
    continue
  fi
  while IFS=: read -r file _ include; do
    target=$(sed -E 's/.*#include "([^/"]+)\/.*/\1/' <<<"$include")
    [[ $target == "$layer" ]] && continue
    [[ -z ${allowed[$target]+set} ]] && continue  # not one of our libraries
    if [[ " ${allowed[$layer]} " != *" $target "* ]]; then
      echo "check_layers: $file includes $target/, but $layer may only use: ${allowed[$layer]:-nothing}" >&2
      status=1
    fi
  done < <(grep -rnE '^#include "[^/"]+/' "$layer" || true)
done
[[ $status == 0 ]] && echo "check_layers: all includes follow the layer order"
exit $status
