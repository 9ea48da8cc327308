// Pixel conversion: whole rows, rectangles and damage lists, from any source format in
// format.hpp to one of its targets (ARGB8888/XRGB8888, or XBGR2101010/ABGR2101010 for
// 10-bit sources).
//
// Ownership: the core never allocates image memory and never keeps a pointer after a
// call returns. Every entry point validates its arguments first and returns a Status;
// on error nothing has been written. No call reads or writes outside
// [planes[i].data, planes[i].data + planes[i].size) and [dst.data, dst.data + dst.size).
//
// Colour (see YuvMatrix, YuvRange, ChromaLocation, AlphaMode): all of it is a parameter of
// the call (ConvertOptions), resolved once per call; the same row kernels serve every choice.
//  * YUV -> RGB with the ITU-R BT.601, BT.709 or BT.2020 (non-constant luminance) matrix,
//    limited range (Y 16-235, Cb/Cr 16-240 for 8 bits; x4 for 10 bits) or full range
//    (0-255). ConvertOptions defaults to BT.601 limited (Weston and Mutter for wl_shm);
//    default_yuv_matrix() gives the size-based default for a client that says nothing.
//  * Chroma upsampling: nearest neighbour ("replicate"): the chroma sample of a 2x1
//    (4:2:2) or 2x2 (4:2:0) block is used for every pixel of that block, as libyuv's
//    *ToARGB functions do. For every ChromaLocation this is a nearest sample (see there).
//    This keeps rows independent, so bands, damage and the stream's row groups need no
//    neighbouring chroma rows.
//  * RGB expansions replicate high bits (5 bits v -> v<<3 | v>>2, so 31 -> 255;
//    6 bits v -> v<<2 | v>>4; 4 bits v -> v*17; 1-bit alpha -> 0 or 255; 2-bit alpha -> v*85).
//  * 10-bit -> 8-bit rounds to nearest: round(v * 255 / 1023).
//    Half float -> n bits: clamp to [0, 1], then round(v * (2^n - 1)), ties up
//    (negatives -> 0; Inf and NaN with the sign bit clear -> 2^n - 1).
//  * Alpha: wl_shm alpha is premultiplied and is copied as it is (AlphaMode::Premultiplied).
//    With AlphaMode::Straight, sources with alpha are premultiplied during conversion (see
//    AlphaMode). Opaque sources, and X* targets, get alpha (or X bits) all ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "pixelport/core/format.hpp"

