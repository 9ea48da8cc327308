// pixelport-bench-convert: conversion throughput against memcpy of the destination
// size, measured in the same run, printed as a ratio table at the end.
// See bench/README.md for the command and how to read it.
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pixelport/core/convert.hpp"
#include "pixelport/core/format.hpp"

#ifdef PP_HAVE_LIBYUV
#include <libyuv/convert_argb.h>
#include <libyuv/planar_functions.h>
#endif

namespace {

using namespace pixelport::core;
namespace f = fourcc;

struct Size {
	int32_t w, h;
	const char *name;
};
constexpr Size kSizes[] = {
	{256, 256, "256x256"}, {1920, 1080, "1920x1080"}, {3840, 2160, "3840x2160"}, {8192, 8192, "8192x8192"}};

// Page-aligned, pre-faulted memory with a fixed pseudo-random pattern (content does
// not change the speed of these branch-free kernels, but zero pages could).
struct Mem {
	uint8_t *p = nullptr;
	size_t n = 0;
	explicit Mem(size_t size) : n(size) {
		void *m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) throw std::bad_alloc();
		p = static_cast<uint8_t *>(m);
		uint32_t x = 12345;
		const size_t block = n < 4096 ? n : 4096;
		for (size_t i = 0; i < block; ++i) p[i] = static_cast<uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
		for (size_t i = block; i < n; i += block) std::memcpy(p + i, p, std::min(block, n - i));
	}
	~Mem() { munmap(p, n); }
	Mem(const Mem &) = delete;
	Mem &operator=(const Mem &) = delete;
};

// Buffers are kept for the whole run, one per (image width, role): allocating and
// faulting in up to 1.3 GiB for every 8192x8192 benchmark took longer than the
// measurements. Roles: 0-2 source planes, 3 destination, 4-5 memcpy pair.
uint8_t *pooled(const Size &s, int role, size_t bytes) {
	static std::map<std::pair<int32_t, int>, std::unique_ptr<Mem>> pool;
	std::unique_ptr<Mem> &m = pool[{s.w, role}];
	if (!m || m->n < bytes) m = std::make_unique<Mem>(bytes);
	return m->p;
}

struct Images {
	SrcImage src;
	DstImage dst;
};

Images make_images(uint32_t src_code, uint32_t dst_code, const Size &s) {
	Images im;
	const FormatInfo *fi = format_info(src_code);
	im.src.fourcc = src_code;
	im.src.width = s.w;
	im.src.height = s.h;
	for (int i = 0; i < fi->num_planes; ++i) {
		const size_t stride = min_stride(*fi, i, uint32_t(s.w));
		const size_t size = stride * plane_rows(*fi, i, uint32_t(s.h));
		im.src.planes[i] = {pooled(s, i, size), stride, size};
	}
	const size_t dstride = 4 * size_t(s.w), dsize = dstride * size_t(s.h);
	im.dst = {dst_code, s.w, s.h, pooled(s, 3, dsize), dstride, dsize};
	return im;
}

void iterate(benchmark::State &st, const Size &s, auto &&fn) {
	for (auto _ : st) fn();
	st.SetBytesProcessed(int64_t(st.iterations()) * 4 * s.w * s.h);
}

void bm_memcpy(benchmark::State &st, Size s) {
	const size_t n = 4 * size_t(s.w) * size_t(s.h);
	uint8_t *a = pooled(s, 4, n), *b = pooled(s, 5, n);
	iterate(st, s, [&] {
		std::memcpy(b, a, n);
		benchmark::ClobberMemory();
	});
}

// Times `fn` and a memcpy of the destination size alternately in the same loop, so
// both see the same machine (on a shared machine, other work comes and goes within a
// run). The benchmark's time is the conversion's. Counters min_conv / min_copy are
// the fastest single iteration of each (interference only adds time), in seconds;
// the tables divide them.
void iterate_paired(benchmark::State &st, const Size &s, auto &&fn) {
	const size_t n = 4 * size_t(s.w) * size_t(s.h);
	uint8_t *a = pooled(s, 4, n), *b = pooled(s, 5, n);
	double min_conv = 1e30, min_copy = 1e30;
	for (auto _ : st) {
		const auto t0 = std::chrono::steady_clock::now();
		fn();
		benchmark::ClobberMemory();
		const auto t1 = std::chrono::steady_clock::now();
		std::memcpy(b, a, n);
		benchmark::ClobberMemory();
		const auto t2 = std::chrono::steady_clock::now();
		const double conv = std::chrono::duration<double>(t1 - t0).count();
		st.SetIterationTime(conv);
		min_conv = std::min(min_conv, conv);
		min_copy = std::min(min_copy, std::chrono::duration<double>(t2 - t1).count());
	}
	st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(n));
	st.counters["min_conv"] = min_conv;
	st.counters["min_copy"] = min_copy;
}

