// SIMD rows equal the scalar reference byte for byte, for every (source, target) pair.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "pixelport/core/convert.hpp"
#include "test_support.hpp"

namespace pixelport::core {
namespace {

using test::Pair;

class SimdMatchesScalar : public ::testing::TestWithParam<Pair> {};

constexpr int32_t kWidths[] = {1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 65, 1023, 1920};

// Every colour choice of ConvertOptions: matrix x range x chroma location x alpha mode,
// for every pair (the choices a format does not use must not change its result either).
std::vector<ConvertOptions> all_colour_options() {
	std::vector<ConvertOptions> out;
	for (YuvMatrix m : {YuvMatrix::BT601, YuvMatrix::BT709, YuvMatrix::BT2020})
		for (YuvRange r : {YuvRange::Limited, YuvRange::Full})
			for (int loc = 0; loc <= static_cast<int>(ChromaLocation::Type5); ++loc)
				for (AlphaMode a : {AlphaMode::Premultiplied, AlphaMode::Straight}) {
					ConvertOptions o;
					o.matrix = m;
					o.range = r;
					o.chroma_location = static_cast<ChromaLocation>(loc);
					o.alpha = a;
					out.push_back(o);
				}
	return out;
}

std::string describe(const ConvertOptions &o) {
	return "matrix " + std::to_string(int(o.matrix)) + " range " + std::to_string(int(o.range)) + " location " +
		std::to_string(int(o.chroma_location)) + " alpha " + std::to_string(int(o.alpha));
}

TEST_P(SimdMatchesScalar, ForEveryWidthPaddingAndColourSetting) {
	if (best_isa() == Isa::Scalar)
		GTEST_SKIP() << "no SIMD kernels for this CPU (only the scalar table): nothing to compare";
	const Pair p = GetParam();
	const FormatInfo *fi = format_info(p.src);
	const int32_t h = fi->vsub == 2 ? 3 : 2; // odd height for 4:2:0
	const std::vector<ConvertOptions> colours = all_colour_options();
	ASSERT_EQ(colours.size(), 72u);
	uint32_t seed = 1;
	for (int32_t w : kWidths) {
		for (size_t pad : {size_t{0}, size_t{13}}) { // odd padding: rows start unaligned
			auto src = test::make_src(p.src, w, h, pad, seed++);
			auto ref = test::make_dst(p.dst, w, h, pad, 0xAB);
			auto out = test::make_dst(p.dst, w, h, pad, 0xAB);
			for (ConvertOptions o : colours) {
				o.force_scalar = true;
				ASSERT_EQ(convert_image(src.img, ref.img, o), Status::Ok);
				o.force_scalar = false;
				for (Isa isa : test::simd_isas()) {
					o.max_isa = isa;
					std::memset(out.img.data, 0xAB, out.img.size);
					ASSERT_EQ(convert_image(src.img, out.img, o), Status::Ok);
					ASSERT_EQ(out.bytes(), ref.bytes()) << isa_name(o.max_isa) << " width " << w
									    << " pad " << pad << " " << describe(o);
				}
			}
		}
	}
}

INSTANTIATE_TEST_SUITE_P(AllPairs, SimdMatchesScalar, ::testing::ValuesIn(test::all_pairs()),
	[](const auto &info) { return test::pair_name(info.param); });

TEST(ForceScalar, EnvironmentVariableGivesTheScalarResult) {
	auto src = test::make_src(fourcc::NV12, 65, 5, 3, 7);
	auto a = test::make_dst(fourcc::XRGB8888, 65, 5, 0, 0);
	auto b = test::make_dst(fourcc::XRGB8888, 65, 5, 0, 0);
	setenv("PIXELPORT_FORCE_SCALAR", "1", 1);
	ASSERT_EQ(convert_image(src.img, a.img), Status::Ok);
	unsetenv("PIXELPORT_FORCE_SCALAR");
	ConvertOptions o;
	o.max_isa = Isa::Scalar;
	ASSERT_EQ(convert_image(src.img, b.img, o), Status::Ok);
	EXPECT_EQ(a.bytes(), b.bytes());
}

} // namespace
} // namespace pixelport::core

