// pixelport-bench-timing (issue 6): what the timing export costs a client. One commit loop
// (small XRGB8888 wl_shm buffer, commit + wl_display_sync, as fast as possible) against three
// plugin compositors running at once: no timing log, --timing-log FILE, and no log with the
// client subscribed through pixelport-timing-v1. Runs alternate between the three; the table
// has commits/s (median of the runs) and the ratio to "off" from the same run.
#include <drm_fourcc.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "bench_util.hpp"

using namespace pixelport;
using namespace pixelport::bench;

namespace {

struct Variant {
	const char *name;
	std::vector<std::string> args;
	bool subscribe = false;
	Compositor compositor;
	client::Connection conn;
	BenchSurface surface;
	std::vector<double> rates;     // commits/s per run
	std::vector<double> latencies; // commit -> sync done, ns, every commit
	uint64_t records = 0;
	uint64_t commits = 0;
	double cpu_client = 0, cpu_main = 0, cpu_others = 0; // ns over all runs
};

// Commits for `seconds`; false on error. Commits/s and latencies go into v.
bool run(Variant &v, const Frame &a, const Frame &b, double seconds, std::string *error) {
	CpuTime before = process_cpu(v.compositor.process.pid());
	CpuTime client_before = process_cpu(getpid());
	uint64_t start = now_ns(), end = start + static_cast<uint64_t>(seconds * 1e9);
	uint64_t commits = 0;
	while (now_ns() < end) {
		uint64_t done = v.surface.put_and_sync(commits % 2 ? b.px : a.px, now_ns(), error);
		if (done == 0) return false;
		v.latencies.push_back(static_cast<double>(done - v.surface.writer->timing().committed));
		commits++;
	}
	v.rates.push_back(static_cast<double>(commits) * 1e9 / static_cast<double>(now_ns() - start));
	CpuTime after = process_cpu(v.compositor.process.pid()), client_after = process_cpu(getpid());
	v.cpu_main += after.main - before.main;
	v.cpu_others += after.others - before.others;
	v.cpu_client += client_after.main + client_after.others - client_before.main - client_before.others;
	v.commits += commits;
	v.records += v.surface.timing.records.size();
	v.surface.timing.records.clear();
	v.surface.clear();
	return true;
}

} // namespace

int main(int argc, char *argv[]) {
	CommonOptions common;
	int runs = 10;
	double seconds = 2.0;
	int size = 64;
	CLI::App app{"pixelport-bench-timing: commits/s with the timing export off, logging, and subscribed"};
	add_common_options(app, &common, false);
	app.add_option("--runs", runs, "runs per variant (alternating)")->capture_default_str()->check(CLI::Range(1, 1000));
	app.add_option("--seconds", seconds, "length of one run")->capture_default_str()->check(CLI::Range(0.1, 60.0));
	app.add_option("--size", size, "buffer width and height")->capture_default_str()->check(CLI::Range(1, 4096));
	CLI11_PARSE(app, argc, argv);
	if (common.quick) {
		runs = 3;
		seconds = 0.5;
	}

	pin_client_side(common.pin);
	RuntimeDir dir;
	std::string error;
	std::string log = dir.path() + "/timing.jsonl";
	Variant variants[3] = {
		{.name = "off", .args = {}},
		{.name = "log", .args = {"--timing-log", log}},
		{.name = "subscriber", .args = {}, .subscribe = true},
	};
	for (Variant &v : variants) {
		v.args.insert(v.args.end(), {"--output", common.output});
		if (!v.compositor.start(common.compositor, dir, v.args, &error) || !connect_to(&v.conn, v.compositor.socket_path, &error) ||
				!v.surface.open(&v.conn, client::Transport::ShmReused, &error, v.subscribe)) {
			fprintf(stderr, "pixelport-bench-timing: %s: %s\n", v.name, error.c_str());
			return 1;
		}
		if (v.subscribe && !v.surface.timed) {
			fprintf(stderr, "pixelport-bench-timing: no pixelport-timing-v1 global (plugin not loaded?)\n");
			return 1;
		}
	}
	Frame a(DRM_FORMAT_XRGB8888, size, size, 1), b(DRM_FORMAT_XRGB8888, size, size, 2);
	printf("pixelport-bench-timing: %dx%d XRGB8888 wl_shm, commit + wl_display_sync loop, %d runs x %.1f s "
		"per variant, alternating; %s\n", size, size, runs, seconds, machine_note().c_str());
	fflush(stdout);

	// Warm-up: first commits map pools and create textures.
	for (Variant &v : variants) {
		if (!run(v, a, b, 0.2, &error)) {
			fprintf(stderr, "pixelport-bench-timing: %s\n", error.c_str());
			return 1;
		}
		v.rates.clear();
		v.latencies.clear();
		v.records = v.commits = 0;
		v.cpu_client = v.cpu_main = v.cpu_others = 0;
	}
	for (int r = 0; r < runs; r++) {
		for (int k = 0; k < 3; k++) {
			Variant &v = variants[(r + k) % 3]; // rotate who goes first
			if (!run(v, a, b, seconds, &error)) {
				fprintf(stderr, "pixelport-bench-timing: %s\n", error.c_str());
				return 1;
			}
		}
	}

	Stats base = stats_of(variants[0].rates);
	Table t({"variant", "commits/s median", "min run", "max run", "ratio to off", "commit->sync p50", "p95",
		"timing records", "CPU/commit: client", "compositor main", "compositor other threads"});
	for (Variant &v : variants) {
		Stats s = stats_of(v.rates);
		Stats l = stats_of(v.latencies);
		char buf[3][32];
		snprintf(buf[0], sizeof(buf[0]), "%.0f", s.median);
		snprintf(buf[1], sizeof(buf[1]), "%.0f", *std::min_element(v.rates.begin(), v.rates.end()));
		snprintf(buf[2], sizeof(buf[2]), "%.0f", *std::max_element(v.rates.begin(), v.rates.end()));
		auto per_commit = [&](double ns) { return fmt_ns(ns / static_cast<double>(v.commits)); };
		t.row({v.name, buf[0], buf[1], buf[2], fmt_ratio(s.median / base.median), fmt_ns(l.median), fmt_ns(l.p95),
			v.subscribe ? std::to_string(v.records) : "-", per_commit(v.cpu_client), per_commit(v.cpu_main),
			per_commit(v.cpu_others)});
	}
	t.print("Timing export overhead (target: ratio within 1% of off, i.e. >= 0.990x)");
	// Paired: each run against the "off" run of the same round, less sensitive to drift.
	std::vector<double> paired[3];
	for (int k = 1; k < 3; k++) {
		for (int r = 0; r < runs; r++) paired[k].push_back(variants[k].rates[r] / variants[0].rates[r]);
		Stats p = stats_of(paired[k]);
		printf("%s / off per round: median %s\n", variants[k].name, fmt_ratio(p.median).c_str());
	}
	return 0; // surfaces, connections, then compositors go in that order
}