void bm_convert(benchmark::State &st, uint32_t src, uint32_t dst, Size s, ConvertOptions o) {
	Images im = make_images(src, dst, s);
	iterate_paired(st, s, [&] {
		if (convert_image(im.src, im.dst, o) != Status::Ok) st.SkipWithError("convert failed");
	});
}

#ifdef PP_HAVE_LIBYUV
// libyuv's own entry points for the conversions it has, for "use libyuv where it is
// as fast" decisions. `im` is from make_images(src, ARGB8888, size).
void libyuv_convert(uint32_t src, const Images &im) {
	const SrcPlane *p = im.src.planes;
	uint8_t *d = im.dst.data;
	const int ds = int(im.dst.stride), w = im.src.width, h = im.src.height;
	auto st_ = [&](int i) { return int(p[i].stride); };
	{
		switch (src) {
		case f::RGB888: libyuv::RGB24ToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::BGR888: libyuv::RAWToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::RGB565: libyuv::RGB565ToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::ARGB1555: libyuv::ARGB1555ToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::ARGB4444: libyuv::ARGB4444ToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::ARGB2101010: libyuv::AR30ToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::YUYV: libyuv::YUY2ToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::UYVY: libyuv::UYVYToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::NV12: libyuv::NV12ToARGB(p[0].data, st_(0), p[1].data, st_(1), d, ds, w, h); break;
		case f::NV21: libyuv::NV21ToARGB(p[0].data, st_(0), p[1].data, st_(1), d, ds, w, h); break;
		case f::YUV420:
			libyuv::I420ToARGB(p[0].data, st_(0), p[1].data, st_(1), p[2].data, st_(2), d, ds, w, h);
			break;
		case f::YVU420: // libyuv's YV12: I420 with the chroma planes swapped
			libyuv::I420ToARGB(p[0].data, st_(0), p[2].data, st_(2), p[1].data, st_(1), d, ds, w, h);
			break;
		case f::ABGR8888: libyuv::ABGRToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::ABGR2101010: libyuv::AB30ToARGB(p[0].data, st_(0), d, ds, w, h); break;
		case f::P010:
			libyuv::P010ToARGBMatrix(reinterpret_cast<const uint16_t *>(p[0].data), st_(0) / 2,
				reinterpret_cast<const uint16_t *>(p[1].data), st_(1) / 2, d, ds,
				&libyuv::kYuvI601Constants, w, h);
			break;
		case f::ARGB8888: libyuv::ARGBAttenuate(p[0].data, st_(0), d, ds, w, h); break; // straight alpha
		}
	}
}

void bm_libyuv(benchmark::State &st, uint32_t src, Size s) {
	Images im = make_images(src, f::ARGB8888, s);
	iterate_paired(st, s, [&] {
		libyuv_convert(src, im);
		benchmark::ClobberMemory();
	});
}
// ARGB8888: ARGBAttenuate, i.e. straight alpha premultiplied (compare with straight-1t).
constexpr uint32_t kLibyuvSources[] = {f::ARGB8888, f::ABGR8888, f::RGB888, f::BGR888, f::RGB565, f::ARGB1555,
	f::ARGB4444, f::ARGB2101010, f::ABGR2101010, f::YUYV, f::UYVY, f::NV12, f::NV21, f::YUV420, f::YVU420, f::P010};
#endif

// Result keys: "<variant>|<conversion>|<size>". Best of all iterations of all
// repetitions.
std::map<std::string, double> g_rate; // destination bytes/s (memcpy rows only)
std::map<std::string, double> g_min_conv; // fastest conversion iteration, s
std::map<std::string, double> g_min_copy; // fastest paired memcpy iteration, s

