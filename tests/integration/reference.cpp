#include "reference.hpp"

#include <algorithm>
#include <cmath>

#include <drm_fourcc.h>

#include "pattern.hpp"

namespace pixelport::test {

namespace {

uint32_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
uint32_t get32(const uint8_t *p) { return get16(p) | get16(p + 2) << 16; }

double half_to_double(uint32_t h) {
	int exp = (h >> 10) & 0x1f;
	int mant = h & 0x3ff;
	double v = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
	return (h & 0x8000) ? -v : v;
}

// Low-precision channels widen by replicating their high bits (31 -> 255 for 5 bits), as
// pixman does: not the same as round(v * 255 / 31).
uint32_t widen(uint32_t v, int bits) {
	uint32_t out = 0;
	for (int shift = 8 - bits; shift > -bits; shift -= bits) out |= shift >= 0 ? v << shift : v >> -shift;
	return out & 0xff;
}
uint32_t rgb8(uint32_t r, uint32_t g, uint32_t b) { return r << 16 | g << 8 | b; }

uint32_t pack(double r, double g, double b) { // 0..1 each -> 0xRRGGBB, round to nearest
	auto c = [](double v) { return static_cast<uint32_t>(std::lround(std::clamp(v, 0.0, 1.0) * 255)); };
	return c(r) << 16 | c(g) << 8 | c(b);
}

// Y'CbCr -> R'G'B' with luma weights kr, kb. Limited range: Y 16..235, Cb/Cr 16..240 (8-bit;
// x4 for 10-bit); full range: Y 0..2^n-1, Cb/Cr centred on 2^(n-1), scaled by 2^n-1 (BT.2100).
uint32_t yuv_to_rgb(double y, double cb, double cr, int bits, const YuvColour &c) {
	double yn, u, v;
	if (c.full) {
		double max = (1 << bits) - 1, mid = 1 << (bits - 1);
		yn = y / max, u = (cb - mid) / max, v = (cr - mid) / max;
	} else {
		double s = 1 << (bits - 8);
		yn = (y / s - 16) / 219, u = (cb / s - 128) / 224, v = (cr / s - 128) / 224;
	}
	const double kr = c.kr, kb = c.kb, kg = 1 - kr - kb;
	double r = yn + 2 * (1 - kr) * v;
	double b = yn + 2 * (1 - kb) * u;
	double g = (yn - kr * r - kb * b) / kg;
	return pack(r, g, b);
}

} // namespace

std::vector<uint32_t> pattern_reference(uint32_t fmt, int width, int height, uint32_t seed) {
	size_t stride = shm_min_stride(fmt, width);
	ShmLayout layout;
	std::vector<uint32_t> rgb;
	if (!shm_layout(fmt, width, height, stride, &layout)) return rgb;
	std::vector<uint8_t> bytes(layout.size, 0xa5);
	encode_pattern(fmt, width, height, stride, bytes.data(), seed, 0, 0, width, height);
	reference_rgb(fmt, width, height, stride, bytes.data(), &rgb);
	return rgb;
}

int reference_tolerance(uint32_t fmt) {
	switch (fmt) {
	case DRM_FORMAT_P010: return 2; // 10-bit YUV -> 10-bit RGB -> 8 bits: two roundings
	case DRM_FORMAT_YUYV:
	case DRM_FORMAT_UYVY:
	case DRM_FORMAT_NV12:
	case DRM_FORMAT_NV21:
	case DRM_FORMAT_NV16:
	case DRM_FORMAT_YUV420:
	case DRM_FORMAT_YVU420:
	case DRM_FORMAT_XRGB2101010:
	case DRM_FORMAT_ARGB2101010:
	case DRM_FORMAT_XBGR2101010:
	case DRM_FORMAT_ABGR2101010:
	case DRM_FORMAT_XBGR16161616F:
	case DRM_FORMAT_ABGR16161616F: return 1; // fixed-point matrix or 10-bit -> 8-bit rounding in the renderer
	default: return 0;
	}
}

YuvColour YuvColour::bt601(bool full) { return {0.299, 0.114, full}; }
YuvColour YuvColour::bt709(bool full) { return {0.2126, 0.0722, full}; }
YuvColour YuvColour::bt2020(bool full) { return {0.2627, 0.0593, full}; }

YuvColour YuvColour::default_for(int height) {
	// GStreamer's rule for video without colorimetry (video-info.c, set_default_colorimetry).
	if (height >= 2160) return bt2020(false);
	return height > 576 ? bt709(false) : bt601(false);
}

bool reference_rgb(uint32_t fmt, int width, int height, size_t stride, const uint8_t *base, std::vector<uint32_t> *out,
	const YuvColour *colour) {
	const YuvColour yc = colour != nullptr ? *colour : YuvColour::default_for(height);
	ShmLayout l;
	if (!shm_layout(fmt, width, height, stride, &l)) return false;
	out->assign(static_cast<size_t>(width) * static_cast<size_t>(height), 0);
	for (int y = 0; y < height; y++) {
		const uint8_t *row = base + l.stride[0] * static_cast<size_t>(y);
		for (int x = 0; x < width; x++) {
			uint32_t &o = (*out)[static_cast<size_t>(y) * width + x];
			switch (fmt) {
			case DRM_FORMAT_ARGB8888:
			case DRM_FORMAT_XRGB8888: o = get32(row + 4 * x) & 0xffffff; break;
			case DRM_FORMAT_ABGR8888:
			case DRM_FORMAT_XBGR8888: {
				uint32_t v = get32(row + 4 * x);
				o = (v & 0xff) << 16 | (v & 0xff00) | ((v >> 16) & 0xff);
				break;
			}
			case DRM_FORMAT_RGBA8888:
			case DRM_FORMAT_RGBX8888: o = get32(row + 4 * x) >> 8; break;
			case DRM_FORMAT_BGRA8888:
			case DRM_FORMAT_BGRX8888: {
				uint32_t v = get32(row + 4 * x);
				o = ((v >> 8) & 0xff) << 16 | ((v >> 16) & 0xff) << 8 | (v >> 24);
				break;
			}
			case DRM_FORMAT_RGB888: { // [23:0] R:G:B little endian
				const uint8_t *p = row + 3 * x;
				o = static_cast<uint32_t>(p[2]) << 16 | p[1] << 8 | p[0];
				break;
			}
			case DRM_FORMAT_BGR888: {
				const uint8_t *p = row + 3 * x;
				o = static_cast<uint32_t>(p[0]) << 16 | p[1] << 8 | p[2];
				break;
			}
			case DRM_FORMAT_RGB565:
			case DRM_FORMAT_BGR565: {
				uint32_t v = get16(row + 2 * x);
				uint32_t hi = widen(v >> 11, 5), g = widen((v >> 5) & 63, 6), lo = widen(v & 31, 5);
				o = fmt == DRM_FORMAT_RGB565 ? rgb8(hi, g, lo) : rgb8(lo, g, hi);
				break;
			}
			case DRM_FORMAT_XRGB1555:
			case DRM_FORMAT_ARGB1555: {
				uint32_t v = get16(row + 2 * x);
				o = rgb8(widen((v >> 10) & 31, 5), widen((v >> 5) & 31, 5), widen(v & 31, 5));
				break;
			}
			case DRM_FORMAT_XRGB4444:
			case DRM_FORMAT_ARGB4444: {
				uint32_t v = get16(row + 2 * x);
				o = rgb8(widen((v >> 8) & 15, 4), widen((v >> 4) & 15, 4), widen(v & 15, 4));
				break;
			}
			case DRM_FORMAT_XRGB2101010:
			case DRM_FORMAT_ARGB2101010:
			case DRM_FORMAT_XBGR2101010:
			case DRM_FORMAT_ABGR2101010: {
				uint32_t v = get32(row + 4 * x);
				double hi = ((v >> 20) & 1023) / 1023.0, g = ((v >> 10) & 1023) / 1023.0,
				       lo = (v & 1023) / 1023.0;
				bool rgb = fmt == DRM_FORMAT_XRGB2101010 || fmt == DRM_FORMAT_ARGB2101010;
				o = rgb ? pack(hi, g, lo) : pack(lo, g, hi);
				break;
			}
			case DRM_FORMAT_XBGR16161616F:
			case DRM_FORMAT_ABGR16161616F: {
				const uint8_t *p = row + 8 * x;
				o = pack(half_to_double(get16(p)), half_to_double(get16(p + 2)),
					half_to_double(get16(p + 4)));
				break;
			}
			case DRM_FORMAT_ABGR16161616: {
				const uint8_t *p = row + 8 * x;
				o = pack(get16(p) / 65535.0, get16(p + 2) / 65535.0, get16(p + 4) / 65535.0);
				break;
			}
			case DRM_FORMAT_YUYV:
			case DRM_FORMAT_UYVY: {
				const uint8_t *p = row + (x / 2) * 4;
				bool yuyv = fmt == DRM_FORMAT_YUYV;
				double yv = p[yuyv ? (x % 2) * 2 : 1 + (x % 2) * 2];
				o = yuv_to_rgb(yv, p[yuyv ? 1 : 0], p[yuyv ? 3 : 2], 8, yc);
				break;
			}
			default: { // semi-planar and planar YUV
				int vsub = fmt == DRM_FORMAT_NV16 ? 1 : 2;
				size_t cx = static_cast<size_t>(x / 2), cy = static_cast<size_t>(y / vsub);
				if (fmt == DRM_FORMAT_P010) {
					const uint8_t *c = base + l.offset[1] + l.stride[1] * cy + cx * 4;
					o = yuv_to_rgb(
						get16(row + 2 * x) >> 6, get16(c) >> 6, get16(c + 2) >> 6, 10, yc);
				} else if (l.planes == 3) {
					bool yu12 = fmt == DRM_FORMAT_YUV420;
					double cb = base[l.offset[yu12 ? 1 : 2] + l.stride[1] * cy + cx];
					double cr = base[l.offset[yu12 ? 2 : 1] + l.stride[1] * cy + cx];
					o = yuv_to_rgb(row[x], cb, cr, 8, yc);
				} else if (fmt == DRM_FORMAT_NV12 || fmt == DRM_FORMAT_NV21 || fmt == DRM_FORMAT_NV16) {
					const uint8_t *c = base + l.offset[1] + l.stride[1] * cy + cx * 2;
					bool nv21 = fmt == DRM_FORMAT_NV21;
					o = yuv_to_rgb(row[x], nv21 ? c[1] : c[0], nv21 ? c[0] : c[1], 8, yc);
				} else {
					return false;
				}
			}
			}
		}
	}
	return true;
}

bool reference_rgb_straight(
	uint32_t fmt, int width, int height, size_t stride, const uint8_t *base, std::vector<uint32_t> *out) {
	// Fields of the little-endian pixel word: colour channels at their own precision, alpha.
	struct Fields {
		int cbits, abits; // bits per colour channel, bits of alpha
		int bytes; // per pixel
		bool bgr; // the lowest field is red (A:B:G:R), else blue (A:R:G:B)
	};
	Fields f;
	switch (fmt) {
	case DRM_FORMAT_ARGB8888: f = {8, 8, 4, false}; break;
	case DRM_FORMAT_ABGR8888: f = {8, 8, 4, true}; break;
	case DRM_FORMAT_ARGB4444: f = {4, 4, 2, false}; break;
	case DRM_FORMAT_ARGB1555: f = {5, 1, 2, false}; break;
	case DRM_FORMAT_ARGB2101010: f = {10, 2, 4, false}; break;
	case DRM_FORMAT_ABGR2101010: f = {10, 2, 4, true}; break;
	case DRM_FORMAT_RGBA8888:
	case DRM_FORMAT_BGRA8888:
	case DRM_FORMAT_RGBA4444:
	case DRM_FORMAT_RGBA5551:
	case DRM_FORMAT_ABGR16161616:
	case DRM_FORMAT_ABGR16161616F: return false;
	default: return reference_rgb(fmt, width, height, stride, base, out); // no alpha: nothing to do
	}
	if (stride < static_cast<size_t>(width) * f.bytes) return false;
	out->assign(static_cast<size_t>(width) * static_cast<size_t>(height), 0);
	// Premultiplied in 8 bits (low-precision fields widened by bit replication first, as the
	// opaque decode does), or in 10 bits with 2-bit alpha, then shown in 8 bits.
	const bool deep = f.cbits == 10;
	const double cmax = deep ? 1023 : 255, amax = deep ? 3 : 255;
	for (int y = 0; y < height; y++) {
		const uint8_t *row = base + stride * static_cast<size_t>(y);
		for (int x = 0; x < width; x++) {
			const uint8_t *p = row + static_cast<size_t>(x) * f.bytes;
			uint32_t v = f.bytes == 4 ? get32(p) : get16(p);
			uint32_t cmask = (1u << f.cbits) - 1;
			uint32_t a = v >> (3 * f.cbits) & ((1u << f.abits) - 1);
			uint32_t c[3] = {
				v >> (2 * f.cbits) & cmask, v >> f.cbits & cmask, v & cmask}; // high field first
			if (!deep) {
				a = widen(a, f.abits);
				for (uint32_t &ch : c) ch = widen(ch, f.cbits);
			}
			double pm[3];
			for (int i = 0; i < 3; i++) pm[i] = std::lround(c[i] * static_cast<double>(a) / amax) / cmax;
			// pm[0] is red for A:R:G:B, blue for A:B:G:R.
			(*out)[static_cast<size_t>(y) * width + x] =
				f.bgr ? pack(pm[2], pm[1], pm[0]) : pack(pm[0], pm[1], pm[2]);
		}
	}
	return true;
}

} // namespace pixelport::test
