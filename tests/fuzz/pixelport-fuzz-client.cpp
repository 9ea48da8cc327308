// pixelport-fuzz-client: random request sequences against wl_shm, pixelport-stream-v1 and
// pixelport-timing-v1 (with wl_compositor, wl_subcompositor and xdg_wm_base around them),
// with random arguments of valid syntax and random fd kinds, for a bounded time, while a
// probe connection measures how long the compositor takes to answer a roundtrip.
//
// A protocol error is an expected outcome: the connection is dropped and a new one started.
// Connection K's requests depend only on (seed, K): `--seed S --connection K` replays it alone,
// `--max-ops N` cuts it short to find the smallest prefix that still shows a finding.
//
// Output (stdout): one "finding ..." line per stall of the probe over --stall-ms, per answer
// of the fuzz connection that took over 2 s, and for a compositor that went away, each with
// the seed, connection and request that was running and the last requests of that connection;
// then "fuzz ...", "errors ..." and "probe ..." summary lines. Exit status 0 when the run
// completed (findings are for the caller to judge), 3 when the compositor went away, 1 when
// it could not be reached at all, 2 for bad usage.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "fuzz_client.hpp"

using namespace pixelport::fuzz_client;

int main(int argc, char *argv[]) {
	Options o;
	CLI::App app{"random request sequences against the pixelport globals, with a probe client"};
	app.add_option("--seed", o.seed, "seed of the run (connection K's requests depend on seed and K only)");
	app.add_option("--seconds", o.seconds, "how long to run");
	app.add_option(
		"--connection", o.only_connection, "replay connection K of the seed (and --connections - 1 after it)");
	app.add_option(
		"--connections", o.connections, "run this many connections at most (default: 1 with --connection)");
	app.add_option("--max-ops", o.max_ops, "at most N requests per connection");
	app.add_option("--log", o.log_path, "write every request to this file");
	app.add_option("--stall-ms", o.stall_ms, "probe roundtrips longer than this are findings");
	app.add_option("--bad-permille", o.bad_permille, "how often (per 1000) an argument is picked to be invalid");
	app.add_option("--probe-interval-ms", o.probe_interval_ms, "pause between probe roundtrips");
	app.add_flag("!--no-clear-nonblock", o.clear_nonblock, "do not clear O_NONBLOCK on shared stream fds");
	app.add_flag("!--no-odd-stream-fds", o.odd_stream_fds, "streams only over the fd kinds the protocol documents");
	app.add_flag("!--no-huge", o.huge, "buffers and pools at most 512 px / 4 MiB");
	app.add_flag("!--no-short-writes", o.short_writes, "always send everything announced at once");
	app.add_flag(
		"!--no-role-after-buffer", o.role_after_buffer, "no xdg role for a surface that had a buffer attached");
	app.add_flag("!--no-sync-subsurfaces", o.sync_subsurfaces, "every subsurface desynchronized");
	CLI11_PARSE(app, argc, argv);
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(g_junk); i++) g_junk[i] = static_cast<uint8_t>(i * 131 + 7);

	Run run;
	if (!o.log_path.empty()) {
		run.log = fopen(o.log_path.c_str(), "w");
		if (!run.log) {
			fprintf(stderr, "cannot write %s: %s\n", o.log_path.c_str(), strerror(errno));
			return 2;
		}
	}
	printf("fuzz seed=%" PRIu64 " seconds=%.1f classes:%s%s%s%s%s%s\n", o.seed, o.seconds,
		o.clear_nonblock ? " clear-nonblock" : "", o.odd_stream_fds ? " odd-stream-fds" : "",
		o.huge ? " huge" : "", o.short_writes ? " short-writes" : "",
		o.role_after_buffer ? " role-after-buffer" : "", o.sync_subsurfaces ? " sync-subsurfaces" : "");
	fflush(stdout);

	Probe probe;
	probe.thread = std::thread([&] { probe.run(o, run.t_start); });
	probe.ready.wait(false); // connected, or lost
	if (probe.lost) {
		fprintf(stderr, "probe: %s\n", probe.error.c_str());
		probe.thread.join();
		return 1;
	}

	uint64_t deadline = run.t_start + static_cast<uint64_t>(o.seconds * 1e9);
	uint64_t first = o.only_connection >= 0 ? static_cast<uint64_t>(o.only_connection) : 0;
	uint64_t count = o.connections >= 0 ? static_cast<uint64_t>(o.connections)
		: o.only_connection >= 0    ? 1
					    : UINT64_MAX;
	for (uint64_t k = first; k - first < count && now_ns() < deadline; k++) {
		Session s(o, run, k);
		if (!s.go(deadline) || probe.lost) break;
	}
	g_op_name = "done";
	probe.stop = true;
	probe.thread.join();
	if (run.log) fclose(run.log);

	for (const Stall &s : probe.stalls) {
		char line[200];
		snprintf(line, sizeof(line),
			"probe-stall: %.1f ms at %.2f s, seed %" PRIu64 " connection %" PRIu64 " op %" PRIu64 " (%s)",
			s.ms, s.at_s, o.seed, s.conn, s.op, s.op_name);
		run.findings.push_back(line);
	}
	if (probe.lost) run.findings.push_back("probe-lost: " + probe.error);
	for (const std::string &f : run.findings) printf("finding %s\n", f.c_str());
	if (!run.findings.empty()) {
		// The last requests of the connections around the findings, for a first look.
		run.kept.merge(run.recent);
		for (auto &[conn, lines] : run.kept) {
			printf("recent requests of connection %" PRIu64 ":\n", conn);
			for (const std::string &l : lines) printf("  %s\n", l.c_str());
		}
	}
	printf("fuzz connections=%" PRIu64 " requests=%" PRIu64 " fuzz_stalls=%" PRIu64 " findings=%zu\n",
		run.connections, run.requests, run.fuzz_stalls, run.findings.size());
	printf("endings");
	for (auto &[what, n] : run.endings) printf(" %s=%" PRIu64, what.c_str(), n);
	printf("\n");
	printf("probe roundtrips=%" PRIu64 " worst_ms=%.2f mean_ms=%.3f\n", probe.count, probe.worst_ms,
		probe.count ? probe.total_ms / static_cast<double>(probe.count) : 0.0);
	return run.compositor_gone || probe.lost ? 3 : 0;
}
