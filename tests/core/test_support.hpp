// Test helpers: buffers that end right before an inaccessible page, and source /
// destination images built from the format table.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "pixelport/core/convert.hpp"
#include "pixelport/core/format.hpp"

namespace pixelport::core::test {

// The instruction sets above scalar whose tables this CPU runs, each a distinct table:
// x86's from SSE2 up to best_isa(); on arm64 only Neon (x86 caps select scalar there).
inline std::vector<Isa> simd_isas() {
	std::vector<Isa> out;
	for (int i = 1; i <= static_cast<int>(best_isa()); ++i) {
		const Isa isa = static_cast<Isa>(i);
#if defined(__aarch64__)
		if (isa != Isa::Neon) continue;
#endif
		out.push_back(isa);
	}
	return out;
}

// `size` bytes whose last byte is immediately followed by a PROT_NONE page, so any
// read or write past the end faults (also under ASan, which does not see mmap memory
// as poisoned but does not hide the fault either). The start is wherever that puts
// it, so odd sizes give unaligned pointers.
class GuardedBuffer {
public:
	explicit GuardedBuffer(size_t size) : size_(size) {
		const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
		map_len_ = (size + page - 1) / page * page + page;
		void *m = mmap(nullptr, map_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) throw std::runtime_error("mmap failed");
		map_ = static_cast<uint8_t *>(m);
		if (mprotect(map_ + map_len_ - page, page, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
		data_ = map_ + map_len_ - page - size;
	}
	~GuardedBuffer() { munmap(map_, map_len_); }
	GuardedBuffer(const GuardedBuffer &) = delete;
	GuardedBuffer &operator=(const GuardedBuffer &) = delete;

	uint8_t *data() { return data_; }
	size_t size() const { return size_; }

private:
	uint8_t *map_ = nullptr;
	uint8_t *data_ = nullptr;
	size_t map_len_ = 0;
	size_t size_ = 0;
};

inline size_t exact_size(size_t stride, uint64_t rows, uint64_t row_bytes) {
	return stride * (rows - 1) + row_bytes; // no padding after the last row
}

struct TestSrc {
	std::vector<std::unique_ptr<GuardedBuffer>> bufs;
	SrcImage img;
};

// Random content (padding included); stride = minimum + pad.
inline TestSrc make_src(uint32_t code, int32_t w, int32_t h, size_t pad, uint32_t seed) {
	const FormatInfo *fi = format_info(code);
	TestSrc t;
	t.img.fourcc = code;
	t.img.width = w;
	t.img.height = h;
	std::mt19937 rng(seed);
	for (int i = 0; i < fi->num_planes; ++i) {
		const uint64_t row = min_stride(*fi, i, static_cast<uint32_t>(w));
		const size_t stride = row + pad;
		const size_t size = exact_size(stride, plane_rows(*fi, i, static_cast<uint32_t>(h)), row);
		auto b = std::make_unique<GuardedBuffer>(size);
		for (size_t k = 0; k < size; ++k) b->data()[k] = static_cast<uint8_t>(rng());
		t.img.planes[i] = {b->data(), stride, size};
		t.bufs.push_back(std::move(b));
	}
	return t;
}

struct TestDst {
	std::unique_ptr<GuardedBuffer> buf;
	DstImage img;

	uint32_t px(int32_t x, int32_t y) const {
		uint32_t v;
		std::memcpy(&v, img.data + y * img.stride + 4 * static_cast<size_t>(x), 4);
		return v;
	}
	std::vector<uint8_t> bytes() const { return {img.data, img.data + img.size}; }
};

inline TestDst make_dst(uint32_t code, int32_t w, int32_t h, size_t pad, uint8_t fill) {
	TestDst t;
	const size_t stride = 4 * static_cast<size_t>(w) + pad;
	const size_t size = exact_size(stride, static_cast<uint64_t>(h), 4 * static_cast<size_t>(w));
	t.buf = std::make_unique<GuardedBuffer>(size);
	std::memset(t.buf->data(), fill, size);
	t.img = {code, w, h, t.buf->data(), stride, size};
	return t;
}

// Every (source, target) pair of the format table.
struct Pair {
	uint32_t src, dst;
};
inline std::vector<Pair> all_pairs() {
	std::vector<Pair> out;
	for (const FormatInfo &fi : all_formats())
		for (int i = 0; i < fi.num_targets; ++i) out.push_back({fi.fourcc, fi.targets[i]});
	return out;
}

inline std::string pair_name(const Pair &p) { return std::string(format_name(p.src)) + "_to_" + format_name(p.dst); }
inline void PrintTo(const Pair &p, std::ostream *os) { *os << pair_name(p); }

} // namespace pixelport::core::test
