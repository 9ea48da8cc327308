// Validation, kernel choice and the band driver.
#include "pixelport/core/convert.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>
#include <unistd.h>

#include "kernels.hpp"
#include "prepared.hpp"

// x86 only: non-temporal stores (SSE2) and the CPU's ISA (meson builds the x86 kernel
// tables only for x86 hosts and says which with PP_HAVE_KERNELS_<ISA>).
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#define PP_X86 1
#endif

namespace pixelport::core {
namespace {

using detail::KernelEntry;
using detail::RowFn;
using detail::RowParams;
using detail::RowSrc;

// Expanded, validated area: [x0, x1) x [y0, y1), on the chroma grid.
struct Area {
	int32_t x0, x1, y0, y1;
};

struct Job {
	const FormatInfo *fi;
	const SrcImage *src;
	const DstImage *dst;
	RowFn fn;
	RowParams par;
	std::span<const Rect> rects; // validated; expanded on use, so nothing is allocated
	bool streaming;
};

constexpr int32_t kMaxThreads = 64;

Status check_plane(const uint8_t *data, size_t stride, size_t size, uint64_t row_bytes, uint64_t rows) {
	if (!data) return Status::NullPointer;
	if (stride < row_bytes) return Status::StrideTooSmall;
	uint64_t need;
	if (__builtin_mul_overflow(uint64_t{stride}, rows - 1, &need) || __builtin_add_overflow(need, row_bytes, &need))
		return Status::Overflow;
	return need <= size ? Status::Ok : Status::BufferTooSmall;
}

// Enum values come from callers that may have cast a client's number: check them.
bool options_ok(const ConvertOptions &opt) {
	return opt.threads >= 0 && opt.band_rows >= 0 && opt.matrix <= YuvMatrix::BT2020 &&
		opt.range <= YuvRange::Full && opt.chroma_location <= ChromaLocation::Type5 &&
		opt.alpha <= AlphaMode::Straight;
}

Status validate(const SrcImage &src, const DstImage &dst, const ConvertOptions &opt, const FormatInfo **out) {
	const FormatInfo *fi = format_info(src.fourcc);
	const FormatInfo *di = format_info(dst.fourcc);
	if (!fi || !di) return Status::UnknownFormat;
	if (!can_convert(src.fourcc, dst.fourcc)) return Status::UnsupportedConversion;
	if (src.width <= 0 || src.height <= 0) return Status::InvalidSize;
	if (dst.width != src.width || dst.height != src.height) return Status::SizeMismatch;
	if (!options_ok(opt)) return Status::InvalidOption;
	const auto w = static_cast<uint32_t>(src.width), h = static_cast<uint32_t>(src.height);
	for (int i = 0; i < fi->num_planes; ++i) {
		const SrcPlane &p = src.planes[i];
		if (Status s = check_plane(p.data, p.stride, p.size, min_stride(*fi, i, w), plane_rows(*fi, i, h));
			s != Status::Ok)
			return s;
	}
	if (Status s = check_plane(dst.data, dst.stride, dst.size, min_stride(*di, 0, w), h); s != Status::Ok) return s;
	*out = fi;
	return Status::Ok;
}

// src_bits/dst_bits: 8 or 10. The kernels shift by 13 + src_bits - dst_bits, i.e.
// they treat n-bit codes as 8-bit codes times 2^(n-8). Exact normalisation divides by
// 219 * 2^(n-8) (limited) or 2^n - 1 (full) and multiplies by 2^m - 1, so the
// coefficients carry the ratio of the two: 1 for 8 -> 8 bits, 1023/1020 for 10-bit
// output (limited), 1020/1023 for 10 -> 8 bits (full).
RowParams row_params(YuvMatrix m, YuvRange r, int src_bits, int dst_bits, bool premultiply) {
	// Luma weights: ITU-R BT.601-7, BT.709-6, BT.2020-2 (non-constant luminance).
	double kr = 0.299, kb = 0.114;
	if (m == YuvMatrix::BT709) {
		kr = 0.2126;
		kb = 0.0722;
	} else if (m == YuvMatrix::BT2020) {
		kr = 0.2627;
		kb = 0.0593;
	}
	const double kg = 1.0 - kr - kb;
	const bool lim = r == YuvRange::Limited;
	const double out_max = (1 << dst_bits) - 1;
	const double depth = lim ? out_max / (255.0 * (1 << (dst_bits - 8)))
				 : out_max * (1 << (src_bits - dst_bits)) / ((1 << src_bits) - 1);
	const double ys = (lim ? 255.0 / 219.0 : 1.0) * depth, cs = (lim ? 255.0 / 224.0 : 1.0) * depth;
	const double one = 1 << detail::kYuvShift;
	auto q = [&](double v) { return static_cast<int32_t>(std::lround(v * one)); };
	return {q(ys), lim ? 16 : 0, q(2 * (1 - kr) * cs), q(2 * kb * (1 - kb) / kg * cs),
		q(2 * kr * (1 - kr) / kg * cs), q(2 * (1 - kb) * cs), q(2 * ys), premultiply};
}

RowParams row_params(const ConvertOptions &opt, const FormatInfo &src, const FormatInfo &dst) {
	const bool premultiply = src.has_alpha && opt.alpha == AlphaMode::Straight;
	if (src.model != ColorModel::YUV) { // RGB rows read no coefficients (and bits < 8 would not fit them)
		RowParams p{};
		p.premultiply = premultiply;
		return p;
	}
	return row_params(opt.matrix, opt.range, src.bits, dst.bits, premultiply);
}

bool env_force_scalar() {
	const char *e = std::getenv("PIXELPORT_FORCE_SCALAR");
	return e && e[0] && std::strcmp(e, "0") != 0;
}

RowFn find_kernel(uint32_t src, uint32_t dst, const ConvertOptions &opt) {
	[[maybe_unused]] Isa isa = std::min(best_isa(), opt.max_isa); // unread with only the scalar table
	if (opt.force_scalar || env_force_scalar()) isa = Isa::Scalar;
	// The best table built at or below isa.
	std::span<const KernelEntry> table = detail::kernels_scalar();
#if PP_HAVE_KERNELS_SSE2
	if (isa >= Isa::SSE2) table = detail::kernels_sse2();
#endif
#if PP_HAVE_KERNELS_SSSE3
	if (isa >= Isa::SSSE3) table = detail::kernels_ssse3();
#endif
#if PP_HAVE_KERNELS_AVX2
	if (isa >= Isa::AVX2) table = detail::kernels_avx2();
#endif
#if PP_HAVE_KERNELS_NEON
	if (isa >= Isa::Neon) table = detail::kernels_neon();
#endif
	for (const KernelEntry &k : table)
		if (k.src == src && k.dst == dst) return k.fn;
	return nullptr;
}

size_t default_band_bytes() {
	static const size_t bytes = [] {
		const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
		return l2 > 0 ? static_cast<size_t>(l2) / 2 : size_t{1} << 20;
	}();
	return bytes;
}

int32_t round_up(int32_t v, int32_t m) { return (v + m - 1) / m * m; }

// A validated rectangle out to the chroma grid; the far edge may stop at an odd
// image edge. No overflow: x + width <= image width was checked in 64 bits.
Area area_of(const Job &job, const Rect &r) {
	const int32_t hs = job.fi->hsub, vs = job.fi->vsub;
	return {r.x / hs * hs, std::min(round_up(r.x + r.width, hs), job.src->width), r.y / vs * vs,
		std::min(round_up(r.y + r.height, vs), job.src->height)};
}

int32_t band_rows_for(const Job &job, const ConvertOptions &opt, int32_t max_width) {
	const int32_t vsub = job.fi->vsub;
	if (opt.band_rows > 0) return round_up(opt.band_rows, vsub);
	const auto w = static_cast<uint32_t>(max_width);
	uint64_t row_bytes = 4ull * w;
	for (int i = 0; i < job.fi->num_planes; ++i) row_bytes += min_stride(*job.fi, i, w) / job.fi->planes[i].vsub;
	const size_t band = opt.band_bytes ? opt.band_bytes : default_band_bytes();
	const uint64_t rows = std::max<uint64_t>(1, band / std::max<uint64_t>(1, row_bytes));
	return round_up(static_cast<int32_t>(std::min<uint64_t>(rows, INT32_MAX / 2)), vsub);
}

uint64_t streaming_min_bytes() {
	static const uint64_t bytes = [] {
		const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
		return std::max<uint64_t>(kStreamingMinBytes, l3 > 0 ? uint64_t(l3) / 2 : 0);
	}();
	return bytes;
}

// Copy with 16-byte non-temporal stores (SSE2, baseline on x86-64) where aligned;
// a plain copy elsewhere.
void stream_copy(uint8_t *d, const uint8_t *s, size_t n) {
#if defined(__SSE2__)
	const size_t head = std::min(n, (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16);
	std::memcpy(d, s, head);
	size_t i = head;
	for (; i + 64 <= n; i += 64)
		for (size_t k = 0; k < 64; k += 16)
			_mm_stream_si128(reinterpret_cast<__m128i *>(d + i + k),
				_mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + k)));
	std::memcpy(d + i, s + i, n - i);
#else
	std::memcpy(d, s, n);
#endif
}

// Pixels [x, x + w) of row y; x on the chroma grid.
void convert_piece(const Job &job, int32_t x, int32_t w, int32_t y, uint8_t *d) {
	const FormatInfo &fi = *job.fi;
	RowSrc rs{};
	for (int i = 0; i < fi.num_planes; ++i) {
		const PlaneInfo &p = fi.planes[i];
		const SrcPlane &sp = job.src->planes[i];
		rs.p[i] = sp.data + uint64_t(y / p.vsub) * sp.stride + uint64_t(x / p.hsub) * p.unit_bytes;
	}
	job.fn(rs, d, w, job.par);
}

constexpr int32_t kPiecePixels = 2048; // 8 KiB of destination: stays in L1

void convert_row(const Job &job, const Area &a, int32_t y) {
	uint8_t *d = job.dst->data + uint64_t(y) * job.dst->stride + uint64_t(a.x0) * 4;
	if (!job.streaming) {
		convert_piece(job, a.x0, a.x1 - a.x0, y, d);
		return;
	}
	alignas(64) uint8_t buf[4 * kPiecePixels];
	for (int32_t x = a.x0; x < a.x1; x += kPiecePixels) {
		const int32_t w = std::min(kPiecePixels, a.x1 - x);
		convert_piece(job, x, w, y, buf);
		stream_copy(d + uint64_t(x - a.x0) * 4, buf, 4 * size_t(w));
	}
}

// Rows [y_begin, y_end) of every area, band by band, so that all damage in a band is
// done while its rows are in cache.
void run_bands(const Job &job, int32_t y_begin, int32_t y_end, int32_t band) {
	for (int32_t yb = y_begin; yb < y_end; yb += std::min(band, y_end - yb)) {
		const int32_t ye = yb + std::min(band, y_end - yb);
		for (const Rect &r : job.rects) {
			const Area a = area_of(job, r);
			for (int32_t y = std::max(a.y0, yb), e = std::min(a.y1, ye); y < e; ++y) convert_row(job, a, y);
		}
	}
#if defined(__SSE2__)
	if (job.streaming) _mm_sfence(); // order the non-temporal stores before the caller's next access
#endif
}

int32_t thread_count(const ConvertOptions &opt, int64_t pixels) {
	int32_t n = opt.threads;
	if (n == 0) n = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
	const int64_t by_size = std::max<int64_t>(1, pixels / kMinPixelsPerThread);
	return static_cast<int32_t>(std::min<int64_t>({n, by_size, kMaxThreads}));
}

Status run(Job &job, const ConvertOptions &opt) {
	if (job.rects.empty()) return Status::Ok;
	int32_t y_begin = INT32_MAX, y_end = 0, max_w = 0;
	int64_t pixels = 0;
	for (const Rect &r : job.rects) {
		const Area a = area_of(job, r);
		y_begin = std::min(y_begin, a.y0);
		y_end = std::max(y_end, a.y1);
		max_w = std::max(max_w, a.x1 - a.x0);
		pixels += int64_t(a.x1 - a.x0) * (a.y1 - a.y0);
	}
	const int32_t band = band_rows_for(job, opt, max_w);
	const uint64_t dst_bytes = uint64_t(pixels) * 4;
	job.streaming = opt.stores == ConvertOptions::Stores::Streaming ||
		(opt.stores == ConvertOptions::Stores::Auto && dst_bytes >= streaming_min_bytes());
	const int32_t vsub = job.fi->vsub;
	const int32_t n = std::min(thread_count(opt, pixels), (y_end - y_begin + vsub - 1) / vsub);
	if (n <= 1) {
		run_bands(job, y_begin, y_end, band);
		return Status::Ok;
	}
	// Contiguous chunks of rows on the chroma grid; the calling thread takes the first.
	const int32_t chunk = round_up((y_end - y_begin + n - 1) / n, vsub);
	std::array<std::thread, kMaxThreads> workers;
	int nw = 0;
	for (int32_t y = y_begin + chunk; y < y_end; y += chunk) {
		const int32_t e = std::min(y_end, y + chunk);
		try {
			workers[nw] = std::thread(run_bands, std::cref(job), y, e, band);
			++nw;
		} catch (const std::system_error &) {
			run_bands(job, y, e, band); // no thread to be had: do it here
		}
	}
	run_bands(job, y_begin, std::min(y_end, y_begin + chunk), band);
	for (int i = 0; i < nw; ++i) workers[i].join();
	return Status::Ok;
}

Status prepare(const SrcImage &src, const DstImage &dst, const ConvertOptions &opt, Job &job) {
	if (Status s = validate(src, dst, opt, &job.fi); s != Status::Ok) return s;
	job.src = &src;
	job.dst = &dst;
	job.fn = find_kernel(src.fourcc, dst.fourcc, opt);
	if (!job.fn) return Status::UnsupportedConversion;
	job.streaming = false;
	job.par = row_params(opt, *job.fi, *format_info(dst.fourcc));
	return Status::Ok;
}

} // namespace