namespace pixelport::core {
namespace {

// Random content may miss values; these cover every 10-bit code and every half float
// exactly once, on every instruction set, against the scalar reference.
void expect_all_isas_match(const test::TestSrc &src, uint32_t dst_code) {
	auto ref = test::make_dst(dst_code, src.img.width, src.img.height, 0, 0);
	ConvertOptions o;
	o.force_scalar = true;
	ASSERT_EQ(convert_image(src.img, ref.img, o), Status::Ok);
	for (Isa isa : test::simd_isas()) {
		auto out = test::make_dst(dst_code, src.img.width, src.img.height, 0, 0);
		o = {};
		o.max_isa = isa;
		ASSERT_EQ(convert_image(src.img, out.img, o), Status::Ok);
		EXPECT_EQ(out.bytes(), ref.bytes())
			<< format_name(src.img.fourcc) << " -> " << format_name(dst_code) << " " << isa_name(o.max_isa);
	}
	// Straight alpha, same comparison.
	o = {};
	o.alpha = AlphaMode::Straight;
	o.force_scalar = true;
	ASSERT_EQ(convert_image(src.img, ref.img, o), Status::Ok);
	for (Isa isa : test::simd_isas()) {
		auto out = test::make_dst(dst_code, src.img.width, src.img.height, 0, 0);
		o.force_scalar = false;
		o.max_isa = isa;
		ASSERT_EQ(convert_image(src.img, out.img, o), Status::Ok);
		EXPECT_EQ(out.bytes(), ref.bytes()) << format_name(src.img.fourcc) << " -> " << format_name(dst_code)
						    << " straight " << isa_name(o.max_isa);
	}
}

TEST(EveryValue, TenBitCodesConvertAlikeOnEveryIsa) {
	if (best_isa() == Isa::Scalar)
		GTEST_SKIP() << "no SIMD kernels for this CPU (only the scalar table): nothing to compare";
	auto src = test::make_src(fourcc::ARGB2101010, 1024, 1, 0, 0);
	auto *p = const_cast<uint8_t *>(src.img.planes[0].data);
	for (uint32_t v = 0; v < 1024; ++v) {
		const uint32_t px = (v & 3) << 30 | v << 20 | (1023 - v) << 10 | ((v * 7) & 1023);
		std::memcpy(p + 4 * v, &px, 4);
	}
	for (uint32_t d : {fourcc::ARGB8888, fourcc::XRGB8888, fourcc::ABGR2101010, fourcc::XBGR2101010})
		expect_all_isas_match(src, d);
}

// Every (colour, alpha) byte pair of ARGB8888 / ABGR8888 and every 16-bit word of
// ARGB4444 / ARGB1555, premultiplied and straight, on every instruction set.
TEST(EveryValue, AlphaFormatsConvertAlikeOnEveryIsa) {
	if (best_isa() == Isa::Scalar)
		GTEST_SKIP() << "no SIMD kernels for this CPU (only the scalar table): nothing to compare";
	for (uint32_t code : {fourcc::ARGB8888, fourcc::ABGR8888, fourcc::ARGB4444, fourcc::ARGB1555}) {
		auto src = test::make_src(code, 256, 256, 0, 0);
		auto *p = const_cast<uint8_t *>(src.img.planes[0].data);
		for (uint32_t i = 0; i < 65536; ++i) {
			if (format_info(code)->planes[0].unit_bytes == 2) {
				const uint16_t v = static_cast<uint16_t>(i);
				std::memcpy(p + 2 * i, &v, 2);
			} else {
				const uint32_t c = i >> 8, px = i << 24 | c << 16 | (255 - c) << 8 | c / 3;
				std::memcpy(p + 4 * i, &px, 4);
			}
		}
		const FormatInfo *fi = format_info(code);
		for (int t = 0; t < fi->num_targets; ++t) expect_all_isas_match(src, fi->targets[t]);
	}
}

// A YUV source into `dst_code` for every matrix and range: each instruction set against the
// scalar reference.
void expect_all_isas_match_every_matrix(const test::TestSrc &src, uint32_t dst_code) {
	const int32_t w = src.img.width, h = src.img.height;
	for (YuvMatrix m : {YuvMatrix::BT601, YuvMatrix::BT709, YuvMatrix::BT2020}) {
		for (YuvRange r : {YuvRange::Limited, YuvRange::Full}) {
			ConvertOptions o;
			o.matrix = m;
			o.range = r;
			o.force_scalar = true;
			auto ref = test::make_dst(dst_code, w, h, 0, 0);
			ASSERT_EQ(convert_image(src.img, ref.img, o), Status::Ok);
			o.force_scalar = false;
			for (Isa isa : test::simd_isas()) {
				o.max_isa = isa;
				auto out = test::make_dst(dst_code, w, h, 0, 0);
				ASSERT_EQ(convert_image(src.img, out.img, o), Status::Ok);
				EXPECT_EQ(out.bytes(), ref.bytes())
					<< format_name(src.img.fourcc) << " -> " << format_name(dst_code) << " matrix "
					<< int(m) << " range " << int(r) << " " << isa_name(o.max_isa);
			}
		}
	}
}

// Every 10-bit Y and every Cb, Cr code (in pairs (v, 1023 - v) and (v, v)) of P010, for
// every matrix and range, on every instruction set against the scalar reference.
TEST(EveryValue, P010CodesConvertAlikeOnEveryIsaForEveryMatrixAndRange) {
	if (best_isa() == Isa::Scalar)
		GTEST_SKIP() << "no SIMD kernels for this CPU (only the scalar table): nothing to compare";
	auto src = test::make_src(fourcc::P010, 2048, 2, 0, 0);
	auto *y = const_cast<uint8_t *>(src.img.planes[0].data);
	auto *c = const_cast<uint8_t *>(src.img.planes[1].data);
	for (uint32_t i = 0; i < 2048; ++i) {
		for (int row = 0; row < 2; ++row) {
			const uint16_t v = static_cast<uint16_t>(((i + 512 * row) & 1023) << 6);
			std::memcpy(y + row * src.img.planes[0].stride + 2 * i, &v, 2);
		}
		const uint32_t k = i / 2, cb = k & 1023, cr = i & 1 ? cb : 1023 - cb;
		const uint16_t w = static_cast<uint16_t>((i & 1 ? cr : cb) << 6);
		std::memcpy(c + 2 * i, &w, 2);
	}
	for (uint32_t d : {fourcc::ARGB8888, fourcc::XRGB8888, fourcc::ABGR2101010, fourcc::XBGR2101010})
		expect_all_isas_match_every_matrix(src, d);
}

// P010 codes at and next to the ends of their ranges, every luma with every (Cb, Cr) of them,
// with the 6 low bits (not part of the sample) set: the sums of the SIMD rows at their largest
// and smallest, on every instruction set for every matrix and range. Odd width: a row tail.
TEST(EveryValue, P010ExtremesConvertAlikeOnEveryIsaForEveryMatrixAndRange) {
	if (best_isa() == Isa::Scalar)
		GTEST_SKIP() << "no SIMD kernels for this CPU (only the scalar table): nothing to compare";
	const uint16_t codes[] = {0, 1, 63, 64, 65, 511, 512, 513, 940, 959, 960, 1022, 1023};
	constexpr int32_t n = sizeof(codes) / sizeof(codes[0]);
	const int32_t w = 2 * n * n + 7;
	auto src = test::make_src(fourcc::P010, w, 2 * n, 0, 0);
	auto *y = const_cast<uint8_t *>(src.img.planes[0].data);
	auto *c = const_cast<uint8_t *>(src.img.planes[1].data);
	auto word = [](uint16_t code, int32_t salt) { return static_cast<uint16_t>(code << 6 | (salt * 37 & 63)); };
	for (int32_t row = 0; row < 2 * n; ++row)
		for (int32_t x = 0; x < w; ++x) {
			const uint16_t v = word(codes[(row / 2 + x) % n], x + row);
			std::memcpy(y + row * src.img.planes[0].stride + 2 * x, &v, 2);
		}
	for (int32_t row = 0; row < n; ++row)
		for (int32_t k = 0; k < (w + 1) / 2; ++k) {
			const int32_t j = k % (n * n);
			const uint16_t cb = word(codes[j / n], k), cr = word(codes[(j + row) % n], k + 1);
			std::memcpy(c + row * src.img.planes[1].stride + 4 * k, &cb, 2);
			std::memcpy(c + row * src.img.planes[1].stride + 4 * k + 2, &cr, 2);
		}
	for (uint32_t d : {fourcc::ARGB8888, fourcc::XRGB8888, fourcc::ABGR2101010, fourcc::XBGR2101010})
		expect_all_isas_match_every_matrix(src, d);
}

// Every (Cb, Cr) pair of each 8-bit YUV format, each pair's pixels taking every Y as Cr
// goes through its 256 values, for every matrix and range, on every instruction set against
// the scalar reference (random content may miss the saturating and clamping corners).
TEST(EveryValue, EightBitYuvConvertsAlikeOnEveryIsaForEveryMatrixAndRange) {
	if (best_isa() == Isa::Scalar)
		GTEST_SKIP() << "no SIMD kernels for this CPU (only the scalar table): nothing to compare";
	namespace f = fourcc;
	for (uint32_t code : {f::YUYV, f::UYVY, f::NV12, f::NV21, f::NV16, f::YUV420, f::YVU420}) {
		const FormatInfo *fi = format_info(code);
		const int32_t w = 512, h = 256 * fi->vsub; // column pair j: Cb = j; chroma row: Cr
		auto src = test::make_src(code, w, h, 0, 0);
		auto at = [&](int plane, int32_t row, int32_t byte) {
			return const_cast<uint8_t *>(src.img.planes[plane].data) + row * src.img.planes[plane].stride +
				byte;
		};
		const bool vu = code == f::NV21 || code == f::YVU420;
		for (int32_t row = 0; row < h; ++row) {
			const int32_t cr = row / fi->vsub;
			for (int32_t x = 0; x < w; ++x) {
				// Odd multiplier of cr: for a fixed pixel, every Y over the 256 chroma rows.
				const auto y = static_cast<uint8_t>(cr * 97 + x * 59 + (row % fi->vsub) * 128);
				const auto cb = static_cast<uint8_t>(x / 2), cv = static_cast<uint8_t>(cr);
				const int32_t j = x / 2;
				if (code == f::YUYV || code == f::UYVY) {
					const int yb = code == f::YUYV ? 0 : 1;
					*at(0, row, 4 * j + 2 * (x & 1) + yb) = y;
					*at(0, row, 4 * j + 1 - yb) = cb;
					*at(0, row, 4 * j + 3 - yb) = cv;
					continue;
				}
				*at(0, row, x) = y;
				if (row % fi->vsub) continue;
				if (fi->num_planes == 2) {
					*at(1, cr, 2 * j + (vu ? 1 : 0)) = cb;
					*at(1, cr, 2 * j + (vu ? 0 : 1)) = cv;
				} else {
					*at(vu ? 2 : 1, cr, j) = cb;
					*at(vu ? 1 : 2, cr, j) = cv;
				}
			}
		}
		expect_all_isas_match_every_matrix(src, f::XRGB8888);
	}
}

TEST(EveryValue, HalfFloatsConvertAlikeOnEveryIsa) {
	if (best_isa() == Isa::Scalar)
		GTEST_SKIP() << "no SIMD kernels for this CPU (only the scalar table): nothing to compare";
	auto src = test::make_src(fourcc::ABGR16161616F, 16384, 1, 0, 0);
	auto *p = const_cast<uint8_t *>(src.img.planes[0].data);
	for (uint32_t h = 0; h < 65536; ++h) {
		const uint16_t v = static_cast<uint16_t>(h);
		std::memcpy(p + 2 * h, &v, 2);
	}
	for (uint32_t d : {fourcc::ARGB8888, fourcc::XRGB8888, fourcc::ABGR2101010, fourcc::XBGR2101010})
		expect_all_isas_match(src, d);
}

} // namespace
} // namespace pixelport::core

namespace pixelport::core {
namespace {

// arm64 always has NEON (ASIMD is baseline), x86 never.
TEST(BestIsa, NeonExactlyOnArm64) {
#if defined(__aarch64__)
	EXPECT_EQ(best_isa(), Isa::Neon);
#else
	EXPECT_NE(best_isa(), Isa::Neon);
#endif
}

} // namespace
} // namespace pixelport::core
