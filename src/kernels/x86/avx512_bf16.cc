// The AVX-512 kernel table with AVX512_BF16: avx512.cc's kernels, and pair products of bf16 for
// BF16 weights (bf16_dots.inc).
#define DS_X86_TABLE avx512_bf16
#define DS_X86_TABLE_NAME "avx512_bf16"
#include "kernels/x86/table_unit.inc"