// Google Benchmark 1.8 replaced Run::error_occurred (Debian 12 has 1.7.1) with Run::skipped
// (Debian 13 has 1.9.1).
template <typename Run>
bool run_failed(const Run &r) {
	if constexpr (requires { r.skipped; })
		return r.skipped != decltype(r.skipped){};
	else
		return r.error_occurred;
}

class Collector : public benchmark::ConsoleReporter {
public:
	void ReportRuns(const std::vector<Run> &runs) override {
		for (const Run &r : runs) {
			if (run_failed(r) || r.run_type != Run::RT_Iteration) continue;
			const std::string name = r.run_name.function_name;
			if (auto it = r.counters.find("bytes_per_second"); it != r.counters.end()) {
				double &rate = g_rate[name];
				rate = std::max(rate, it->second.value);
			}
			for (auto [counter, map] :
				{std::pair{"min_conv", &g_min_conv}, std::pair{"min_copy", &g_min_copy}})
				if (auto it = r.counters.find(counter); it != r.counters.end()) {
					auto [slot, fresh] = map->try_emplace(name, it->second.value);
					if (!fresh) slot->second = std::min(slot->second, it->second.value);
				}
		}
		ConsoleReporter::ReportRuns(runs);
	}
};

std::string key(const std::string &variant, const std::string &conv, const Size &s) {
	return variant + "|" + conv + "|" + s.name;
}

// Each benchmark runs 3 times and the tables use the best run: the machine is shared
// (builds and tests of other work run next to this), and interference only ever
// makes a run slower. 8192x8192 gets 2 iterations per run to keep the total short.
benchmark::internal::Benchmark *tune(benchmark::internal::Benchmark *b, const Size &s, bool paired = true) {
	b->Unit(benchmark::kMillisecond)->Repetitions(3);
	if (paired)
		b->UseManualTime(); // wall time of the conversion alone (threads included)
	else
		b->UseRealTime();
	if (s.w >= 8192) return b->Iterations(2);
	return b->MinTime(s.w >= 3840 ? 0.08 : 0.04);
}

struct Conv {
	uint32_t src, dst;
	std::string name() const { return std::string(format_name(src)) + "->" + format_name(dst); }
};

std::vector<Conv> conversions() {
	std::vector<Conv> out;
	for (const FormatInfo &fi : all_formats())
		for (int i = 0; i < fi.num_targets; ++i) out.push_back({fi.fourcc, fi.targets[i]});
	return out;
}

// The 8-bit target a renderer without 10-bit would get: keeps alpha if any.
bool primary(const Conv &c) { return c.dst == (format_info(c.src)->has_alpha ? f::ARGB8888 : f::XRGB8888); }

// Brings the CPU out of its idle clock before the first measurement.
void bm_warmup(benchmark::State &st) { bm_memcpy(st, kSizes[1]); }

void register_memcpy() {
	for (const Size &s : kSizes)
		tune(benchmark::RegisterBenchmark(key("memcpy", "memcpy", s).c_str(), bm_memcpy, s), s, false);
}

// Sources for the cached-vs-streaming comparison at 8192x8192 (one per kernel family).
bool streaming_sample(uint32_t src) {
	for (uint32_t s :
		{f::RGB888, f::RGB565, f::XRGB2101010, f::ABGR16161616F, f::YUYV, f::NV12, f::YUV420, f::P010})
		if (s == src) return true;
	return false;
}

