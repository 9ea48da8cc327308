// What a hostile client can make the compositor convert and hold (docs/design.md, "Limits and
// fairness"): converted images are shared where the same commit content is shown twice,
// charged to a per-client budget, freed when the client goes; a burst of commits converts
// only what can still be shown.
#include <drm_fourcc.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "harness.hpp"
#include "reference.hpp"

using namespace pixelport::test;

namespace {

uint64_t stat_of(const std::string &out, const std::string &name) {
	size_t at = out.find("\"" + name + "\":");
	return at == std::string::npos ? UINT64_MAX : std::stoull(out.substr(at + name.size() + 3));
}

constexpr const char *kBudget = "67108864"; // 64 MiB per client

// Pixels of `shot`'s top-left corner that are not what a uniform NV12 buffer of `value` bytes
// shows (reference_rgb, read with the default matrix of a buffer `buffer_height` lines tall;
// 0x80 is neutral grey under every matrix): the conversion attacks fill their buffers so (the
// sparse one leaves them 0).
int grey_mismatches(const Image &shot, uint8_t value = 0x80, int buffer_height = 64) {
	constexpr int kSide = 64;
	std::vector<uint8_t> nv12(kSide * kSide * 3 / 2, value);
	std::vector<uint32_t> want;
	const YuvColour colour = YuvColour::default_for(buffer_height);
	if (!reference_rgb(DRM_FORMAT_NV12, kSide, kSide, kSide, nv12.data(), &want, &colour)) return -1;
	return screen_mismatches(shot, want, kSide, kSide, reference_tolerance(DRM_FORMAT_NV12), false);
}

// One NV12 buffer on 18 subsurfaces: 18 images would exceed the 64 MiB budget at either size;
// 1024x1024 (4 MiB) is converted when applied, 2048x2048 (16 MiB) held and converted in bands.
class ConversionShare : public testing::TestWithParam<int> {};

TEST_P(ConversionShare, OneBufferOnManySurfacesSharesOneImage) {
	const int side = GetParam();
	const size_t image_kib = static_cast<size_t>(side) * side * 4 / 1024;
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start({"--image-budget-client", kBudget, "--print-stats"}));
	Process client;
	std::string s = std::to_string(side);
	ASSERT_TRUE(client.start(
		{build_path("PIXELPORT_CONVERSION_ATTACK"), "share-burst", "18", s, s}, a.fx.client_env()));
	std::string verdict, holding;
	ASSERT_TRUE(client.read_line(&verdict, 20000)) << client.err();
	EXPECT_EQ(verdict, "ok"); // 18 images would exceed the budget: they share one
	ASSERT_TRUE(client.read_line(&holding, 5000));
	Image shot;
	ASSERT_TRUE(a.fx.screenshot(&shot)); // every surface drawn: every conversion done
	EXPECT_EQ(grey_mismatches(shot), 0);
	size_t during = rss_kib(a.pid);
	EXPECT_LT(during, a.rss0 + 3 * image_kib) << "RSS " << a.rss0 << " -> " << during << " KiB";
	ProbeStats stats;
	// 18 large windows over the probe's: no frame count.
	a.expect_probe_served(&stats, a.quiet_baseline("stock wlroots takes no NV12"), false);
	client.terminate();
	a.expect_back_to_baseline();
	a.print(("share-" + s).c_str(), stats);
	expect_compositor_serves_others(a.fx);
	a.probe.stop(&stats);
	EXPECT_EQ(a.fx.stop(), 0) << a.fx.compositor().err();
	EXPECT_EQ(stat_of(a.fx.compositor().out(), "budget_refusals"), 0u) << a.fx.compositor().out();
	EXPECT_EQ(stat_of(a.fx.compositor().out(), "image_bytes"), 0u) << a.fx.compositor().out();
}

INSTANTIATE_TEST_SUITE_P(Sizes, ConversionShare, testing::Values(1024, 2048));

