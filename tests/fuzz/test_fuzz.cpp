// pixelport-fuzz-client against a real compositor for a bounded time: afterwards the
// compositor still serves a normal client, reported no sanitizer error, holds no fd the fuzzer
// made and no more memory than the slack below, and never kept the probe client waiting longer
// than the latency rule allows (latency.hpp: against the same compositor's probe with no
// fuzzing, with the fuzzer's stall threshold as the floor), on a replay of the stall alone.
//
// Environment: PIXELPORT_FUZZ_SEED (default: from the clock; printed), PIXELPORT_FUZZ_SECONDS
// (default 20, 60 under AddressSanitizer), PIXELPORT_FUZZ_ARGS (replaces kKnownOpen below,
// e.g. "" to run every attack class).
#include <gtest/gtest.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace pixelport::test;

namespace {

// Attack classes left out so that this test tells about everything else (see
// tests/fuzz/README.md, "Findings"):
//   --no-sync-subsurfaces a synchronized subsurface's cached commit, applied while its
//                         wl_surface is destroyed at disconnect, sends wl_surface.enter after
//                         wlroots freed the surface's outputs: a use-after-free in wlroots
//                         0.18 when the output goes (AddressSanitizer at exit), no plugin
//                         frame involved
const char *const kKnownOpen[] = {"--no-sync-subsurfaces"};

#if defined(__SANITIZE_ADDRESS__)
constexpr double kDefaultSeconds = 60;
// ASan makes every request several times slower, and its quarantine keeps freed memory
// (256 MiB by default) mapped, beside its allocator's own caches: both bounds are wider there
// (LeakSanitizer tells about leaks).
constexpr double kWorstRoundtripMs = 500; // the floor of the probe's rule (latency.hpp)
constexpr size_t kRssSlackKib = 448 * 1024;
#else
constexpr double kDefaultSeconds = 20;
constexpr double kWorstRoundtripMs = 100; // the floor of the probe's rule (latency.hpp)
// Freed heap that glibc keeps in its arenas after thousands of connections.
constexpr size_t kRssSlackKib = 32 * 1024;
#endif

uint64_t now_ms() {
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

// The value after `key` in the line starting with `prefix`, e.g. ("probe ", "worst_ms=").
double field(const std::string &out, const std::string &prefix, const std::string &key) {
	std::istringstream in(out);
	std::string line;
	while (std::getline(in, line)) {
		size_t k = line.find(key);
		if (line.rfind(prefix, 0) == 0 && k != std::string::npos)
			return std::strtod(line.c_str() + k + key.size(), nullptr);
	}
	return -1;
}

TEST(Fuzz, RandomRequestsLeaveTheCompositorServingAndNothingBehind) {
	const char *seed_env = getenv("PIXELPORT_FUZZ_SEED");
	uint64_t seed =
		seed_env && *seed_env ? std::strtoull(seed_env, nullptr, 10) : static_cast<uint64_t>(time(nullptr));
	const char *seconds_env = getenv("PIXELPORT_FUZZ_SECONDS");
	double seconds = seconds_env && *seconds_env ? std::strtod(seconds_env, nullptr) : kDefaultSeconds;
	char secs[32];
	snprintf(secs, sizeof(secs), "%g", seconds);
	std::vector<std::string> argv = {
		build_path("PIXELPORT_FUZZ_CLIENT"), "--seed", std::to_string(seed), "--seconds", secs};
	const char *args_env = getenv("PIXELPORT_FUZZ_ARGS");
	if (args_env) {
		std::istringstream in(args_env);
		for (std::string a; in >> a;) argv.push_back(a);
	} else {
		argv.insert(argv.end(), std::begin(kKnownOpen), std::end(kKnownOpen));
	}
	std::string command;
	for (const std::string &a : argv) command += (command.empty() ? "" : " ") + a;
	printf("fuzz seed %" PRIu64 " for %.0f s; again: PIXELPORT_FUZZ_SEED=%" PRIu64
	       " meson test fuzz, or against any "
	       "compositor: %s\n",
		seed, seconds, seed, command.c_str());
	RecordProperty("seed", std::to_string(seed));

	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	expect_compositor_serves_others(fx); // warm up: first-use allocations
	pid_t pid = fx.compositor().pid();
	// The baseline of the fuzzer's probe: the same compositor's probe client over 300 ms with no
	// fuzzing, just before it (stock wlroots has none of the protocols the fuzzer sends). The
	// floor is the fuzzer's stall threshold: its requests include 1 GiB pools and 16384-pixel
	// buffers.
	LatencyBaseline quiet;
	{
		ProbeClient probe;
		ProbeStats s;
		ASSERT_TRUE(probe.start(fx) && probe.sample(&s) && probe.sample(&s, 5000, 300));
		quiet = {s.worst_roundtrip_us,
			"the same compositor's probe over 300 ms with no fuzzing, just before it"};
		probe.stop(&s);
	}
	const LatencyRule rule{static_cast<uint64_t>(kWorstRoundtripMs * 1000)};
	const double bound_ms = static_cast<double>(latency_bound_us(quiet, 0, rule)) / 1000;
	size_t fds0 = idle_fd_count(pid); // the warm-up clients torn down
	size_t rss0 = rss_kib(pid);

	Process fuzz;
	ASSERT_TRUE(fuzz.start(argv, fx.client_env()));
	size_t fds_peak = fds0, rss_peak = rss0;
	int status = -1;
	uint64_t deadline = now_ms() + static_cast<uint64_t>(seconds * 1000) + 60000;
	while (now_ms() < deadline) {
		status = fuzz.wait(20);
		if (status >= 0) break;
		fx.compositor().wait_for_err("\x01", 1); // keep its stderr pipe from filling up
		fds_peak = std::max(fds_peak, count_fds(pid));
		rss_peak = std::max(rss_peak, rss_kib(pid));
	}
	if (status < 0) status = fuzz.terminate(1000);
	printf("%s", fuzz.out().c_str());
	// Its stderr holds libwayland's line for every protocol error: only the end of it.
	const std::string &ferr = fuzz.err();
	EXPECT_EQ(status, 0) << ferr.substr(ferr.size() > 4000 ? ferr.size() - 4000 : 0);
	ASSERT_TRUE(fx.compositor().running()) << fx.compositor().err();

	// Everything the fuzzer made is released within 1 s of its exit. The plugin keeps one
	// relay pipe (2 fds) for reading FIFOs without blocking, opened at the first FIFO stream
	// and shared by all clients for the plugin's life: not the fuzzer's.
	fds0 += 2;
	size_t fds = settle_at_most(count_fds, pid, fds0, 1000);
	size_t rss = rss_kib(pid);
	printf("compositor fds %zu -> peak %zu -> %zu after; RSS %zu -> peak %zu -> %zu KiB after (slack %zu)\n", fds0,
		fds_peak, fds, rss0, rss_peak, rss, kRssSlackKib);
	EXPECT_LE(fds, fds0) << "fds the fuzzer made outlive it (seed " << seed << ")";
	EXPECT_LE(rss, rss0 + kRssSlackKib) << "memory the fuzzer made outlives it (seed " << seed << ")";

	const std::string &out = fuzz.out();
	double roundtrips = field(out, "probe ", "roundtrips="), worst = field(out, "probe ", "worst_ms=");
	EXPECT_GT(roundtrips, 0) << out;
	EXPECT_GE(worst, 0) << out;
	if (worst >= bound_ms) {
		// A stall is a finding if it comes back when its connection is replayed alone against
		// the same compositor; one that does not was the machine's load (tests run in parallel).
		std::istringstream lines(out);
		int replayed = 0;
		for (std::string line; std::getline(lines, line) && replayed < 5;) {
			unsigned long long s = 0, k = 0, n = 0;
			double ms = 0;
			if (sscanf(line.c_str(),
				    "finding probe-stall: %lf ms at %*f s, seed %llu connection %llu op %llu", &ms, &s,
				    &k, &n) != 4) {
				continue;
			}
			replayed++;
			std::vector<std::string> again = argv;
			again.insert(
				again.end(), {"--connection", std::to_string(k), "--max-ops", std::to_string(n + 10)});
			double best = 1e9;
			for (int i = 0; i < 3 && best >= bound_ms; i++) {
				std::string rout, rerr;
				ASSERT_EQ(fx.run_client(again, 60000, &rout, &rerr), 0) << rerr;
				double w = field(rout, "probe ", "worst_ms=");
				if (w >= 0) best = std::min(best, w);
			}
			printf("replay of seed %llu connection %llu up to op %llu (stall %.1f ms): probe worst %.1f "
			       "ms\n",
				s, k, n + 10, ms, best);
			expect_latency(
				"probe stall on replay: " + line, static_cast<uint64_t>(best * 1000), quiet, 0, rule);
		}
		EXPECT_GT(replayed, 0) << "probe worst " << worst << " ms but no stall finding to replay (seed " << seed
				       << ")";
	}
	for (const char *fatal : {"finding compositor-gone", "finding probe-lost", "finding fuzz-roundtrip-timeout"}) {
		EXPECT_EQ(out.find(fatal), std::string::npos) << fatal << " (seed " << seed << ")";
	}

	expect_compositor_serves_others(fx);
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	for (const char *report : {"AddressSanitizer", "LeakSanitizer", "runtime error:"}) {
		EXPECT_EQ(fx.compositor().err().find(report), std::string::npos) << fx.compositor().err();
	}
}

// Stalls the fuzzer found, replayed alone: each held every client 115-162 ms on its replay
// before its fix (tests/fuzz/README.md, "Findings"), and stays within the random run's rule.
// Replays of older findings are gone: the fuzzer's sequences changed with its operations.
TEST(Fuzz, FoundStallsStayUnderTheRule) {
	struct Found {
		const char *seed, *connection, *max_ops, *what;
	};
	const Found found[] = {
		{"1796525942", "149", "190", "pool resize storms, each resize mapping the file"},
		{"1796525942", "166", "121", "pool resize storms, each resize mapping the file"},
	};
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	expect_compositor_serves_others(fx);
	LatencyBaseline quiet;
	{
		ProbeClient probe;
		ProbeStats s;
		ASSERT_TRUE(probe.start(fx) && probe.sample(&s) && probe.sample(&s, 5000, 300));
		quiet = {
			s.worst_roundtrip_us, "the same compositor's probe over 300 ms with nothing else, just before"};
		probe.stop(&s);
	}
	const LatencyRule rule{static_cast<uint64_t>(kWorstRoundtripMs * 1000)};
	const double bound_ms = static_cast<double>(latency_bound_us(quiet, 0, rule)) / 1000;
	for (const Found &f : found) {
		std::vector<std::string> argv = {build_path("PIXELPORT_FUZZ_CLIENT"), "--seed", f.seed, "--connection",
			f.connection, "--max-ops", f.max_ops};
		argv.insert(argv.end(), std::begin(kKnownOpen), std::end(kKnownOpen));
		// As the random run's replays: the best of up to three, since a busy machine's own
		// stall is no finding.
		double best = 1e9;
		for (int i = 0; i < 3 && best >= bound_ms; i++) {
			std::string out, err;
			ASSERT_EQ(fx.run_client(argv, 60000, &out, &err), 0) << err;
			double w = field(out, "probe ", "worst_ms=");
			ASSERT_GE(w, 0) << out;
			best = std::min(best, w);
		}
		printf("seed %s connection %s up to op %s (%s): probe worst %.1f ms\n", f.seed, f.connection, f.max_ops,
			f.what, best);
		expect_latency(
			std::string("probe during ") + f.what, static_cast<uint64_t>(best * 1000), quiet, 0, rule);
		ASSERT_TRUE(fx.compositor().running()) << fx.compositor().err();
	}
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

} // namespace
