// Internal: row kernel interface shared by the driver and the per-ISA kernel files.
#pragma once

#include <cstdint>
#include <span>

namespace pixelport::core::detail {

// Per-call parameters of every row kernel: the colour choice of ConvertOptions resolved
// once per call (one kernel serves every matrix, range and alpha mode).
// Fixed-point YUV -> RGB constants (13 fractional bits), for 8-bit samples; the
// kernels scale the offsets by 4 for 10-bit samples.
inline constexpr int kYuvShift = 13;
struct RowParams {
	int32_t y_mul; // 1 (full) or 255/219 (limited), x 2^13
	int32_t y_off; // 0 or 16
	int32_t rv, gu, gv, bu; // chroma coefficients, x 2^13 (also scaled by 255/224 if limited)
	int32_t y_mul14; // y_mul at 14 bits, for the 16-bit path of 8-bit sources
	// Sources with alpha: the colour is straight (AlphaMode::Straight), multiply it by
	// alpha. Chroma location needs no field: every type takes the block's own sample
	// (see ChromaLocation in convert.hpp).
	bool premultiply;
};

// One row of source: plane pointers at the first pixel to convert (x already applied,
// chroma row already chosen). Pointers of planes the format lacks are unused.
struct RowSrc {
	const uint8_t *p[3];
};

// Converts `width` pixels (width >= 1). Must not read beyond
// ceil(width / hsub) units of each plane or write beyond width destination pixels.
using RowFn = void (*)(const RowSrc &src, uint8_t *dst, int32_t width, const RowParams &par);

struct KernelEntry {
	uint32_t src;
	uint32_t dst;
	RowFn fn;
};

// One table per instruction set; the same (src, dst) pairs in each.
std::span<const KernelEntry> kernels_scalar();
std::span<const KernelEntry> kernels_sse2();
std::span<const KernelEntry> kernels_ssse3();
std::span<const KernelEntry> kernels_avx2();
std::span<const KernelEntry> kernels_neon();

} // namespace pixelport::core::detail