TEST(ConversionLimits, ImagesOverTheClientBudgetAreANoMemoryError) {
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start({"--image-budget-client", kBudget, "--print-stats"}));
	std::string out, err;
	// Released between surfaces: each commit is new content and needs its own image.
	ASSERT_EQ(a.fx.run_client({build_path("PIXELPORT_CONVERSION_ATTACK"), "share-sequential", "18", "1024", "1024"},
			  60000, &out, &err),
		0)
		<< err;
	// wl_display.error no_memory (libwayland-client reports it as ENOMEM), with the reason.
	EXPECT_EQ(out, "disconnected Cannot allocate memory\nholding\n");
	EXPECT_NE(err.find("would exceed the client's budget of 67108864 bytes"), std::string::npos) << err;
	ProbeStats stats;
	// The attack is short: a few frames for the probe to count.
	a.expect_probe_served(
		&stats, a.quiet_baseline("stock wlroots has no image budget and takes no NV12"), true, 300);
	a.expect_back_to_baseline();
	a.print("over-budget", stats);
	expect_compositor_serves_others(a.fx);
	a.probe.stop(&stats);
	EXPECT_EQ(a.fx.stop(), 0) << a.fx.compositor().err();
	EXPECT_EQ(stat_of(a.fx.compositor().out(), "budget_refusals"), 1u) << a.fx.compositor().out();
}

// A client whose frame fits the budget once, not twice, still shows every frame: pixelport-
// sweep commits 2048x2048 RGB888 frames (a 16 MiB image each) against a 24 MiB budget. A large
// commit is normally held and converted into a second image while the first is shown; when
// that image would cross the budget the commit is converted into the surface's own image as
// it applies instead (before, the sweep of scripts/demo lost its connection at 256 MiB RGB888).
TEST(ConversionLimits, AFrameThatFitsTheBudgetOnlyOnceIsShownFrameAfterFrame) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--image-budget-client", "25165824", "--print-stats"})) << fx.compositor().err();
	std::string out, err;
	const std::string dir = fx.runtime_dir() + "/sweep";
	ASSERT_EQ(fx.run_client(
			  {build_path("PIXELPORT_SWEEP"), "-o", dir, "--sizes", "2048x2048", "--formats", "RGB888",
				  "--transports", "shm,shm-new", "--warmup", "1", "--frames", "4", "--min-frames", "4"},
			  60000, &out, &err),
		0)
		<< err;
	EXPECT_EQ(err.find("connection lost"), std::string::npos) << err;
	EXPECT_NE(err.find("RGB888 shm 12.0 MiB: median cost"), std::string::npos) << err;
	EXPECT_NE(err.find("RGB888 shm-new 12.0 MiB: median cost"), std::string::npos) << err;
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	EXPECT_EQ(stat_of(fx.compositor().out(), "budget_refusals"), 0u) << fx.compositor().out();
	EXPECT_GE(stat_of(fx.compositor().out(), "converted_uploads"), 8u) << fx.compositor().out();
	EXPECT_EQ(stat_of(fx.compositor().out(), "image_bytes"), 0u) << fx.compositor().out();
}

// The conversion storm (the hostile-client report's case 6): 60 full-damage commits of a
// 4096x4096 NV12 buffer in one burst. Only what can be shown is converted, in bands between
// dispatches: the probe client keeps its latency, and the last commit is shown, converted.
TEST(ConversionLimits, ABurstOfCommitsConvertsOnlyWhatCanBeShownWithoutStallingOthers) {
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start({"--print-stats"}));
	Process client;
	ASSERT_TRUE(client.start(
		{build_path("PIXELPORT_CONVERSION_ATTACK"), "storm", "60", "4096", "4096"}, a.fx.client_env()));
	std::string shown, verdict, holding;
	ASSERT_TRUE(client.read_line(&shown, 40000)) << client.err();
	EXPECT_EQ(shown, "presented");
	ASSERT_TRUE(client.read_line(&verdict, 5000));
	EXPECT_EQ(verdict, "ok");
	ASSERT_TRUE(client.read_line(&holding, 5000));
	Image shot;
	ASSERT_TRUE(a.fx.screenshot(&shot));
	EXPECT_EQ(grey_mismatches(shot), 0);
	ProbeStats stats;
	a.expect_probe_served(&stats, a.quiet_baseline("stock wlroots takes no NV12"));
	client.terminate();
	a.expect_back_to_baseline();
	a.print("storm", stats);
	expect_compositor_serves_others(a.fx);
	a.probe.stop(&stats);
	EXPECT_EQ(a.fx.stop(), 0) << a.fx.compositor().err();
	const std::string &out = a.fx.compositor().out();
	// Commits superseded before they could be shown are never converted.
	EXPECT_LE(stat_of(out, "converted_uploads"), 3u) << out;
	EXPECT_GE(stat_of(out, "skipped_conversions"), 57u) << out;
}

