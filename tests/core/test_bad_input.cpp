// Every entry point refuses bad input with a Status and writes nothing.
#include <gtest/gtest.h>

#include <climits>
#include <set>
#include <string>

#include "pixelport/core/convert.hpp"
#include "test_support.hpp"

namespace pixelport::core {
namespace {

namespace f = fourcc;

class BadInput : public ::testing::Test {
protected:
	test::TestSrc src = test::make_src(f::NV12, 8, 6, 0, 1);
	test::TestDst dst = test::make_dst(f::XRGB8888, 8, 6, 0, 0x33);
	std::vector<uint8_t> before = dst.bytes();

	void expect(Status want, const SrcImage &s, const DstImage &d, const ConvertOptions &o = {}) {
		EXPECT_EQ(convert_image(s, d, o), want) << status_str(want);
		EXPECT_EQ(convert_rows(s, d, 0, 2, o), want) << status_str(want);
		EXPECT_EQ(dst.bytes(), before) << "wrote despite " << status_str(want);
	}
};

TEST_F(BadInput, UnknownFormatsAreRefused) {
	SrcImage s = src.img;
	s.fourcc = f::code('B', 'A', 'D', '!');
	expect(Status::UnknownFormat, s, dst.img);
	DstImage d = dst.img;
	d.fourcc = 0;
	expect(Status::UnknownFormat, src.img, d);
}

TEST_F(BadInput, ConversionsNotInTheTableAreRefused) {
	DstImage d = dst.img;
	d.fourcc = f::XBGR2101010; // NV12 is 8-bit
	expect(Status::UnsupportedConversion, src.img, d);
	d.fourcc = f::NV12;
	expect(Status::UnsupportedConversion, src.img, d);
}

TEST_F(BadInput, ZeroAndNegativeSizesAreRefused) {
	for (int32_t v : {0, -1, INT32_MIN}) {
		SrcImage s = src.img;
		DstImage d = dst.img;
		s.width = d.width = v;
		expect(Status::InvalidSize, s, d);
		s = src.img;
		d = dst.img;
		s.height = d.height = v;
		expect(Status::InvalidSize, s, d);
	}
}

TEST_F(BadInput, DestinationOfAnotherSizeIsRefused) {
	DstImage d = dst.img;
	d.width = 4;
	expect(Status::SizeMismatch, src.img, d);
}

TEST_F(BadInput, NullPlanesAreRefused) {
	SrcImage s = src.img;
	s.planes[1].data = nullptr;
	expect(Status::NullPointer, s, dst.img);
	DstImage d = dst.img;
	d.data = nullptr;
	expect(Status::NullPointer, src.img, d);
}

TEST_F(BadInput, StridesSmallerThanTheRowAreRefused) {
	SrcImage s = src.img;
	s.planes[0].stride = 7;
	expect(Status::StrideTooSmall, s, dst.img);
	s = src.img;
	s.planes[1].stride = 7; // chroma row of 8 pixels is 8 bytes
	expect(Status::StrideTooSmall, s, dst.img);
	DstImage d = dst.img;
	d.stride = 31;
	expect(Status::StrideTooSmall, src.img, d);
}

TEST_F(BadInput, BuffersOneByteShortAreRefused) {
	SrcImage s = src.img;
	s.planes[1].size -= 1;
	expect(Status::BufferTooSmall, s, dst.img);
	DstImage d = dst.img;
	d.size -= 1;
	expect(Status::BufferTooSmall, src.img, d);
}

TEST_F(BadInput, SizesThatOverflowAreRefused) {
	SrcImage s = src.img;
	s.planes[0].stride = SIZE_MAX / 2;
	s.planes[0].size = SIZE_MAX;
	expect(Status::Overflow, s, dst.img);
	DstImage d = dst.img;
	d.stride = SIZE_MAX / 4;
	d.size = SIZE_MAX;
	expect(Status::Overflow, src.img, d);
}

TEST_F(BadInput, NegativeThreadCountsAreRefused) {
	ConvertOptions o;
	o.threads = -1;
	expect(Status::InvalidOption, src.img, dst.img, o);
	o = {};
	o.band_rows = -3;
	expect(Status::InvalidOption, src.img, dst.img, o);
}

TEST_F(BadInput, RectanglesOutsideTheImageAreRefusedBeforeAnyWrite) {
	const Rect outside[] = {{-1, 0, 2, 2}, {0, -1, 2, 2}, {7, 0, 2, 1}, {0, 5, 1, 2}, {INT32_MAX, 0, 1, 1},
		{1, 1, INT32_MAX, 1}, {0, 0, 9, 6}};
	for (const Rect &r : outside) {
		const Rect list[] = {{0, 0, 8, 6}, r}; // the good one first: still nothing written
		EXPECT_EQ(convert_rects(src.img, dst.img, list), Status::RectOutOfBounds) << r.x << "," << r.y;
		EXPECT_EQ(dst.bytes(), before);
	}
	for (const Rect &r : {Rect{0, 0, 0, 1}, Rect{0, 0, 1, 0}, Rect{0, 0, -4, 2}}) {
		EXPECT_EQ(convert_rects(src.img, dst.img, {&r, 1}), Status::InvalidSize);
		EXPECT_EQ(dst.bytes(), before);
	}
}

TEST(StatusStr, EveryStatusHasItsOwnText) {
	std::set<std::string> seen;
	for (int s = 0; s <= static_cast<int>(Status::InvalidOption); ++s) {
		const std::string text = status_str(static_cast<Status>(s));
		EXPECT_FALSE(text.empty());
		EXPECT_TRUE(seen.insert(text).second) << text;
	}
}

} // namespace
} // namespace pixelport::core

namespace pixelport::core::test {
namespace {

// The guard page the other tests rely on really faults on the first byte past the end.
TEST(GuardedBufferDeathTest, ReadingOnePastTheEndFaults) {
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	GuardedBuffer buf(37);
	buf.data()[36] = 1;
	EXPECT_DEATH(
		{
			volatile const uint8_t *p = buf.data() + buf.size();
			[[maybe_unused]] uint8_t v = *p;
		},
		"");
}

} // namespace
} // namespace pixelport::core::test
