// The scalar reference against hand-computed values for known colours.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
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

// Every 8-bit Y, Cb, Cr combination (a 4096x4096 YUYV image), every matrix and range:
// within 1 of the exact equation, and equal to it for nearly all inputs.
TEST(Precision, EightBitYuvIsWithinOneOfTheEquationForEveryInput) {
	constexpr int32_t kSide = 4096;
	auto src = test::make_src(f::YUYV, kSide, kSide, 0, 0);
	auto *p = const_cast<uint8_t *>(src.img.planes[0].data);
	for (uint32_t i = 0; i < uint32_t(kSide) * kSide; i += 2) { // pixel i: Y = i % 256, pair shares Cb, Cr
		const uint8_t unit[4] = {uint8_t(i), uint8_t(i >> 8), uint8_t(i + 1), uint8_t(i >> 16)};
		std::memcpy(p + 2 * size_t(i), unit, 4);
	}
	auto dst = test::make_dst(f::XRGB8888, kSide, kSide, 0, 0);
	for (YuvMatrix m : {YuvMatrix::BT601, YuvMatrix::BT709}) {
		for (YuvRange r : {YuvRange::Limited, YuvRange::Full}) {
			ConvertOptions o;
			o.matrix = m;
			o.range = r;
			ASSERT_EQ(convert_image(src.img, dst.img, o), Status::Ok);
			const double kr = m == YuvMatrix::BT709 ? 0.2126 : 0.299,
				     kb = m == YuvMatrix::BT709 ? 0.0722 : 0.114;
			const double kg = 1 - kr - kb;
			const bool lim = r == YuvRange::Limited;
			int64_t off_by_one = 0;
			for (uint32_t i = 0; i < uint32_t(kSide) * kSide; ++i) {
				const double y = (double(i & 255) - (lim ? 16 : 0)) * (lim ? 255.0 / 219 : 1);
				const double cs = lim ? 255.0 / 224 : 1, u = (double(i >> 8 & 255) - 128) * cs,
					     v = (double(i >> 16) - 128) * cs;
				const double want[3] = {y + 2 * (1 - kr) * v,
					y - 2 * kb * (1 - kb) / kg * u - 2 * kr * (1 - kr) / kg * v,
					y + 2 * (1 - kb) * u};
				const uint32_t px = dst.px(int32_t(i % kSide), int32_t(i / kSide));
				for (int c = 0; c < 3; ++c) {
					const int exact =
						static_cast<int>(std::lround(std::clamp(want[c], 0.0, 255.0)));
					const int got = int(px >> (16 - 8 * c) & 0xff);
					ASSERT_LE(std::abs(got - exact), 1)
						<< "Y " << (i & 255) << " Cb " << (i >> 8 & 255) << " Cr " << (i >> 16);
					off_by_one += got != exact;
				}
			}
			EXPECT_LT(off_by_one, int64_t(kSide) * kSide * 3 / 100); // measured ~0.4%
		}
	}
}

TEST(KnownColours, DefaultIsBt601LimitedRange) {
	auto src = uniform_yuv(f::NV12, 81, 90, 240); // BT.601 limited red
	auto dst = test::make_dst(f::XRGB8888, 2, 2, 0, 0);
	ASSERT_EQ(convert_image(src.img, dst.img), Status::Ok);
	expect_near(dst.px(0, 0), 254, 0, 0, 8, false, "default red");
}

} // namespace
} // namespace pixelport::core
