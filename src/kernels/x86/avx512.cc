// The AVX-512 (F, BW, VL, DQ, VNNI) kernel table.
#define DS_X86_TABLE avx512
#define DS_X86_TABLE_NAME "avx512"
#include "kernels/x86/table_unit.inc"
