// The stream's packed layout and assembler (pixelport/core/stream_layout.hpp) against the
// protocol's text (stream_support.hpp) and the core's convert_rects().
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pixelport/core/fourcc.hpp"
#include "pixelport/core/stream_layout.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace pixelport::core::test {
namespace {

// A random rectangle of a w x h image that the stream accepts: on the chroma grid, and a
// multiple of it in size unless it reaches the image's right or bottom edge.
Rect random_stream_rect(const FormatInfo &fi, Rng &rng, int32_t w, int32_t h) {
	Rect r{int32_t(rng.below(w)) / fi.hsub * fi.hsub, int32_t(rng.below(h)) / fi.vsub * fi.vsub, 0, 0};
	r.width = 1 + int32_t(rng.below(w - r.x));
	r.height = 1 + int32_t(rng.below(h - r.y));
	if (r.x + r.width < w) r.width = std::max<int32_t>(fi.hsub, r.width / fi.hsub * fi.hsub);
	if (r.y + r.height < h) r.height = std::max<int32_t>(fi.vsub, r.height / fi.vsub * fi.vsub);
	return r;
}

namespace f = fourcc;

struct SizeCase {
	uint32_t fourcc;
	int32_t w, h;
	uint64_t row0, group, total; // worked out by hand below
};

TEST(StreamLayout, SizesByHand) {
	const SizeCase cases[] = {
		{f::XRGB8888, 7, 5, 28, 28, 140}, // 7 x 4 a row, 5 rows
		{f::RGB888, 3, 3, 9, 9, 27}, {f::RGB565, 1, 1, 2, 2, 2},
		{f::YUYV, 5, 2, 12, 12, 24}, // ceil(5 / 2) = 3 units of 4 bytes
		{f::XBGR16161616F, 3, 1, 24, 24, 24}, {f::NV12, 4, 4, 4, 12, 24}, // Y 4 + Y 4 + CbCr 2 x 2
		{f::NV12, 5, 3, 5, 16, 27}, // groups: 5 + 5 + 6, then 5 + 6
		{f::NV16, 5, 3, 5, 11, 33}, // one row a group: 5 + 6
		{f::YUV420, 6, 4, 6, 18, 36}, // 6 + 6 + 3 + 3
		{f::YVU420, 7, 5, 7, 22, 59}, // 7 + 7 + 4 + 4, twice, then 7 + 4 + 4
		{f::P010, 3, 3, 6, 20, 34}, // 6 + 6 + 2 x 4; then 6 + 8
		{f::P010, 1, 1, 2, 8, 6}, // full group 2 + 2 + 4; the short one 2 + 4
	};
	for (const SizeCase &c : cases) {
		SCOPED_TRACE(
			std::string(format_name(c.fourcc)) + " " + std::to_string(c.w) + "x" + std::to_string(c.h));
		PackedLayout l;
		ASSERT_EQ(packed_layout(c.fourcc, c.w, c.h, &l), Status::Ok);
		EXPECT_EQ(l.row_bytes[0], c.row0);
		EXPECT_EQ(l.group_bytes, c.group);
		EXPECT_EQ(l.total_bytes, c.total);
		EXPECT_EQ(l.groups, (c.h + format_info(c.fourcc)->vsub - 1) / format_info(c.fourcc)->vsub);
	}
}

// Every byte of every plane of the rectangle is on the wire exactly once.
TEST(StreamLayout, TotalIsTheSumOfThePlanes) {
	for (const FormatInfo &fi : all_formats()) {
		for (int32_t w : {1, 2, 3, 17, 640, 1921}) {
			for (int32_t h : {1, 2, 3, 9, 1080}) {
				uint64_t sum = 0;
				for (int p = 0; p < fi.num_planes; ++p)
					sum += min_stride(fi, p, uint32_t(w)) * plane_rows(fi, p, uint32_t(h));
				PackedLayout l;
				ASSERT_EQ(packed_layout(fi.fourcc, w, h, &l), Status::Ok);
				EXPECT_EQ(l.total_bytes, sum) << fi.name << " " << w << "x" << h;
				uint64_t groups = 0;
				for (int64_t g = 0; g < l.groups; ++g) groups += l.group_size(g);
				EXPECT_EQ(groups, sum) << fi.name << " " << w << "x" << h;
			}
		}
	}
}

TEST(StreamLayout, Errors) {
	PackedLayout l;
	EXPECT_EQ(packed_layout(0x20202020, 4, 4, &l), Status::UnknownFormat);
	EXPECT_EQ(packed_layout(f::NV12, 0, 4, &l), Status::InvalidSize);
	EXPECT_EQ(packed_layout(f::NV12, 4, -1, &l), Status::InvalidSize);
	// 2^31 - 1 pixels of 8 bytes a row, as many rows: about 2^65 bytes.
	EXPECT_EQ(packed_layout(f::XBGR16161616F, INT32_MAX, INT32_MAX, &l), Status::Overflow);
	ASSERT_EQ(packed_layout(f::XBGR16161616F, INT32_MAX, 1, &l), Status::Ok);
	EXPECT_EQ(l.total_bytes, uint64_t{INT32_MAX} * 8);
}

TEST(StreamLayout, RectRules) {
	const FormatInfo &nv12 = *format_info(f::NV12);
	const FormatInfo &xrgb = *format_info(f::XRGB8888);
	struct {
		const FormatInfo &fi;
		Rect r;
		Status want;
	} cases[] = {
		{nv12, {0, 0, 6, 5}, Status::Ok}, // odd height reaching the bottom edge
		{nv12, {2, 2, 4, 3}, Status::Ok},
		{nv12, {1, 0, 2, 2}, Status::BadRowRange}, // x off the grid
		{nv12, {0, 1, 2, 2}, Status::BadRowRange}, // y off the grid
		{nv12, {0, 0, 3, 2}, Status::BadRowRange}, // odd width short of the right edge
		{nv12, {0, 0, 2, 3}, Status::BadRowRange}, // odd height short of the bottom edge
		{nv12, {0, 0, 7, 2}, Status::RectOutOfBounds},
		{nv12, {-2, 0, 2, 2}, Status::RectOutOfBounds},
		{nv12, {4, 4, 2, 2}, Status::RectOutOfBounds},
		{nv12, {0, 0, 0, 2}, Status::InvalidSize},
		{xrgb, {1, 1, 3, 3}, Status::Ok},
		{xrgb, {INT32_MAX, 0, 1, 1}, Status::RectOutOfBounds},
	};
	for (const auto &c : cases) {
		EXPECT_EQ(check_stream_rect(c.fi, c.r, 6, 5), c.want)
			<< c.fi.name << " " << c.r.x << "," << c.r.y << " " << c.r.width << "x" << c.r.height;
		EXPECT_EQ(c.want == Status::Ok, rect_accepted(c.fi, c.r, 6, 5));
	}
}

// Random rectangles on the grid of every format; the spans, walked in pieces of random
// offsets, budgets and iovec counts, give the protocol's bytes.
TEST(StreamLayout, SpansGiveTheWireBytes) {
	Rng rng{0x1234567};
	for (const FormatInfo &fi : all_formats()) {
		for (int iter = 0; iter < 40; ++iter) {
			const int32_t w = 1 + int32_t(rng.below(40)), h = 1 + int32_t(rng.below(12));
			const size_t pad = iter % 2 ? 0 : rng.below(9);
			TestSrc src = make_src(fi.fourcc, w, h, pad, uint32_t(iter));
			Rect r = random_stream_rect(fi, rng, w, h);
			ASSERT_TRUE(rect_accepted(fi, r, w, h));
			const std::vector<uint8_t> want = pack_rect(src.img, r);
			PackedLayout l;
			ASSERT_EQ(packed_layout(fi.fourcc, r.width, r.height, &l), Status::Ok);
			ASSERT_EQ(l.total_bytes, want.size());
			PlaneRef planes[kMaxPlanes];
			for (int p = 0; p < fi.num_planes; ++p)
				planes[p] = {const_cast<uint8_t *>(src.img.planes[p].data), src.img.planes[p].stride};
			std::vector<uint8_t> got;
			uint64_t off = 0;
			while (off < l.total_bytes) {
				iovec iov[5];
				uint64_t covered = 0;
				const size_t max = iter % 3 == 0 ? 5 : 1 + rng.below(5);
				const size_t n =
					packed_spans(l, r.x, r.y, planes, off, 1 + rng.below(200), iov, max, &covered);
				ASSERT_GT(n, 0u);
				ASSERT_LE(n, max);
				uint64_t sum = 0;
				for (size_t i = 0; i < n; ++i) {
					auto *b = static_cast<uint8_t *>(iov[i].iov_base);
					got.insert(got.end(), b, b + iov[i].iov_len);
					sum += iov[i].iov_len;
				}
				ASSERT_EQ(sum, covered);
				off += covered;
			}
			ASSERT_EQ(got, want) << fi.name << " " << w << "x" << h << " rect " << r.x << "," << r.y << " "
					     << r.width << "x" << r.height;
			// Past the end: nothing.
			iovec iov[1];
			uint64_t covered = 7;
			EXPECT_EQ(packed_spans(l, r.x, r.y, planes, l.total_bytes, 100, iov, 1, &covered), 0u);
			EXPECT_EQ(covered, 0u);
		}
	}
}

TEST(StreamLayout, TightRowsAreOneSpan) {
	TestSrc src = make_src(f::XRGB8888, 64, 32, 0, 1);
	PackedLayout l;
	ASSERT_EQ(packed_layout(f::XRGB8888, 64, 30, &l), Status::Ok);
	PlaneRef plane{const_cast<uint8_t *>(src.img.planes[0].data), src.img.planes[0].stride};
	iovec iov[2];
	uint64_t covered = 0;
	ASSERT_EQ(packed_spans(l, 0, 2, &plane, 100, UINT64_MAX, iov, 2, &covered), 1u);
	EXPECT_EQ(iov[0].iov_base, plane.data + 2 * 256 + 100);
	EXPECT_EQ(iov[0].iov_len, l.total_bytes - 100);
	EXPECT_EQ(covered, l.total_bytes - 100);
	// A narrower rectangle: one span a row, as many as allowed.
	ASSERT_EQ(packed_layout(f::XRGB8888, 10, 30, &l), Status::Ok);
	ASSERT_EQ(packed_spans(l, 4, 0, &plane, 0, UINT64_MAX, iov, 2, &covered), 2u);
	EXPECT_EQ(iov[1].iov_base, plane.data + 256 + 16);
	EXPECT_EQ(covered, 80u);
}

class Assembler : public ::testing::TestWithParam<Pair> {};

// The same bytes in one piece, one byte at a time, in random pieces and through writable():
// the destination equals one convert_rects() of the rectangle (a row copy when in place),
// byte for byte, outside the rectangle included.
TEST_P(Assembler, AnySplitGivesOneConvert) {
	const Pair pair = GetParam();
	const FormatInfo &fi = *format_info(pair.src);
	Rng rng{0x9e3779b97f4a7c15ull ^ pair.src ^ (uint64_t{pair.dst} << 32)};
	for (int iter = 0; iter < 12; ++iter) {
		const int32_t w = 1 + int32_t(rng.below(70)), h = 1 + int32_t(rng.below(9));
		TestSrc src = make_src(pair.src, w, h, rng.below(5), uint32_t(iter + 7));
		Rect r = random_stream_rect(fi, rng, w, h);
		if (iter == 0) r = {0, 0, w, h};
		const std::vector<uint8_t> wire = pack_rect(src.img, r);
		const size_t pad = rng.below(9);
		TestDst want = make_dst_any(pair.dst, w, h, pad, 0x5a);
		reference_put(src.img, r, want.img);
		for (int split = 0; split < 4; ++split) {
			SCOPED_TRACE(pair_name(pair) + " " + std::to_string(w) + "x" + std::to_string(h) + " rect " +
				std::to_string(r.x) + "," + std::to_string(r.y) + " " + std::to_string(r.width) + "x" +
				std::to_string(r.height) + " split " + std::to_string(split));
			TestDst got = make_dst_any(pair.dst, w, h, pad, 0x5a);
			StreamAssembler a;
			ASSERT_EQ(a.init(pair.src, got.img), Status::Ok);
			EXPECT_EQ(a.converts(), pair.src != pair.dst);
			// The smallest window it takes, ending at a guard page.
			PackedLayout l;
			ASSERT_EQ(packed_layout(pair.src, r.width, r.height, &l), Status::Ok);
			GuardedBuffer tight(std::max<size_t>(1, l.group_bytes));
			ASSERT_EQ(a.begin(r, {tight.data(), size_t(l.group_bytes)}), AssemblyStatus::NeedMore);
			EXPECT_EQ(a.layout().total_bytes, wire.size());
			ASSERT_EQ(feed_split(a, wire, split, rng), AssemblyStatus::Complete);
			EXPECT_EQ(a.received(), wire.size());
			EXPECT_EQ(a.rows_done(), r.height);
			ASSERT_EQ(got.bytes(), want.bytes());
			// Complete: more bytes are refused.
			const uint8_t extra = 0;
			EXPECT_EQ(a.feed({&extra, 1}), AssemblyStatus::Complete);
			iovec iov[1];
			EXPECT_EQ(a.writable(iov, 1, 100), 0);
		}
	}
}

INSTANTIATE_TEST_SUITE_P(Pairs, Assembler, ::testing::ValuesIn(assembler_pairs()),
	[](const ::testing::TestParamInfo<Pair> &i) { return pair_name(i.param); });

// A full-width NV12 rectangle fed group by group: rows appear in the destination as soon as
// their group is complete, not before.
TEST(AssemblerProgress, ConvertsEachGroupWhenComplete) {
	TestSrc src = make_src(f::NV12, 8, 6, 0, 3);
	const Rect r{0, 0, 8, 6};
	const std::vector<uint8_t> wire = pack_rect(src.img, r);
	TestDst got = make_dst(f::XRGB8888, 8, 6, 0, 0);
	StreamAssembler a;
	ASSERT_EQ(a.init(f::NV12, got.img), Status::Ok);
	std::vector<uint8_t> window(1 << 20);
	ASSERT_EQ(a.begin(r, window), AssemblyStatus::NeedMore);
	// A group is 8 + 8 + 8 bytes.
	ASSERT_EQ(a.feed({wire.data(), 23}), AssemblyStatus::NeedMore);
	EXPECT_EQ(a.rows_done(), 0);
	EXPECT_EQ(got.px(0, 0), 0u);
	ASSERT_EQ(a.feed({wire.data() + 23, 1}), AssemblyStatus::NeedMore);
	EXPECT_EQ(a.rows_done(), 2);
	EXPECT_NE(got.px(0, 0), 0u);
	EXPECT_EQ(got.px(0, 2), 0u);
	ASSERT_EQ(a.feed({wire.data() + 24, wire.size() - 24}), AssemblyStatus::Complete);
	EXPECT_EQ(a.rows_done(), 6);
}

TEST(AssemblerErrors, InitRefusesWhatConvertRefuses) {
	TestDst d = make_dst(f::XRGB8888, 8, 4, 0, 0);
	StreamAssembler a;
	EXPECT_EQ(a.init(0x20202020, d.img), Status::UnknownFormat);
	EXPECT_EQ(a.init(f::XRGB8888, {0x20202020, 8, 4, d.img.data, d.img.stride, d.img.size}), Status::UnknownFormat);
	EXPECT_EQ(a.init(f::ARGB8888, d.img), Status::UnsupportedConversion); // no such kernel
	TestDst nv = make_dst(f::XRGB8888, 8, 4, 0, 0);
	DstImage as_nv12 = nv.img;
	as_nv12.fourcc = f::NV12;
	EXPECT_EQ(a.init(f::NV12, as_nv12), Status::UnsupportedConversion); // in place into two planes
	DstImage bad = d.img;
	bad.data = nullptr;
	EXPECT_EQ(a.init(f::NV12, bad), Status::NullPointer);
	bad = d.img;
	bad.stride = 31;
	EXPECT_EQ(a.init(f::NV12, bad), Status::StrideTooSmall);
	bad = d.img;
	bad.size -= 1;
	EXPECT_EQ(a.init(f::NV12, bad), Status::BufferTooSmall);
	bad = d.img;
	bad.height = 0;
	EXPECT_EQ(a.init(f::NV12, bad), Status::InvalidSize);
	ConvertOptions opt;
	opt.threads = -1;
	EXPECT_EQ(a.init(f::NV12, d.img, opt), Status::InvalidOption);
	// A failed init leaves nothing to begin.
	EXPECT_EQ(a.begin({0, 0, 2, 2}), AssemblyStatus::NotReady);
	EXPECT_EQ(a.status(), AssemblyStatus::NotReady);
	const uint8_t byte = 0;
	EXPECT_EQ(a.feed({&byte, 1}), AssemblyStatus::NotReady);
	EXPECT_EQ(a.arrived(1), AssemblyStatus::NotReady);
}

TEST(AssemblerErrors, BadRectanglesAndWindows) {
	TestDst d = make_dst(f::XRGB8888, 8, 5, 0, 0x11);
	const std::vector<uint8_t> before = d.bytes();
	StreamAssembler a;
	ASSERT_EQ(a.init(f::NV12, d.img), Status::Ok);
	std::vector<uint8_t> window(64);
	EXPECT_EQ(a.begin({1, 0, 2, 2}, window), AssemblyStatus::InvalidRect);
	EXPECT_EQ(a.begin({0, 0, 8, 6}, window), AssemblyStatus::InvalidRect);
	EXPECT_EQ(a.begin({0, 0, 3, 2}, window), AssemblyStatus::InvalidRect);
	EXPECT_EQ(a.begin({0, 0, 0, 2}, window), AssemblyStatus::InvalidRect);
	// A group of 8 wide NV12 is 24 bytes.
	EXPECT_EQ(a.begin({0, 0, 8, 2}, {window.data(), 23}), AssemblyStatus::WindowTooSmall);
	EXPECT_EQ(a.begin({0, 0, 8, 2}, {}), AssemblyStatus::WindowTooSmall);
	EXPECT_EQ(a.begin({0, 0, 8, 2}, {window.data(), 24}), AssemblyStatus::NeedMore);
	EXPECT_EQ(d.bytes(), before);
}

TEST(AssemblerErrors, MoreBytesThanTheRectangle) {
	TestDst d = make_dst(f::XRGB8888, 8, 4, 0, 0x11);
	const std::vector<uint8_t> before = d.bytes();
	StreamAssembler a;
	ASSERT_EQ(a.init(f::NV12, d.img), Status::Ok);
	std::vector<uint8_t> window(1 << 20), bytes(49, 0x80);
	// 8x4 NV12 packs to 48 bytes: 49 in one piece are refused, none taken.
	ASSERT_EQ(a.begin({0, 0, 8, 4}, window), AssemblyStatus::NeedMore);
	EXPECT_EQ(a.feed(bytes), AssemblyStatus::TooManyBytes);
	EXPECT_EQ(a.received(), 0u);
	EXPECT_EQ(d.bytes(), before);
	// Sticky until the next begin().
	EXPECT_EQ(a.feed({bytes.data(), 1}), AssemblyStatus::TooManyBytes);
	iovec iov[4];
	EXPECT_EQ(a.writable(iov, 4, 100), 0);
	// arrived() beyond the offer: refused.
	ASSERT_EQ(a.begin({0, 0, 8, 4}, window), AssemblyStatus::NeedMore);
	ASSERT_EQ(a.writable(iov, 4, 10), 1);
	EXPECT_EQ(iov[0].iov_len, 10u);
	EXPECT_EQ(a.arrived(11), AssemblyStatus::TooManyBytes);
	// Without a writable() first, nothing was offered.
	ASSERT_EQ(a.begin({0, 0, 8, 4}, window), AssemblyStatus::NeedMore);
	EXPECT_EQ(a.arrived(1), AssemblyStatus::TooManyBytes);
	// writable() never offers past the rectangle.
	ASSERT_EQ(a.begin({0, 0, 8, 4}, window), AssemblyStatus::NeedMore);
	ASSERT_EQ(a.writable(iov, 4, UINT64_MAX), 1);
	EXPECT_EQ(iov[0].iov_len, 48u);
	EXPECT_EQ(a.arrived(40), AssemblyStatus::NeedMore);
	ASSERT_EQ(a.writable(iov, 4, UINT64_MAX), 1);
	EXPECT_EQ(iov[0].iov_len, 8u);
	EXPECT_EQ(a.feed({bytes.data(), 9}), AssemblyStatus::TooManyBytes);
	EXPECT_STREQ(assembly_status_str(AssemblyStatus::TooManyBytes), "more bytes than announced");
}

// The fuzz target's body on random inputs, so every build runs it (libFuzzer needs clang).
TEST(AssemblerFuzzBody, RandomInputs) {
	Rng rng{42};
	std::vector<uint8_t> in;
	for (int i = 0; i < 3000; ++i) {
		in.resize(rng.below(64));
		for (uint8_t &b : in) b = uint8_t(rng.next());
		ASSERT_EQ(fuzz_stream_assembler(in.data(), in.size()), 0);
	}
}

} // namespace
} // namespace pixelport::core::test
