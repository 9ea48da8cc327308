// The band driver: bands, damage rectangles, streaming rows, threads, 64-bit offsets.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <vector>

#include "pixelport/core/convert.hpp"
#include "test_support.hpp"

namespace pixelport::core {
namespace {

namespace f = fourcc;

constexpr uint32_t kSources[] = {
	f::NV12, f::YUV420, f::YVU420, f::NV16, f::YUYV, f::P010, f::RGB888, f::RGB565, f::ABGR16161616F};

std::vector<uint8_t> whole(const test::TestSrc &src, uint32_t dcode) {
	auto d = test::make_dst(dcode, src.img.width, src.img.height, 5, 0);
	EXPECT_EQ(convert_image(src.img, d.img), Status::Ok);
	return d.bytes();
}

TEST(Bands, AnyBandHeightGivesTheWholeImageResult) {
	for (uint32_t code : kSources) {
		auto src = test::make_src(code, 37, 29, 3, code);
		const auto want = whole(src, f::ARGB8888);
		for (int32_t band : {1, 2, 3, 7, 16, 29, 1000}) {
			auto d = test::make_dst(f::ARGB8888, 37, 29, 5, 0);
			ConvertOptions o;
			o.band_rows = band;
			ASSERT_EQ(convert_image(src.img, d.img, o), Status::Ok);
			EXPECT_EQ(d.bytes(), want) << format_name(code) << " band " << band;
		}
		for (size_t bytes : {size_t{1}, size_t{700}, size_t{1} << 20}) {
			auto d = test::make_dst(f::ARGB8888, 37, 29, 5, 0);
			ConvertOptions o;
			o.band_bytes = bytes;
			ASSERT_EQ(convert_image(src.img, d.img, o), Status::Ok);
			EXPECT_EQ(d.bytes(), want) << format_name(code) << " band bytes " << bytes;
		}
	}
}

TEST(Bands, StreamedRowChunksGiveTheWholeImageResult) {
	for (uint32_t code : kSources) {
		auto src = test::make_src(code, 21, 31, 0, code + 1);
		const auto want = whole(src, f::XRGB8888);
		const int32_t vsub = format_info(code)->vsub;
		for (int32_t chunk : {2, 4, 6}) {
			auto d = test::make_dst(f::XRGB8888, 21, 31, 5, 0);
			for (int32_t y = 0; y < 31; y += chunk * vsub / 2)
				ASSERT_EQ(convert_rows(src.img, d.img, y, std::min(31, y + chunk * vsub / 2)),
					Status::Ok);
			EXPECT_EQ(d.bytes(), want) << format_name(code) << " chunk " << chunk;
		}
	}
}

TEST(Bands, RowRangesMustStartOnTheChromaGrid) {
	auto src = test::make_src(f::NV12, 8, 7, 0, 1);
	auto d = test::make_dst(f::XRGB8888, 8, 7, 0, 0);
	EXPECT_EQ(convert_rows(src.img, d.img, 1, 3), Status::BadRowRange);
	EXPECT_EQ(convert_rows(src.img, d.img, 0, 3), Status::BadRowRange);
	EXPECT_EQ(convert_rows(src.img, d.img, 2, 2), Status::BadRowRange);
	EXPECT_EQ(convert_rows(src.img, d.img, -2, 2), Status::BadRowRange);
	EXPECT_EQ(convert_rows(src.img, d.img, 6, 8), Status::BadRowRange);
	EXPECT_EQ(convert_rows(src.img, d.img, 6, 7), Status::Ok); // odd height: last row alone
	auto rgb = test::make_src(f::RGB565, 8, 7, 0, 1);
	EXPECT_EQ(convert_rows(rgb.img, d.img, 3, 4), Status::Ok);
}

// Returns which destination pixels differ from the canary byte pattern.
std::vector<bool> touched(const test::TestDst &d, uint8_t canary) {
	std::vector<bool> t;
	for (int32_t y = 0; y < d.img.height; ++y)
		for (int32_t x = 0; x < d.img.width; ++x) t.push_back(d.px(x, y) != canary * 0x01010101u);
	return t;
}

TEST(Damage, TouchesOnlyTheDamagedRectanglesAndMatchesTheWholeImage) {
	constexpr uint8_t kCanary = 0x5a;
	for (uint32_t code : kSources) {
		const FormatInfo *fi = format_info(code);
		auto src = test::make_src(code, 41, 33, 2, code + 2);
		const Rect damage[] = {{3, 5, 7, 3}, {20, 0, 1, 1}, {40, 32, 1, 1}, {10, 20, 31, 2}};
		auto d = test::make_dst(f::ARGB8888, 41, 33, 0, kCanary);
		ConvertOptions o;
		o.band_rows = 4;
		ASSERT_EQ(convert_rects(src.img, d.img, damage, o), Status::Ok);
		auto full = test::make_dst(f::ARGB8888, 41, 33, 0, 0);
		ASSERT_EQ(convert_image(src.img, full.img), Status::Ok);
		const auto t = touched(d, kCanary);
		for (int32_t y = 0; y < 33; ++y) {
			for (int32_t x = 0; x < 41; ++x) {
				bool in = false;
				for (const Rect &r : damage) {
					// expanded to the chroma grid, clamped to the image
					const int32_t x0 = r.x / fi->hsub * fi->hsub, y0 = r.y / fi->vsub * fi->vsub;
					const int32_t x1 =
						std::min(41, (r.x + r.width + fi->hsub - 1) / fi->hsub * fi->hsub);
					const int32_t y1 =
						std::min(33, (r.y + r.height + fi->vsub - 1) / fi->vsub * fi->vsub);
					in |= x >= x0 && x < x1 && y >= y0 && y < y1;
				}
				if (in)
					ASSERT_EQ(d.px(x, y), full.px(x, y))
						<< format_name(code) << " " << x << "," << y;
				else
					ASSERT_FALSE(t[size_t(y) * 41 + size_t(x)])
						<< format_name(code) << " wrote " << x << "," << y;
			}
		}
	}
}

TEST(Damage, OddOriginsInFourTwoZeroExpandToEvenCoordinates) {
	auto src = test::make_src(f::NV12, 16, 16, 0, 9);
	auto d = test::make_dst(f::XRGB8888, 16, 16, 0, 0);
	const Rect r{3, 5, 1, 1};
	ASSERT_EQ(convert_rects(src.img, d.img, {&r, 1}), Status::Ok);
	const auto t = touched(d, 0);
	int n = 0;
	for (int32_t y = 0; y < 16; ++y)
		for (int32_t x = 0; x < 16; ++x)
			if (t[size_t(y) * 16 + size_t(x)]) {
				++n;
				EXPECT_TRUE(x >= 2 && x < 4 && y >= 4 && y < 6) << x << "," << y;
			}
	EXPECT_EQ(n, 4);
}

TEST(Damage, EmptyListWritesNothing) {
	auto src = test::make_src(f::RGB888, 4, 4, 0, 1);
	auto d = test::make_dst(f::XRGB8888, 4, 4, 0, 7);
	const auto before = d.bytes();
	EXPECT_EQ(convert_rects(src.img, d.img, {}), Status::Ok);
	EXPECT_EQ(d.bytes(), before);
}

TEST(Threads, TwoOrThreeThreadsGiveTheSingleThreadResult) {
	for (uint32_t code : {f::NV12, f::RGB888, f::YUV420}) {
		auto src = test::make_src(code, 1024, 1101, 0, 3); // enough pixels for 3 threads
		const auto want = whole(src, f::XRGB8888);
		for (int32_t n : {2, 3, 0}) {
			auto d = test::make_dst(f::XRGB8888, 1024, 1101, 5, 0);
			ConvertOptions o;
			o.threads = n;
			o.band_rows = 7;
			ASSERT_EQ(convert_image(src.img, d.img, o), Status::Ok);
			EXPECT_EQ(d.bytes(), want) << format_name(code) << " threads " << n;
		}
	}
}

// A 3 GiB reservation (MAP_NORESERVE: only touched pages cost memory) with rows 1 GiB
// apart, so the last row is beyond 2 GiB: offsets must be 64-bit all the way.
TEST(LargeBuffers, RowsBeyondTwoGibibytesConvert) {
	constexpr size_t kStride = size_t{1} << 30;
	constexpr size_t kLen = 3 * kStride;
	void *m = mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) GTEST_SKIP() << "cannot reserve 3 GiB of address space";
	auto *base = static_cast<uint8_t *>(m);
	SrcImage src;
	src.fourcc = f::RGB565;
	src.width = 16;
	src.height = 3;
	src.planes[0] = {base, kStride, 2 * kStride + 32};
	for (int x = 0; x < 16; ++x) {
		base[2 * kStride + 2 * x] = 0x1f; // blue
		base[2 * kStride + 2 * x + 1] = 0;
	}
	auto d = test::make_dst(f::XRGB8888, 16, 3, 0, 0);
	const Rect r{0, 2, 16, 1};
	EXPECT_EQ(convert_rects(src, d.img, {&r, 1}), Status::Ok);
	for (int x = 0; x < 16; ++x) EXPECT_EQ(d.px(x, 2), 0xff0000ffu);
	EXPECT_EQ(d.px(0, 1), 0u);
	munmap(m, kLen);
}

} // namespace
} // namespace pixelport::core