const char *status_str(Status s) {
	switch (s) {
	case Status::Ok: return "ok";
	case Status::NullPointer: return "null data pointer";
	case Status::UnknownFormat: return "unknown format";
	case Status::UnsupportedConversion: return "no conversion between these formats";
	case Status::InvalidSize: return "width or height not positive";
	case Status::SizeMismatch: return "destination size differs from source";
	case Status::StrideTooSmall: return "stride smaller than the row";
	case Status::BufferTooSmall: return "buffer smaller than the image";
	case Status::Overflow: return "size overflows 64 bits";
	case Status::RectOutOfBounds: return "rectangle outside the image";
	case Status::BadRowRange: return "row range outside the image or off the chroma grid";
	case Status::InvalidOption: return "invalid option";
	}
	return "unknown status";
}

const char *isa_name(Isa isa) {
	switch (isa) {
	case Isa::Scalar: return "scalar";
	case Isa::SSE2: return "sse2";
	case Isa::SSSE3: return "ssse3";
	case Isa::AVX2: return "avx2";
	case Isa::Neon: return "neon";
	}
	return "unknown";
}

Isa best_isa() {
	// Only tables that were built; the scalar one everywhere.
	static const Isa best = [] {
#if PP_X86
		__builtin_cpu_init();
#if PP_HAVE_KERNELS_AVX2
		// The AVX2 kernels also use F16C (every AVX2 CPU has it, but check).
		if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) return Isa::AVX2;
#endif
#if PP_HAVE_KERNELS_SSSE3
		if (__builtin_cpu_supports("ssse3")) return Isa::SSSE3;
#endif
#if PP_HAVE_KERNELS_SSE2
		if (__builtin_cpu_supports("sse2")) return Isa::SSE2;
#endif
#endif
#if PP_HAVE_KERNELS_NEON
		return Isa::Neon; // ASIMD is part of the arm64 baseline: nothing to detect
#endif
		return Isa::Scalar;
	}();
	return best;
}

