// Frame pacing in the reference compositor (docs/design.md, "Frame pacing"): wp_fifo_v1 and
// wp_commit_timing_v1 as pixelport-pacing-client drives them, judged by what wp_presentation
// tells the client. Each fifo case has its control: the same client without the requests (or
// the same surface shown), which the assertion would fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "pacing_verdict.hpp"

using namespace pixelport::test;

namespace {

// The default output of the fixture: 60 Hz, reported as its period.
constexpr uint64_t kRefreshNs = 1000000000000ull / 60000;

std::string pacing_client() { return build_path("PIXELPORT_PACING_CLIENT"); }

// A counter of the compositor's "pixelport-stats {...}" line (--print-stats), UINT64_MAX if absent.
uint64_t stat(const std::string &out, const char *name) {
	size_t line = out.find("pixelport-stats ");
	if (line == std::string::npos) return UINT64_MAX;
	nlohmann::json j =
		nlohmann::json::parse(out.substr(line + 16, out.find('\n', line) - line - 16), nullptr, false);
	return j.is_object() && j.contains(name) ? j[name].get<uint64_t>() : UINT64_MAX;
}

std::string paced(const std::vector<PacedFrame> &frames, size_t expected, uint64_t stolen_us = 0) {
	return paced_verdict(frames, expected, kRefreshNs, stolen_us * 1000);
}

class Pacing : public testing::Test {
protected:
	void SetUp() override { ASSERT_TRUE(fx_.start({"--print-stats"})); }
	void TearDown() override {
		if (fx_.compositor().running()) {
			EXPECT_EQ(fx_.stop(), 0) << fx_.compositor().err();
		}
	}
	std::string run(const std::vector<std::string> &args, int timeout_ms = 30000) {
		std::vector<std::string> argv = {pacing_client()};
		argv.insert(argv.end(), args.begin(), args.end());
		std::string out, err;
		const StealWindow steal;
		EXPECT_EQ(fx_.run_client(argv, timeout_ms, &out, &err), 0) << err << out;
		stolen_us_ = steal.us();
		printf("pacing client %s: %llu us stolen\n", args.empty() ? "" : args[0].c_str(),
			static_cast<unsigned long long>(stolen_us_));
		return out;
	}
	CompositorFixture fx_;
	uint64_t stolen_us_ = 0; // by the hypervisor during the last run() (latency.hpp, StealWindow)
};

// As fast as two buffers come back: the compositor paces every frame, one per refresh, and
// reports the output's refresh. Without the requests the same client's frames replace each
// other before most are shown.
TEST_F(Pacing, FifoFramesAsFastAsBuffersComeBackShowOnePerRefresh) {
	std::vector<PacedFrame> frames = parse_paced(run({"fifo", "XRGB8888", "shm", "40", "64x48", "0"}));
	EXPECT_EQ(paced(frames, 40, stolen_us_), "");
	for (const PacedFrame &s : frames) EXPECT_EQ(s.refresh, kRefreshNs);
	std::vector<PacedFrame> control = parse_paced(run({"fifo", "XRGB8888", "shm", "40", "64x48", "0", "nofifo"}));
	EXPECT_NE(paced(control, 40), "") << "the control client was paced too: the test cannot fail";
	EXPECT_EQ(fx_.stop(), 0) << fx_.compositor().err();
	// Each frame that arrived while the one before was still to be shown was held: most were.
	EXPECT_GE(stat(fx_.compositor().out(), "paced_commits"), 20u) << fx_.compositor().out();
	EXPECT_EQ(stat(fx_.compositor().out(), "barrier_timeouts"), 0u);
}

// Converted on the workers (NV12), at the client's own 60 Hz, and streamed (the commit held for
// its bytes): the same.
TEST_F(Pacing, FifoFramesConvertedOrStreamedShowOnePerRefresh) {
	for (const std::vector<std::string> &args :
		std::vector<std::vector<std::string>>{{"fifo", "NV12", "shm", "40", "640x480", "60"},
			{"fifo", "XRGB8888", "socket", "40", "320x240", "0"},
			{"fifo", "NV12", "pipe", "30", "320x240", "0"}}) {
		const std::vector<PacedFrame> frames = parse_paced(run(args));
		EXPECT_EQ(paced(frames, std::stoul(args[3]), stolen_us_), "") << args[2];
	}
}

// The barrier's commit is held for its conversion when the next one, which waits for the
// barrier, arrives: it waits until that commit applied and a frame showed it.
TEST_F(Pacing, AWaitArrivingWhileTheBarrierCommitConvertsWaitsForItsFrame) {
	for (int round = 0; round < 3; round++) {
		std::vector<PacedFrame> frames = parse_paced(run({"fifo-held"}));
		EXPECT_EQ(paced(frames, 2, stolen_us_), "") << "round " << round;
	}
}

// A commit that nobody holds, between a replaced commit (it waits to apply with its successor)
// and the commit that replaced it and waits for the barrier: the three apply together once the
// barrier's frame came, none waits for another forever. When that commit sets the barrier
// itself, it applies first (the replaced one with it) and the waiting one waits for its frame.
TEST_F(Pacing, ACommitBetweenAReplacedOneAndAWaitingOneStallsNothing) {
	for (const char *between : {"plain", "set"}) {
		const std::string out = run({"fifo-behind", between});
		std::vector<PacedFrame> frames = parse_paced(out);
		ASSERT_EQ(frames.size(), 3u) << between << ": " << out;
		EXPECT_NE(out.find("done"), std::string::npos) << between << ": " << out;
		ASSERT_TRUE(frames[2].presented) << between << ": " << out;
		if (frames[0].presented) {
			// A later refresh than the barrier's frame: never merged into it.
			EXPECT_GE(frames[2].ns, frames[0].ns + kRefreshNs / 2) << between << ": " << out;
		}
	}
	EXPECT_EQ(fx_.stop(), 0) << fx_.compositor().err();
	EXPECT_EQ(stat(fx_.compositor().out(), "barrier_timeouts"), 0u) << fx_.compositor().out();
}

// A synchronized subsurface's wait_barrier is ignored: its cached commits apply with its
// parent's, all at once, as without the protocol.
TEST_F(Pacing, ASynchronizedSubsurfacesBarrierIsIgnored) {
	const std::string out = run({"sync-subsurface", "4"});
	std::vector<PacedFrame> children = parse_paced(out, "child");
	std::vector<PacedFrame> parent = parse_paced(out, "parent");
	ASSERT_EQ(children.size(), 4u) << out;
	ASSERT_EQ(parent.size(), 1u) << out;
	ASSERT_TRUE(parent[0].presented) << out;
	for (size_t i = 0; i < 3; i++) EXPECT_FALSE(children[i].presented) << "child " << i << ": " << out;
	EXPECT_TRUE(children[3].presented) << out;
	EXPECT_EQ(children[3].ns, parent[0].ns) << out;
}

// A window under another, on no output, is not being updated: its barriers do not hold its
// commits (Weston's and Mutter's rule), so it commits at its own pace. The control: shown,
// the same commits take a refresh each.
TEST_F(Pacing, AHiddenSurfacesBarrierDoesNotStallItsClient) {
	constexpr int kFrames = 20;
	auto elapsed_us = [](const std::string &out) {
		size_t at = out.find(" frames in ");
		return at == std::string::npos ? UINT64_MAX : std::stoull(out.substr(at + 11));
	};
	const std::string out = run({"hidden", std::to_string(kFrames)});
	if (out.find("covered: on 0 output(s)") == std::string::npos) {
		// The rule is about a window on no output; a scene that keeps a covered window on its
		// output (wlroots 0.20's, here) makes none this way.
		GTEST_SKIP() << "the compositor keeps the covered window on its output: " << out;
	}
	const uint64_t hidden = elapsed_us(out);
	EXPECT_LT(hidden, kFrames * kRefreshNs / 1000 / 2) << "20 hidden frames took " << hidden << " us";
	std::vector<PacedFrame> shown =
		parse_paced(run({"fifo", "XRGB8888", "shm", std::to_string(kFrames), "64x48", "0"}));
	ASSERT_EQ(shown.size(), static_cast<size_t>(kFrames));
	ASSERT_TRUE(shown.front().presented && shown.back().presented);
	EXPECT_GE(shown.back().ns - shown.front().ns, (kFrames - 2) * kRefreshNs / 2);
	EXPECT_EQ(fx_.stop(), 0) << fx_.compositor().err();
	EXPECT_EQ(stat(fx_.compositor().out(), "barrier_timeouts"), 0u) << fx_.compositor().out();
}

// A timed commit shows at or after its target and within one refresh of it.
TEST_F(Pacing, TimedCommitsShowAtOrAfterTheirTargetWithinARefresh) {
	const std::string out = run({"timed", "12"});
	EXPECT_EQ(timed_verdict(out, 12), "") << out;
	EXPECT_NE(out.find("refresh 16666666\n"), std::string::npos) << out; // reported, not measured
}

// A target a minute away holds that surface's commit only, and only until its client has made
// more commits behind it than the hold ledger lets wait.
TEST_F(Pacing, AFarTargetHoldsOnlyItsSurfaceAndOnlyWithinTheLedgersBound) {
	const std::string out = run({"far-target"});
	EXPECT_NE(out.find("other presented"), std::string::npos) << out;
	EXPECT_NE(out.find("\nheld\n"), std::string::npos) << out;
	EXPECT_NE(out.find("released all"), std::string::npos) << out;
	EXPECT_NE(out.find("last presented"), std::string::npos) << out;
}

// Left out, the globals are not advertised and the client says so.
TEST(PacingOff, EachGlobalCanBeLeftOut) {
	for (const char *global : {"wp_fifo_manager_v1", "wp_commit_timing_manager_v1"}) {
		CompositorFixture fx;
		ASSERT_TRUE(fx.start({"--without", global}));
		std::string out, err;
		ASSERT_EQ(fx.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
		const bool fifo = std::string(global) == "wp_fifo_manager_v1";
		EXPECT_EQ(out.find(std::string("'") + global + "'"), std::string::npos) << out;
		EXPECT_NE(out.find(fifo ? "'wp_commit_timing_manager_v1'" : "'wp_fifo_manager_v1'"), std::string::npos)
			<< out;
		EXPECT_EQ(fx.run_client({pacing_client(), fifo ? "fifo" : "timed", "XRGB8888", "shm", "2", "8x8", "0"},
				  10000, &out, &err),
			3);
		EXPECT_EQ(out, fifo ? "no fifo\n" : "no commit-timing\n");
		EXPECT_EQ(fx.stop(), 0);
	}
}

// The timing log carries each commit's barrier wait and target beside its presentation.
TEST(PacingTiming, TheLogHasEachCommitsBarrierWaitAndTarget) {
	CompositorFixture fx;
	const std::string log = fx.runtime_dir() + "/timing.jsonl";
	ASSERT_TRUE(fx.start({"--timing-log", log}));
	std::string out, err;
	ASSERT_EQ(fx.run_client({pacing_client(), "fifo", "XRGB8888", "shm", "20", "64x48", "0"}, 30000, &out, &err), 0)
		<< err;
	ASSERT_EQ(fx.run_client({pacing_client(), "timed", "4"}, 30000, &out, &err), 0) << err;
	ASSERT_EQ(fx.stop(), 0);
	std::vector<uint64_t> targets;
	std::istringstream timed(out);
	for (std::string line; std::getline(timed, line);) {
		unsigned long long i = 0, target = 0;
		if (sscanf(line.c_str(), "timed %llu target %llu", &i, &target) == 2) targets.push_back(target);
	}
	std::ifstream in(log);
	int waited = 0;
	std::vector<uint64_t> logged;
	for (std::string line; std::getline(in, line);) {
		nlohmann::json j = nlohmann::json::parse(line);
		if (j["type"] != "commit") continue;
		ASSERT_TRUE(j.contains("barrier_wait_ns") && j.contains("t_target")) << line;
		const uint64_t wait = j["barrier_wait_ns"].get<uint64_t>();
		if (wait > 0) {
			waited++;
			EXPECT_LT(wait, 2 * kRefreshNs) << line; // at most the refresh it waited for, and some
		}
		if (!j["t_target"].is_null()) {
			logged.push_back(j["t_target"].get<uint64_t>());
			ASSERT_FALSE(j["t_present"].is_null()) << line;
			EXPECT_GE(j["t_present"].get<uint64_t>(), logged.back()) << line;
		}
	}
	EXPECT_GE(waited, 10);
	EXPECT_EQ(logged, targets);
}

// Every protocol error the XML names, for its misuse; the compositor serves others after.
class PacingErrors : public testing::TestWithParam<ErrorCase> {};

TEST_P(PacingErrors, IsRaisedAndNothingElseBreaks) { expect_protocol_error(pacing_client(), GetParam()); }

INSTANTIATE_TEST_SUITE_P(Misuse, PacingErrors,
	testing::Values(ErrorCase{"error-already-exists", 0, "wp_fifo_manager_v1"},
		ErrorCase{"error-commit-timer-exists", 0, "wp_commit_timing_manager_v1"},
		ErrorCase{"error-invalid-timestamp", 0, "wp_commit_timer_v1"},
		ErrorCase{"error-timestamp-exists", 1, "wp_commit_timer_v1"},
		ErrorCase{"error-fifo-surface-destroyed", 0, "wp_fifo_v1"},
		ErrorCase{"error-timer-surface-destroyed", 2, "wp_commit_timer_v1"}),
	[](const testing::TestParamInfo<ErrorCase> &info) { return error_case_name(info.param); });

} // namespace