// Commits converted in one go when applied must be cheap in pixels *and* in rows of the pool:
// these commit few pixels, or little damage as wlroots would read it at the commit, but would
// make the compositor convert a lot at the apply (each commit made once the last was shown).
// Each must be held and converted in bands like a large commit, so the probe client keeps its
// latency (its frames do not count: the attack's window covers it).
struct HeldAttack {
	const char *mode;
	int width, height;
	uint8_t value; // every byte of the client's NV12 buffer
};

class ConversionHeld : public testing::TestWithParam<HeldAttack> {};

TEST_P(ConversionHeld, CommitsCheapInPixelsButDearAtTheApplyAreHeldAndBanded) {
	const HeldAttack &attack = GetParam();
	constexpr int kCommits = 8; // after the first one
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start({"--print-stats"}));
	Process client;
	ASSERT_TRUE(client.start({build_path("PIXELPORT_CONVERSION_ATTACK"), attack.mode, std::to_string(kCommits),
					 std::to_string(attack.width), std::to_string(attack.height)},
		a.fx.client_env()))
		<< client.err();
	std::string shown, verdict, holding;
	ASSERT_TRUE(client.read_line(&shown, 60000)) << client.err();
	EXPECT_EQ(shown, "presented " + std::to_string(kCommits + 1));
	ASSERT_TRUE(client.read_line(&verdict, 5000));
	EXPECT_EQ(verdict, "ok");
	ASSERT_TRUE(client.read_line(&holding, 5000));
	Image shot;
	ASSERT_TRUE(a.fx.screenshot(&shot));
	EXPECT_EQ(grey_mismatches(shot, attack.value, attack.height), 0);
	ProbeStats stats;
	// The attack's window covers the probe's: no frame count.
	a.expect_probe_served(&stats, a.quiet_baseline("stock wlroots takes no NV12"), false);
	client.terminate();
	a.expect_back_to_baseline();
	a.print(attack.mode, stats);
	a.probe.stop(&stats);
	EXPECT_EQ(a.fx.stop(), 0) << a.fx.compositor().err();
	const std::string &out = a.fx.compositor().out();
	EXPECT_EQ(stat_of(out, "held_commits"), static_cast<uint64_t>(kCommits + 1)) << out;
	EXPECT_EQ(stat_of(out, "converted_uploads"), static_cast<uint64_t>(kCommits + 1)) << out;
}

// wide-stride: 64x8192, rows 64 KiB apart (a 768 MiB sparse pool), its pages punched out
// between commits: 524,288 pixels, 12,288 fresh pages to fault in. sync-wide-stride: 64x16384
// with 4 KiB rows on a synchronized subsurface, 24,576 pages, which its parent's commit would
// have converted in one go (438 ms here, every client waiting). viewport-damage: 4096x4096
// through a 64x64 destination, the whole surface damaged: 4,096 surface pixels, 16 Mi buffer
// pixels.
INSTANTIATE_TEST_SUITE_P(Attacks, ConversionHeld,
	testing::Values(HeldAttack{"wide-stride", 64, 8192, 0}, HeldAttack{"sync-wide-stride", 64, 16384, 0},
		HeldAttack{"viewport-damage", 4096, 4096, 0x80}),
	[](const testing::TestParamInfo<HeldAttack> &info) {
		std::string name = info.param.mode;
		name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
		return name;
	});

// Many conversions due at once: what one dispatch or one render converts in one go is bounded
// whatever the number of surfaces (docs/design.md, "Limits and fairness"). conversion_attack's
// *-children modes: every child shows, in the last of its 8 rounds, its second buffer (bytes
// 0xa0, 8 px smaller than the first).
constexpr int kChildRounds = 8;

struct ChildrenAttack {
	const char *mode;
	int children, width, height;
};

