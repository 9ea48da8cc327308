// The pixelport format table: one entry per DRM fourcc the core knows.
//
// Everything else (validation, row kernels, target choice) is driven by this table.
// No Wayland or wlroots types; all sizes in bytes, all widths/heights in pixels.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "pixelport/core/fourcc.hpp"

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
	const char *name; // as in drm_fourcc.h without the DRM_FORMAT_ prefix
	ColorModel model;
	uint8_t num_planes;
	PlaneInfo planes[kMaxPlanes];
	// Chroma subsampling of the whole format (1 for RGB). Damage rectangles are
	// expanded to multiples of these; convert_rows() needs y0 to be a multiple of vsub.
	uint8_t hsub;
	uint8_t vsub;
	uint8_t bits; // precision per colour channel: 4, 5, 8, 10 or 16 (half float)
	bool has_alpha;
	bool is_float;
	// Memory layout as drm_fourcc.h writes it: bit fields of a little-endian word
	// (for multi-byte units) from the most significant field down.
	const char *layout;
	// Conversions this core implements from this format. XBGR2101010/ABGR2101010 list
	// themselves (a copy that sets X bits to ones), and ARGB8888 lists itself (a copy, or
	// the premultiplication of straight alpha); pick_target() prefers pass-through.
	uint8_t num_targets;
	uint32_t targets[kMaxTargets];
};

// Table entry for `fourcc`, or nullptr if the core does not know it.
const FormatInfo *format_info(uint32_t fourcc);

// Every known format (sources and targets).
std::span<const FormatInfo> all_formats();

// Name for messages ("NV12"); "unknown" for an unknown code.
const char *format_name(uint32_t fourcc);

// Table entry whose name is `name` (as format_name() spells it, any letter case), or nullptr.
const FormatInfo *format_by_name(std::string_view name);

// wl_shm format codes are DRM fourccs, except ARGB8888 and XRGB8888, which wl_shm numbers
// 0 and 1 (wayland.xml, enum wl_shm.format). These two map between the code spaces; every
// other value passes through unchanged.
uint32_t fourcc_from_shm_format(uint32_t shm_format);
uint32_t shm_format_from_fourcc(uint32_t fourcc);

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

// pick_target() without pass-through: the best target reached through a kernel, by the
// same rules, for a buffer that must be converted even though the renderer may take its
// format (straight alpha: see pick_target_for_alpha() in convert.hpp). That is src_fourcc
// itself only where the core converts a format into itself (ARGB8888, XBGR2101010,
// ABGR2101010). 0 if none.
uint32_t pick_converted_target(uint32_t src_fourcc, std::span<const uint32_t> renderer_formats);

// Minimum stride in bytes of `plane` for an image `width` pixels wide:
// ceil(width / hsub) * unit_bytes. There is no alignment rule. 0 for a bad plane.
uint64_t min_stride(const FormatInfo &info, int plane, uint32_t width);

// Rows of `plane` for an image `height` pixels high: ceil(height / vsub).
uint64_t plane_rows(const FormatInfo &info, int plane, uint32_t height);

// Where the planes of a wl_shm buffer lie, relative to the buffer's offset in its pool. wl_shm
// gives one stride; as Weston lays such buffers out (libweston/pixel-formats.c, gl-renderer),
// plane 0 comes first with that stride and each chroma plane follows the previous one directly,
// with the same stride for 2-plane formats (NV12, NV16, P010) and stride / hsub for 3-plane
// formats (YUV420, YVU420).
struct ShmPlanes {
	uint64_t offset[kMaxPlanes];
	uint64_t stride[kMaxPlanes];
	uint64_t rows[kMaxPlanes];
	uint64_t size; // bytes from the first byte of plane 0 to one past the last plane
};

// Fills `out` for a `width` x `height` buffer with plane-0 `stride` (bytes). False if a plane's
// stride is below min_stride() or a 3-plane stride does not divide by the chroma hsub. Sizes
// cannot overflow while stride and height are below 2^31 (wl_shm's int32 arguments).
bool shm_planes(const FormatInfo &info, uint32_t width, uint32_t height, uint64_t stride, ShmPlanes *out);

// The smallest plane-0 stride for which shm_planes() succeeds at `width` and every plane's
// stride is a multiple of `align` bytes (4 suits pixman and GL's default unpack alignment).
uint64_t shm_min_stride(const FormatInfo &info, uint32_t width, uint32_t align);

} // namespace pixelport::core
