// pixelport-bench-shm: the wl_shm path with and without the plugin, same run.
//
// Two compositors run at once, one with the plugin and one with --no-plugin (stock wlroots
// wl_shm); frames alternate between them. Commit-to-texture: the compositor makes or updates
// the texture while it applies the commit, so commit -> wl_display_sync done on the same
// connection covers it, with the same IPC overhead in both modes. With the plugin the timing
// protocol also gives it from inside the compositor (the later of t_upload_end and
// t_convert_end, minus t_commit).
//
// Part 1: XRGB8888, the plugin's time / stock time (target <= 1.02).
// Part 2: RGB888 and NV12 at 3840x2160: the plugin converts on upload, against the client
// converting to XRGB8888 itself (libyuv, or pixelport's core without libyuv) and using stock
// wl_shm. End to end = client conversion + copy into the shm pool + commit-to-texture
// (target: plugin at least 1.3x faster).
#include <drm_fourcc.h>

#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "bench_util.hpp"
#include "cli.hpp"
#include "pixelport/core/convert.hpp"
#ifdef PP_HAVE_LIBYUV
#include <libyuv/convert_argb.h>
#endif

using namespace pixelport;
using namespace pixelport::bench;

namespace {

struct Side {
	const char *name;
	Compositor compositor;
	client::Connection conn;
};

// One surface on one side, with what was measured for it.
struct Lane {
	Side *side = nullptr;
	BenchSurface surface;
	std::vector<double> convert, copy, to_texture, end_to_end; // ns per frame

	bool converts = false; // the client converts to XRGB8888 before put()

	// `timed`: subscribed to the timing protocol, which costs the commit a few µs.
	bool open(Side *s, bool timed, std::string *error) {
		side = s;
		return surface.open(&s->conn, client::TransportChoice::ShmReused, error, timed);
	}
	void clear() {
		for (auto *v : {&convert, &copy, &to_texture, &end_to_end}) v->clear();
		surface.clear();
	}
	// One frame; `convert_ns` was spent before on the client. False with error set.
	bool frame(const client::Pixels &px, uint64_t start, uint64_t convert_ns, std::string *error) {
		uint64_t done = surface.put_and_sync(px, start, error);
		if (done == 0) {
			*error = std::string(side->name) + ": " + *error;
			return false;
		}
		const client::PutTiming &t = surface.writer->timing();
		convert.push_back(static_cast<double>(convert_ns));
		copy.push_back(static_cast<double>(t.committed - t.start));
		to_texture.push_back(static_cast<double>(done - t.committed));
		end_to_end.push_back(static_cast<double>(done - start));
		return true;
	}
};

// The client's own conversion to XRGB8888 (the stock baseline of part 2).
const char *converter_name() {
#ifdef PP_HAVE_LIBYUV
	return "libyuv (RGB24ToARGB, NV12ToARGB)";
#else
	return "pixelport core convert_image (libyuv-dev not installed)";
#endif
}

bool client_convert(const client::Pixels &src, uint8_t *dst, size_t dst_stride) {
#ifdef PP_HAVE_LIBYUV
	// DRM RGB888 is [B, G, R] in memory, which is libyuv's RGB24.
	if (src.format == DRM_FORMAT_RGB888) {
		return libyuv::RGB24ToARGB(src.data, static_cast<int>(src.stride), dst, static_cast<int>(dst_stride),
			       src.width, src.height) == 0;
	}
	if (src.format == DRM_FORMAT_NV12) {
		const uint8_t *uv = src.data + src.stride * static_cast<size_t>(src.height);
		return libyuv::NV12ToARGB(src.data, static_cast<int>(src.stride), uv, static_cast<int>(src.stride), dst,
			       static_cast<int>(dst_stride), src.width, src.height) == 0;
	}
	return false;
#else
	core::SrcImage s;
	s.fourcc = src.format;
	s.width = src.width;
	s.height = src.height;
	s.planes[0] = {src.data, src.stride, src.size};
	if (src.format == DRM_FORMAT_NV12) {
		size_t luma = src.stride * static_cast<size_t>(src.height);
		s.planes[1] = {src.data + luma, src.stride, src.size - luma};
	}
	core::DstImage d;
	d.fourcc = DRM_FORMAT_XRGB8888;
	d.width = src.width;
	d.height = src.height;
	d.data = dst;
	d.stride = dst_stride;
	d.size = dst_stride * static_cast<size_t>(src.height);
	return core::convert_image(s, d) == core::Status::Ok;
#endif
}

struct Size {
	int w, h, frames, quick_frames;
};

// The client's conversion target (part 2).
Frame *g_converted = nullptr;

// n measured frames (after two warm-up frames) on every lane, interleaved with the order
// rotating; frames alternate between f0 and f1. False with error set.
bool run_lanes(std::vector<Lane *> lanes, int n, const Frame &f0, const Frame &f1, std::string *error) {
	for (int i = -2; i < n; i++) {
		if (i == 0) {
			for (Lane *l : lanes) l->clear();
		}
		const client::Pixels &px = i % 2 ? f1.px : f0.px;
		for (size_t k = 0; k < lanes.size(); k++) {
			Lane &l = *lanes[(static_cast<size_t>(i + 2) + k) % lanes.size()];
			uint64_t start = now_ns();
			if (!l.converts) {
				if (!l.frame(px, start, 0, error)) return false;
				continue;
			}
			if (!client_convert(px, g_converted->bytes.data(), g_converted->px.stride)) {
				*error = "client conversion failed";
				return false;
			}
			if (!l.frame(g_converted->px, start, now_ns() - start, error)) return false;
		}
	}
	return true;
}

} // namespace

