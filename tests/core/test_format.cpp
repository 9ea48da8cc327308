#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "pixelport/core/convert.hpp"
#include "pixelport/core/format.hpp"
#include "test_support.hpp"

namespace pixelport::core {
namespace {

namespace f = fourcc;

TEST(Fourcc, ValuesMatchDrmFourccH) {
	// Little-endian 'A' 'R' '2' '4' etc., as fourcc_code() in drm_fourcc.h.
	EXPECT_EQ(f::ARGB8888, 0x34325241u);
	EXPECT_EQ(f::XRGB8888, 0x34325258u);
	EXPECT_EQ(f::NV12, 0x3231564eu);
	EXPECT_EQ(f::P010, 0x30313050u);
	EXPECT_EQ(f::XBGR16161616F, 0x48344258u);
	EXPECT_EQ(f::YUV420, 0x32315559u);
	EXPECT_EQ(f::ABGR2101010, 0x30334241u);
}

TEST(FormatTable, KnowsEverySourceTheIssueNames) {
	const uint32_t sources[] = {f::RGB888, f::BGR888, f::RGB565, f::BGR565, f::XRGB1555, f::ARGB1555, f::XRGB4444,
		f::ARGB4444, f::XRGB2101010, f::ARGB2101010, f::XBGR2101010, f::ABGR2101010, f::XBGR16161616F,
		f::ABGR16161616F, f::YUYV, f::UYVY, f::NV12, f::NV21, f::NV16, f::YUV420, f::YVU420, f::P010};
	for (uint32_t s : sources) {
		const FormatInfo *fi = format_info(s);
		ASSERT_NE(fi, nullptr) << s;
		EXPECT_TRUE(can_convert(s, f::ARGB8888)) << fi->name;
		EXPECT_TRUE(can_convert(s, f::XRGB8888)) << fi->name;
	}
}

TEST(FormatTable, ReturnsNullForUnknownCodes) {
	EXPECT_EQ(format_info(0), nullptr);
	EXPECT_EQ(format_info(f::code('N', 'O', 'P', 'E')), nullptr);
	EXPECT_STREQ(format_name(0), "unknown");
}

TEST(FormatTable, NamesMatchTheirCodes) {
	for (const FormatInfo &fi : all_formats()) {
		EXPECT_EQ(format_info(fi.fourcc), &fi);
		EXPECT_STREQ(format_name(fi.fourcc), fi.name);
		EXPECT_GE(fi.num_planes, 1);
		EXPECT_LE(fi.num_planes, kMaxPlanes);
	}
}

TEST(FormatTable, MinimumStrideIsCeilOfUnitsTimesUnitBytes) {
	EXPECT_EQ(min_stride(*format_info(f::RGB888), 0, 5), 15u);
	EXPECT_EQ(min_stride(*format_info(f::RGB565), 0, 5), 10u);
	EXPECT_EQ(min_stride(*format_info(f::YUYV), 0, 5), 12u);
	EXPECT_EQ(min_stride(*format_info(f::NV12), 0, 5), 5u);
	EXPECT_EQ(min_stride(*format_info(f::NV12), 1, 5), 6u);
	EXPECT_EQ(min_stride(*format_info(f::YUV420), 2, 5), 3u);
	EXPECT_EQ(min_stride(*format_info(f::P010), 1, 5), 12u);
	EXPECT_EQ(min_stride(*format_info(f::ABGR16161616F), 0, 3), 24u);
	EXPECT_EQ(min_stride(*format_info(f::NV12), 2, 5), 0u);
}

TEST(FormatTable, ChromaRowsRoundUpForOddHeights) {
	EXPECT_EQ(plane_rows(*format_info(f::NV12), 1, 5), 3u);
	EXPECT_EQ(plane_rows(*format_info(f::NV16), 1, 5), 5u);
	EXPECT_EQ(plane_rows(*format_info(f::YVU420), 0, 5), 5u);
}

TEST(FormatTable, OffersTenBitTargetsOnlyForTenBitSources) {
	for (const FormatInfo &fi : all_formats()) {
		if (fi.num_targets == 0) {
			// Targets and renderer-native-only entries: nothing converts from them.
			EXPECT_FALSE(can_convert(fi.fourcc, f::XBGR2101010)) << fi.name;
			continue;
		}
		const bool deep = fi.bits >= 10;
		EXPECT_EQ(can_convert(fi.fourcc, f::XBGR2101010), deep) << fi.name;
		EXPECT_EQ(can_convert(fi.fourcc, f::ABGR2101010), deep) << fi.name;
	}
	EXPECT_FALSE(can_convert(f::NV12, f::NV21));
	EXPECT_FALSE(can_convert(0, f::ARGB8888));
}

TEST(PickTarget, ReturnsTheSourceWhenTheRendererTakesIt) {
	const uint32_t r[] = {f::ARGB8888, f::XRGB8888, f::RGB565};
	EXPECT_EQ(pick_target(f::RGB565, r), f::RGB565);
}

TEST(PickTarget, KeepsAlphaAndPrefersOpaqueTargetsForOpaqueSources) {
	const uint32_t gles2[] = {f::ARGB8888, f::XRGB8888, f::ABGR8888, f::XBGR8888};
	EXPECT_EQ(pick_target(f::RGB888, gles2), f::XRGB8888);
	EXPECT_EQ(pick_target(f::NV12, gles2), f::XRGB8888);
	EXPECT_EQ(pick_target(f::ARGB4444, gles2), f::ARGB8888);
	EXPECT_EQ(pick_target(f::ARGB2101010, gles2), f::ARGB8888);
	const uint32_t argb_only[] = {f::ARGB8888};
	EXPECT_EQ(pick_target(f::YUYV, argb_only), f::ARGB8888);
}

TEST(PickTarget, KeepsTenBitsWhenTheRendererOffersThem) {
	const uint32_t deep[] = {f::ARGB8888, f::XRGB8888, f::XBGR2101010, f::ABGR2101010};
	EXPECT_EQ(pick_target(f::P010, deep), f::XBGR2101010);
	EXPECT_EQ(pick_target(f::XRGB2101010, deep), f::XBGR2101010);
	EXPECT_EQ(pick_target(f::ARGB2101010, deep), f::ABGR2101010);
	EXPECT_EQ(pick_target(f::XBGR16161616F, deep), f::XBGR2101010);
	// 2-bit alpha would lose more than 10-bit colour gains.
	EXPECT_EQ(pick_target(f::ABGR16161616F, deep), f::ARGB8888);
}

TEST(PickTarget, ReturnsNoneWhenNothingFits) {
	const uint32_t xrgb_only[] = {f::XRGB8888};
	EXPECT_EQ(pick_target(f::ARGB1555, xrgb_only), 0u); // alpha would be lost
	EXPECT_EQ(pick_target(f::NV12, {}), 0u);
	EXPECT_EQ(pick_target(0, xrgb_only), 0u);
}

// Every table pair has a kernel in every instruction set this CPU runs, and pairs
// not in the table are refused: the table and the kernels agree.
TEST(FormatTable, EveryListedConversionRunsOnEveryInstructionSet) {
	for (const FormatInfo &s : all_formats()) {
		for (const FormatInfo &d : all_formats()) {
			auto src = test::make_src(s.fourcc, 2, 2, 0, 1);
			auto dst = test::make_dst(d.fourcc, 2, 2, 0, 0);
			for (int isa = 0; isa <= static_cast<int>(best_isa()); ++isa) {
				ConvertOptions o;
				o.max_isa = static_cast<Isa>(isa);
				const Status st = convert_image(src.img, dst.img, o);
				if (d.bits > 10 || d.num_planes != 1 ||
					(d.fourcc != f::ARGB8888 && d.fourcc != f::XRGB8888 &&
						d.fourcc != f::XBGR2101010 && d.fourcc != f::ABGR2101010)) {
					EXPECT_NE(st, Status::Ok) << s.name << " -> " << d.name;
					continue;
				}
				EXPECT_EQ(st == Status::Ok, can_convert(s.fourcc, d.fourcc))
					<< s.name << " -> " << d.name << ": " << status_str(st);
			}
		}
	}
}

TEST(FormatTable, FindsNamesInAnyLetterCase) {
	ASSERT_NE(format_by_name("NV12"), nullptr);
	EXPECT_EQ(format_by_name("NV12")->fourcc, f::NV12);
	EXPECT_EQ(format_by_name("xbgr16161616f")->fourcc, f::XBGR16161616F);
	EXPECT_EQ(format_by_name("Yuv420")->fourcc, f::YUV420);
	EXPECT_EQ(format_by_name("NV1"), nullptr);
	EXPECT_EQ(format_by_name("NV122"), nullptr);
	EXPECT_EQ(format_by_name(""), nullptr);
	for (const FormatInfo &fi : all_formats()) EXPECT_EQ(format_by_name(fi.name), &fi);
}

TEST(FormatTable, MapsWlShmCodesToFourccs) {
	// wayland.xml: wl_shm.format argb8888 = 0, xrgb8888 = 1, every other value is the fourcc.
	EXPECT_EQ(fourcc_from_shm_format(0), f::ARGB8888);
	EXPECT_EQ(fourcc_from_shm_format(1), f::XRGB8888);
	EXPECT_EQ(fourcc_from_shm_format(f::NV12), f::NV12);
	EXPECT_EQ(shm_format_from_fourcc(f::ARGB8888), 0u);
	EXPECT_EQ(shm_format_from_fourcc(f::XRGB8888), 1u);
	EXPECT_EQ(shm_format_from_fourcc(f::ABGR8888), f::ABGR8888);
	for (const FormatInfo &fi : all_formats())
		EXPECT_EQ(fourcc_from_shm_format(shm_format_from_fourcc(fi.fourcc)), fi.fourcc) << fi.name;
}

TEST(ShmPlanes, LaysOutChromaAfterLumaAsWestonDoes) {
	ShmPlanes p;
	// NV12 61x37, stride 64: Y 64 x 37, then CbCr 64 x 19 with the same stride.
	ASSERT_TRUE(shm_planes(*format_info(f::NV12), 61, 37, 64, &p));
	EXPECT_EQ(p.offset[0], 0u);
	EXPECT_EQ(p.offset[1], 64u * 37);
	EXPECT_EQ(p.stride[1], 64u);
	EXPECT_EQ(p.rows[1], 19u);
	EXPECT_EQ(p.size, 64u * 37 + 64u * 19);
	// YUV420 61x37, stride 64: Y, then Cb and Cr at stride 32, 19 rows each.
	ASSERT_TRUE(shm_planes(*format_info(f::YUV420), 61, 37, 64, &p));
	EXPECT_EQ(p.offset[1], 64u * 37);
	EXPECT_EQ(p.offset[2], 64u * 37 + 32u * 19);
	EXPECT_EQ(p.stride[2], 32u);
	EXPECT_EQ(p.size, 64u * 37 + 2 * 32u * 19);
	// NV16: full-height chroma.
	ASSERT_TRUE(shm_planes(*format_info(f::NV16), 61, 37, 64, &p));
	EXPECT_EQ(p.size, 64u * 37 * 2);
	// RGB888 has one plane.
	ASSERT_TRUE(shm_planes(*format_info(f::RGB888), 61, 37, 183, &p));
	EXPECT_EQ(p.size, 183u * 37);
}

TEST(ShmPlanes, RefusesStridesBelowAnyPlanesMinimum) {
	ShmPlanes p;
	EXPECT_FALSE(shm_planes(*format_info(f::RGB888), 61, 37, 182, &p));
	// YUV420 at 61 wide: chroma needs 31 bytes, so stride / 2 >= 31 and even.
	EXPECT_FALSE(shm_planes(*format_info(f::YUV420), 61, 37, 61, &p));
	EXPECT_FALSE(shm_planes(*format_info(f::YUV420), 61, 37, 63, &p));
	EXPECT_TRUE(shm_planes(*format_info(f::YUV420), 61, 37, 62, &p));
	// P010: the CbCr plane (31 units of 4 bytes) is wider than Y (61 x 2).
	EXPECT_FALSE(shm_planes(*format_info(f::P010), 61, 2, 122, &p));
	EXPECT_TRUE(shm_planes(*format_info(f::P010), 61, 2, 124, &p));
	// int32 limits do not overflow: 2^31 - 1 rows of 2^31 - 4 bytes, three planes.
	ASSERT_TRUE(shm_planes(*format_info(f::YUV420), 0x7ffffffc, 0x7fffffff, 0x7ffffffc, &p));
	EXPECT_EQ(p.size, 0x7ffffffcull * 0x7fffffff + 2 * 0x3ffffffeull * 0x40000000);
}

TEST(ShmPlanes, MinimumStrideFitsEveryPlaneAtTheAlignment) {
	EXPECT_EQ(shm_min_stride(*format_info(f::RGB888), 61, 4), 184u);
	EXPECT_EQ(shm_min_stride(*format_info(f::YUYV), 61, 4), 124u);
	EXPECT_EQ(shm_min_stride(*format_info(f::YUV420), 61, 4), 64u); // chroma 32, a multiple of 4
	EXPECT_EQ(shm_min_stride(*format_info(f::P010), 61, 4), 124u);
	EXPECT_EQ(shm_min_stride(*format_info(f::NV16), 61, 4), 64u);
	EXPECT_EQ(shm_min_stride(*format_info(f::RGB888), 61, 1), 183u);
	for (const FormatInfo &fi : all_formats()) {
		for (uint32_t w : {1u, 2u, 3u, 61u, 1921u}) {
			uint64_t s = shm_min_stride(fi, w, 4);
			ShmPlanes p;
			ASSERT_TRUE(shm_planes(fi, w, 3, s, &p)) << fi.name << " " << w;
			for (int i = 0; i < fi.num_planes; ++i)
				EXPECT_EQ(p.stride[i] % 4, 0u) << fi.name << " plane " << i;
			// Smallest: one alignment step less no longer fits.
			const uint64_t step = fi.num_planes == 3 ? 8 : 4;
			if (s > step) {
				EXPECT_FALSE(shm_planes(fi, w, 3, s - step, &p)) << fi.name << " " << w;
			}
		}
	}
}

} // namespace
} // namespace pixelport::core