// Runs `attack` against the arena's compositor until its last round is shown; with `pixels`,
// checks the screen. The probe's figures while it ran (the attacker's windows cover the probe's,
// so no frame count), then the attacker goes and everything it made must be gone within 1 s.
ProbeStats run_children_attack(AttackArena &a, const ChildrenAttack &attack, bool pixels) {
	ProbeStats stats;
	Process client;
	EXPECT_TRUE(
		client.start({build_path("PIXELPORT_CONVERSION_ATTACK"), attack.mode, std::to_string(attack.children),
				     std::to_string(attack.width), std::to_string(attack.height)},
			a.fx.client_env()))
		<< client.err();
	std::string shown, verdict, holding;
	EXPECT_TRUE(client.read_line(&shown, 90000)) << client.err();
	EXPECT_EQ(shown, "presented " + std::to_string(kChildRounds));
	EXPECT_TRUE(client.read_line(&verdict, 10000));
	EXPECT_EQ(verdict, "ok");
	EXPECT_TRUE(client.read_line(&holding, 5000));
	if (pixels) {
		Image shot;
		EXPECT_TRUE(a.fx.screenshot(&shot));
		EXPECT_EQ(grey_mismatches(shot, 0xa0, attack.height - 8), 0);
	}
	EXPECT_TRUE(a.probe.sample(&stats));
	EXPECT_EQ(stats.error, "");
	EXPECT_GT(stats.roundtrips, 0u);
	client.terminate();
	a.expect_back_to_baseline();
	a.print(attack.mode, stats);
	return stats;
}

// Stock wlroots' figure for `attack`, in an arena of its own in the same test: the children
// attacks' baseline. Stock takes no NV12: the client gives it XRGB8888 buffers of the same
// sizes, the same attack as far as stock allows.
LatencyBaseline stock_baseline(const ChildrenAttack &attack) {
	AttackArena a;
	a.start({"--no-plugin"});
	if (testing::Test::HasFatalFailure()) return {};
	const ProbeStats stock = run_children_attack(a, attack, false);
	ProbeStats after;
	a.probe.stop(&after);
	EXPECT_EQ(a.fx.stop(), 0) << a.fx.compositor().err();
	return {stock.worst_roundtrip_us,
		std::string("stock wlroots (--no-plugin), ") + attack.mode +
			" with XRGB8888 buffers of the same sizes"};
}

// Synchronized children cannot be held on their own (their parent's commit would apply without
// them): each child's commit is converted in bands while its state is cached, and the parent's
// commit is held until every child's image is complete, so the parent's apply converts nothing
// (24 children of 2560x1440 NV12 converted at the parent's apply stalled every client 1.6-1.9 s;
// stock wlroots with XRGB8888 buffers of the same sizes: 113-137 ms, measured in the same test
// as the baseline). The budget lets each child keep the image it shows and the one its next
// frame is converted into (2 x 24 x 14 MiB). nested-children: the same with the children two
// levels down, under synchronized middles.
class ConversionMany : public testing::TestWithParam<ChildrenAttack> {};

TEST_P(ConversionMany, SynchronizedChildrenConvertWhileTheirParentsCommitWaits) {
	const ChildrenAttack &attack = GetParam();
	const LatencyBaseline stock = stock_baseline(attack);
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start({"--image-budget-client", "1073741824", "--print-stats"}));
	ProbeStats stats = run_children_attack(a, attack, true);
	expect_latency(
		std::string(attack.mode) + " probe worst roundtrip", stats.worst_roundtrip_us, stock, stats.steal_us);
	a.probe.stop(&stats);
	EXPECT_EQ(a.fx.stop(), 0) << a.fx.compositor().err();
	const std::string &out = a.fx.compositor().out();
	EXPECT_EQ(stat_of(out, "budget_refusals"), 0u) << out;
	EXPECT_EQ(stat_of(out, "image_bytes"), 0u) << out;
}

INSTANTIATE_TEST_SUITE_P(Children, ConversionMany,
	testing::Values(
		ChildrenAttack{"sync-children", 24, 2560, 1440}, ChildrenAttack{"nested-children", 16, 1920, 1080}),
	[](const testing::TestParamInfo<ChildrenAttack> &info) {
		std::string name = info.param.mode;
		name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
		return name;
	});