Status convert_rows(const SrcImage &src, const DstImage &dst, int32_t y0, int32_t y1, const ConvertOptions &opt) {
	Job job;
	if (Status s = prepare(src, dst, opt, job); s != Status::Ok) return s;
	const int32_t vsub = job.fi->vsub;
	if (y0 < 0 || y1 > src.height || y0 >= y1 || y0 % vsub != 0 || (y1 % vsub != 0 && y1 != src.height))
		return Status::BadRowRange;
	const Rect r{0, y0, src.width, y1 - y0};
	job.rects = {&r, 1};
	return run(job, opt);
}

Status convert_rects(
	const SrcImage &src, const DstImage &dst, std::span<const Rect> damage, const ConvertOptions &opt) {
	Job job;
	if (Status s = prepare(src, dst, opt, job); s != Status::Ok) return s;
	for (const Rect &r : damage) {
		if (r.width <= 0 || r.height <= 0) return Status::InvalidSize;
		if (r.x < 0 || r.y < 0 || int64_t{r.x} + r.width > src.width || int64_t{r.y} + r.height > src.height)
			return Status::RectOutOfBounds;
	}
	job.rects = damage;
	return run(job, opt);
}

Status convert_image(const SrcImage &src, const DstImage &dst, const ConvertOptions &opt) {
	const Rect all{0, 0, src.width, src.height};
	return convert_rects(src, dst, {&all, 1}, opt);
}