namespace pixelport::core {
namespace {

// Streaming stores go through an L1 piece buffer of 2048 pixels: rows wider than that,
// odd widths, odd origins and padded strides must give the cached-store result.
TEST(StreamingStores, GiveTheCachedStoreResult) {
	for (uint32_t code : {fourcc::NV12, fourcc::RGB888, fourcc::YUYV, fourcc::XBGR16161616F}) {
		auto src = test::make_src(code, 4099, 5, 3, code);
		const Rect damage[] = {{1, 1, 4097, 3}, {2047, 0, 3, 1}, {0, 4, 4099, 1}};
		auto cached = test::make_dst(fourcc::ARGB8888, 4099, 5, 1, 0x11);
		auto streamed = test::make_dst(fourcc::ARGB8888, 4099, 5, 1, 0x11);
		ConvertOptions o;
		o.stores = ConvertOptions::Stores::Cached;
		ASSERT_EQ(convert_rects(src.img, cached.img, damage, o), Status::Ok);
		o.stores = ConvertOptions::Stores::Streaming;
		ASSERT_EQ(convert_rects(src.img, streamed.img, damage, o), Status::Ok);
		EXPECT_EQ(streamed.bytes(), cached.bytes()) << format_name(code);
	}
}

} // namespace
} // namespace pixelport::core