// 40 desynchronized children, each committing a 1024x1000 NV12 buffer (just under the size
// above which one commit is held) in one batch per round: the commits beyond what one dispatch
// may convert in one go are held and converted in bands. Stock wlroots (XRGB8888 buffers of
// the same sizes) in the same test is the baseline: it stalls too (196 ms measured).
TEST(ConversionMany, ManySmallConversionsAtOnceCostOthersNoMoreThanStock) {
	const ChildrenAttack attack{"desync-children", 40, 1024, 1000};
	const LatencyBaseline stock = stock_baseline(attack);
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start({"--print-stats"}));
	ProbeStats plugin = run_children_attack(a, attack, true), after;
	expect_latency("desync-children probe worst roundtrip", plugin.worst_roundtrip_us, stock, plugin.steal_us);
	a.probe.stop(&after);
	EXPECT_EQ(a.fx.stop(), 0) << a.fx.compositor().err();
	const std::string &out = a.fx.compositor().out();
	EXPECT_EQ(stat_of(out, "budget_refusals"), 0u) << out;
	EXPECT_EQ(stat_of(out, "image_bytes"), 0u) << out;
}

// sync-children-exit against the arena, three times: the client commits its rounds without
// waiting and exits; what it made must be gone within 1 s. The probe's figures over each leave
// (the 1 s included), held to `baseline` when there is one.
std::vector<ProbeStats> leave_three_times(AttackArena &a, const LatencyBaseline *baseline) {
	std::vector<ProbeStats> windows;
	for (int run = 0; run < 3; run++) {
		Process client;
		EXPECT_TRUE(client.start(
			{build_path("PIXELPORT_CONVERSION_ATTACK"), "sync-children-exit", "24", "2560", "1440"},
			a.fx.client_env()))
			<< client.err();
		std::string committed;
		EXPECT_TRUE(client.read_line(&committed, 60000)) << client.err();
		EXPECT_EQ(committed, "committed");
		EXPECT_EQ(client.wait(10000), 0);
		a.expect_back_to_baseline();
		ProbeStats stats;
		if (baseline != nullptr) {
			a.expect_probe_served(&stats, *baseline, false);
		} else {
			EXPECT_TRUE(a.probe.sample(&stats));
			EXPECT_EQ(stats.error, "");
		}
		a.print("sync-children-exit", stats);
		windows.push_back(stats);
	}
	return windows;
}

// A client that leaves with everything in flight (24 synchronized 2560x1440 NV12 children,
// 8 rounds committed without waiting, then _exit): whatever it made is gone within 1 s, every
// time (one run in two kept 559 MiB and 51 fds a second after it left), and the others are
// served as stock wlroots serves them when the same client (XRGB8888 buffers of the same
// sizes) leaves it, three times in the same test (its worst is the baseline).
TEST(ConversionMany, AClientLeavingWithConversionsInFlightIsReleasedWithinASecond) {
	LatencyBaseline stock{0,
		"stock wlroots (--no-plugin), the same client leaving three times with XRGB8888 "
		"buffers of the same sizes: its worst"};
	{
		AttackArena a;
		ASSERT_NO_FATAL_FAILURE(a.start({"--no-plugin"}));
		for (const ProbeStats &w : leave_three_times(a, nullptr))
			stock.us = std::max(stock.us, w.worst_roundtrip_us);
		ProbeStats after;
		a.probe.stop(&after);
		EXPECT_EQ(a.fx.stop(), 0) << a.fx.compositor().err();
	}
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start({"--image-budget-client", "1073741824", "--print-stats"}));
	leave_three_times(a, &stock);
	ProbeStats stats;
	a.probe.stop(&stats);
	EXPECT_EQ(a.fx.stop(), 0) << a.fx.compositor().err();
	EXPECT_EQ(stat_of(a.fx.compositor().out(), "image_bytes"), 0u) << a.fx.compositor().out();
}

} // namespace

