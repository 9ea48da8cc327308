// Deterministic test patterns shared by the clients and the tests that check the screen.
#pragma once

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

} // namespace pixelport
