// Stream test helpers: the wire layout written out from the protocol's text
// (protocols/pixelport-stream-v1.xml, pp_stream_v1.write), independently of the core's
// stream_layout.cpp, and one assembler check shared by the unit tests and the libFuzzer target.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "pixelport/core/convert.hpp"
#include "pixelport/core/format.hpp"
#include "pixelport/core/stream_layout.hpp"
#include "test_support.hpp"

namespace pixelport::core::test {

// "For each group of rows (vsub rows) from the top, the group's rows of plane 0, then its
// row of each chroma plane in plane order. A plane row holds ceil(width / hsub) units."
inline std::vector<uint8_t> pack_rect(const SrcImage &src, const Rect &r) {
	const FormatInfo &fi = *format_info(src.fourcc);
	std::vector<uint8_t> out;
	for (int32_t y = r.y; y < r.y + r.height; y += fi.vsub) {
		for (int p = 0; p < fi.num_planes; ++p) {
			const PlaneInfo &pi = fi.planes[p];
			const int32_t units = (r.width + pi.hsub - 1) / pi.hsub;
			// Plane 0: the group's rows (fewer at the bottom edge); chroma: its one row.
			const int32_t rows = p == 0 ? std::min<int32_t>(fi.vsub, r.y + r.height - y) : 1;
			for (int32_t k = 0; k < rows; ++k) {
				const uint8_t *row = src.planes[p].data +
					size_t((y + k) / pi.vsub) * src.planes[p].stride +
					size_t(r.x / pi.hsub) * pi.unit_bytes;
				out.insert(out.end(), row, row + size_t(units) * pi.unit_bytes);
			}
		}
	}
	return out;
}

// Whether the protocol accepts rectangle r of a w x h buffer of `fi` (its text, again).
inline bool rect_accepted(const FormatInfo &fi, const Rect &r, int32_t w, int32_t h) {
	if (r.x < 0 || r.y < 0 || r.width <= 0 || r.height <= 0 || int64_t{r.x} + r.width > w ||
		int64_t{r.y} + r.height > h)
		return false;
	return r.x % fi.hsub == 0 && r.y % fi.vsub == 0 && (r.width % fi.hsub == 0 || r.x + r.width == w) &&
		(r.height % fi.vsub == 0 || r.y + r.height == h);
}

// The destination as one convert of the rectangle (or a copy of its rows when the wire format
// is the destination's) gives it: what the assembler must produce.
inline void reference_put(const SrcImage &src, const Rect &r, const DstImage &dst) {
	if (src.fourcc != dst.fourcc) {
		if (convert_rects(src, dst, {&r, 1}) != Status::Ok) std::abort();
		return;
	}
	const size_t bpp = format_info(src.fourcc)->planes[0].unit_bytes;
	for (int32_t y = r.y; y < r.y + r.height; ++y)
		std::memcpy(dst.data + size_t(y) * dst.stride + size_t(r.x) * bpp,
			src.planes[0].data + size_t(y) * src.planes[0].stride + size_t(r.x) * bpp,
			size_t(r.width) * bpp);
}

// Destination image of `code` (4 or 8 bytes a pixel) filled with `fill`, ending at a guard page.
inline TestDst make_dst_any(uint32_t code, int32_t w, int32_t h, size_t pad, uint8_t fill) {
	TestDst t;
	const size_t bpp = format_info(code)->planes[0].unit_bytes;
	const size_t stride = bpp * size_t(w) + pad;
	const size_t size = exact_size(stride, uint64_t(h), bpp * size_t(w));
	t.buf = std::make_unique<GuardedBuffer>(size);
	std::memset(t.buf->data(), fill, size);
	t.img = {code, w, h, t.buf->data(), stride, size};
	return t;
}

// Minimal xorshift, so a fuzz input means the same on every run.
struct Rng {
	uint64_t s;
	uint64_t next() {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		return s;
	}
	uint64_t below(uint64_t n) { return n ? next() % n : 0; }
};

// Feeds `bytes` into `a` in pieces chosen by `rng` (split 0: one piece; 1: single bytes;
// 2: random sizes; 3: through writable()/arrived() with random budgets and iovec counts).
// Returns the last status.
inline AssemblyStatus feed_split(StreamAssembler &a, std::span<const uint8_t> bytes, int split, Rng &rng) {
	AssemblyStatus st = a.status();
	size_t pos = 0;
	while (pos < bytes.size()) {
		if (split == 3) {
			iovec iov[8];
			const int n = a.writable(iov, 1 + int(rng.below(8)), 1 + rng.below(4096));
			uint64_t got = 0;
			for (int i = 0; i < n && pos < bytes.size(); ++i) {
				const size_t k = std::min<size_t>(iov[i].iov_len, bytes.size() - pos);
				std::memcpy(iov[i].iov_base, bytes.data() + pos, k);
				pos += k;
				got += k;
			}
			if (n == 0) return a.status();
			st = a.arrived(got);
		} else {
			size_t k = split == 0 ? bytes.size() - pos : split == 1 ? 1 : 1 + rng.below(3 * 1024);
			k = std::min(k, bytes.size() - pos);
			st = a.feed(bytes.subspan(pos, k));
			pos += k;
		}
		if (st != AssemblyStatus::NeedMore) break;
	}
	return st;
}

// (wire format, destination format) pairs the assembler takes: every conversion of the
// table, and in place (a plain copy) for the other single-plane formats.
inline std::vector<Pair> assembler_pairs() {
	std::vector<Pair> out = all_pairs();
	for (const FormatInfo &fi : all_formats()) {
		const bool listed = std::any_of(out.begin(), out.end(),
			[&](const Pair &p) { return p.src == fi.fourcc && p.dst == fi.fourcc; });
		if (fi.num_planes == 1 && fi.hsub == 1 && fi.vsub == 1 && !listed)
			out.push_back({fi.fourcc, fi.fourcc});
	}
	return out;
}

// One fuzz input: a format pair, image and rectangle (valid or not), a window size, how the
// bytes are split, and whether one byte too many or too few arrive. Aborts when the
// assembler's answer or the destination differs from the protocol's text and convert_rects():
// rows it says are done equal one convert of them, every other byte is untouched.
inline int fuzz_stream_assembler(const uint8_t *data, size_t size) {
	if (size < 12) return 0;
	static const std::vector<Pair> pairs = assembler_pairs();
	const Pair pair = pairs[data[0] % pairs.size()];
	const FormatInfo &fi = *format_info(pair.src);
	const int32_t w = 1 + data[1] % 48, h = 1 + data[2] % 12;
	const Rect r{int8_t(data[3]) % (w + 2), int8_t(data[4]) % (h + 2), int8_t(data[5]) % (w + 3),
		int8_t(data[6]) % (h + 3)};
	const int split = data[7] % 4;
	Rng rng{1 + (uint64_t{data[8]} | uint64_t{data[9]} << 8)};
	const uint8_t flags = data[10], cut = data[11];
	TestSrc src = make_src(pair.src, w, h, data[8] % 5, data[9]);
	const size_t pad = data[1] % 3;
	TestDst got = make_dst_any(pair.dst, w, h, pad, 0xa5);
	StreamAssembler a;
	if (a.init(pair.src, got.img) != Status::Ok) std::abort();
	PackedLayout l{};
	const bool valid = rect_accepted(fi, r, w, h);
	if (valid && packed_layout(pair.src, r.width, r.height, &l) != Status::Ok) std::abort();
	const bool small = (flags & 0x10) && a.converts() && valid;
	const size_t win_size = small ? size_t(l.group_bytes) - 1 : size_t(l.group_bytes) + (flags >> 5) * 13;
	GuardedBuffer window(std::max<size_t>(1, win_size));
	const AssemblyStatus b = a.begin(r, {window.data(), win_size});
	const std::vector<uint8_t> fill = got.bytes();
	if (!valid || small) {
		if (b != (valid ? AssemblyStatus::WindowTooSmall : AssemblyStatus::InvalidRect) || got.bytes() != fill)
			std::abort();
		return 0;
	}
	if (b != AssemblyStatus::NeedMore) std::abort();
	std::vector<uint8_t> wire = pack_rect(src.img, r);
	if (wire.size() != l.total_bytes) std::abort();
	const bool extra = flags & 1, shorter = (flags & 2) && !extra;
	if (extra) wire.push_back(cut);
	if (shorter) wire.resize(wire.size() * cut / 256);
	const AssemblyStatus st = feed_split(a, wire, split, rng);
	const uint64_t total = l.total_bytes;
	if (st == AssemblyStatus::Complete) {
		if (shorter || a.received() != total || a.rows_done() != r.height) std::abort();
	} else if (st == AssemblyStatus::NeedMore) {
		if (!shorter || a.received() != wire.size()) std::abort();
	} else if (st != AssemblyStatus::TooManyBytes || !extra || a.received() >= total) {
		std::abort();
	}
	// Rows done: a whole group's rows once its last byte is in.
	const uint64_t groups = a.received() / l.group_bytes;
	const int32_t done = int32_t(std::min<uint64_t>(groups * uint64_t(l.group_rows), uint64_t(r.height)));
	if (a.rows_done() != (a.received() == total ? r.height : done)) std::abort();
	TestDst want = make_dst_any(pair.dst, w, h, pad, 0xa5);
	reference_put(src.img, r, want.img);
	const size_t row_bytes = size_t(w) * format_info(pair.dst)->planes[0].unit_bytes;
	for (int32_t y = 0; y < h; ++y) {
		const uint8_t *g = got.img.data + size_t(y) * got.img.stride;
		const bool in = y >= r.y && y < r.y + a.rows_done();
		if (!in && !a.converts() && y == r.y + a.rows_done())
			continue; // in place: the row being received holds what arrived of it
		const uint8_t *e =
			in ? want.img.data + size_t(y) * want.img.stride : fill.data() + size_t(y) * got.img.stride;
		if (std::memcmp(g, e, row_bytes) != 0) std::abort();
	}
	return 0;
}

} // namespace pixelport::core::test