namespace {

struct FrameLatency {
	int presented = 0;
	uint64_t p50_us = 0, worst_us = 0;
};

// pixelport-conversion-attack small-frames: 30 NV12 commits, each a worker's job.
FrameLatency small_frames(CompositorFixture &fx) {
	std::string out, err;
	FrameLatency l;
	EXPECT_EQ(fx.run_client({build_path("PIXELPORT_CONVERSION_ATTACK"), "small-frames", "30", "256", "256"}, 60000,
			  &out, &err),
		0)
		<< err;
	unsigned long long p50 = 0, worst = 0;
	EXPECT_EQ(sscanf(out.c_str(), "presented %d p50_us=%llu worst_us=%llu", &l.presented, &p50, &worst), 3) << out;
	l.p50_us = p50;
	l.worst_us = worst;
	return l;
}

} // namespace

// Fairness between clients on the workers: a client converting 8K NV12 frames as fast as the
// workers let it (each frame 33 Mi pixels, about 100 bands) delays another client's small
// converted frame by about one band, not by a frame of its own: the workers serve the clients
// with work in turn, a band at a time. One worker, the worst case.
TEST(ConversionWorkers, AClientFloodingTheWorkersDelaysAnothersFrameByABandAtMost) {
	CompositorFixture fx;
	// Budgets for the flood's 132 MiB images (shown, converting, spare, superseded): the
	// default client budget (512 MiB on a small output) may end it with no_memory.
	ASSERT_TRUE(fx.start({"--convert-threads", "1", "--print-stats", "--image-budget-client", "4294967296",
		"--image-budget-total", "8589934592"}))
		<< fx.compositor().err();
	const FrameLatency alone = small_frames(fx);
	Process flood;
	ASSERT_TRUE(flood.start(
		{build_path("PIXELPORT_CONVERSION_ATTACK"), "flood", "1000000", "7680", "4320"}, fx.client_env()));
	std::string line;
	ASSERT_TRUE(flood.read_line(&line, 20000)) << flood.err();
	ASSERT_EQ(line, "flooding"); // one frame converted, the next ones under way
	const FrameLatency flooded = small_frames(fx);
	flood.terminate();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	printf("fairness workers alone_p50_us=%llu alone_worst_us=%llu flooded_p50_us=%llu flooded_worst_us=%llu\n",
		static_cast<unsigned long long>(alone.p50_us), static_cast<unsigned long long>(alone.worst_us),
		static_cast<unsigned long long>(flooded.p50_us), static_cast<unsigned long long>(flooded.worst_us));
	EXPECT_EQ(alone.presented, 30);
	EXPECT_EQ(flooded.presented, 30);
	// The flood converted a frame at least (8K frames take seconds under the sanitizers).
	EXPECT_GE(stat_of(fx.compositor().out(), "converted_uploads"), 60u + 1u) << fx.compositor().out();
	// One 8K frame alone takes 60-100 ms on a worker here: waiting behind whole frames would add
	// that to every small frame. Served in turn, the frame waits for a band (1-5 ms) and its
	// presentation for the output's next frame (16.7 ms at 60 Hz). The baseline: the same small
	// frames with no flood, in this test (stock wlroots takes no NV12 and has no workers).
	expect_latency("small frame p50 beside a flood", flooded.p50_us,
		{alone.p50_us, "the same small frames, the same compositor, no flood"});
}

namespace {

// Minor page faults of a thread so far (/proc/PID/task/TID/stat, field 10).
uint64_t minor_faults(pid_t pid, pid_t tid) {
	FILE *f = fopen(("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat").c_str(), "r");
	if (f == nullptr) return 0;
	char buf[1024] = {};
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	const char *p = strrchr(buf, ')');
	if (p == nullptr || n == 0) return 0;
	unsigned long long v = 0;
	// After ")": state ppid pgrp session tty_nr tpgid flags minflt.
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu", &v) != 1) return 0;
	return v;
}

} // namespace

