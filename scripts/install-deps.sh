#!/usr/bin/env bash
# Installs the Debian packages deltaserve builds and tests with, skipping those already present.
# --arm64 adds the AArch64 cross toolchain, qemu and the arm64 libraries the NEON kernel tests
# build against (scripts/test-arm64.sh).
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache pkg-config
  nlohmann-json3-dev libcli11-dev libspdlog-dev libxxhash-dev libpcre2-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev python3 python3-jinja2 chromium
)
# The black-box tests need node and npm; Debian's own are used only where none is installed.
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
cross_arm64=false
if [[ ${1:-} == --arm64 ]]; then
  cross_arm64=true
  packages+=(g++-aarch64-linux-gnu qemu-user libspdlog-dev:arm64 libxxhash-dev:arm64
    libgtest-dev:arm64)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
if $cross_arm64 && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
