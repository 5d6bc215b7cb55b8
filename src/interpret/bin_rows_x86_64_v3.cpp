// bin_block_x86_64_v3: bin_rows_kernel.inc compiled for x86-64-v3 (src/interpret/CMakeLists.txt).
#include "bin_rows.hpp"

#define TFDEBUG_BIN_COLUMNS bin_columns_x86_64_v3
#include "bin_rows_kernel.inc"
