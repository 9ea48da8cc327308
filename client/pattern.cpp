#include "pattern.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <drm_fourcc.h>

#include "pixelport/core/format.hpp"

namespace pixelport {

namespace {

struct Rgba {
	double r, g, b, a; // premultiplied, 0..1
};

Rgba at(int x, int y, uint32_t seed) {
	uint32_t p = pattern_argb(static_cast<uint32_t>(x), static_cast<uint32_t>(y), seed);
	return {((p >> 16) & 0xff) / 255.0, ((p >> 8) & 0xff) / 255.0, (p & 0xff) / 255.0, (p >> 24) / 255.0};
}

uint32_t q(double v, int bits) { // quantise 0..1 to `bits`, round to nearest
	double max = (1 << bits) - 1;
	return static_cast<uint32_t>(std::lround(std::clamp(v, 0.0, 1.0) * max));
}

void put16(uint8_t *p, uint32_t v) {
	p[0] = v & 0xff;
	p[1] = (v >> 8) & 0xff;
}
void put32(uint8_t *p, uint32_t v) {
	for (int i = 0; i < 4; i++) p[i] = (v >> (8 * i)) & 0xff;
}

uint16_t to_half(double v) { // 0..1 only, round to nearest
	if (v <= 0) return 0;
	int e;
	double m = std::frexp(v, &e); // v = m * 2^e, m in [0.5, 1)
	int exp = e - 1 + 15;
	if (exp <= 0) { // subnormal
		return static_cast<uint16_t>(std::lround(v / std::ldexp(1.0, -24)));
	}
	uint32_t mant = static_cast<uint32_t>(std::lround((m * 2 - 1) * 1024));
	if (mant == 1024) {
		mant = 0;
		exp++;
	}
	return static_cast<uint16_t>(exp << 10 | mant);
}

// A colour at reduced alpha precision stays premultiplied: channels never exceed alpha.
struct Quant {
	uint32_t r, g, b, a;
};
Quant quant_premul(const Rgba &c, int cbits, int abits, bool has_alpha) {
	if (!has_alpha) return {q(c.r, cbits), q(c.g, cbits), q(c.b, cbits), (1u << abits) - 1};
	uint32_t a = q(c.a, abits);
	double amax = static_cast<double>(a) / ((1 << abits) - 1);
	return {q(std::min(c.r, amax), cbits), q(std::min(c.g, amax), cbits), q(std::min(c.b, amax), cbits), a};
}

// BT.601 limited range (ITU-R BT.601-7): Kr 0.299, Kb 0.114.
constexpr double kKr = 0.299, kKb = 0.114, kKg = 1 - kKr - kKb;
struct Yuv {
	double y, cb, cr; // y 0..1, cb/cr -0.5..0.5
};
Yuv to_yuv(const Rgba &c) {
	double y = kKr * c.r + kKg * c.g + kKb * c.b;
	return {y, (c.b - y) / (2 * (1 - kKb)), (c.r - y) / (2 * (1 - kKr))};
}
uint32_t y_code(double y, int bits) {
	double s = 1 << (bits - 8);
	return static_cast<uint32_t>(std::lround((16 + 219 * y) * s));
}
uint32_t c_code(double c, int bits) {
	double s = 1 << (bits - 8);
	return static_cast<uint32_t>(std::lround((128 + 224 * c) * s));
}

} // namespace

bool shm_layout(uint32_t fmt, int width, int height, size_t stride, ShmLayout *out) {
	*out = {};
	const core::FormatInfo *info = core::format_info(fmt);
	core::ShmPlanes planes;
	if (info == nullptr || width <= 0 || height <= 0 ||
		!core::shm_planes(*info, static_cast<uint32_t>(width), static_cast<uint32_t>(height), stride, &planes))
		return false;
	out->planes = info->num_planes;
	for (int p = 0; p < info->num_planes; p++) {
		out->offset[p] = planes.offset[p];
		out->stride[p] = planes.stride[p];
	}
	out->size = planes.size;
	return true;
}

size_t shm_min_stride(uint32_t fmt, int width) {
	const core::FormatInfo *info = core::format_info(fmt);
	if (info == nullptr || width <= 0) return 0;
	return core::shm_min_stride(*info, static_cast<uint32_t>(width), 4);
}

bool encode_pattern(uint32_t fmt, int width, int height, size_t stride, uint8_t *base, uint32_t seed, int rx, int ry,
	int rw, int rh) {
	ShmLayout l;
	if (!shm_layout(fmt, width, height, stride, &l)) return false;
	int x0 = std::max(rx, 0), y0 = std::max(ry, 0);
	int x1 = std::min(rx + rw, width), y1 = std::min(ry + rh, height);
	for (int y = y0; y < y1; y++) {
		uint8_t *row = base + l.offset[0] + l.stride[0] * static_cast<size_t>(y);
		for (int x = x0; x < x1; x++) {
			Rgba c = at(x, y, seed);
			uint32_t junk = (static_cast<uint32_t>(x) * 37u + static_cast<uint32_t>(y) * 11u) & 0xff;
			Quant v;
			switch (fmt) {
			case DRM_FORMAT_ARGB8888:
			case DRM_FORMAT_XRGB8888:
			case DRM_FORMAT_ABGR8888:
			case DRM_FORMAT_XBGR8888:
			case DRM_FORMAT_RGBA8888:
			case DRM_FORMAT_RGBX8888:
			case DRM_FORMAT_BGRA8888:
			case DRM_FORMAT_BGRX8888: {
				bool alpha = fmt == DRM_FORMAT_ARGB8888 || fmt == DRM_FORMAT_ABGR8888 ||
					fmt == DRM_FORMAT_RGBA8888 || fmt == DRM_FORMAT_BGRA8888;
				v = quant_premul(c, 8, 8, alpha);
				uint32_t a = alpha ? v.a : junk, word = 0;
				if (fmt == DRM_FORMAT_ARGB8888 || fmt == DRM_FORMAT_XRGB8888)
					word = a << 24 | v.r << 16 | v.g << 8 | v.b;
				if (fmt == DRM_FORMAT_ABGR8888 || fmt == DRM_FORMAT_XBGR8888)
					word = a << 24 | v.b << 16 | v.g << 8 | v.r;
				if (fmt == DRM_FORMAT_RGBA8888 || fmt == DRM_FORMAT_RGBX8888)
					word = v.r << 24 | v.g << 16 | v.b << 8 | a;
				if (fmt == DRM_FORMAT_BGRA8888 || fmt == DRM_FORMAT_BGRX8888)
					word = v.b << 24 | v.g << 16 | v.r << 8 | a;
				put32(row + 4 * x, word);
				break;
			}
			case DRM_FORMAT_RGB888:
			case DRM_FORMAT_BGR888: {
				v = quant_premul(c, 8, 8, false);
				uint8_t *p = row + 3 * x;
				// RGB888 is [23:0] R:G:B little endian: bytes B, G, R.
				p[0] = static_cast<uint8_t>(fmt == DRM_FORMAT_RGB888 ? v.b : v.r);
				p[1] = static_cast<uint8_t>(v.g);
				p[2] = static_cast<uint8_t>(fmt == DRM_FORMAT_RGB888 ? v.r : v.b);
				break;
			}
			case DRM_FORMAT_RGB565:
			case DRM_FORMAT_BGR565: {
				uint32_t r = q(c.r, 5), g = q(c.g, 6), b = q(c.b, 5);
				put16(row + 2 * x,
					fmt == DRM_FORMAT_RGB565 ? (r << 11 | g << 5 | b) : (b << 11 | g << 5 | r));
				break;
			}
			case DRM_FORMAT_XRGB1555:
			case DRM_FORMAT_ARGB1555: {
				bool alpha = fmt == DRM_FORMAT_ARGB1555;
				v = quant_premul(c, 5, 1, alpha);
				uint32_t a = alpha ? v.a : (junk & 1);
				put16(row + 2 * x, a << 15 | v.r << 10 | v.g << 5 | v.b);
				break;
			}
			case DRM_FORMAT_XRGB4444:
			case DRM_FORMAT_ARGB4444: {
				bool alpha = fmt == DRM_FORMAT_ARGB4444;
				v = quant_premul(c, 4, 4, alpha);
				uint32_t a = alpha ? v.a : (junk & 0xf);
				put16(row + 2 * x, a << 12 | v.r << 8 | v.g << 4 | v.b);
				break;
			}
			case DRM_FORMAT_XRGB2101010:
			case DRM_FORMAT_ARGB2101010:
			case DRM_FORMAT_XBGR2101010:
			case DRM_FORMAT_ABGR2101010: {
				bool alpha = fmt == DRM_FORMAT_ARGB2101010 || fmt == DRM_FORMAT_ABGR2101010;
				bool rgb = fmt == DRM_FORMAT_XRGB2101010 || fmt == DRM_FORMAT_ARGB2101010;
				v = quant_premul(c, 10, 2, alpha);
				uint32_t a = alpha ? v.a : (junk & 3);
				put32(row + 4 * x, a << 30 | (rgb ? v.r : v.b) << 20 | v.g << 10 | (rgb ? v.b : v.r));
				break;
			}
			case DRM_FORMAT_XBGR16161616F:
			case DRM_FORMAT_ABGR16161616F: {
				bool alpha = fmt == DRM_FORMAT_ABGR16161616F;
				uint8_t *p = row + 8 * x;
				put16(p + 0, to_half(c.r));
				put16(p + 2, to_half(c.g));
				put16(p + 4, to_half(c.b));
				put16(p + 6, alpha ? to_half(c.a) : junk);
				break;
			}
			case DRM_FORMAT_ABGR16161616: { // wlroots 0.20's pixman renderer shows it natively
				v = quant_premul(c, 16, 16, true);
				uint8_t *p = row + 8 * x;
				put16(p + 0, v.r);
				put16(p + 2, v.g);
				put16(p + 4, v.b);
				put16(p + 6, v.a);
				break;
			}
			case DRM_FORMAT_YUYV:
			case DRM_FORMAT_UYVY: {
				Yuv yuv = to_yuv(c);
				uint8_t *p = row + (x / 2) * 4;
				bool yuyv = fmt == DRM_FORMAT_YUYV;
				p[yuyv ? (x % 2) * 2 : 1 + (x % 2) * 2] = static_cast<uint8_t>(y_code(yuv.y, 8));
				if (x % 2 == 0) { // chroma of the pair from its left pixel
					p[yuyv ? 1 : 0] = static_cast<uint8_t>(c_code(yuv.cb, 8));
					p[yuyv ? 3 : 2] = static_cast<uint8_t>(c_code(yuv.cr, 8));
				}
				break;
			}
			case DRM_FORMAT_NV12:
			case DRM_FORMAT_NV21:
			case DRM_FORMAT_NV16:
			case DRM_FORMAT_YUV420:
			case DRM_FORMAT_YVU420:
			case DRM_FORMAT_P010: {
				Yuv yuv = to_yuv(c);
				bool p010 = fmt == DRM_FORMAT_P010;
				int bits = p010 ? 10 : 8;
				if (p010) {
					put16(row + 2 * x, y_code(yuv.y, 10) << 6);
				} else {
					row[x] = static_cast<uint8_t>(y_code(yuv.y, 8));
				}
				int vsub = fmt == DRM_FORMAT_NV16 ? 1 : 2;
				if (x % 2 != 0 || y % vsub != 0) break; // chroma from the block's top-left pixel
				uint32_t cb = c_code(yuv.cb, bits), cr = c_code(yuv.cr, bits);
				size_t cx = static_cast<size_t>(x / 2), cy = static_cast<size_t>(y / vsub);
				if (l.planes == 3) {
					bool yu12 = fmt == DRM_FORMAT_YUV420;
					base[l.offset[yu12 ? 1 : 2] + l.stride[1] * cy + cx] = static_cast<uint8_t>(cb);
					base[l.offset[yu12 ? 2 : 1] + l.stride[1] * cy + cx] = static_cast<uint8_t>(cr);
				} else if (p010) {
					uint8_t *cp = base + l.offset[1] + l.stride[1] * cy + cx * 4;
					put16(cp, cb << 6);
					put16(cp + 2, cr << 6);
				} else {
					uint8_t *cp = base + l.offset[1] + l.stride[1] * cy + cx * 2;
					bool nv21 = fmt == DRM_FORMAT_NV21;
					cp[0] = static_cast<uint8_t>(nv21 ? cr : cb);
					cp[1] = static_cast<uint8_t>(nv21 ? cb : cr);
				}
				break;
			}
			default: return false;
			}
		}
	}
	return true;
}

} // namespace pixelport