// An interactive resize of a converted window: every frame a new size, so a fresh image each
// frame (1,024 pages at 1024x1024). Its pages are faulted in on a worker, never on the main
// thread, which only maps the image and later composites it.
TEST(ConversionWorkers, AResizedWindowsFreshImagesAreFaultedInOnAWorker) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--print-stats"})) << fx.compositor().err();
	const pid_t pid = fx.compositor().pid();
	const uint64_t before = minor_faults(pid, pid);
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_CONVERSION_ATTACK"), "resize-frames", "24", "1024", "1024"},
			  60000, &out, &err),
		0)
		<< err;
	const uint64_t after = minor_faults(pid, pid);
	EXPECT_EQ(out, "presented 24\n");
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	EXPECT_GE(stat_of(fx.compositor().out(), "converted_uploads"), 24u) << fx.compositor().out();
	printf("fairness resize main_thread_minor_faults=%llu (images: 24 x ~1000 pages)\n",
		static_cast<unsigned long long>(after - before));
	// Converting on the main thread faults in about 24,000 pages here; the main thread's own
	// work (its allocations, the client's buffers' descriptions, rendering) a few per frame.
	EXPECT_LT(after - before, 24u * 100 * kLatencyScale); // AddressSanitizer's shadow pages too
}

namespace {

// The size of a process's fd table, fds.
size_t fd_table_size(pid_t pid) { return proc_status_number(pid, "FDSize:"); }

} // namespace

