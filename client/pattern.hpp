// Deterministic test patterns, written in any pixel format our wl_shm serves.
//
// The pattern is premultiplied ARGB (pattern_argb); encode_pattern() writes it in a DRM
// format with straightforward float formulas (no lookup tables, no SIMD), so tests can
// decode the bytes again with an independent reference and compare with the screen.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pixelport {

/**
 * A premultiplied ARGB8888 value for pixel (x, y): alpha in [0x40, 0xff], each colour
 * channel <= alpha (valid premultiplied), all channels varying with x and y so that a
 * swapped channel, an off-by-one row or a wrong stride shows up.
 */
inline uint32_t pattern_argb(uint32_t x, uint32_t y, uint32_t seed = 0) {
	uint32_t h = (x * 0x9e3779b1u) ^ (y * 0x85ebca77u) ^ (seed * 0xc2b2ae3du);
	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	uint32_t a = 0x40 + (h & 0xff) % 0xc0;
	if ((x + y) % 3 == 0) {
		a = 0xff; // plenty of opaque pixels too
	}
	uint32_t r = ((x * 7 + y * 3 + (h >> 8)) & 0xff) * a / 255;
	uint32_t g = ((x ^ y ^ (h >> 16)) & 0xff) * a / 255;
	uint32_t b = ((y * 5 + x + (h >> 24)) & 0xff) * a / 255;
	return a << 24 | r << 16 | g << 8 | b;
}

/** Where the planes of a wl_shm buffer lie: core::shm_planes(), in the client's types. */
struct ShmLayout {
	int planes = 0;
	size_t offset[3] = {};
	size_t stride[3] = {};
	size_t size = 0; // total bytes
};

/** Layout for `drm_format` (DRM fourcc) at width x height with plane-0 `stride`; false if unknown or too small. */
bool shm_layout(uint32_t drm_format, int width, int height, size_t stride, ShmLayout *out);

/** Smallest plane-0 stride for `drm_format` at `width` with every plane's stride a multiple of 4; 0 if unknown. */
size_t shm_min_stride(uint32_t drm_format, int width);

/**
 * Writes pattern_argb(x, y, seed) for the pixels of rectangle (rx, ry, rw, rh) into a buffer
 * of `drm_format` laid out as shm_layout() says. Opaque formats take the colour channels as
 * they are; alpha formats keep them premultiplied at their alpha precision. Chroma of a
 * subsampled block comes from its top-left pixel, so rectangles should sit on the chroma
 * grid. X bits are filled with junk. YUV is BT.601 limited range. Returns false if unknown.
 */
bool encode_pattern(uint32_t drm_format, int width, int height, size_t stride, uint8_t *base, uint32_t seed, int rx,
	int ry, int rw, int rh);

} // namespace pixelport
