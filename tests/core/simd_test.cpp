// SIMD rows equal the scalar reference byte for byte, for every (source, target) pair.
#include <gtest/gtest.h>

#include "pixelport/core/convert.hpp"
#include "test_support.hpp"

namespace pixelport::core {
namespace {

using test::Pair;

class SimdMatchesScalar : public ::testing::TestWithParam<Pair> {};

constexpr int32_t kWidths[] = {1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 65, 1023, 1920};

struct Colour {
	YuvMatrix m;
	YuvRange r;
};
constexpr Colour kColours[] = {{YuvMatrix::BT601, YuvRange::Limited}, {YuvMatrix::BT601, YuvRange::Full},
	{YuvMatrix::BT709, YuvRange::Limited}, {YuvMatrix::BT709, YuvRange::Full}};

TEST_P(SimdMatchesScalar, ForEveryWidthPaddingAndColourSetting) {
	if (best_isa() == Isa::Scalar)
		GTEST_SKIP() << "no SIMD kernels for this CPU (only the scalar table): nothing to compare";
	const Pair p = GetParam();
	const FormatInfo *fi = format_info(p.src);
	const int n_colours = fi->model == ColorModel::YUV ? 4 : 1;
	const int32_t h = fi->vsub == 2 ? 3 : 2; // odd height for 4:2:0
	uint32_t seed = 1;
	for (int32_t w : kWidths) {
		for (size_t pad : {size_t{0}, size_t{13}}) { // odd padding: rows start unaligned
			auto src = test::make_src(p.src, w, h, pad, seed++);
			auto ref = test::make_dst(p.dst, w, h, pad, 0xAB);
			for (int c = 0; c < n_colours; ++c) {
				ConvertOptions o;
				o.matrix = kColours[c].m;
				o.range = kColours[c].r;
				o.force_scalar = true;
				ASSERT_EQ(convert_image(src.img, ref.img, o), Status::Ok);
				o.force_scalar = false;
				for (int isa = 1; isa <= static_cast<int>(best_isa()); ++isa) {
					o.max_isa = static_cast<Isa>(isa);
					auto out = test::make_dst(p.dst, w, h, pad, 0xAB);
					ASSERT_EQ(convert_image(src.img, out.img, o), Status::Ok);
					ASSERT_EQ(out.bytes(), ref.bytes()) << isa_name(o.max_isa) << " width " << w
									    << " pad " << pad << " colour " << c;
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
	for (int isa = 1; isa <= static_cast<int>(best_isa()); ++isa) {
		auto out = test::make_dst(dst_code, src.img.width, src.img.height, 0, 0);
		o = {};
		o.max_isa = static_cast<Isa>(isa);
		ASSERT_EQ(convert_image(src.img, out.img, o), Status::Ok);
		EXPECT_EQ(out.bytes(), ref.bytes())
			<< format_name(src.img.fourcc) << " -> " << format_name(dst_code) << " " << isa_name(o.max_isa);
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