void register_all() {
	benchmark::RegisterBenchmark("warmup", bm_warmup)->MinTime(1.0)->UseRealTime();
	register_memcpy();
	for (const Conv &c : conversions()) {
		const bool is_primary = primary(c);
		const bool ten = c.dst == f::XBGR2101010 || c.dst == f::ABGR2101010;
		if (!is_primary && !(ten && c.dst == (format_info(c.src)->has_alpha ? f::ABGR2101010 : f::XBGR2101010)))
			continue;
		for (const Size &s : kSizes) {
			if (!is_primary && s.w != 1920 && s.w != 3840)
				continue; // 10-bit targets: two sizes keep the run short
			ConvertOptions o;
			tune(benchmark::RegisterBenchmark(
				     key("simd-1t", c.name(), s).c_str(), bm_convert, c.src, c.dst, s, o),
				s);
			if (is_primary && s.w >= 1920) {
				o.threads = 2;
				tune(benchmark::RegisterBenchmark(
					     key("simd-2t", c.name(), s).c_str(), bm_convert, c.src, c.dst, s, o),
					s);
			}
			if (is_primary && s.w >= 8192 && streaming_sample(c.src)) {
				o = {};
				o.stores = ConvertOptions::Stores::Cached; // Auto streams at this size
				tune(benchmark::RegisterBenchmark(
					     key("cached-1t", c.name(), s).c_str(), bm_convert, c.src, c.dst, s, o),
					s);
			}
			if (is_primary && s.w == 1920) {
				o = {};
				o.force_scalar = true;
				tune(benchmark::RegisterBenchmark(
					     key("scalar-1t", c.name(), s).c_str(), bm_convert, c.src, c.dst, s, o),
					s);
#if defined(__x86_64__) || defined(__i386__)
				// Elsewhere an SSE2 cap selects the scalar table: the row above.
				o = {};
				o.max_isa = Isa::SSE2;
				tune(benchmark::RegisterBenchmark(
					     key("sse2-1t", c.name(), s).c_str(), bm_convert, c.src, c.dst, s, o),
					s);
#endif
			}
		}
	}
	// Colour options at 1920x1080 (same kernels, other parameters): a YUV matrix and range
	// other than the default, and straight alpha (premultiplied during conversion).
	for (const Conv &c : conversions()) {
		const FormatInfo *fi = format_info(c.src);
		if (!primary(c)) continue;
		const Size &s = kSizes[1];
		ConvertOptions o;
		if (fi->model == ColorModel::YUV) {
			o.matrix = YuvMatrix::BT2020;
			o.range = YuvRange::Full;
			tune(benchmark::RegisterBenchmark(
				     key("bt2020full-1t", c.name(), s).c_str(), bm_convert, c.src, c.dst, s, o),
				s);
		}
		if (fi->has_alpha) {
			o.alpha = AlphaMode::Straight;
			tune(benchmark::RegisterBenchmark(
				     key("straight-1t", c.name(), s).c_str(), bm_convert, c.src, c.dst, s, o),
				s);
		}
	}
#ifdef PP_HAVE_LIBYUV
	for (uint32_t src : kLibyuvSources)
		for (const Size &s : {kSizes[1], kSizes[2]}) {
			// libyuv writes ARGB with alpha 0xff for opaque sources: the same bytes as
			// our primary target, so it shares that row of the table.
			const Conv c{src, format_info(src)->has_alpha ? f::ARGB8888 : f::XRGB8888};
			tune(benchmark::RegisterBenchmark(key("libyuv-1t", c.name(), s).c_str(), bm_libyuv, src, s), s);
		}
#endif
	register_memcpy();
}

void print_table(const char *title, const std::vector<std::string> &variants, const std::vector<const Size *> &sizes) {
	std::printf("\n%s\n%-32s", title, "conversion");
	for (const std::string &v : variants)
		for (const Size *s : sizes) std::printf(" %18s", (v + " " + s->name).c_str());
	std::printf("\n");
	for (const Conv &c : conversions()) {
		std::string line;
		bool any = false;
		for (const std::string &v : variants)
			for (const Size *s : sizes) {
				char cell[32] = "                 -";
				const std::string k = key(v, c.name(), *s);
				auto conv = g_min_conv.find(k);
				auto copy = g_min_copy.find(k);
				if (conv != g_min_conv.end() && copy != g_min_copy.end() && conv->second > 0) {
					const double bytes = 4.0 * s->w * s->h;
					std::snprintf(cell, sizeof cell, "%7.2f GB/s %5.2fx",
						bytes / conv->second / 1e9, copy->second / conv->second);
					any = true;
				}
				line += " " + std::string(cell);
			}
		if (any) std::printf("%-32s%s\n", c.name().c_str(), line.c_str());
	}
}