YuvMatrix default_yuv_matrix(int32_t width, int32_t height) {
	(void)width;
	return height >= 2160 ? YuvMatrix::BT2020 : height > 576 ? YuvMatrix::BT709 : YuvMatrix::BT601;
}

uint32_t pick_target_for_alpha(uint32_t src, std::span<const uint32_t> renderer, AlphaMode alpha) {
	const FormatInfo *fi = format_info(src);
	if (!fi) return 0;
	if (alpha != AlphaMode::Straight || !fi->has_alpha) return pick_target(src, renderer);
	return pick_converted_target(src, renderer); // premultiplied on the way
}

bool needs_conversion_for_alpha(uint32_t fourcc) {
	const FormatInfo *fi = format_info(fourcc);
	return fi && fi->has_alpha;
}

bool needs_conversion(uint32_t src, uint32_t target, AlphaMode alpha) {
	return src != target || (alpha == AlphaMode::Straight && needs_conversion_for_alpha(src));
}

Status detail::prepare_conversion(
	uint32_t src_fourcc, uint32_t dst_fourcc, const ConvertOptions &opt, PreparedConversion *out) {
	const FormatInfo *fi = format_info(src_fourcc);
	const FormatInfo *di = format_info(dst_fourcc);
	if (!fi || !di) return Status::UnknownFormat;
	if (!can_convert(src_fourcc, dst_fourcc)) return Status::UnsupportedConversion;
	if (!options_ok(opt)) return Status::InvalidOption;
	const RowFn fn = find_kernel(src_fourcc, dst_fourcc, opt);
	if (!fn) return Status::UnsupportedConversion;
	*out = {fi, di, fn, row_params(opt, *fi, *di), opt};
	return Status::Ok;
}

void detail::convert_rows_prepared(
	const PreparedConversion &pc, const SrcImage &src, const DstImage &dst, int32_t y0, int32_t y1) {
	Job job;
	job.fi = pc.src;
	job.src = &src;
	job.dst = &dst;
	job.fn = pc.fn;
	job.par = pc.par;
	job.streaming = false;
	const Rect r{0, y0, src.width, y1 - y0};
	job.rects = {&r, 1};
	run(job, pc.opt);
}

} // namespace pixelport::core
