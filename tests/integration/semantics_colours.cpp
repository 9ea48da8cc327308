// pixelport-semantics-client: solid colours in any format it tests, and what a correct compositor shows for them.
#include <drm_fourcc.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "reference.hpp"
#include "wayland_client.hpp"

#include "semantics_client.hpp"

namespace pixelport::semantics {

uint8_t clamp8(double v) { return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v + 0.5); }

// BT.601 limited range, as the plugin's default decode.
void rgb_to_yuv(uint32_t rgb, uint8_t *y, uint8_t *u, uint8_t *v) {
	double r = (rgb >> 16) & 0xff, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
	double yy = 0.299 * r + 0.587 * g + 0.114 * b;
	*y = clamp8(16 + yy * 219 / 255);
	*u = clamp8(128 + (b - yy) / 1.772 * 224 / 255);
	*v = clamp8(128 + (r - yy) / 1.402 * 224 / 255);
}

// Tightly packed (stride = min stride) bytes of a w x h buffer of one colour (0xRRGGBB, or for
// ARGB8888 and ARGB4444 0xAARRGGBB with alpha 0 meaning opaque); planes as in
// pixelport's wl_shm layout (which for these formats is also the stream's packing when the
// rectangle is the whole buffer... except NV12, packed below in row groups).
bool solid(uint32_t format, int w, int h, uint32_t rgb, std::vector<uint8_t> *out, size_t *stride) {
	uint8_t r = (rgb >> 16) & 0xff, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
	switch (format) {
	case DRM_FORMAT_XRGB8888:
	case DRM_FORMAT_ARGB8888: {
		*stride = static_cast<size_t>(w) * 4;
		out->assign(*stride * h, 0);
		uint8_t a = format == DRM_FORMAT_ARGB8888 && (rgb >> 24) != 0 ? rgb >> 24 : 0xff;
		for (size_t i = 0; i < out->size(); i += 4) {
			(*out)[i] = b, (*out)[i + 1] = g, (*out)[i + 2] = r, (*out)[i + 3] = a;
		}
		return true;
	}
	case DRM_FORMAT_RGB888: {
		*stride = (static_cast<size_t>(w) * 3 + 3) & ~size_t{3};
		out->assign(*stride * h, 0);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				uint8_t *p = out->data() + y * *stride + x * 3;
				p[0] = b, p[1] = g, p[2] = r;
			}
		return true;
	}
	case DRM_FORMAT_XRGB4444:
	case DRM_FORMAT_ARGB4444: {
		*stride = static_cast<size_t>(w) * 2;
		out->assign(*stride * h, 0);
		uint32_t a = format == DRM_FORMAT_ARGB4444 && (rgb >> 24) != 0 ? rgb >> 28 : 0xf;
		uint16_t v = static_cast<uint16_t>(a << 12 | (r >> 4) << 8 | (g >> 4) << 4 | (b >> 4));
		for (size_t i = 0; i < out->size(); i += 2) {
			(*out)[i] = static_cast<uint8_t>(v), (*out)[i + 1] = static_cast<uint8_t>(v >> 8);
		}
		return true;
	}
	case DRM_FORMAT_NV12: {
		*stride = static_cast<size_t>(w);
		out->assign(*stride * h + *stride * (h / 2), 0);
		uint8_t yy, u, v;
		rgb_to_yuv(rgb, &yy, &u, &v);
		memset(out->data(), yy, *stride * h);
		for (size_t i = *stride * h; i < out->size(); i += 2) (*out)[i] = u, (*out)[i + 1] = v;
		return true;
	}
	default: return false;
	}
}

// The stream's packing of a whole buffer: for NV12, each pair of luma rows then one UV row.
std::vector<uint8_t> stream_packing(uint32_t format, int w, int h, const std::vector<uint8_t> &shm, size_t stride) {
	if (format != DRM_FORMAT_NV12) {
		size_t row = format == DRM_FORMAT_RGB888                                 ? w * 3
			: format == DRM_FORMAT_XRGB4444 || format == DRM_FORMAT_ARGB4444 ? w * 2
											 : w * 4;
		std::vector<uint8_t> out;
		for (int y = 0; y < h; y++)
			out.insert(out.end(), shm.begin() + y * stride, shm.begin() + y * stride + row);
		return out;
	}
	std::vector<uint8_t> out;
	const uint8_t *uv = shm.data() + stride * h;
	for (int y = 0; y < h; y += 2) {
		out.insert(out.end(), shm.begin() + y * stride, shm.begin() + y * stride + w);
		out.insert(out.end(), shm.begin() + (y + 1) * stride, shm.begin() + (y + 1) * stride + w);
		out.insert(out.end(), uv + (y / 2) * stride, uv + (y / 2) * stride + w);
	}
	return out;
}

// What a correct compositor shows for `rgb` drawn in `format` (the reference decoder's
// reading of the very bytes we send).
// `straight`: the bytes' colour is straight alpha (wp_color_representation).
uint32_t shown(uint32_t format, uint32_t rgb, bool straight) {
	std::vector<uint8_t> bytes;
	size_t stride = 0;
	solid(format, kBlock, kBlock, rgb, &bytes, &stride);
	std::vector<uint32_t> px;
	if (straight) {
		test::reference_rgb_straight(format, kBlock, kBlock, stride, bytes.data(), &px);
	} else {
		test::reference_rgb(format, kBlock, kBlock, stride, bytes.data(), &px);
	}
	return px.empty() ? 0xdeadbe : px[kBlock * (kBlock / 2) + kBlock / 2];
}

} // namespace pixelport::semantics
