// pixelport-bench-shm: the wl_shm path with and without the plugin, same run.
//
// Compositors run at once, each with one surface on a connection of its own, and frames rotate
// between them: the plugin, stock wlroots (--no-plugin), and a second of each started alike.
// The second ones are the controls: stock 2 / stock and plugin 2 / plugin say how far two
// processes of the same compositor differ in this run (where the scheduler put them), the noise
// floor that plugin / stock must leave before it says anything about the plugin.
// Commit-to-texture: the compositor makes or updates the texture while it applies the commit,
// so commit -> wl_display_sync done on the same connection covers it, with the same IPC
// overhead in every lane. The timing protocol gives it from inside the compositor too (the
// later of t_upload_end and t_convert_end, minus t_commit): that surface is subscribed, which
// costs each commit a little, so it runs on a plugin compositor of its own, reported apart.
//
// Part 1: XRGB8888, the plugin's time / stock time (target <= 1.02).
// Part 2: RGB888 and NV12 at 3840x2160: the plugin converts on upload, against the client
// converting to XRGB8888 itself (libyuv, or pixelport's core without libyuv) and using stock
// wl_shm. End to end = client conversion + copy into the shm pool + commit-to-texture
// (target: plugin at least 1.3x faster).
// --small-runs N: only the 256x256 XRGB8888 comparison, N times with fresh compositors, with a
// busy loop on one CPU in some or all runs (--busy), and where each main thread ran.
#include <drm_fourcc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

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
// rotating; frames alternate between f0 and f1. With `where`, placement is sampled every 8
// measured rounds, between frames. False with error set.
bool run_lanes(const std::vector<Lane *> &lanes, int n, const Frame &f0, const Frame &f1, std::string *error,
	Placement *where = nullptr) {
	for (int i = -2; i < n; i++) {
		if (i == 0) {
			for (Lane *l : lanes) l->clear();
		}
		if (where != nullptr && i >= 0 && i % 8 == 0) where->sample();
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

const char *const kProgram = "pixelport-bench-shm";

// The compositors of a run, each with its own connection; stopped when destroyed.
struct Sides {
	std::vector<std::unique_ptr<Side>> all;
	// Starts one more ("stock" ones with --no-plugin); nullptr with error set.
	Side *start(const char *name, bool stock, const CommonOptions &common, RuntimeDir &dir, std::string *error) {
		auto s = std::make_unique<Side>();
		s->name = name;
		std::vector<std::string> args = {"--output", common.output};
		if (stock) args.push_back("--no-plugin");
		if (!s->compositor.start(common.compositor, dir, args, error) ||
			!connect_to(&s->conn, s->compositor.socket_path, error)) {
			*error = std::string(name) + ": " + *error;
			return nullptr;
		}
		all.push_back(std::move(s));
		return all.back().get();
	}
};

// How far two processes of the same compositor differed: the largest of the control ratios
// and their inverses (>= 1). plugin / stock means something only outside [1/m, m].
double control_spread(std::initializer_list<double> controls) {
	double m = 1;
	for (double r : controls) {
		if (r > 0 && std::isfinite(r)) m = std::max({m, r, 1 / r});
	}
	return m;
}

std::string against_controls(double ratio, double m) {
	char buf[64];
	snprintf(buf, sizeof(buf), "%s (±%.1f%%)",
		ratio > m               ? "slower"
			: ratio < 1 / m ? "faster"
					: "within",
		100 * (m - 1));
	return buf;
}

// ---- --small-runs: the small native commit, several runs -------------------------------------

struct SmallOptions {
	int runs = 0;
	std::string busy = "off";
	int busy_cpu = -2; // -2: the last usable CPU; -1: not pinned
};

struct SmallRun {
	bool busy = false;
	bool reversed = false; // compositors started stock 2, plugin 2, stock, plugin
	double plugin = 0, stock = 0, plugin2 = 0, stock2 = 0; // commit -> sync p50, ns
	Placement where; // client, plugin, stock, plugin 2, stock 2[, loop]
	int loop_cpu = -1;
	double loop_share = 0; // of one CPU
	double ratio() const { return plugin / stock; }
	double stock_control() const { return stock2 / stock; }
	double plugin_control() const { return plugin2 / plugin; }
	double spread() const { return control_spread({stock_control(), plugin_control()}); }
};

constexpr Size kSmall = {256, 256, 2000, 40};

// One run: a busy loop first when `busy`, then four fresh compositors (started in the reverse
// order when `reversed`) and their lanes.
bool small_run(const CommonOptions &common, RuntimeDir &dir, bool busy, bool reversed, int busy_cpu, SmallRun *out,
	std::string *error) {
	BusyLoop loop;
	if (busy && !loop.start(busy_cpu, error)) return false;
	out->busy = busy;
	out->reversed = reversed;
	out->loop_cpu = busy_cpu;
	{
		Sides sides;
		Side *plugin = nullptr, *stock = nullptr, *plugin2 = nullptr, *stock2 = nullptr;
		const std::pair<Side **, const char *> order[] = {
			{&plugin, "plugin"}, {&stock, "stock"}, {&plugin2, "plugin 2"}, {&stock2, "stock 2"}};
		for (size_t i = 0; i < 4; i++) {
			size_t j = reversed ? 3 - i : i;
			*order[j].first = sides.start(order[j].second, j % 2 == 1, common, dir, error); // odd: stock
			if (*order[j].first == nullptr) return false;
		}
		Lane lp, ls, lp2, ls2;
		if (!lp.open(plugin, false, error) || !ls.open(stock, false, error) ||
			!lp2.open(plugin2, false, error) || !ls2.open(stock2, false, error)) {
			return false;
		}
		out->where.watch("client", 0);
		for (Side *s : {plugin, stock, plugin2, stock2}) out->where.watch(s->name, s->compositor.process.pid());
		if (busy) out->where.watch("loop", loop.pid());
		Frame f0(DRM_FORMAT_XRGB8888, kSmall.w, kSmall.h, 1), f1(DRM_FORMAT_XRGB8888, kSmall.w, kSmall.h, 2);
		if (!run_lanes({&lp, &ls, &lp2, &ls2}, common.frames(kSmall.frames, kSmall.quick_frames), f0, f1, error,
			    &out->where)) {
			return false;
		}
		out->plugin = stats_of(lp.to_texture).median;
		out->stock = stats_of(ls.to_texture).median;
		out->plugin2 = stats_of(lp2.to_texture).median;
		out->stock2 = stats_of(ls2.to_texture).median;
	}
	out->loop_share = loop.stop();
	return true;
}

std::string percent(double fraction) { return std::to_string(static_cast<int>(std::lround(100 * fraction))) + "%"; }

// min / median / max of a ratio over runs.
std::string distribution(const std::vector<double> &v) {
	if (v.empty()) return "-";
	auto [lo, hi] = std::minmax_element(v.begin(), v.end());
	return fmt_ratio(*lo) + " / " + fmt_ratio(stats_of(v).median) + " / " + fmt_ratio(*hi);
}

int small_runs(const CommonOptions &common, const SmallOptions &small) {
	RuntimeDir dir;
	int busy_cpu = small.busy_cpu == -2 ? usable_cpus().back() : small.busy_cpu;
	std::string loop_note = small.busy == "off"
		? "no busy loop"
		: (small.busy == "on" ? "a busy loop in every run" : "a busy loop in every other run") +
			std::string(busy_cpu >= 0 ? ", pinned to CPU " + std::to_string(busy_cpu) : ", not pinned") +
			", in its own session";
	int n = small.busy == "alternate" ? 2 * small.runs : small.runs;
	printf("%s: %dx%d XRGB8888, %d runs of %d frames per lane; four compositors started anew each run "
	       "(plugin, stock, and a second of each: the controls), frames rotate between them; %s; %s; %s\n",
		kProgram, kSmall.w, kSmall.h, n, common.frames(kSmall.frames, kSmall.quick_frames), loop_note.c_str(),
		autogroup_note().c_str(), machine_note().c_str());
	fflush(stdout);
	std::vector<SmallRun> runs(static_cast<size_t>(n));
	for (int k = 0; k < n; k++) {
		// Alternating in pairs whose order flips (quiet busy, busy quiet, ...): drift falls on both.
		// The start order flips every two runs, so each mode has both orders: the first
		// compositor started has differed from the third (plugin 2/plugin).
		bool busy = small.busy == "on" || (small.busy == "alternate" && ((k % 2 == 1) != ((k / 2) % 2 == 1)));
		bool reversed = (k / 2) % 2 == 1;
		std::string error;
		if (!small_run(common, dir, busy, reversed, busy_cpu, &runs[static_cast<size_t>(k)], &error)) {
			fprintf(stderr, "%s: run %d: %s\n", kProgram, k + 1, error.c_str());
			return 1;
		}
	}

	Table t({"run", "loop", "started", "plugin p50", "stock p50", "plugin/stock", "stock 2/stock",
		"plugin 2/plugin", "vs its controls", "client CPU", "plugin", "stock", "plugin 2", "stock 2",
		"loop CPU (share)"});
	for (size_t k = 0; k < runs.size(); k++) {
		const SmallRun &r = runs[k];
		std::vector<std::string> row = {std::to_string(k + 1), r.busy ? "busy" : "quiet",
			r.reversed ? "s2 p2 s p" : "p s p2 s2", fmt_ns(r.plugin), fmt_ns(r.stock), fmt_ratio(r.ratio()),
			fmt_ratio(r.stock_control()), fmt_ratio(r.plugin_control()),
			against_controls(r.ratio(), r.spread())};
		for (size_t p = 0; p < 5; p++) row.push_back(r.where.shares(p));
		row.push_back(r.busy ? r.where.shares(5) + " (" + percent(r.loop_share) + ")" : "-");
		t.row(row);
	}
	t.print("Each run: commit -> sync p50 and ratios; vs its controls: plugin/stock outside [1/m, m], m the "
		"widest of the run's two control ratios either way; main threads' CPUs as percent of samples "
		"(CPU:%), sampled every 8 rounds");

	Table d({"", "runs", "plugin/stock min / median / max", "stock 2/stock", "plugin 2/plugin",
		"noise floor median (widest)", "plugin/stock vs its controls", "<= 1.02x"});
	std::vector<std::string> verdicts;
	for (bool busy : {false, true}) {
		std::vector<const SmallRun *> mode;
		for (const SmallRun &r : runs) {
			if (r.busy == busy) mode.push_back(&r);
		}
		if (mode.empty()) continue;
		std::vector<double> ratio, sc, pc, spread;
		size_t slower = 0, faster = 0, met = 0;
		for (const SmallRun *r : mode) {
			ratio.push_back(r->ratio());
			sc.push_back(r->stock_control());
			pc.push_back(r->plugin_control());
			spread.push_back(r->spread());
			slower += r->ratio() > r->spread();
			faster += r->ratio() < 1 / r->spread();
			met += r->ratio() <= 1.02;
		}
		std::string total = std::to_string(mode.size());
		char floor[64];
		snprintf(floor, sizeof(floor), "±%.1f%% (±%.1f%%)", 100 * (stats_of(spread).median - 1),
			100 * (*std::max_element(spread.begin(), spread.end()) - 1));
		d.row({busy ? "busy" : "quiet", total, distribution(ratio), distribution(sc), distribution(pc), floor,
			std::to_string(slower) + " slower, " + std::to_string(faster) + " faster of " + total,
			std::to_string(met) + " of " + total});
		verdicts.push_back(std::string(busy ? "busy" : "quiet") +
			": plugin/stock above its run's controls in " + std::to_string(slower) + " of " + total +
			" runs: " +
			(2 * slower > mode.size() ? "most, a cost of the plugin"
						  : "not most, no cost of the plugin shown"));
		// Whether the start order shows: plugin 2/plugin and plugin/stock by order.
		std::vector<double> pc_forward, pc_reversed, r_forward, r_reversed;
		for (const SmallRun *r : mode) {
			(r->reversed ? pc_reversed : pc_forward).push_back(r->plugin_control());
			(r->reversed ? r_reversed : r_forward).push_back(r->ratio());
		}
		verdicts.push_back(std::string(busy ? "busy" : "quiet") + ", started p s p2 s2: plugin 2/plugin " +
			distribution(pc_forward) + ", plugin/stock " + distribution(r_forward) +
			"; started s2 p2 s p: plugin 2/plugin " + distribution(pc_reversed) + ", plugin/stock " +
			distribution(r_reversed));
		// A compositor woken on another CPU than the client's pays a cross-CPU wakeup per frame:
		// split the runs by which main thread was away from the client in more samples.
		std::vector<double> plugin_away, stock_away, alike;
		for (const SmallRun *r : mode) {
			double d = r->where.together(2, 0) - r->where.together(1, 0);
			(d > 0.1 ? plugin_away : d < -0.1 ? stock_away : alike).push_back(r->ratio());
		}
		verdicts.push_back(std::string(busy ? "busy" : "quiet") +
			", main thread on the client's CPU in 10 points fewer samples than the other's: the plugin's " +
			std::to_string(plugin_away.size()) + " runs (plugin/stock " + distribution(plugin_away) +
			"), stock's " + std::to_string(stock_away.size()) + " runs (" + distribution(stock_away) +
			"), neither " + std::to_string(alike.size()) + " runs (" + distribution(alike) + ")");
		if (!busy) continue;
		// Which runs had a compositor's main thread beside the loop, and what they gave.
		for (size_t p : {size_t{1}, size_t{2}}) {
			std::vector<double> beside, apart;
			for (const SmallRun *r : mode)
				(r->where.together(p, 5) > 0.5 ? beside : apart).push_back(r->ratio());
			verdicts.push_back("busy, the " + mode.front()->where.names()[p] +
				" main thread on the loop's CPU in most samples: " + std::to_string(beside.size()) +
				" runs (plugin/stock " + distribution(beside) + "), elsewhere: " +
				std::to_string(apart.size()) + " runs (" + distribution(apart) + ")");
		}
	}
	d.print("Over runs (min / median / max); noise floor: each run's m (the widest control ratio either way); a "
		"plugin cause is plugin/stock above its run's m in most runs");
	for (const std::string &v : verdicts) printf("%s\n", v.c_str());
	printf("load average at the end: %s\n", machine_note().c_str());
	return 0;
}

} // namespace

int main(int argc, char *argv[]) {
	CommonOptions common;
	SmallOptions small;
	CLI::App app{"pixelport-bench-shm: wl_shm commit-to-texture with and without the plugin, same run"};
	add_common_options(app, &common);
	app.add_option("--small-runs", small.runs,
		   "only the small native commit (256x256 XRGB8888): this many runs, each with four fresh "
		   "compositors, reported as min / median / max (0: the whole bench once)")
		->capture_default_str()
		->transform(cli::Range(0, 1000));
	app.add_option("--busy", small.busy,
		   "a busy loop on one CPU, started and ended by the bench: off, on (the whole time), or alternate "
		   "(with --small-runs: that many runs without and with it, interleaved)")
		->capture_default_str()
		->check(CLI::IsMember({"off", "on", "alternate"}));
	app.add_option("--busy-cpu", small.busy_cpu,
		   "CPU the busy loop is pinned to (default: the last usable; -1: not pinned)")
		->transform(cli::Range(-1, CPU_SETSIZE - 1));
	if (int rc = cli::parse(app, argc, argv, kProgram); rc >= 0) return rc;
	if (small.busy == "alternate" && small.runs == 0) {
		return cli::usage_error(kProgram, "--busy alternate needs --small-runs");
	}
	if (small.busy_cpu >= 0) {
		std::vector<int> cpus = usable_cpus();
		if (std::find(cpus.begin(), cpus.end(), small.busy_cpu) == cpus.end()) {
			return cli::usage_error(kProgram,
				"--busy-cpu: CPU " + std::to_string(small.busy_cpu) +
					" is not one this process may run on");
		}
	}

	pin_client_side(common.pin);
	if (small.runs > 0) return small_runs(common, small);

	RuntimeDir dir;
	std::string error;
	auto fail = [&](const std::string &what) {
		fprintf(stderr, "%s: %s\n", kProgram, what.c_str());
		return 1;
	};
	int busy_cpu = small.busy_cpu == -2 ? usable_cpus().back() : small.busy_cpu;
	BusyLoop loop;
	if (small.busy == "on" && !loop.start(busy_cpu, &error)) return fail(error);
	Sides sides;
	Side *plugin = sides.start("plugin", false, common, dir, &error);
	Side *stock = plugin ? sides.start("stock", true, common, dir, &error) : nullptr;
	Side *plugin2 = stock ? sides.start("plugin 2", false, common, dir, &error) : nullptr;
	Side *stock2 = plugin2 ? sides.start("stock 2", true, common, dir, &error) : nullptr;
	Side *timed = stock2 ? sides.start("plugin, subscribed", false, common, dir, &error) : nullptr;
	if (timed == nullptr) return fail(error);
	printf("%s: plugin, stock (--no-plugin), a second of each (the controls) and a plugin compositor whose surface "
	       "is subscribed to timing, at once; one surface and connection each, frames rotate; medians of repeated "
	       "frames; %s; %s; %s\n",
		kProgram,
		loop.running()
			? ("a busy loop" + (busy_cpu >= 0 ? " on CPU " + std::to_string(busy_cpu) : std::string()) +
				  " in its own session")
				  .c_str()
			: "no busy loop",
		autogroup_note().c_str(), machine_note().c_str());
	printf("commit-to-texture = commit -> wl_display_sync done on the same connection (same IPC in every lane)\n");
	fflush(stdout);

	// ---- part 1: XRGB8888 --------------------------------------------------------------------
	Table t1({"XRGB8888", "frames", "plugin p50", "p95", "stock p50", "p95", "plugin/stock", "p95 ratio",
		"stock 2/stock", "plugin 2/plugin", "plugin/stock vs controls", "copy p50"});
	Table t1t({"XRGB8888", "subscribed commit->sync p50", "subscribed/plugin", "in-compositor p50", "p95"});
	Table t1w({"XRGB8888", "client CPU", "plugin", "stock", "plugin 2", "stock 2", "subscribed"});
	const Size sizes[] = {kSmall, {1920, 1080, 600, 12}, {3840, 2160, 200, 6}, {8192, 8192, 40, 3}};
	for (const Size &size : sizes) {
		Frame f0(DRM_FORMAT_XRGB8888, size.w, size.h, 1), f1(DRM_FORMAT_XRGB8888, size.w, size.h, 2);
		Lane lp, ls, lp2, ls2, lt;
		if (!lp.open(plugin, false, &error) || !ls.open(stock, false, &error) ||
			!lp2.open(plugin2, false, &error) || !ls2.open(stock2, false, &error) ||
			!lt.open(timed, true, &error)) {
			return fail(error);
		}
		Placement where;
		where.watch("client", 0);
		for (Side *s : {plugin, stock, plugin2, stock2, timed})
			where.watch(s->name, s->compositor.process.pid());
		int n = common.frames(size.frames, size.quick_frames);
		if (!run_lanes({&lp, &ls, &lp2, &ls2, &lt}, n, f0, f1, &error, &where)) return fail(error);
		Stats p = stats_of(lp.to_texture), s = stats_of(ls.to_texture);
		double sc = stats_of(ls2.to_texture).median / s.median, pc = stats_of(lp2.to_texture).median / p.median;
		std::string name = std::to_string(size.w) + "x" + std::to_string(size.h);
		t1.row({name, std::to_string(n), fmt_ns(p.median), fmt_ns(p.p95), fmt_ns(s.median), fmt_ns(s.p95),
			fmt_ratio(p.median / s.median), fmt_ratio(p.p95 / s.p95), fmt_ratio(sc), fmt_ratio(pc),
			against_controls(p.median / s.median, control_spread({sc, pc})),
			fmt_ns(stats_of(lp.copy).median)});
		Stats inside = stats_of(
			lt.surface.phase(PP_SURFACE_TIMING_V1_PHASE_COMMIT, PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END));
		double subscribed = stats_of(lt.to_texture).median;
		t1t.row({name, fmt_ns(subscribed), fmt_ratio(subscribed / p.median), fmt_ns(inside.median),
			fmt_ns(inside.p95)});
		std::vector<std::string> row = {name};
		for (size_t i = 0; i < 6; i++) row.push_back(where.shares(i));
		t1w.row(row);
	}
	t1.print("Commit-to-texture, XRGB8888 (target plugin/stock <= 1.02; vs controls: outside the spread of "
		 "stock 2/stock and plugin 2/plugin, either way)");
	t1t.print("Timing subscription, on a plugin compositor of its own (its events cost each commit a little)");
	t1w.print("Where the main threads ran (CPU:percent of samples, every 8 rounds)");

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
		if (!lp.open(plugin, false, &error) || !ls.open(stock, false, &error) ||
			!lt.open(timed, true, &error)) {
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
		t2.row({"", "  in the compositor (subscribed, its own)", fmt_ns(conv.median), "", fmt_ns(inside.median),
			"", "", ""});
		t2.row({"", "client converts, stock", median(ls.convert), median(ls.copy), median(ls.to_texture),
			fmt_ns(se.median), fmt_ns(se.p95), "1.000x"});
	}
	t2.print("End to end, converted formats (speedup = stock end to end / plugin end to end; target >= 1.3x)");
	if (loop.running()) printf("busy loop: %s of a CPU\n", percent(loop.stop()).c_str());
	return 0;
}
