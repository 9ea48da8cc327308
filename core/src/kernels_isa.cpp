// Row kernels of one instruction set. meson compiles this file once per ISA with
// that ISA's -m flags, PP_ISA_LEVEL (0 scalar, 1 SSE2, 2 SSSE3, 3 AVX2; 0 on arm64),
// PP_ISA_NEON (1 for the arm64 NEON table) and PP_KERNEL_TABLE (the function name
// below); only these objects get ISA flags.
#include <cstdint>
#include <span>

#include "kernels.hpp"
#include "pixelport/core/fourcc.hpp"

#if PP_ISA_LEVEL >= 1
#include <immintrin.h>
#endif
#if PP_ISA_NEON
#include <arm_neon.h>
#endif

namespace pixelport::core::detail {
namespace {
#include "rows_impl.hpp"
#if PP_ISA_LEVEL >= 1
#include "rows_simd.hpp"
#endif
#if PP_ISA_NEON
#include "rows_neon.hpp"
#endif
#include "rows_table.hpp"
} // namespace

std::span<const KernelEntry> PP_KERNEL_TABLE() { return kTable; }

} // namespace pixelport::core::detail
