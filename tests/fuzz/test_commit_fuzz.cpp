// pixelport-commit-fuzz against the compositor (tests/fuzz/README.md, "The commit fuzzer"):
// random legal commit sequences, every screenshot showing only committed colours, the last ones
// at quiescent points, timing reports in order, never a disconnection; afterwards the
// compositor's fds and RSS back at their baseline. With the plugin for NV12 and RGB888 (small
// commits converted on the main thread, large ones held for a worker), and stock wlroots with
// XRGB8888, which proves the fuzzer's model of what the screen must show.
//
// Environment: PIXELPORT_COMMIT_FUZZ_SEED (default: from the clock; printed),
// PIXELPORT_COMMIT_FUZZ_SECONDS (default 20, 45 under AddressSanitizer).
#include <gtest/gtest.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace pixelport::test;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr double kDefaultSeconds = 45;
constexpr size_t kRssSlackKib = 448 * 1024; // ASan's quarantine keeps freed memory (test_fuzz.cpp)
#else
constexpr double kDefaultSeconds = 20;
constexpr size_t kRssSlackKib = 32 * 1024; // freed heap glibc keeps in its arenas
#endif

uint64_t now_ms() {
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

struct Case {
	const char *format;
	bool stock;
};

class CommitFuzz : public testing::TestWithParam<Case> {};

TEST_P(CommitFuzz, TheScreenShowsOnlyCommittedColoursAndTheLastOnesWhenQuiet) {
	const Case &c = GetParam();
	const char *seed_env = getenv("PIXELPORT_COMMIT_FUZZ_SEED");
	const uint64_t seed =
		seed_env && *seed_env ? std::strtoull(seed_env, nullptr, 10) : static_cast<uint64_t>(time(nullptr));
	const char *seconds_env = getenv("PIXELPORT_COMMIT_FUZZ_SECONDS");
	const double seconds = seconds_env && *seconds_env ? std::strtod(seconds_env, nullptr) : kDefaultSeconds;
	char secs[32];
	snprintf(secs, sizeof secs, "%g", seconds);
	const std::vector<std::string> argv = {build_path("PIXELPORT_COMMIT_FUZZ"), "--seed", std::to_string(seed),
		"--seconds", secs, "--format", c.format};
	std::string command;
	for (const std::string &a : argv) command += (command.empty() ? "" : " ") + a;
	printf("commit-fuzz seed %" PRIu64 " %s%s for %s s; again: PIXELPORT_COMMIT_FUZZ_SEED=%" PRIu64
	       " meson test commit-fuzz, or against a compositor started with --output 256x128%s: %s\n",
		seed, c.format, c.stock ? " (stock)" : "", secs, seed, c.stock ? " --no-plugin" : "", command.c_str());
	RecordProperty("seed", std::to_string(seed));

	CompositorFixture fx;
	ASSERT_TRUE(
		fx.start(c.stock ? std::vector<std::string>{"--no-plugin"} : std::vector<std::string>{}, "256x128"));
	expect_compositor_serves_others(fx); // warm up: first-use allocations
	const pid_t pid = fx.compositor().pid();
	size_t fds0 = idle_fd_count(pid); // the warm-up client torn down
	const size_t rss0 = rss_kib(pid);

	Process fuzz;
	ASSERT_TRUE(fuzz.start(argv, fx.client_env()));
	PeakSampler peaks;
	peaks.start(pid);
	int status = -1;
	for (uint64_t deadline = now_ms() + static_cast<uint64_t>(seconds * 1000) + 120000; now_ms() < deadline;) {
		status = fuzz.wait(100);
		if (status >= 0) break;
		fx.compositor().wait_for_err("\x01", 1); // keep its stderr pipe from filling up
	}
	if (status < 0) status = fuzz.terminate(1000);
	peaks.stop();
	printf("%s", fuzz.out().c_str());
	const std::string &out = fuzz.out();
	EXPECT_EQ(status, 0) << "findings (seed " << seed << "), replay: " << command << "\n" << fuzz.err();
	EXPECT_EQ(out.find("finding "), std::string::npos);
	EXPECT_NE(out.find("commit-fuzz ops="), std::string::npos) << fuzz.err();
	EXPECT_EQ(out.find(" checkpoints=0 "), std::string::npos) << "no screenshot was checked";
	ASSERT_TRUE(fx.compositor().running()) << fx.compositor().err();

	const size_t fds = settle_at_most(count_fds, pid, fds0, 1000);
	const size_t rss = settle_at_most(rss_kib, pid, rss0 + kRssSlackKib, 1000);
	printf("compositor fds %zu -> peak %zu -> %zu after; RSS %zu -> peak %zu -> %zu KiB after (slack %zu)\n", fds0,
		peaks.peak_fds(), fds, rss0, peaks.peak_rss_kib(), rss, kRssSlackKib);
	EXPECT_LE(fds, fds0) << "fds the fuzzer made outlive it (seed " << seed << ")";
	EXPECT_LE(rss, rss0 + kRssSlackKib) << "memory the fuzzer made outlives it (seed " << seed << ")";

	expect_compositor_serves_others(fx);
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	for (const char *report : {"AddressSanitizer", "LeakSanitizer", "runtime error:"}) {
		EXPECT_EQ(fx.compositor().err().find(report), std::string::npos) << fx.compositor().err();
	}
}

// A desynchronized subsurface under a synchronized one, its cached commit applied as stock
// allows (set_sync, commits from it up to the toplevel, set_desync) while the sync child's
// commit converts on a worker (both sizes: converted on a worker or when applied): the
// ancestors' held commits apply before the set_desync, so its commit applies too.
TEST(CommitFuzzScenario, ADesyncSubsurfaceUnderASyncOneAppliesAsWithStock) {
	for (const char *side : {"64", "1024"}) {
		CompositorFixture fx;
		ASSERT_TRUE(fx.start({}, "256x128"));
		std::string out, err;
		const int status = fx.run_client(
			{build_path("PIXELPORT_COMMIT_FUZZ"), "--desync-under-sync", side, "--format", "NV12"}, 60000,
			&out, &err);
		EXPECT_EQ(status, 0) << out << err;
		EXPECT_EQ(out.find("finding "), std::string::npos) << out;
		EXPECT_NE(out.find(" quiescent=2 "), std::string::npos) << out;
		EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	}
}

// A video window being resized: bursts of 3 to 6 commits of large buffers in new sizes, back to
// back, and screenshots until each burst's last colour shows. The window never shows nothing
// (before the hold ledger, a superseded commit applied with the one before it and showed a
// blank until the newest was converted: 3 of 3 seeds found it at their first burst), and stock
// shows the same (which checks the model).
TEST(CommitFuzzScenario, BurstsOfNewSizesNeverShowAnEmptyWindow) {
	const char *seed_env = getenv("PIXELPORT_COMMIT_FUZZ_SEED");
	const std::string seed = seed_env && *seed_env ? seed_env : std::to_string(time(nullptr));
	for (const Case &c : {Case{"NV12", false}, Case{"RGB888", false}, Case{"XRGB8888", true}}) {
		CompositorFixture fx;
		ASSERT_TRUE(fx.start(
			c.stock ? std::vector<std::string>{"--no-plugin"} : std::vector<std::string>{}, "256x128"));
		std::string out, err;
		const int status = fx.run_client({build_path("PIXELPORT_COMMIT_FUZZ"), "--size-bursts", "12", "--seed",
							 seed, "--format", c.format},
			120000, &out, &err);
		EXPECT_EQ(status, 0) << c.format << " seed " << seed << "\n" << out << err;
		EXPECT_EQ(out.find("finding "), std::string::npos) << out;
		EXPECT_NE(out.find("commit-fuzz ops=12 "), std::string::npos) << out;
		EXPECT_EQ(out.find(" checkpoints=0 "), std::string::npos) << "no screenshot was checked";
		EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	}
}

INSTANTIATE_TEST_SUITE_P(Formats, CommitFuzz,
	testing::Values(Case{"NV12", false}, Case{"RGB888", false}, Case{"XRGB8888", true}),
	[](const testing::TestParamInfo<Case> &info) {
		return std::string(info.param.format) + (info.param.stock ? "_stock" : "_plugin");
	});

} // namespace