namespace pixelport::core {

enum class Status : uint8_t {
	Ok = 0,
	NullPointer, // a data pointer needed by the format is null
	UnknownFormat, // fourcc not in the format table
	UnsupportedConversion, // known formats, but no src -> dst kernel
	InvalidSize, // width, height or a rectangle size <= 0
	SizeMismatch, // dst width/height differ from src
	StrideTooSmall, // stride < min_stride(width)
	BufferTooSmall, // the plane does not fit in the given size
	Overflow, // a size or offset does not fit in 64 bits / size_t
	RectOutOfBounds, // rectangle not inside the image
	BadRowRange, // convert_rows: y0/y1 outside the image or not on the chroma grid
	InvalidOption, // negative thread count, band size, colour enum out of range, ...
};

// Short English text for logs, e.g. "stride smaller than the row".
const char *status_str(Status s);

// YUV -> RGB matrix, by its luma weights Kr, Kb (Kg = 1 - Kr - Kb):
//   BT601:  ITU-R BT.601-7        Kr 0.299   Kb 0.114   (H.273 MatrixCoefficients 5, 6)
//   BT709:  ITU-R BT.709-6        Kr 0.2126  Kb 0.0722  (H.273 MatrixCoefficients 1)
//   BT2020: ITU-R BT.2020-2 non-constant luminance, Kr 0.2627 Kb 0.0593 (H.273 9)
// With Y, Cb, Cr normalised to [0,1], [-0.5,0.5]:
//   R = Y + 2(1-Kr) Cr
//   G = Y - 2Kb(1-Kb)/Kg Cb - 2Kr(1-Kr)/Kg Cr
//   B = Y + 2(1-Kb) Cb
// in fixed point, result rounded and clamped. Only the matrix: no transfer function or
// primaries conversion (BT.2020 colours are shown as if their primaries were the
// output's). 8-bit sources: 16-bit arithmetic (coefficients to 1/8192, luma scale to
// 1/16384, each term rounded to 1/64), so SIMD does 16 lanes per register; over all Y,
// Cb, Cr the result is within +-1 of the exact equation and equal to it for ~99.6% of
// inputs (every matrix and range, tested). 10-bit sources (P010): int32 arithmetic,
// coefficients to 1/8192; within +-1 of the exact equation in 8 and in 10 bits (tested
// on a grid of every 4th code, all matrices and ranges). Every ISA gives the same bytes
// as the scalar reference.
enum class YuvMatrix : uint8_t { BT601, BT709, BT2020 };

// Limited ("studio", "TV") range: 8-bit Y 16..235 and Cb/Cr 16..240 centred on 128
// (BT.601/BT.709 section on quantisation); 10-bit x4: 64..940, 64..960, centre 512.
// Full ("PC", JPEG) range: Y 0..255, Cb/Cr 0..255 centred on 128; 10-bit 0..1023
// centred on 512 (normalised by 2^n - 1 as in ITU-R BT.2100 full range).
enum class YuvRange : uint8_t { Limited, Full };

// Where the chroma samples of 4:2:0 (and 4:2:2) formats lie: ITU-T H.273
// ChromaSampleLocType 0..5, the same order as wp_color_representation_surface_v1's
// chroma_location type_0..type_5 (protocol values 1..6). Positions in luma sample units,
// for chroma sample (k, j) of a 4:2:0 image:
//   Type0: (2k,     2j+0.5)  left, vertically centred (MPEG-2, H.264 default)
//   Type1: (2k+0.5, 2j+0.5)  centre (MPEG-1, JPEG)
//   Type2: (2k,     2j)      top-left (BT.2020 / BT.2100 UHD)
//   Type3: (2k+0.5, 2j)      top
//   Type4: (2k,     2j+1)    bottom-left
//   Type5: (2k+0.5, 2j+1)    bottom
// The kernels take the nearest sample and no interpolation: pixel (x, y) uses chroma
// (x/2, y/2) (4:2:2: (x/2, y)) for every type. That sample is at the smallest distance
// from the pixel for all six types (the grid is separable, so the nearest in x and in y
// is the nearest in the plane); where two samples tie (Type0/2/4: odd columns are 1 from
// chroma columns k and k+1; Type2/3: odd rows are 1 from chroma rows j and j+1;
// Type4/5: even rows are 1 from rows j-1 and j), the tie goes to the sample of the
// pixel's own block. Horizontally, types 1/3/5 have no tie (both pixels are 0.5 away);
// vertically, types 0/1 have none. 4:2:2 formats have full-height chroma, so only the
// horizontal position applies. So the
// location is accepted and checked (InvalidOption if out of range) but changes no
// pixel; real interpolation would need neighbouring chroma rows, which bands, damage
// and the stream's row groups do not have. Tested against the geometry above.
enum class ChromaLocation : uint8_t { Type0, Type1, Type2, Type3, Type4, Type5 };

// How the source's colour relates to its alpha. Premultiplied (wl_shm's rule, and the
// renderer's): copied as it is. Straight: the colour is not premultiplied; for formats
// with alpha (ARGB8888, ABGR8888, ARGB1555, ARGB4444, ARGB2101010, ABGR2101010,
// ABGR16161616F) the kernels write round(colour * alpha / max) into the premultiplied
// destination, colour and alpha both first converted to the destination's bits (8, or
// 10-bit colour with 2-bit alpha for ABGR2101010), so every written pixel is a valid
// premultiplied one (colour <= alpha) for the alpha it stores. X* targets get the same
// colour (composited over black) with X bits all ones. Opaque sources ignore it.
// Straight rows run the template (compiler-vectorised) rather than the hand-written SIMD
// rows; the default (premultiplied) path is unchanged.
enum class AlphaMode : uint8_t { Premultiplied, Straight };

// The matrix to assume for a YUV buffer whose client says nothing (no
// wp_color_representation), with limited range: BT.2020 for 2160 lines or more, BT.709 for
// more than 576, BT.601 up to 576. This is GStreamer's rule for raw video without colorimetry
// (gst-libs/gst/video/video-info.c, set_default_colorimetry), so `videotestsrc ! waylandsink`,
// which says nothing over wl_shm, shows as GStreamer meant it. `width` is unused for now (kept
// so a width rule such as mpv's 1280 can be added). Sizes <= 0 give BT.601.
YuvMatrix default_yuv_matrix(int32_t width, int32_t height);

// Instruction sets the kernels come in. Chosen once per call: the best the CPU has,
// capped by ConvertOptions::max_isa (and by force_scalar / PIXELPORT_FORCE_SCALAR=1).
// Levels order within one architecture: x86's ascend from SSE2 to AVX2; Neon (ASIMD, the
// arm64 baseline) is arm64's only one, last so that it caps nothing on x86. On arm64 a cap
// below Neon gives scalar.
enum class Isa : uint8_t { Scalar, SSE2, SSSE3, AVX2, Neon };
const char *isa_name(Isa isa);
Isa best_isa(); // what this CPU supports (ignores PIXELPORT_FORCE_SCALAR)

struct Rect {
	int32_t x, y, width, height; // pixels
};

// Source image. planes[i] for i < format_info(fourcc)->num_planes; the others ignored.
// `data` points at the first byte of the plane's row 0 (no extra offset), `stride`
// is bytes between rows, `size` is how many bytes at `data` may be read (at least
// stride * (rows - 1) + min_stride(width); the last row needs no padding).
struct SrcPlane {
	const uint8_t *data = nullptr;
	size_t stride = 0;
	size_t size = 0;
};

struct SrcImage {
	uint32_t fourcc = 0;
	int32_t width = 0;
	int32_t height = 0;
	SrcPlane planes[kMaxPlanes];
};

// Destination: same width and height as the source, one plane.
struct DstImage {
	uint32_t fourcc = 0;
	int32_t width = 0;
	int32_t height = 0;
	uint8_t *data = nullptr;
	size_t stride = 0;
	size_t size = 0;
};

struct ConvertOptions {
	YuvMatrix matrix = YuvMatrix::BT601;
	YuvRange range = YuvRange::Limited;
	ChromaLocation chroma_location = ChromaLocation::Type0; // YUV sources; see ChromaLocation
	AlphaMode alpha = AlphaMode::Premultiplied; // sources with alpha; see AlphaMode
	// Bands: rows are converted in bands whose source + destination bytes stay under
	// band_bytes (0: half the L2 cache, 1 MiB if unknown). band_rows > 0 overrides.
	size_t band_bytes = 0;
	int32_t band_rows = 0;
	// 1: the calling thread only (default). n > 1: up to n threads, contiguous row
	// chunks, for areas of at least kMinPixelsPerThread pixels per thread.
	// 0: automatic (hardware threads, same size rule). At most 64. If a thread cannot
	// be started its rows are converted in the calling thread. Nothing is allocated.
	int32_t threads = 1;
	// How the destination is written. Cached: ordinary stores. Streaming: each row piece
	// is converted into a small buffer in L1 and copied out with non-temporal stores,
	// which skip the read-for-ownership of destination lines (measured ~1.8x faster
	// writes to DRAM here) but leave the result out of cache. Auto: streaming when the
	// call writes more than kStreamingMinBytes, i.e. when the result would not stay
	// in cache for the renderer's upload anyway.
	enum class Stores : uint8_t { Auto, Cached, Streaming };
	Stores stores = Stores::Auto;
	bool force_scalar = false; // also forced by env PIXELPORT_FORCE_SCALAR=1
	Isa max_isa = Isa::Neon; // cap, for tests and benchmarks (the last value: no cap)
};

// Destination bytes of one call above which Stores::Auto streams: the larger of
// 64 MiB and half the last-level cache (sysconf), so 4K frames stay cached.
inline constexpr uint64_t kStreamingMinBytes = uint64_t{64} << 20;

// Below this many pixels per thread, extra threads cost more than they save: starting
// and joining a thread measured 20-60 us on the 2-core development VM, while 256K
// pixels take ~100 us at ~2.5 Gpixel/s (YUV rows, one core).
inline constexpr int64_t kMinPixelsPerThread = 256 * 1024;

// Convert whole rows [y0, y1) of src into the same rows of dst.
// Row rule (streaming): y0 must be a multiple of the format's vsub (even for 4:2:0:
// NV12, NV21, YUV420, YVU420, P010) and y1 a multiple of vsub or equal to height, so a
// chroma row is never split between calls. 0 <= y0 < y1 <= height.
Status convert_rows(const SrcImage &src, const DstImage &dst, int32_t y0, int32_t y1, const ConvertOptions &opt = {});

// Convert the damaged rectangles (image coordinates, same in src and dst). Each must
// lie inside the image. Rectangles are expanded outwards to the chroma grid (even x/y
// for 4:2:0, even x for 4:2:2; clamped to the image), so the written area can exceed
// the damage by one pixel per side. Overlaps are converted more than once (same
// result). An empty list converts nothing. Validation covers every rectangle before
// anything is written.
Status convert_rects(
	const SrcImage &src, const DstImage &dst, std::span<const Rect> damage, const ConvertOptions &opt = {});

// The whole image.
Status convert_image(const SrcImage &src, const DstImage &dst, const ConvertOptions &opt = {});

// Straight alpha and target choice (for the wp_color_representation glue). A buffer of
// format `src` whose alpha mode is `alpha` is shown as pick_target_for_alpha(src,
// renderer_formats, alpha): pick_target() for premultiplied alpha or sources without
// alpha; for straight alpha with alpha in the source, pick_converted_target(): a target
// reached through a premultiplying kernel (`src` itself where the core converts a format
// into itself: ARGB8888, ABGR2101010); 0 if there is none (RGBA8888, BGRA8888, RGBA4444, RGBA5551 and ABGR16161616 have no
// kernels: straight alpha cannot be honoured for them).
uint32_t pick_target_for_alpha(uint32_t src, std::span<const uint32_t> renderer_formats, AlphaMode alpha);

// True if a `src` buffer shown as `target` must go through convert_*(): the formats
// differ, or the alpha is straight and `src` has alpha (premultiplied during conversion,
// even when target == src). Call convert_*() with ConvertOptions::alpha set to `alpha`.
bool needs_conversion(uint32_t src, uint32_t target, AlphaMode alpha);

// True if a buffer of `fourcc` with straight alpha must be converted (premultiplied) even
// where the renderer takes the format: the format has alpha. Whether the core can do it:
// pick_target_for_alpha(fourcc, renderer, AlphaMode::Straight) != 0.
bool needs_conversion_for_alpha(uint32_t fourcc);

} // namespace pixelport::core
