// pixelport-commit-fuzz: the solid colours its buffers carry, and what a correct compositor shows
// for each (the independent reference decoder).
#include <cstdlib>
#include <cstring>

#include "reference.hpp"

#include "commit_fuzz.hpp"

namespace pixelport::commit_fuzz {

// ---- solid colours ---------------------------------------------------------------------------

uint8_t clamp8(double v) { return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v + 0.5); }

// One pixel (two for NV12's chroma) of `rgb` in `format`: what every row of the buffer repeats.
// NV12: BT.601 limited range; the reference reads it back the way the compositor does.
size_t min_stride(uint32_t format, int w) {
	switch (format) {
	case DRM_FORMAT_RGB888: return (static_cast<size_t>(w) * 3 + 3) & ~size_t{3};
	case DRM_FORMAT_XRGB4444: return static_cast<size_t>(w) * 2;
	case DRM_FORMAT_NV12: return static_cast<size_t>(w);
	default: return static_cast<size_t>(w) * 4;
	}
}
size_t buffer_bytes(uint32_t format, int w, int h) {
	size_t s = min_stride(format, w) * static_cast<size_t>(h);
	return format == DRM_FORMAT_NV12 ? s + min_stride(format, w) * static_cast<size_t>(h / 2) : s;
}

// Writes a w x h buffer of `rgb` at `base` (min stride; NV12: luma plane, then the UV plane).
void fill(uint32_t format, int w, int h, uint32_t rgb, uint8_t *base) {
	const uint8_t r = rgb >> 16, g = rgb >> 8, b = rgb;
	const size_t stride = min_stride(format, w);
	std::vector<uint8_t> row(stride, 0);
	if (format == DRM_FORMAT_NV12) {
		double yy = 0.299 * r + 0.587 * g + 0.114 * b;
		memset(base, clamp8(16 + yy * 219 / 255), stride * h);
		uint8_t u = clamp8(128 + (b - yy) / 1.772 * 224 / 255), v = clamp8(128 + (r - yy) / 1.402 * 224 / 255);
		for (size_t x = 0; x < stride; x += 2) row[x] = u, row[x + 1] = v;
		for (int y = 0; y < h / 2; y++) memcpy(base + stride * (h + y), row.data(), stride);
		return;
	}
	for (int x = 0; x < w; x++) {
		if (format == DRM_FORMAT_RGB888) {
			row[3 * x] = b, row[3 * x + 1] = g, row[3 * x + 2] = r;
		} else if (format == DRM_FORMAT_XRGB4444) {
			row[2 * x] = static_cast<uint8_t>((g & 0xf0) | b >> 4), row[2 * x + 1] = 0xf0 | r >> 4;
		} else {
			row[4 * x] = b, row[4 * x + 1] = g, row[4 * x + 2] = r, row[4 * x + 3] = 0xff;
		}
	}
	for (int y = 0; y < h; y++) memcpy(base + stride * y, row.data(), stride);
}

// What a correct compositor shows for `rgb` written into a w x h buffer: the independent
// reference decoder's reading of those bytes (YUV's default matrix depends on the height).
uint32_t expected(uint32_t format, uint32_t rgb, int h) {
	constexpr int k = 8;
	std::vector<uint8_t> bytes(buffer_bytes(format, k, k));
	fill(format, k, k, rgb, bytes.data());
	std::vector<uint32_t> px;
	const test::YuvColour colour = test::YuvColour::default_for(h);
	test::reference_rgb(format, k, k, min_stride(format, k), bytes.data(), &px, &colour);
	return px.empty() ? 0xdeadbe : px[k * k / 2 + k / 2];
}

bool close_to(uint32_t a, uint32_t b, int tol) {
	for (int shift : {16, 8, 0}) {
		if (std::abs(static_cast<int>((a >> shift) & 0xff) - static_cast<int>((b >> shift) & 0xff)) > tol)
			return false;
	}
	return true;
}

} // namespace pixelport::commit_fuzz
