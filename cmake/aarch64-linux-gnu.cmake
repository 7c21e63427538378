# Cross build for AArch64 Linux with Debian's cross toolchain (g++-aarch64-linux-gnu) and the
# arm64 multiarch libraries; test binaries run under qemu-aarch64 (scripts/test-arm64.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# "max" has every extension qemu emulates, SDOT among them, so both NEON tables run.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -cpu max)
# pkg-config must read the arm64 .pc files, not the build machine's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