int main(int argc, char *argv[]) {
	CommonOptions common;
	CLI::App app{"pixelport-bench-shm: wl_shm commit-to-texture with and without the plugin, same run"};
	add_common_options(app, &common);
	if (int rc = cli::parse(app, argc, argv, "pixelport-bench-shm"); rc >= 0) return rc;

	pin_client_side(common.pin);
	RuntimeDir dir;
	std::string error;
	Side plugin{.name = "plugin"}, stock{.name = "stock"};
	for (Side *s : {&plugin, &stock}) {
		std::vector<std::string> args = {"--output", common.output};
		if (s == &stock) args.push_back("--no-plugin");
		if (!s->compositor.start(common.compositor, dir, args, &error) ||
			!connect_to(&s->conn, s->compositor.socket_path, &error)) {
			fprintf(stderr, "pixelport-bench-shm: %s: %s\n", s->name, error.c_str());
			return 1;
		}
	}
	printf("pixelport-bench-shm: plugin and --no-plugin compositors at once, frames alternate; medians of "
	       "repeated frames; %s\n",
		machine_note().c_str());
	printf("commit-to-texture = commit -> wl_display_sync done on the same connection (same IPC in both modes)\n");
	fflush(stdout);
	auto fail = [&](const std::string &what) {
		fprintf(stderr, "pixelport-bench-shm: %s\n", what.c_str());
		return 1;
	};

	// ---- part 1: XRGB8888 --------------------------------------------------------------------
	// Lanes: plugin, stock, and plugin with a timing subscription for the in-compositor time
	// (kept out of the ratio: the subscription's events cost each commit a little).
	Table t1({"XRGB8888", "frames", "plugin p50", "p95", "stock p50", "p95", "plugin/stock", "p95 ratio",
		"in-compositor p50", "p95", "subscribed commit->sync p50", "copy p50"});
	const Size sizes[] = {{256, 256, 2000, 40}, {1920, 1080, 600, 12}, {3840, 2160, 200, 6}, {8192, 8192, 40, 3}};
	for (const Size &size : sizes) {
		Frame f0(DRM_FORMAT_XRGB8888, size.w, size.h, 1), f1(DRM_FORMAT_XRGB8888, size.w, size.h, 2);
		Lane lp, ls, lt;
		if (!lp.open(&plugin, false, &error) || !ls.open(&stock, false, &error) ||
			!lt.open(&plugin, true, &error)) {
			return fail(error);
		}
		int n = common.frames(size.frames, size.quick_frames);
		if (!run_lanes({&lp, &ls, &lt}, n, f0, f1, &error)) return fail(error);
		Stats p = stats_of(lp.to_texture), s = stats_of(ls.to_texture);
		Stats inside = stats_of(
			lt.surface.phase(PP_SURFACE_TIMING_V1_PHASE_COMMIT, PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END));
		t1.row({std::to_string(size.w) + "x" + std::to_string(size.h), std::to_string(n), fmt_ns(p.median),
			fmt_ns(p.p95), fmt_ns(s.median), fmt_ns(s.p95), fmt_ratio(p.median / s.median),
			fmt_ratio(p.p95 / s.p95), fmt_ns(inside.median), fmt_ns(inside.p95),
			fmt_ns(stats_of(lt.to_texture).median), fmt_ns(stats_of(lp.copy).median)});
	}
	t1.print("Commit-to-texture, XRGB8888 (target plugin/stock <= 1.02)");

	// ---- part 2: converted formats at 3840x2160 ------------------------------------------------
	printf("\nclient-side converter: %s\n", converter_name());
	Table t2({"3840x2160", "variant", "convert", "copy", "commit->texture", "end to end p50", "p95", "speedup"});
	const Size uhd = {3840, 2160, 100, 5};
	Frame converted(DRM_FORMAT_XRGB8888, uhd.w, uhd.h, 0);
	g_converted = &converted;
	for (uint32_t format : {static_cast<uint32_t>(DRM_FORMAT_RGB888), static_cast<uint32_t>(DRM_FORMAT_NV12)}) {
		Frame f0(format, uhd.w, uhd.h, 1), f1(format, uhd.w, uhd.h, 2);
		Lane lp, ls, lt;
		ls.converts = true;
		if (!lp.open(&plugin, false, &error) || !ls.open(&stock, false, &error) ||
			!lt.open(&plugin, true, &error)) {
			return fail(error);
		}
		if (!run_lanes({&lp, &ls, &lt}, common.frames(uhd.frames, uhd.quick_frames), f0, f1, &error))
			return fail(error);
		Stats pe = stats_of(lp.end_to_end), se = stats_of(ls.end_to_end);
		Stats conv = stats_of(lt.surface.phase(timing::Phase::Convert));
		Stats inside = stats_of(lt.surface.phase(PP_SURFACE_TIMING_V1_PHASE_COMMIT, BenchSurface::kReady));
		std::string name = client::format_name(client::drm_to_shm(format));
		auto median = [](const std::vector<double> &v) { return fmt_ns(stats_of(v).median); };
		t2.row({name, "plugin converts", "-", median(lp.copy), median(lp.to_texture), fmt_ns(pe.median),
			fmt_ns(pe.p95), fmt_ratio(se.median / pe.median)});
		t2.row({"", "  in the compositor (subscribed)", fmt_ns(conv.median), "", fmt_ns(inside.median), "", "",
			""});
		t2.row({"", "client converts, stock", median(ls.convert), median(ls.copy), median(ls.to_texture),
			fmt_ns(se.median), fmt_ns(se.p95), "1.000x"});
	}
	t2.print("End to end, converted formats (speedup = stock end to end / plugin end to end; target >= 1.3x)");
	return 0;
}
