// The pixelport format table: one entry per DRM fourcc the core knows.
//
// Everything else (validation, row kernels, target choice) is driven by this table.
// No Wayland or wlroots types; all sizes in bytes, all widths/heights in pixels.
#pragma once

#include <cstdint>
#include <span>

#include "pixelport/core/fourcc.h"

namespace pixelport::core {

enum class ColorModel : uint8_t { RGB, YUV };

// One plane. The plane is a grid of "units": a unit covers `hsub` pixels horizontally
// and `vsub` rows vertically and takes `unit_bytes` bytes.
//   RGB565 plane 0:   hsub 1, vsub 1, 2 bytes
//   YUYV plane 0:     hsub 2, vsub 1, 4 bytes (Y0 Cb Y1 Cr)
//   NV12 plane 1:     hsub 2, vsub 2, 2 bytes (Cb Cr)
struct PlaneInfo {
	uint8_t hsub;
	uint8_t vsub;
	uint8_t unit_bytes;
};

inline constexpr int kMaxPlanes = 3;
inline constexpr int kMaxTargets = 4;

struct FormatInfo {
	uint32_t fourcc;
	const char *name;   // as in drm_fourcc.h without the DRM_FORMAT_ prefix
	ColorModel model;
	uint8_t num_planes;
	PlaneInfo planes[kMaxPlanes];
	// Chroma subsampling of the whole format (1 for RGB). Damage rectangles are
	// expanded to multiples of these; convert_rows() needs y0 to be a multiple of vsub.
	uint8_t hsub;
	uint8_t vsub;
	uint8_t bits;       // precision per colour channel: 4, 5, 8, 10 or 16 (half float)
	bool has_alpha;
	bool is_float;
	// Memory layout as drm_fourcc.h writes it: bit fields of a little-endian word
	// (for multi-byte units) from the most significant field down.
	const char *layout;
	// Conversions this core implements from this format. XBGR2101010/ABGR2101010 list
	// themselves (a copy that sets X bits to ones); pick_target() prefers pass-through.
	uint8_t num_targets;
	uint32_t targets[kMaxTargets];
};

// Table entry for `fourcc`, or nullptr if the core does not know it.
const FormatInfo *format_info(uint32_t fourcc);

// Every known format (sources and targets).
std::span<const FormatInfo> all_formats();

// Name for messages ("NV12"); "unknown" for an unknown code.
const char *format_name(uint32_t fourcc);

// True if a row kernel exists converting src to dst.
bool can_convert(uint32_t src_fourcc, uint32_t dst_fourcc);

// Which format to upload a `src_fourcc` buffer as, given the formats the renderer
// samples from. Returns src_fourcc itself if the renderer takes it natively, else
// the best target we can convert to, else 0 (none).
// Rules: 10-bit sources (2101010, P010, XBGR16161616F) go to XBGR2101010/ABGR2101010
// if offered, so precision is kept; ABGR16161616F prefers ARGB8888 (2-bit alpha would
// lose more than 10-bit colour gains). Sources with alpha need ARGB8888 (or
// ABGR2101010): an opaque target would drop alpha, so they get 0 if only XRGB8888 is
// offered. Opaque sources prefer XRGB8888, then ARGB8888 (written with alpha 0xff).
uint32_t pick_target(uint32_t src_fourcc, std::span<const uint32_t> renderer_formats);

// Minimum stride in bytes of `plane` for an image `width` pixels wide:
// ceil(width / hsub) * unit_bytes. There is no alignment rule. 0 for a bad plane.
uint64_t min_stride(const FormatInfo &info, int plane, uint32_t width);

// Rows of `plane` for an image `height` pixels high: ceil(height / vsub).
uint64_t plane_rows(const FormatInfo &info, int plane, uint32_t height);

} // namespace pixelport::core
