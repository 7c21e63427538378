// The AVX2 + FMA + F16C kernel table.
#define DS_X86_TABLE avx2
#define DS_X86_TABLE_NAME "avx2"
#include "kernels/x86/table_unit.inc"
