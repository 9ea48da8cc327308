#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "pixelport/core/convert.h"
#include "pixelport/core/format.h"
#include "test_support.h"

namespace pixelport::core {
namespace {

namespace f = fourcc;

TEST(Fourcc, ValuesMatchDrmFourccH)
{
	// Little-endian 'A' 'R' '2' '4' etc., as fourcc_code() in drm_fourcc.h.
	EXPECT_EQ(f::ARGB8888, 0x34325241u);
	EXPECT_EQ(f::XRGB8888, 0x34325258u);
	EXPECT_EQ(f::NV12, 0x3231564eu);
	EXPECT_EQ(f::P010, 0x30313050u);
	EXPECT_EQ(f::XBGR16161616F, 0x48344258u);
	EXPECT_EQ(f::YUV420, 0x32315559u);
	EXPECT_EQ(f::ABGR2101010, 0x30334241u);
}

TEST(FormatTable, KnowsEverySourceTheIssueNames)
{
	const uint32_t sources[] = {f::RGB888, f::BGR888, f::RGB565, f::BGR565, f::XRGB1555, f::ARGB1555,
				    f::XRGB4444, f::ARGB4444, f::XRGB2101010, f::ARGB2101010, f::XBGR2101010,
				    f::ABGR2101010, f::XBGR16161616F, f::ABGR16161616F, f::YUYV, f::UYVY,
				    f::NV12, f::NV21, f::NV16, f::YUV420, f::YVU420, f::P010};
	for (uint32_t s : sources) {
		const FormatInfo *fi = format_info(s);
		ASSERT_NE(fi, nullptr) << s;
		EXPECT_TRUE(can_convert(s, f::ARGB8888)) << fi->name;
		EXPECT_TRUE(can_convert(s, f::XRGB8888)) << fi->name;
	}
}

TEST(FormatTable, ReturnsNullForUnknownCodes)
{
	EXPECT_EQ(format_info(0), nullptr);
	EXPECT_EQ(format_info(f::code('N', 'O', 'P', 'E')), nullptr);
	EXPECT_STREQ(format_name(0), "unknown");
}

TEST(FormatTable, NamesMatchTheirCodes)
{
	for (const FormatInfo &fi : all_formats()) {
		EXPECT_EQ(format_info(fi.fourcc), &fi);
		EXPECT_STREQ(format_name(fi.fourcc), fi.name);
		EXPECT_GE(fi.num_planes, 1);
		EXPECT_LE(fi.num_planes, kMaxPlanes);
	}
}

TEST(FormatTable, MinimumStrideIsCeilOfUnitsTimesUnitBytes)
{
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

TEST(FormatTable, ChromaRowsRoundUpForOddHeights)
{
	EXPECT_EQ(plane_rows(*format_info(f::NV12), 1, 5), 3u);
	EXPECT_EQ(plane_rows(*format_info(f::NV16), 1, 5), 5u);
	EXPECT_EQ(plane_rows(*format_info(f::YVU420), 0, 5), 5u);
}

TEST(FormatTable, OffersTenBitTargetsOnlyForTenBitSources)
{
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

TEST(PickTarget, ReturnsTheSourceWhenTheRendererTakesIt)
{
	const uint32_t r[] = {f::ARGB8888, f::XRGB8888, f::RGB565};
	EXPECT_EQ(pick_target(f::RGB565, r), f::RGB565);
}

TEST(PickTarget, KeepsAlphaAndPrefersOpaqueTargetsForOpaqueSources)
{
	const uint32_t gles2[] = {f::ARGB8888, f::XRGB8888, f::ABGR8888, f::XBGR8888};
	EXPECT_EQ(pick_target(f::RGB888, gles2), f::XRGB8888);
	EXPECT_EQ(pick_target(f::NV12, gles2), f::XRGB8888);
	EXPECT_EQ(pick_target(f::ARGB4444, gles2), f::ARGB8888);
	EXPECT_EQ(pick_target(f::ARGB2101010, gles2), f::ARGB8888);
	const uint32_t argb_only[] = {f::ARGB8888};
	EXPECT_EQ(pick_target(f::YUYV, argb_only), f::ARGB8888);
}

TEST(PickTarget, KeepsTenBitsWhenTheRendererOffersThem)
{
	const uint32_t deep[] = {f::ARGB8888, f::XRGB8888, f::XBGR2101010, f::ABGR2101010};
	EXPECT_EQ(pick_target(f::P010, deep), f::XBGR2101010);
	EXPECT_EQ(pick_target(f::XRGB2101010, deep), f::XBGR2101010);
	EXPECT_EQ(pick_target(f::ARGB2101010, deep), f::ABGR2101010);
	EXPECT_EQ(pick_target(f::XBGR16161616F, deep), f::XBGR2101010);
	// 2-bit alpha would lose more than 10-bit colour gains.
	EXPECT_EQ(pick_target(f::ABGR16161616F, deep), f::ARGB8888);
}

TEST(PickTarget, ReturnsNoneWhenNothingFits)
{
	const uint32_t xrgb_only[] = {f::XRGB8888};
	EXPECT_EQ(pick_target(f::ARGB1555, xrgb_only), 0u);   // alpha would be lost
	EXPECT_EQ(pick_target(f::NV12, {}), 0u);
	EXPECT_EQ(pick_target(0, xrgb_only), 0u);
}

// Every table pair has a kernel in every instruction set this CPU runs, and pairs
// not in the table are refused: the table and the kernels agree.
TEST(FormatTable, EveryListedConversionRunsOnEveryInstructionSet)
{
	for (const FormatInfo &s : all_formats()) {
		for (const FormatInfo &d : all_formats()) {
			auto src = test::make_src(s.fourcc, 2, 2, 0, 1);
			auto dst = test::make_dst(d.fourcc, 2, 2, 0, 0);
			for (int isa = 0; isa <= static_cast<int>(best_isa()); ++isa) {
				ConvertOptions o;
				o.max_isa = static_cast<Isa>(isa);
				const Status st = convert_image(src.img, dst.img, o);
				if (d.bits > 10 || d.num_planes != 1 || (d.fourcc != f::ARGB8888 && d.fourcc != f::XRGB8888 &&
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

} // namespace
} // namespace pixelport::core
