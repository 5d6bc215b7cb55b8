// bin_block_x86_64_v4: bin_rows_kernel.inc compiled for x86-64-v4 (src/interpret/CMakeLists.txt).
#include "bin_rows.hpp"

#define TFDEBUG_BIN_COLUMNS bin_columns_x86_64_v4
#include "bin_rows_kernel.inc"