// `--calls N VARIANT SRC->DST WxH`: that one conversion N times, untimed, then exit, for counting
// what a call executes (bench/count_instructions.py runs it under qemu-user with 1 and with
// more calls: the difference is the calls' alone). VARIANT: simd-1t, scalar-1t, straight-1t,
// libyuv-1t, and sse2-1t on x86. Returns the exit status, or -1 when argv is not a --calls command.
int calls_mode(int argc, char **argv) {
	if (argc < 2 || std::strcmp(argv[1], "--calls") != 0) return -1;
	if (argc != 6) {
		std::fprintf(stderr, "usage: %s --calls N VARIANT SRC->DST WxH\n", argv[0]);
		return 2;
	}
	const long n = std::strtol(argv[2], nullptr, 10);
	const std::string variant = argv[3], conv = argv[4];
	Size s{0, 0, argv[5]};
	const bool size_ok = std::sscanf(argv[5], "%dx%d", &s.w, &s.h) == 2 && s.w > 0 && s.h > 0;
	const Conv *found = nullptr;
	const std::vector<Conv> all = conversions();
	for (const Conv &c : all)
		if (c.name() == conv) found = &c;
	if (n < 1 || !size_ok || !found) {
		std::fprintf(stderr, "--calls: bad count, size or conversion (names as in the tables)\n");
		return 2;
	}
	Images im = make_images(found->src, found->dst, s);
	ConvertOptions o;
	o.stores = ConvertOptions::Stores::Cached;
	if (variant == "scalar-1t")
		o.force_scalar = true;
	else if (variant == "straight-1t")
		o.alpha = AlphaMode::Straight;
#if defined(__x86_64__) || defined(__i386__)
	else if (variant == "sse2-1t")
		o.max_isa = Isa::SSE2;
#endif
	else if (variant == "libyuv-1t") {
#ifdef PP_HAVE_LIBYUV
		if (std::find(std::begin(kLibyuvSources), std::end(kLibyuvSources), found->src) ==
			std::end(kLibyuvSources)) {
			std::fprintf(stderr, "--calls: libyuv has no %s\n", conv.c_str());
			return 2;
		}
		for (long i = 0; i < n; ++i) libyuv_convert(found->src, im);
		return 0;
#else
		std::fprintf(stderr, "--calls: built without libyuv\n");
		return 2;
#endif
	} else if (variant != "simd-1t") {
		std::fprintf(stderr, "--calls: unknown variant %s\n", variant.c_str());
		return 2;
	}
	for (long i = 0; i < n; ++i)
		if (convert_image(im.src, im.dst, o) != Status::Ok) {
			std::fprintf(stderr, "--calls: convert_image failed\n");
			return 1;
		}
	return 0;
}

} // namespace

int main(int argc, char **argv) {
	if (const int status = calls_mode(argc, argv); status >= 0) return status;
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
	register_all();
	Collector reporter;
	benchmark::RunSpecifiedBenchmarks(&reporter);
	benchmark::Shutdown();

	std::printf("\nRatio = memcpy time / conversion time (= conversion bytes/s / memcpy bytes/s) for the\n"
		    "destination size, the two timed alternately in the same loop; each is the fastest\n"
		    "iteration of 3 runs. GB/s = destination bytes per second of that conversion.\n"
		    "CPU: best ISA %s.\nStandalone memcpy (for reference):",
		isa_name(best_isa()));
	for (const Size &s : kSizes) {
		auto it = g_rate.find(key("memcpy", "memcpy", s));
		if (it != g_rate.end()) std::printf("  %s %.2f GB/s", s.name, it->second / 1e9);
	}
	std::printf("\n");
	const std::vector<const Size *> all = {&kSizes[0], &kSizes[1], &kSizes[2], &kSizes[3]};
	print_table("SIMD, 1 thread", {"simd-1t"}, all);
	print_table(
		"SIMD, 2 threads (against single-threaded memcpy)", {"simd-2t"}, {&kSizes[1], &kSizes[2], &kSizes[3]});
	print_table("Destination stores at 8192x8192, 1 thread (simd-1t streams: Stores::Auto)",
		{"cached-1t", "simd-1t"}, {&kSizes[3]});
	print_table("Scalar vs SSE2 vs best ISA, 1 thread", {"scalar-1t", "sse2-1t", "simd-1t"}, {&kSizes[1]});
	print_table("libyuv vs pixelport, 1 thread (ARGB8888->ARGB8888: libyuv's ARGBAttenuate against straight-1t)",
		{"libyuv-1t", "simd-1t", "straight-1t"}, {&kSizes[1], &kSizes[2]});
	print_table("Colour options, 1 thread (simd-1t: BT.601 limited, premultiplied alpha)",
		{"simd-1t", "bt2020full-1t", "straight-1t"}, {&kSizes[1]});
	return 0;
}
