// The scalar reference against hand-computed values for known colours.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "pixelport/core/convert.hpp"
#include "test_support.hpp"

namespace pixelport::core {
namespace {

namespace f = fourcc;

uint32_t argb(uint32_t a, uint32_t r, uint32_t g, uint32_t b) { return a << 24 | r << 16 | g << 8 | b; }

// Converts one pixel (bytes of the source unit) with the scalar path.
uint32_t convert_pixel(uint32_t src_code, std::vector<uint8_t> unit, uint32_t dst_code) {
	auto src = test::make_src(src_code, 1, 1, 0, 0);
	std::memcpy(const_cast<uint8_t *>(src.img.planes[0].data), unit.data(), unit.size());
	auto dst = test::make_dst(dst_code, 1, 1, 0, 0);
	ConvertOptions o;
	o.force_scalar = true;
	EXPECT_EQ(convert_image(src.img, dst.img, o), Status::Ok);
	return dst.px(0, 0);
}

std::vector<uint8_t> le16(uint32_t v) { return {uint8_t(v), uint8_t(v >> 8)}; }
std::vector<uint8_t> le32(uint32_t v) { return {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)}; }
std::vector<uint8_t> half4(uint16_t r, uint16_t g, uint16_t b, uint16_t a) {
	std::vector<uint8_t> out;
	for (uint16_t h : {r, g, b, a}) out.insert(out.end(), {uint8_t(h), uint8_t(h >> 8)});
	return out;
}

struct RgbCase {
	const char *what;
	uint32_t src;
	std::vector<uint8_t> unit;
	uint32_t argb8888; // expected with the alpha-keeping target; XRGB8888 gets alpha 0xff
};

// Expected values worked out by hand from the layouts in drm_fourcc.h and the
// expansion rules in convert.hpp.
const std::vector<RgbCase> &rgb_cases() {
	static const std::vector<RgbCase> cases = {
		{"RGB888 red", f::RGB888, {0, 0, 255}, argb(255, 255, 0, 0)},
		{"RGB888 green", f::RGB888, {0, 255, 0}, argb(255, 0, 255, 0)},
		{"RGB888 blue", f::RGB888, {255, 0, 0}, argb(255, 0, 0, 255)},
		{"RGB888 grey", f::RGB888, {128, 128, 128}, argb(255, 128, 128, 128)},
		{"BGR888 red", f::BGR888, {255, 0, 0}, argb(255, 255, 0, 0)},
		{"BGR888 blue", f::BGR888, {0, 0, 255}, argb(255, 0, 0, 255)},
		{"ABGR8888 red half alpha", f::ABGR8888, {128, 0, 0, 128}, argb(128, 128, 0, 0)},
		{"XBGR8888 blue", f::XBGR8888, {0, 0, 255, 0}, argb(255, 0, 0, 255)},
		{"RGB565 red", f::RGB565, le16(0xf800), argb(255, 255, 0, 0)},
		{"RGB565 green", f::RGB565, le16(0x07e0), argb(255, 0, 255, 0)},
		{"RGB565 blue", f::RGB565, le16(0x001f), argb(255, 0, 0, 255)},
		{"RGB565 white", f::RGB565, le16(0xffff), argb(255, 255, 255, 255)},
		{"RGB565 black", f::RGB565, le16(0x0000), argb(255, 0, 0, 0)},
		{"RGB565 mid-grey", f::RGB565, le16(0x8410), argb(255, 132, 130, 132)}, // 16,32,16 replicated
		{"BGR565 red", f::BGR565, le16(0x001f), argb(255, 255, 0, 0)},
		{"BGR565 blue", f::BGR565, le16(0xf800), argb(255, 0, 0, 255)},
		{"XRGB1555 red", f::XRGB1555, le16(0x7c00), argb(255, 255, 0, 0)},
		{"XRGB1555 green ignores x", f::XRGB1555, le16(0x83e0), argb(255, 0, 255, 0)},
		{"XRGB1555 mid-grey", f::XRGB1555, le16(0x4210), argb(255, 132, 132, 132)},
		{"ARGB1555 opaque blue", f::ARGB1555, le16(0x801f), argb(255, 0, 0, 255)},
		{"ARGB1555 transparent black", f::ARGB1555, le16(0x0000), argb(0, 0, 0, 0)},
		{"XRGB4444 white", f::XRGB4444, le16(0x0fff), argb(255, 255, 255, 255)},
		{"XRGB4444 mid-grey", f::XRGB4444, le16(0x0888), argb(255, 136, 136, 136)},
		{"ARGB4444 premultiplied half red", f::ARGB4444, le16(0x8800), argb(136, 136, 0, 0)},
		{"XRGB2101010 red", f::XRGB2101010, le32(0x3ffu << 20), argb(255, 255, 0, 0)},
		{"XRGB2101010 mid-grey rounds", f::XRGB2101010, le32(512u << 20 | 512u << 10 | 512u),
			argb(255, 128, 128, 128)},
		{"XRGB2101010 one step", f::XRGB2101010, le32(2u), argb(255, 0, 0, 0)}, // 2*255/1023 = 0.499
		{"XRGB2101010 two steps", f::XRGB2101010, le32(3u), argb(255, 0, 0, 1)}, // 0.748
		{"ARGB2101010 alpha 2 of 3", f::ARGB2101010, le32(2u << 30 | 0x3ffu), argb(170, 0, 0, 255)},
		{"XBGR2101010 red", f::XBGR2101010, le32(0x3ffu), argb(255, 255, 0, 0)},
		{"ABGR2101010 blue opaque", f::ABGR2101010, le32(3u << 30 | 0x3ffu << 20), argb(255, 0, 0, 255)},
		{"XBGR16161616F red", f::XBGR16161616F, half4(0x3c00, 0, 0, 0), argb(255, 255, 0, 0)},
		{"XBGR16161616F half rounds up", f::XBGR16161616F, half4(0x3800, 0x3800, 0x3800, 0),
			argb(255, 128, 128, 128)},
		{"XBGR16161616F clamps", f::XBGR16161616F, half4(0x4000, 0xbc00, 0x7c00, 0), argb(255, 255, 0, 255)},
		{"ABGR16161616F half alpha", f::ABGR16161616F, half4(0x3800, 0, 0, 0x3800), argb(128, 128, 0, 0)},
	};
	return cases;
}

TEST(KnownColours, PackedRgbSourcesGiveHandComputedArgb8888) {
	for (const RgbCase &c : rgb_cases()) {
		const bool alpha = format_info(c.src)->has_alpha;
		const uint32_t want = alpha ? c.argb8888 : (c.argb8888 | 0xff000000u);
		EXPECT_EQ(convert_pixel(c.src, c.unit, f::ARGB8888), want) << c.what;
		EXPECT_EQ(convert_pixel(c.src, c.unit, f::XRGB8888), c.argb8888 | 0xff000000u) << c.what;
	}
}

TEST(KnownColours, TenBitSourcesKeepTenBitsInXbgr2101010) {
	// XBGR2101010: [31:0] x:B:G:R 2:10:10:10, x written as ones.
	auto xbgr = [](uint32_t a, uint32_t r, uint32_t g, uint32_t b) { return a << 30 | b << 20 | g << 10 | r; };
	EXPECT_EQ(
		convert_pixel(f::XRGB2101010, le32(1u << 20 | 2u << 10 | 1021u), f::XBGR2101010), xbgr(3, 1, 2, 1021));
	EXPECT_EQ(convert_pixel(f::ARGB2101010, le32(1u << 30 | 7u), f::ABGR2101010), xbgr(1, 0, 0, 7));
	EXPECT_EQ(convert_pixel(f::ARGB2101010, le32(1u << 30 | 7u), f::XBGR2101010), xbgr(3, 0, 0, 7));
	EXPECT_EQ(convert_pixel(f::XBGR16161616F, half4(0x3800, 0x3c00, 0, 0), f::XBGR2101010), xbgr(3, 512, 1023, 0));
	EXPECT_EQ(convert_pixel(f::ABGR16161616F, half4(0, 0, 0x3c00, 0x3800), f::ABGR2101010), xbgr(2, 0, 0, 1023));
}

TEST(KnownColours, TenBitToEightBitRoundsToNearestForEveryValue) {
	for (uint32_t v = 0; v < 1024; ++v) {
		const uint32_t want = (v * 255 * 2 + 1023) / (2 * 1023);
		ASSERT_EQ(convert_pixel(f::XBGR2101010, le32(v), f::XRGB8888) & 0xff0000u, want << 16) << v;
	}
}

TEST(KnownColours, FiveAndSixBitChannelsReplicateHighBits) {
	for (uint32_t v = 0; v < 32; ++v) {
		const uint32_t px = convert_pixel(f::RGB565, le16(v << 11 | (2 * v) << 5 | v), f::XRGB8888);
		ASSERT_EQ(px >> 16 & 0xff, v << 3 | v >> 2);
		ASSERT_EQ(px >> 8 & 0xff, (2 * v) << 2 | (2 * v) >> 4);
	}
}

struct YuvCase {
	YuvMatrix m;
	YuvRange r;
	const char *what;
	int y, u, v;
	int r8, g8, b8;
	int r10 = 0, g10 = 0, b10 = 0;
};

// Hand-computed (double precision) from the BT.601 / BT.709 equations in convert.hpp:
// encode the colour, round to integer Y'CbCr, decode, round. The kernels work in
// fixed point, so they may differ by 1 (documented tolerance).
// clang-format off
const YuvCase kYuv8[] = {
	{YuvMatrix::BT601, YuvRange::Limited, "Red", 81, 90, 240, 254, 0, 0},
	{YuvMatrix::BT601, YuvRange::Limited, "Green", 145, 54, 34, 0, 255, 1},
	{YuvMatrix::BT601, YuvRange::Limited, "Blue", 41, 240, 110, 0, 0, 255},
	{YuvMatrix::BT601, YuvRange::Limited, "White", 235, 128, 128, 255, 255, 255},
	{YuvMatrix::BT601, YuvRange::Limited, "Black", 16, 128, 128, 0, 0, 0},
	{YuvMatrix::BT601, YuvRange::Limited, "Grey", 126, 128, 128, 128, 128, 128},
	{YuvMatrix::BT601, YuvRange::Full, "Red", 76, 85, 255, 254, 0, 0},
	{YuvMatrix::BT601, YuvRange::Full, "Green", 150, 44, 21, 0, 255, 1},
	{YuvMatrix::BT601, YuvRange::Full, "Blue", 29, 255, 107, 0, 0, 254},
	{YuvMatrix::BT601, YuvRange::Full, "White", 255, 128, 128, 255, 255, 255},
	{YuvMatrix::BT601, YuvRange::Full, "Black", 0, 128, 128, 0, 0, 0},
	{YuvMatrix::BT601, YuvRange::Full, "Grey", 128, 128, 128, 128, 128, 128},
	{YuvMatrix::BT709, YuvRange::Limited, "Red", 63, 102, 240, 255, 1, 0},
	{YuvMatrix::BT709, YuvRange::Limited, "Green", 173, 42, 26, 0, 255, 1},
	{YuvMatrix::BT709, YuvRange::Limited, "Blue", 32, 240, 118, 1, 0, 255},
	{YuvMatrix::BT709, YuvRange::Limited, "White", 235, 128, 128, 255, 255, 255},
	{YuvMatrix::BT709, YuvRange::Limited, "Black", 16, 128, 128, 0, 0, 0},
	{YuvMatrix::BT709, YuvRange::Limited, "Grey", 126, 128, 128, 128, 128, 128},
	{YuvMatrix::BT709, YuvRange::Full, "Red", 54, 99, 255, 254, 0, 0},
	{YuvMatrix::BT709, YuvRange::Full, "Green", 182, 30, 12, 0, 255, 0},
	{YuvMatrix::BT709, YuvRange::Full, "Blue", 18, 255, 116, 0, 0, 254},
	{YuvMatrix::BT709, YuvRange::Full, "White", 255, 128, 128, 255, 255, 255},
	{YuvMatrix::BT709, YuvRange::Full, "Black", 0, 128, 128, 0, 0, 0},
	{YuvMatrix::BT709, YuvRange::Full, "Grey", 128, 128, 128, 128, 128, 128},
};
const YuvCase kYuv10[] = {
	{YuvMatrix::BT601, YuvRange::Limited, "Red", 326, 361, 960, 255, 0, 0, 1023, 0, 0},
	{YuvMatrix::BT601, YuvRange::Limited, "Green", 578, 215, 137, 0, 255, 0, 0, 1023, 0},
	{YuvMatrix::BT601, YuvRange::Limited, "Blue", 164, 960, 439, 0, 0, 255, 0, 0, 1023},
	{YuvMatrix::BT601, YuvRange::Limited, "White", 940, 512, 512, 255, 255, 255, 1023, 1023, 1023},
	{YuvMatrix::BT601, YuvRange::Limited, "Black", 64, 512, 512, 0, 0, 0, 0, 0, 0},
	{YuvMatrix::BT601, YuvRange::Limited, "Grey", 502, 512, 512, 128, 128, 128, 512, 512, 512},
	{YuvMatrix::BT601, YuvRange::Full, "Red", 306, 339, 1023, 255, 0, 0, 1022, 1, 0},
	{YuvMatrix::BT601, YuvRange::Full, "Green", 601, 173, 84, 0, 255, 0, 1, 1023, 0},
	{YuvMatrix::BT601, YuvRange::Full, "Blue", 117, 1023, 429, 0, 0, 255, 1, 0, 1022},
	{YuvMatrix::BT601, YuvRange::Full, "White", 1023, 512, 512, 255, 255, 255, 1023, 1023, 1023},
	{YuvMatrix::BT601, YuvRange::Full, "Black", 0, 512, 512, 0, 0, 0, 0, 0, 0},
	{YuvMatrix::BT601, YuvRange::Full, "Grey", 512, 512, 512, 128, 128, 128, 512, 512, 512},
	{YuvMatrix::BT709, YuvRange::Limited, "Red", 250, 409, 960, 255, 0, 0, 1023, 0, 0},
	{YuvMatrix::BT709, YuvRange::Limited, "Green", 691, 167, 105, 0, 255, 0, 0, 1023, 1},
	{YuvMatrix::BT709, YuvRange::Limited, "Blue", 127, 960, 471, 0, 0, 255, 0, 0, 1023},
	{YuvMatrix::BT709, YuvRange::Limited, "White", 940, 512, 512, 255, 255, 255, 1023, 1023, 1023},
	{YuvMatrix::BT709, YuvRange::Limited, "Black", 64, 512, 512, 0, 0, 0, 0, 0, 0},
	{YuvMatrix::BT709, YuvRange::Limited, "Grey", 502, 512, 512, 128, 128, 128, 512, 512, 512},
	{YuvMatrix::BT709, YuvRange::Full, "Red", 217, 395, 1023, 255, 0, 0, 1022, 0, 0},
	{YuvMatrix::BT709, YuvRange::Full, "Green", 732, 118, 47, 0, 255, 0, 0, 1023, 1},
	{YuvMatrix::BT709, YuvRange::Full, "Blue", 74, 1023, 465, 0, 0, 255, 0, 0, 1022},
	{YuvMatrix::BT709, YuvRange::Full, "White", 1023, 512, 512, 255, 255, 255, 1023, 1023, 1023},
	{YuvMatrix::BT709, YuvRange::Full, "Black", 0, 512, 512, 0, 0, 0, 0, 0, 0},
	{YuvMatrix::BT709, YuvRange::Full, "Grey", 512, 512, 512, 128, 128, 128, 512, 512, 512},
};
// clang-format on

// A 2x2 image of one Y'CbCr colour, laid out by hand per format.
test::TestSrc uniform_yuv(uint32_t code, int y, int u, int v) {
	auto s = test::make_src(code, 2, 2, 0, 0);
	auto put = [&](int plane, std::vector<int> unit) {
		const SrcPlane &p = s.img.planes[plane];
		auto *d = const_cast<uint8_t *>(p.data);
		for (size_t k = 0; k < p.size; ++k) d[k] = static_cast<uint8_t>(unit[k % unit.size()]);
	};
	auto w16 = [](int x) { return std::vector<int>{(x << 6) & 0xff, x >> 2}; };
	switch (code) {
	case f::YUYV: put(0, {y, u, y, v}); break;
	case f::UYVY: put(0, {u, y, v, y}); break;
	case f::NV12:
	case f::NV16:
		put(0, {y});
		put(1, {u, v});
		break;
	case f::NV21:
		put(0, {y});
		put(1, {v, u});
		break;
	case f::YUV420:
		put(0, {y});
		put(1, {u});
		put(2, {v});
		break;
	case f::YVU420:
		put(0, {y});
		put(1, {v});
		put(2, {u});
		break;
	case f::P010: {
		put(0, w16(y));
		auto c = w16(u);
		auto cv = w16(v);
		c.insert(c.end(), cv.begin(), cv.end());
		put(1, c);
		break;
	}
	}
	return s;
}

void expect_near(uint32_t got, int r, int g, int b, int bits, bool bgr, const std::string &what) {
	const uint32_t m = (1u << bits) - 1;
	const int gr = int(got >> (bgr ? 0 : 2 * bits) & m), gg = int(got >> bits & m),
		  gb = int(got >> (bgr ? 2 * bits : 0) & m);
	EXPECT_LE(std::abs(gr - r), 1) << what << " R " << gr << " want " << r;
	EXPECT_LE(std::abs(gg - g), 1) << what << " G " << gg << " want " << g;
	EXPECT_LE(std::abs(gb - b), 1) << what << " B " << gb << " want " << b;
	EXPECT_EQ(got >> (3 * bits), (1u << (32 - 3 * bits)) - 1) << what << " alpha";
}

std::string describe(const YuvCase &c, uint32_t code) {
	return std::string(format_name(code)) + (c.m == YuvMatrix::BT601 ? " BT.601 " : " BT.709 ") +
		(c.r == YuvRange::Limited ? "limited " : "full ") + c.what;
}

TEST(KnownColours, EightBitYuvSourcesMatchHandComputedRgbWithinOne) {
	for (uint32_t code : {f::YUYV, f::UYVY, f::NV12, f::NV21, f::NV16, f::YUV420, f::YVU420}) {
		for (const YuvCase &c : kYuv8) {
			auto src = uniform_yuv(code, c.y, c.u, c.v);
			for (uint32_t dcode : {f::ARGB8888, f::XRGB8888}) {
				auto dst = test::make_dst(dcode, 2, 2, 0, 0);
				ConvertOptions o;
				o.matrix = c.m;
				o.range = c.r;
				o.force_scalar = true;
				ASSERT_EQ(convert_image(src.img, dst.img, o), Status::Ok);
				for (int i = 0; i < 4; ++i)
					expect_near(
						dst.px(i % 2, i / 2), c.r8, c.g8, c.b8, 8, false, describe(c, code));
			}
		}
	}
}

TEST(KnownColours, P010MatchesHandComputedRgbInEightAndTenBits) {
	for (const YuvCase &c : kYuv10) {
		auto src = uniform_yuv(f::P010, c.y, c.u, c.v);
		ConvertOptions o;
		o.matrix = c.m;
		o.range = c.r;
		o.force_scalar = true;
		auto d8 = test::make_dst(f::ARGB8888, 2, 2, 0, 0);
		auto d10 = test::make_dst(f::XBGR2101010, 2, 2, 0, 0);
		ASSERT_EQ(convert_image(src.img, d8.img, o), Status::Ok);
		ASSERT_EQ(convert_image(src.img, d10.img, o), Status::Ok);
		expect_near(d8.px(1, 1), c.r8, c.g8, c.b8, 8, false, describe(c, f::P010));
		expect_near(d10.px(1, 1), c.r10, c.g10, c.b10, 10, true, describe(c, f::P010));
	}
}

// The luma weights as the standards give them (not the kernels' integer coefficients).
struct Standard {
	YuvMatrix m;
	double kr, kb;
	const char *name;
};
constexpr Standard kStandards[] = {
	{YuvMatrix::BT601, 0.299, 0.114, "BT.601-7"},
	{YuvMatrix::BT709, 0.2126, 0.0722, "BT.709-6"},
	{YuvMatrix::BT2020, 0.2627, 0.0593, "BT.2020-2 NCL"},
};
const Standard &standard(YuvMatrix m) {
	for (const Standard &s : kStandards)
		if (s.m == m) return s;
	std::abort();
}

// Double-precision reference: n-bit codes -> normalised Y' in [0, 1], Cb, Cr in
// [-0.5, 0.5] (limited: BT.601/709/2020 quantisation, (D - 16*2^(n-8)) / (219*2^(n-8))
// and (D - 128*2^(n-8)) / (224*2^(n-8)); full: H.273 / BT.2100 full range,
// D / (2^n - 1) and (D - 2^(n-1)) / (2^n - 1)), then the matrix equations, then m-bit
// codes rounded to nearest after clamping.
struct Rgb {
	int r, g, b;
};
class Reference {
public:
	Reference(YuvMatrix m, YuvRange range, int bits) : st_(standard(m)) {
		const double scale = std::ldexp(1.0, bits - 8), max = std::ldexp(1.0, bits) - 1,
			     mid = std::ldexp(1.0, bits - 1);
		const double kg = 1 - st_.kr - st_.kb;
		const int n = 1 << bits;
		y_.resize(n);
		rv_.resize(n), gu_.resize(n), gv_.resize(n), bu_.resize(n);
		for (int d = 0; d < n; ++d) {
			const bool lim = range == YuvRange::Limited;
			const double y = lim ? (d - 16 * scale) / (219 * scale) : d / max;
			const double c = lim ? (d - 128 * scale) / (224 * scale) : (d - mid) / max;
			y_[d] = y;
			rv_[d] = 2 * (1 - st_.kr) * c;
			gu_[d] = -2 * st_.kb * (1 - st_.kb) / kg * c;
			gv_[d] = -2 * st_.kr * (1 - st_.kr) / kg * c;
			bu_[d] = 2 * (1 - st_.kb) * c;
		}
	}
	// Normalised R, G, B (unclamped) of codes Y, Cb, Cr.
	void rgb(int Y, int Cb, int Cr, double (&out)[3]) const {
		out[0] = y_[Y] + rv_[Cr];
		out[1] = y_[Y] + gu_[Cb] + gv_[Cr];
		out[2] = y_[Y] + bu_[Cb];
	}
	static int quantise(double v, int out_bits) {
		return static_cast<int>(std::floor(std::clamp(v, 0.0, 1.0) * (std::ldexp(1.0, out_bits) - 1) + 0.5));
	}
	Rgb rgb(int Y, int Cb, int Cr, int out_bits) const {
		double v[3];
		rgb(Y, Cb, Cr, v);
		return {quantise(v[0], out_bits), quantise(v[1], out_bits), quantise(v[2], out_bits)};
	}

private:
	const Standard &st_;
	std::vector<double> y_, rv_, gu_, gv_, bu_; // per code: luma, and each chroma term
};
Rgb reference_rgb(YuvMatrix m, YuvRange range, int bits, int Y, int Cb, int Cr, int out_bits) {
	return Reference(m, range, bits).rgb(Y, Cb, Cr, out_bits);
}

// The sweeps below check every input in normal builds. Sanitizer builds run at -O0 with
// checks, where they took 4 minutes of the 8 allowed: there they check every 4th Cr value
// (and say so); memory safety does not depend on the values.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint32_t kSkipRows = 3;
#else
constexpr uint32_t kSkipRows = 0;
#endif
void note_sampling() {
	if (kSkipRows) std::printf("sanitizer build: every %u-th Cr value checked\n", kSkipRows + 1);
}

// Every 8-bit Y, Cb, Cr combination (a 4096x4096 YUYV image), every matrix and range:
// within 1 of the exact equation, and equal to it for nearly all inputs.
TEST(Precision, EightBitYuvIsWithinOneOfTheEquationForEveryInput) {
	note_sampling();
	constexpr int32_t kSide = 4096;
	auto src = test::make_src(f::YUYV, kSide, kSide, 0, 0);
	auto *p = const_cast<uint8_t *>(src.img.planes[0].data);
	for (uint32_t i = 0; i < uint32_t(kSide) * kSide; i += 2) { // pixel i: Y = i % 256, pair shares Cb, Cr
		const uint8_t unit[4] = {uint8_t(i), uint8_t(i >> 8), uint8_t(i + 1), uint8_t(i >> 16)};
		std::memcpy(p + 2 * size_t(i), unit, 4);
	}
	auto dst = test::make_dst(f::XRGB8888, kSide, kSide, 0, 0);
	for (const Standard &st : kStandards) {
		for (YuvRange r : {YuvRange::Limited, YuvRange::Full}) {
			const YuvMatrix m = st.m;
			ConvertOptions o;
			o.matrix = m;
			o.range = r;
			ASSERT_EQ(convert_image(src.img, dst.img, o), Status::Ok);
			const Reference ref(m, r, 8);
			int64_t off_by_one = 0;
			for (uint32_t i = 0; i < uint32_t(kSide) * kSide;
				i += (i & 0xffff) == 0xffff ? 1 + kSkipRows * 0x10000 : 1) {
				double want[3];
				ref.rgb(int(i & 255), int(i >> 8 & 255), int(i >> 16), want);
				const uint32_t px = dst.px(int32_t(i % kSide), int32_t(i / kSide));
				for (int c = 0; c < 3; ++c) {
					const int exact = Reference::quantise(want[c], 8);
					const int got = int(px >> (16 - 8 * c) & 0xff);
					ASSERT_LE(std::abs(got - exact), 1) << st.name << " Y " << (i & 255) << " Cb "
									    << (i >> 8 & 255) << " Cr " << (i >> 16);
					off_by_one += got != exact;
				}
			}
			EXPECT_LT(off_by_one, int64_t(kSide) * kSide * 3 / 100); // measured ~0.4%
			std::printf("8-bit %s %s: off by one in %.3f%% of channels\n", st.name,
				r == YuvRange::Limited ? "limited" : "full",
				100.0 * off_by_one / (3.0 * kSide * kSide));
		}
	}
}

TEST(KnownColours, DefaultIsBt601LimitedRange) {
	auto src = uniform_yuv(f::NV12, 81, 90, 240); // BT.601 limited red
	auto dst = test::make_dst(f::XRGB8888, 2, 2, 0, 0);
	ASSERT_EQ(convert_image(src.img, dst.img), Status::Ok);
	expect_near(dst.px(0, 0), 254, 0, 0, 8, false, "default red");
}

// ---- BT.2020, P010 precision, chroma location, straight alpha, defaults --------------

// Every 10-bit Cb, Cr pair (one per 2x2 block of a 2048x2048 P010 image) with varied Y
// (every code 4096 times), every matrix and range, 8- and 10-bit output: the scalar
// reference within 1 level of the double-precision equations.
TEST(Precision, P010IsWithinOneOfTheEquationForEveryChromaPair) {
	note_sampling();
	constexpr int32_t kSide = 2048;
	auto src = test::make_src(f::P010, kSide, kSide, 0, 0);
	const SrcPlane &yp = src.img.planes[0], &cp = src.img.planes[1];
	auto luma = [](int32_t x, int32_t y) { return (x + 3 * y) & 1023; };
	for (int32_t y = 0; y < kSide; ++y)
		for (int32_t x = 0; x < kSide; ++x) {
			const uint16_t v = static_cast<uint16_t>(luma(x, y) << 6);
			std::memcpy(const_cast<uint8_t *>(yp.data) + y * yp.stride + 2 * x, &v, 2);
		}
	for (int32_t j = 0; j < kSide / 2; ++j)
		for (int32_t k = 0; k < kSide / 2; ++k) {
			const uint16_t cb = static_cast<uint16_t>(k << 6), cr = static_cast<uint16_t>(j << 6);
			uint8_t *q = const_cast<uint8_t *>(cp.data) + j * cp.stride + 4 * k;
			std::memcpy(q, &cb, 2);
			std::memcpy(q + 2, &cr, 2);
		}
	auto d8 = test::make_dst(f::XRGB8888, kSide, kSide, 0, 0);
	auto d10 = test::make_dst(f::XBGR2101010, kSide, kSide, 0, 0);
	for (const Standard &st : kStandards) {
		for (YuvRange r : {YuvRange::Limited, YuvRange::Full}) {
			ConvertOptions o;
			o.matrix = st.m;
			o.range = r;
			o.force_scalar = true;
			ASSERT_EQ(convert_image(src.img, d8.img, o), Status::Ok);
			ASSERT_EQ(convert_image(src.img, d10.img, o), Status::Ok);
			const Reference ref(st.m, r, 10);
			int64_t off8 = 0, off10 = 0;
			for (int32_t y = 0; y < kSide; y += y % 2 ? 1 + 2 * kSkipRows : 1) {
				for (int32_t x = 0; x < kSide; ++x) {
					const int Y = luma(x, y), Cb = x / 2, Cr = y / 2;
					double v[3];
					ref.rgb(Y, Cb, Cr, v);
					const uint32_t p8 = d8.px(x, y), p10 = d10.px(x, y);
					const int g8[3] = {int(p8 >> 16 & 255), int(p8 >> 8 & 255), int(p8 & 255)};
					const int g10[3] = {
						int(p10 & 1023), int(p10 >> 10 & 1023), int(p10 >> 20 & 1023)};
					for (int c = 0; c < 3; ++c) {
						const int e8 = Reference::quantise(v[c], 8),
							  e10 = Reference::quantise(v[c], 10);
						ASSERT_LE(std::abs(g8[c] - e8), 1)
							<< st.name << " 8-bit Y " << Y << " Cb " << Cb << " Cr " << Cr
							<< " channel " << c;
						ASSERT_LE(std::abs(g10[c] - e10), 1)
							<< st.name << " 10-bit Y " << Y << " Cb " << Cb << " Cr " << Cr
							<< " channel " << c;
						off8 += g8[c] != e8;
						off10 += g10[c] != e10;
					}
				}
			}
			// Rounding differences only next to a .5: a small share of the channels.
			EXPECT_LT(off8, int64_t(kSide) * kSide * 3 / 50) << st.name;
			EXPECT_LT(off10, int64_t(kSide) * kSide * 3 / 50) << st.name;
			std::printf("P010 %s %s: off by one in %.3f%% (8-bit) and %.3f%% (10-bit) of channels\n",
				st.name, r == YuvRange::Limited ? "limited" : "full",
				100.0 * off8 / (3.0 * kSide * kSide), 100.0 * off10 / (3.0 * kSide * kSide));
		}
	}
}

TEST(KnownColours, Bt709FullRangeNv12GivesTheReferencePixels) {
	// Known Y'CbCr values: BT.709 full-range primaries, white, black, and off-axis values.
	struct Known {
		int y, cb, cr;
	};
	const Known known[] = {{54, 99, 255}, {182, 30, 12}, {18, 255, 116}, {255, 128, 128}, {0, 128, 128},
		{128, 64, 192}, {200, 100, 150}, {16, 240, 16}, {90, 200, 60}, {240, 140, 110}};
	constexpr int32_t kW = 2 * 40, kH = 2; // 40 blocks: the SIMD rows see whole vectors
	auto src = test::make_src(f::NV12, kW, kH, 0, 0);
	auto *yp = const_cast<uint8_t *>(src.img.planes[0].data);
	auto *cp = const_cast<uint8_t *>(src.img.planes[1].data);
	for (int32_t k = 0; k < kW / 2; ++k) {
		const Known &c = known[k % std::size(known)];
		for (int row = 0; row < 2; ++row) {
			yp[row * src.img.planes[0].stride + 2 * k] = uint8_t(c.y);
			yp[row * src.img.planes[0].stride + 2 * k + 1] =
				uint8_t(255 - (255 - c.y) * 9 / 10); // a second Y
		}
		cp[2 * k] = uint8_t(c.cb);
		cp[2 * k + 1] = uint8_t(c.cr);
	}
	for (bool scalar : {true, false}) {
		auto dst = test::make_dst(f::ARGB8888, kW, kH, 0, 0);
		ConvertOptions o;
		o.matrix = YuvMatrix::BT709;
		o.range = YuvRange::Full;
		o.force_scalar = scalar;
		ASSERT_EQ(convert_image(src.img, dst.img, o), Status::Ok);
		for (int32_t y = 0; y < kH; ++y)
			for (int32_t x = 0; x < kW; ++x) {
				const Known &c = known[(x / 2) % std::size(known)];
				const int Y = yp[y * src.img.planes[0].stride + x];
				const Rgb w = reference_rgb(YuvMatrix::BT709, YuvRange::Full, 8, Y, c.cb, c.cr, 8);
				expect_near(dst.px(x, y), w.r, w.g, w.b, 8, false,
					"NV12 BT.709 full Y " + std::to_string(Y) + " Cb " + std::to_string(c.cb) +
						" Cr " + std::to_string(c.cr) + (scalar ? " scalar" : " simd"));
			}
	}
	// Spot values worked out by hand from the equations: R = Y + 1.5748 (Cr - 128),
	// G = Y - 0.18733 (Cb - 128) - 0.46812 (Cr - 128), B = Y + 1.8556 (Cb - 128).
	auto one = uniform_yuv(f::NV12, 128, 64, 192);
	auto d = test::make_dst(f::XRGB8888, 2, 2, 0, 0);
	ConvertOptions o;
	o.matrix = YuvMatrix::BT709;
	o.range = YuvRange::Full;
	ASSERT_EQ(convert_image(one.img, d.img, o), Status::Ok);
	expect_near(d.px(0, 0), 229, 110, 9, 8, false, "Y128 Cb64 Cr192"); // 228.8, 110.0, 9.2
}

// Where a chroma sample of each H.273 ChromaSampleLocType lies, in luma sample units.
double chroma_x(int type, int k) { return 2 * k + (type % 2 ? 0.5 : 0.0); }
double chroma_y(int type, int j) {
	static constexpr double kOff[6] = {0.5, 0.5, 0.0, 0.0, 1.0, 1.0};
	return 2 * j + kOff[type];
}

// Sample values of any YUV format, read from its documented layout (drm_fourcc.h).
struct YuvReader {
	const SrcImage &img;
	int row(int plane, int32_t y, int64_t i) const {
		return img.planes[plane].data[y * img.planes[plane].stride + i];
	}
	int w16(int plane, int32_t y, int64_t i) const { return (row(plane, y, i) | row(plane, y, i + 1) << 8) >> 6; }
	int luma(int32_t x, int32_t y) const {
		switch (img.fourcc) {
		case f::YUYV: return row(0, y, (x / 2) * 4 + (x % 2) * 2);
		case f::UYVY: return row(0, y, (x / 2) * 4 + 1 + (x % 2) * 2);
		case f::P010: return w16(0, y, 2 * x);
		default: return row(0, y, x);
		}
	}
	// Chroma sample (k, j): j is the chroma row.
	std::pair<int, int> chroma(int32_t k, int32_t j) const {
		switch (img.fourcc) {
		case f::YUYV: return {row(0, j, 4 * k + 1), row(0, j, 4 * k + 3)};
		case f::UYVY: return {row(0, j, 4 * k), row(0, j, 4 * k + 2)};
		case f::NV12:
		case f::NV16: return {row(1, j, 2 * k), row(1, j, 2 * k + 1)};
		case f::NV21: return {row(1, j, 2 * k + 1), row(1, j, 2 * k)};
		case f::YUV420: return {row(1, j, k), row(2, j, k)};
		case f::YVU420: return {row(2, j, k), row(1, j, k)};
		case f::P010: return {w16(1, j, 4 * k), w16(1, j, 4 * k + 2)};
		}
		std::abort();
	}
};

// For every location type, every pixel shows the colour of a chroma sample at the
// smallest distance from it (H.273 geometry above, computed here independently of the
// kernels' block rule), within 1 of the float reference; random chroma, so a farther
// sample would almost always be off by more. Scalar and SIMD paths, odd sizes.
TEST(ChromaLocation, EveryTypeTakesANearestChromaSample) {
	constexpr int32_t kW = 71, kH = 9;
	int64_t checked = 0, ties = 0;
	for (uint32_t code : {f::NV12, f::NV21, f::YUV420, f::YVU420, f::P010, f::YUYV, f::UYVY, f::NV16}) {
		const FormatInfo *fi = format_info(code);
		auto src = test::make_src(code, kW, kH, 3, code);
		const YuvReader rd{src.img};
		for (int type = 0; type < 6; ++type) {
			for (bool scalar : {true, false}) {
				const uint32_t dcode = fi->bits == 10 ? f::XBGR2101010 : f::XRGB8888;
				const int ob = fi->bits == 10 ? 10 : 8;
				auto dst = test::make_dst(dcode, kW, kH, 0, 0);
				ConvertOptions o;
				o.matrix = YuvMatrix::BT709;
				o.chroma_location = static_cast<ChromaLocation>(type);
				o.force_scalar = scalar;
				ASSERT_EQ(convert_image(src.img, dst.img, o), Status::Ok);
				for (int32_t y = 0; y < kH; ++y) {
					for (int32_t x = 0; x < kW; ++x) {
						// Nearest samples by distance; 4:2:2 has a chroma row per row.
						double best = 1e9;
						std::vector<std::pair<int32_t, int32_t>> near;
						for (int32_t j = 0; j < (fi->vsub == 2 ? (kH + 1) / 2 : kH); ++j)
							for (int32_t k = 0; k < (kW + 1) / 2; ++k) {
								const double dx = x - chroma_x(type, k);
								const double dy =
									fi->vsub == 2 ? y - chroma_y(type, j) : y - j;
								const double d2 = dx * dx + dy * dy;
								if (d2 < best - 1e-9) {
									best = d2;
									near.clear();
								}
								if (d2 < best + 1e-9) near.push_back({k, j});
							}
						ties += near.size() > 1;
						const uint32_t px = dst.px(x, y);
						const int got[3] = {int(px >> (ob == 8 ? 16 : 0) & ((1 << ob) - 1)),
							int(px >> ob & ((1 << ob) - 1)),
							int(px >> (ob == 8 ? 0 : 20) & ((1 << ob) - 1))};
						bool ok = false;
						for (auto [k, j] : near) {
							const auto [cb, cr] = rd.chroma(k, j);
							const Rgb w = reference_rgb(
								o.matrix, o.range, fi->bits, rd.luma(x, y), cb, cr, ob);
							ok = ok ||
								(std::abs(got[0] - w.r) <= 1 &&
									std::abs(got[1] - w.g) <= 1 &&
									std::abs(got[2] - w.b) <= 1);
						}
						ASSERT_TRUE(ok) << fi->name << " type " << type << " pixel " << x << ","
								<< y << (scalar ? " scalar" : " simd");
						++checked;
					}
				}
			}
		}
	}
	EXPECT_EQ(checked, int64_t(8) * 6 * 2 * kW * kH);
	EXPECT_GT(ties, 0); // the tie cases of the documentation were exercised
}

// IEEE half -> double, written from the format's definition (not the kernels' trick).
double half_value(uint16_t h) {
	const int e = h >> 10 & 31, m = h & 1023;
	const double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? INFINITY : std::ldexp(1024 + m, e - 25);
	return h & 0x8000 ? -v : v;
}

// Straight alpha: each colour value of the source times its alpha, against the float
// reference (colour / max times the alpha the destination stores / its max), within 1,
// for every colour and alpha code of the format (half floats: every half in [0, 1]
// against a set of alphas), for every target. Alpha itself is unchanged by the mode.
struct AlphaSource {
	uint32_t code;
	int32_t w, h;
	std::function<void(uint8_t *, int32_t)> fill; // pixel i's unit
	std::function<void(int32_t, double (&)[3], double &)> value; // pixel i: straight rgb, alpha in [0, 1]
};

TEST(StraightAlpha, EveryFormatWithAlphaIsPremultipliedWithinOneOfTheReference) {
	auto put = [](uint8_t *p, uint64_t v, int n) {
		for (int b = 0; b < n; ++b) p[b] = uint8_t(v >> 8 * b);
	};
	const uint16_t alphas[] = {0, 0x0001, 0x1c00, 0x2e66, 0x3555, 0x3800, 0x3a00, 0x3bff, 0x3c00, 0x4000};
	std::vector<AlphaSource> sources = {
		{f::ARGB8888, 256, 256,
			[&](uint8_t *p, int32_t i) {
				put(p,
					uint32_t(i & 255) << 24 | uint32_t(i >> 8) << 16 |
						uint32_t(255 - (i >> 8)) << 8 | uint32_t((i >> 8) / 3),
					4);
			},
			[](int32_t i, double(&c)[3], double &a) {
				c[0] = (i >> 8) / 255.0, c[1] = (255 - (i >> 8)) / 255.0, c[2] = ((i >> 8) / 3) / 255.0;
				a = (i & 255) / 255.0;
			}},
		{f::ABGR8888, 256, 256,
			[&](uint8_t *p, int32_t i) {
				put(p,
					uint32_t(i & 255) << 24 | uint32_t(i >> 8) | uint32_t(255 - (i >> 8)) << 8 |
						uint32_t((i >> 8) / 3) << 16,
					4);
			},
			[](int32_t i, double(&c)[3], double &a) {
				c[0] = (i >> 8) / 255.0, c[1] = (255 - (i >> 8)) / 255.0, c[2] = ((i >> 8) / 3) / 255.0;
				a = (i & 255) / 255.0;
			}},
		{f::ARGB1555, 256, 256, [&](uint8_t *p, int32_t i) { put(p, uint32_t(i), 2); },
			[](int32_t i, double(&c)[3], double &a) {
				c[0] = (i >> 10 & 31) / 31.0, c[1] = (i >> 5 & 31) / 31.0, c[2] = (i & 31) / 31.0;
				a = i >> 15;
			}},
		{f::ARGB4444, 256, 256, [&](uint8_t *p, int32_t i) { put(p, uint32_t(i), 2); },
			[](int32_t i, double(&c)[3], double &a) {
				c[0] = (i >> 8 & 15) / 15.0, c[1] = (i >> 4 & 15) / 15.0, c[2] = (i & 15) / 15.0;
				a = (i >> 12) / 15.0;
			}},
		{f::ARGB2101010, 1024, 4,
			[&](uint8_t *p, int32_t i) {
				put(p,
					uint32_t(i >> 10) << 30 | uint32_t(i & 1023) << 20 |
						uint32_t(1023 - (i & 1023)) << 10 | uint32_t((i & 1023) / 5),
					4);
			},
			[](int32_t i, double(&c)[3], double &a) {
				c[0] = (i & 1023) / 1023.0, c[1] = (1023 - (i & 1023)) / 1023.0,
				c[2] = ((i & 1023) / 5) / 1023.0;
				a = (i >> 10) / 3.0;
			}},
		{f::ABGR2101010, 1024, 4,
			[&](uint8_t *p, int32_t i) {
				put(p,
					uint32_t(i >> 10) << 30 | uint32_t(i & 1023) |
						uint32_t(1023 - (i & 1023)) << 10 | uint32_t((i & 1023) / 5) << 20,
					4);
			},
			[](int32_t i, double(&c)[3], double &a) {
				c[0] = (i & 1023) / 1023.0, c[1] = (1023 - (i & 1023)) / 1023.0,
				c[2] = ((i & 1023) / 5) / 1023.0;
				a = (i >> 10) / 3.0;
			}},
		{f::ABGR16161616F, 15361, int32_t(std::size(alphas)),
			[&](uint8_t *p, int32_t i) {
				const uint64_t c = uint64_t(i % 15361), a = alphas[i / 15361];
				put(p, c | (15360 - c) << 16 | (c / 2) << 32 | a << 48, 8);
			},
			[&](int32_t i, double(&c)[3], double &a) {
				const uint16_t v = uint16_t(i % 15361);
				c[0] = half_value(v), c[1] = half_value(uint16_t(15360 - v)),
				c[2] = half_value(uint16_t(v / 2));
				a = std::clamp(half_value(alphas[i / 15361]), 0.0, 1.0);
			}},
	};
	for (const AlphaSource &as : sources) {
		const FormatInfo *fi = format_info(as.code);
		auto src = test::make_src(as.code, as.w, as.h, 0, 0);
		const int bpp = fi->planes[0].unit_bytes;
		for (int32_t i = 0; i < as.w * as.h; ++i)
			as.fill(const_cast<uint8_t *>(src.img.planes[0].data) + i / as.w * src.img.planes[0].stride +
					bpp * (i % as.w),
				i);
		for (int t = 0; t < fi->num_targets; ++t) {
			const FormatInfo *di = format_info(fi->targets[t]);
			const int cb = di->bits, ab = cb == 8 ? 8 : 2;
			const double cmax = (1 << cb) - 1, amax = (1 << ab) - 1;
			auto dst = test::make_dst(di->fourcc, as.w, as.h, 0, 0);
			auto pre = test::make_dst(di->fourcc, as.w, as.h, 0, 0);
			ConvertOptions o;
			o.force_scalar = true;
			ASSERT_EQ(convert_image(src.img, pre.img, o), Status::Ok);
			o.alpha = AlphaMode::Straight;
			ASSERT_EQ(convert_image(src.img, dst.img, o), Status::Ok);
			int64_t off = 0;
			for (int32_t i = 0; i < as.w * as.h; ++i) {
				double c[3], a;
				as.value(i, c, a);
				// The alpha as stored (half floats round ties up, like every n-bit code here).
				const double stored_a = std::floor(a * amax + 0.5);
				const uint32_t px = dst.px(i % as.w, i / as.w);
				const uint32_t m = (1u << cb) - 1;
				const int got[3] = {int(px >> (cb == 8 ? 16 : 0) & m), int(px >> cb & m),
					int(px >> (cb == 8 ? 0 : 2 * cb) & m)};
				for (int k = 0; k < 3; ++k) {
					const int want = int(
						std::floor(std::clamp(c[k], 0.0, 1.0) * stored_a / amax * cmax + 0.5));
					ASSERT_LE(std::abs(got[k] - want), 1)
						<< fi->name << " -> " << di->name << " pixel " << i << " channel " << k
						<< " alpha " << a;
					off += got[k] != want;
				}
				// Alpha (or X bits) as with premultiplied input.
				EXPECT_EQ(px >> 3 * cb, pre.px(i % as.w, i / as.w) >> 3 * cb)
					<< fi->name << " -> " << di->name << " pixel " << i;
			}
			RecordProperty(std::string(fi->name) + "_to_" + di->name + "_off_by_one", std::to_string(off));
		}
	}
}

TEST(StraightAlpha, OpaqueSourcesAndPremultipliedInputAreUnchanged) {
	for (uint32_t code : {f::XRGB1555, f::NV12, f::RGB888, f::XBGR16161616F, f::ARGB4444}) {
		auto src = test::make_src(code, 33, 4, 0, 5);
		auto a = test::make_dst(f::XRGB8888, 33, 4, 0, 0), b = test::make_dst(f::XRGB8888, 33, 4, 0, 0);
		ConvertOptions o;
		ASSERT_EQ(convert_image(src.img, a.img, o), Status::Ok);
		o.alpha = AlphaMode::Straight;
		ASSERT_EQ(convert_image(src.img, b.img, o), Status::Ok);
		if (format_info(code)->has_alpha)
			EXPECT_NE(a.bytes(), b.bytes()) << format_name(code); // random alpha: some colour changes
		else
			EXPECT_EQ(a.bytes(), b.bytes()) << format_name(code);
	}
	// ARGB8888 -> ARGB8888 with premultiplied alpha is a copy.
	auto src = test::make_src(f::ARGB8888, 17, 3, 0, 9);
	auto d = test::make_dst(f::ARGB8888, 17, 3, 0, 0);
	ASSERT_EQ(convert_image(src.img, d.img), Status::Ok);
	EXPECT_EQ(d.bytes(),
		std::vector<uint8_t>(src.img.planes[0].data, src.img.planes[0].data + src.img.planes[0].size));
}

TEST(StraightAlpha, TargetChoiceAndConversionNeed) {
	const uint32_t gles2[] = {f::ARGB8888, f::XRGB8888, f::ABGR8888, f::XBGR8888};
	EXPECT_EQ(pick_target_for_alpha(f::ABGR8888, gles2, AlphaMode::Premultiplied), f::ABGR8888);
	EXPECT_EQ(pick_target_for_alpha(f::ABGR8888, gles2, AlphaMode::Straight), f::ARGB8888);
	EXPECT_EQ(pick_target_for_alpha(f::ARGB8888, gles2, AlphaMode::Straight), f::ARGB8888);
	EXPECT_EQ(pick_target_for_alpha(f::XBGR8888, gles2, AlphaMode::Straight), f::XBGR8888); // no alpha
	EXPECT_EQ(pick_target_for_alpha(f::NV12, gles2, AlphaMode::Straight), f::XRGB8888);
	const uint32_t deep[] = {f::ARGB8888, f::XRGB8888, f::ABGR2101010, f::XBGR2101010};
	EXPECT_EQ(pick_target_for_alpha(f::ABGR2101010, deep, AlphaMode::Straight), f::ABGR2101010);
	EXPECT_EQ(pick_target_for_alpha(f::ARGB2101010, deep, AlphaMode::Straight), f::ABGR2101010);
	const uint32_t rgba[] = {f::RGBA8888, f::ARGB8888};
	EXPECT_EQ(pick_target_for_alpha(f::RGBA8888, rgba, AlphaMode::Premultiplied), f::RGBA8888);
	EXPECT_EQ(pick_target_for_alpha(f::RGBA8888, rgba, AlphaMode::Straight), 0u); // no kernel
	EXPECT_EQ(pick_target_for_alpha(0, rgba, AlphaMode::Straight), 0u);

	EXPECT_FALSE(needs_conversion(f::ARGB8888, f::ARGB8888, AlphaMode::Premultiplied));
	EXPECT_TRUE(needs_conversion(f::ARGB8888, f::ARGB8888, AlphaMode::Straight));
	EXPECT_FALSE(needs_conversion(f::XRGB8888, f::XRGB8888, AlphaMode::Straight));
	EXPECT_TRUE(needs_conversion(f::NV12, f::XRGB8888, AlphaMode::Premultiplied));
	EXPECT_TRUE(needs_conversion_for_alpha(f::ARGB8888));
	EXPECT_TRUE(needs_conversion_for_alpha(f::RGBA8888));
	EXPECT_FALSE(needs_conversion_for_alpha(f::XRGB8888));
	EXPECT_FALSE(needs_conversion_for_alpha(f::NV12));
	EXPECT_FALSE(needs_conversion_for_alpha(0));
	EXPECT_TRUE(can_convert(f::ARGB8888, f::ARGB8888));
	EXPECT_FALSE(can_convert(f::ARGB8888, f::XRGB8888));
}

TEST(KnownColours, DefaultMatrixIsGStreamersRule) {
	EXPECT_EQ(default_yuv_matrix(1920, 1080), YuvMatrix::BT709);
	EXPECT_EQ(default_yuv_matrix(1280, 720), YuvMatrix::BT709);
	EXPECT_EQ(default_yuv_matrix(3840, 2160), YuvMatrix::BT2020);
	EXPECT_EQ(default_yuv_matrix(4096, 2159), YuvMatrix::BT709);
	EXPECT_EQ(default_yuv_matrix(1280, 719), YuvMatrix::BT709);
	EXPECT_EQ(default_yuv_matrix(720, 577), YuvMatrix::BT709);
	EXPECT_EQ(default_yuv_matrix(720, 576), YuvMatrix::BT601);
	EXPECT_EQ(default_yuv_matrix(640, 480), YuvMatrix::BT601);
	EXPECT_EQ(default_yuv_matrix(0, 0), YuvMatrix::BT601);
	EXPECT_EQ(default_yuv_matrix(-5, -720), YuvMatrix::BT601);
}

TEST(KnownColours, Bt2020PrimariesDecodeToTheirRgb) {
	// BT.2020 NCL limited: red (1, 0, 0) encodes to Y 16 + 219 * 0.2627 = 73.5,
	// Cr 128 + 224 * 0.5 = 240, Cb 128 - 224 * 0.2627 / (2 * 0.9407) = 96.7.
	auto src = uniform_yuv(f::NV12, 74, 97, 240);
	auto dst = test::make_dst(f::XRGB8888, 2, 2, 0, 0);
	ConvertOptions o;
	o.matrix = YuvMatrix::BT2020;
	ASSERT_EQ(convert_image(src.img, dst.img, o), Status::Ok);
	const Rgb w = reference_rgb(YuvMatrix::BT2020, YuvRange::Limited, 8, 74, 97, 240, 8);
	expect_near(dst.px(1, 1), w.r, w.g, w.b, 8, false, "BT.2020 red");
	EXPECT_GE(w.r, 254);
	EXPECT_LE(w.g, 1);
	EXPECT_LE(w.b, 1);
	// ... and differs from what BT.709 makes of the same codes.
	o.matrix = YuvMatrix::BT709;
	auto d709 = test::make_dst(f::XRGB8888, 2, 2, 0, 0);
	ASSERT_EQ(convert_image(src.img, d709.img, o), Status::Ok);
	EXPECT_NE(d709.px(1, 1), dst.px(1, 1));
}

TEST(Options, ColourEnumsOutOfRangeAreRefusedBeforeWriting) {
	auto src = test::make_src(f::NV12, 4, 4, 0, 1);
	auto dst = test::make_dst(f::XRGB8888, 4, 4, 0, 0x5a);
	for (int field = 0; field < 4; ++field) {
		ConvertOptions o;
		switch (field) {
		case 0: o.matrix = static_cast<YuvMatrix>(3); break;
		case 1: o.range = static_cast<YuvRange>(2); break;
		case 2: o.chroma_location = static_cast<ChromaLocation>(6); break;
		case 3: o.alpha = static_cast<AlphaMode>(2); break;
		}
		EXPECT_EQ(convert_image(src.img, dst.img, o), Status::InvalidOption) << field;
		EXPECT_EQ(convert_rows(src.img, dst.img, 0, 2, o), Status::InvalidOption) << field;
	}
	EXPECT_EQ(dst.bytes(), std::vector<uint8_t>(dst.img.size, 0x5a));
}

} // namespace
} // namespace pixelport::core
