// Internal: a conversion resolved once (kernel for this CPU, colour coefficients, options),
// for callers that convert the same pair of formats many times (the stream assembler, per
// row group).
#pragma once

#include "kernels.hpp"
#include "pixelport/core/convert.hpp"

namespace pixelport::core::detail {

struct PreparedConversion {
	const FormatInfo *src = nullptr;
	const FormatInfo *dst = nullptr;
	RowFn fn = nullptr;
	RowParams par{};
	ConvertOptions opt;
};

// Checks the formats and options and picks the kernel (reads PIXELPORT_FORCE_SCALAR).
// UnknownFormat, UnsupportedConversion, InvalidOption or Ok.
Status prepare_conversion(uint32_t src_fourcc, uint32_t dst_fourcc, const ConvertOptions &opt, PreparedConversion *out);

// convert_rows(src, dst, y0, y1) without its checks: the caller guarantees what
// convert_rows() would check (formats as prepared, sizes, strides, row range).
void convert_rows_prepared(
	const PreparedConversion &pc, const SrcImage &src, const DstImage &dst, int32_t y0, int32_t y1);

} // namespace pixelport::core::detail