// Once the workers share the fd table, each growth of it waits for an RCU grace period on the
// thread that receives the fd, the main thread (53 ms in one recvmsg on a busy VM): the plugin
// grows it to 4096 fds (or the soft RLIMIT_NOFILE) before it starts them. A client's 300 pools
// (one fd each, held by the compositor) then fit without a growth; stock wlroots, which has no
// threads, starts with a small table and grows it for free.
TEST(ConversionWorkers, TheFdTableIsGrownBeforeTheWorkersShareIt) {
	rlimit limit = {};
	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
	const size_t want = static_cast<size_t>(std::min<rlim_t>(limit.rlim_cur, 4096));
	CompositorFixture stock;
	ASSERT_TRUE(stock.start({"--no-plugin"})) << stock.compositor().err();
	const size_t stock_size = fd_table_size(stock.compositor().pid());
	EXPECT_EQ(stock.stop(), 0);
	CompositorFixture fx;
	ASSERT_TRUE(fx.start()) << fx.compositor().err();
	const pid_t pid = fx.compositor().pid();
	const size_t at_start = fd_table_size(pid);
	printf("fd table: stock %zu, plugin %zu at start (RLIMIT_NOFILE %llu)\n", stock_size, at_start,
		static_cast<unsigned long long>(limit.rlim_cur));
	EXPECT_GE(at_start, want);
	EXPECT_LT(stock_size, want); // a table of that size is the plugin's doing, not the default
	if (want >= 512) {
		const size_t fds = count_fds(pid);
		Process client;
		ASSERT_TRUE(
			client.start({build_path("PIXELPORT_HOSTILE_CLIENT"), "many-pools", "300"}, fx.client_env()));
		std::string line;
		ASSERT_TRUE(client.read_line(&line, 30000)) << client.err();
		EXPECT_EQ(line, "made 300");
		EXPECT_GE(count_fds(pid), fds + 300); // the pools' fds, held
		EXPECT_EQ(fd_table_size(pid), at_start);
		client.terminate();
	}
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

namespace {

// Commit storms (pixelport-conversion-attack storm-*): commits as fast as a client can send
// them, each of them legal, on the path that holds a large commit until a worker converted it.
// The client must never be disconnected, its last frame must be shown, and the compositor may
// hold a few images per surface at most, whatever the number of commits: at its peak at most
// 4 images of each surface's largest frame, the client's pools and 64 MiB above its baseline,
// and within 16 MiB of the baseline once the client left. The client budget is 3 images of
// what the client shows (the shown image, the one converting, a spare): a storm that piles up
// images ends in no_memory, a disconnection.
struct Storm {
	const char *mode;
	int commits, width, height;
};

class ConversionStorm : public testing::TestWithParam<Storm> {};

TEST_P(ConversionStorm, AStormOfCommitsHoldsAFewImagesAndShowsTheLastFrame) {
	const Storm &storm = GetParam();
	const std::string mode = storm.mode;
	const uint64_t big = 4ull * storm.width * storm.height; // an XRGB8888 image of the largest frame
	const bool behind = mode == "storm-behind";
	const uint64_t small = behind ? 4ull * 1920 * 1080 : 0; // the storming toplevel's, behind
	const uint64_t shown = big + small;
	const uint64_t nv12 = static_cast<uint64_t>(storm.width) * storm.height * 3 / 2;
	const uint64_t pools = mode == "storm-one" || mode == "storm-sizes" ? nv12
		: behind                                                    ? nv12 + 2ull * 1920 * 1080 * 3 / 2
									    : 2 * nv12;
	const uint64_t budget = 3 * shown;
#if defined(__SANITIZE_ADDRESS__)
	constexpr uint64_t kSlackKib = AttackArena::kRssSlackKib; // ASan's quarantine
	constexpr uint64_t kBackKib = AttackArena::kRssSlackKib;
#else
	constexpr uint64_t kSlackKib = 64 * 1024;
	constexpr uint64_t kBackKib = 16 * 1024;
#endif
	const uint64_t peak_bound_kib = (4 * shown + pools) / 1024 + kSlackKib;

	CompositorFixture fx;
	// storm-behind: an output larger than the storm's 1080p window, so that the 8K one behind
	// it is shown too (its last frame must be presented).
	ASSERT_TRUE(fx.start(
		{"--print-stats", "--image-budget-client", std::to_string(budget)}, behind ? "2560x1440" : "256x256"))
		<< fx.compositor().err();
	expect_compositor_serves_others(fx); // warm up
	const pid_t pid = fx.compositor().pid();
	const size_t fds0 = settle_at_most(count_fds, pid, 0, 500); // the warm-up client's fds gone
	const size_t rss0 = rss_kib(pid);
	PeakSampler peaks;
	peaks.start(pid);
	Process client;
	ASSERT_TRUE(client.start({build_path("PIXELPORT_CONVERSION_ATTACK"), storm.mode, std::to_string(storm.commits),
					 std::to_string(storm.width), std::to_string(storm.height)},
		fx.client_env()));
	std::string presented, verdict;
	EXPECT_TRUE(client.read_line(&presented, 180000)) << client.err();
	EXPECT_TRUE(client.read_line(&verdict, 15000)) << client.err();
	const int status = client.wait(15000);
	peaks.stop();
	EXPECT_EQ(presented, "presented") << client.err();
	EXPECT_EQ(verdict, "ok") << "the client was disconnected: " << client.err();
	EXPECT_EQ(status, 0) << client.err();
	EXPECT_EQ(client.err().find("error"), std::string::npos) << client.err();

	const size_t rss = settle_at_most(rss_kib, pid, rss0 + kBackKib, AttackArena::kSettleMs);
	const size_t fds = settle_at_most(count_fds, pid, fds0, AttackArena::kSettleMs);
	printf("storm %s commits=%d %dx%d rss %zu -> peak %zu (bound %llu) -> %zu KiB after; fds %zu -> peak %zu -> "
	       "%zu\n",
		storm.mode, storm.commits, storm.width, storm.height, rss0, peaks.peak_rss_kib(),
		static_cast<unsigned long long>(rss0 + peak_bound_kib), rss, fds0, peaks.peak_fds(), fds);
	EXPECT_LE(peaks.peak_rss_kib(), rss0 + kRssScale * peak_bound_kib)
		<< "the compositor held more than 4 images of each surface's largest frame, its pools and "
		<< kSlackKib / 1024 << " MiB";
	EXPECT_LE(rss, rss0 + kBackKib) << "RSS not back within " << kBackKib / 1024 << " MiB of the baseline in 1 s";
	EXPECT_LE(fds, fds0);
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	const std::string &out = fx.compositor().out();
	printf("%s", out.c_str());
	EXPECT_EQ(stat_of(out, "budget_refusals"), 0u) << out;
	EXPECT_EQ(stat_of(out, "image_bytes"), 0u) << out;
}

INSTANTIATE_TEST_SUITE_P(Storms, ConversionStorm,
	testing::Values(Storm{"storm-one", 2048, 3840, 2160}, Storm{"storm-two", 512, 3840, 2160},
		Storm{"storm-sizes", 1024, 2560, 1440}, Storm{"storm-behind", 2048, 7680, 4320}),
	[](const testing::TestParamInfo<Storm> &info) {
		std::string name = info.param.mode;
		name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
		return name;
	});

} // namespace
