// What a hostile client can make the compositor convert and hold (docs/design.md, "Limits and
// fairness"): converted images are shared where the same commit content is shown twice,
// charged to a per-client budget, freed when the client goes; a burst of commits converts
// only what can still be shown.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "harness.hpp"

using namespace pixelport::test;

namespace {

uint64_t stat_of(const std::string &out, const std::string &name) {
	size_t at = out.find("\"" + name + "\":");
	return at == std::string::npos ? UINT64_MAX : std::stoull(out.substr(at + name.size() + 3));
}

// 1024x1024 NV12: a 4 MiB converted image per copy; 18 copies would be 72 MiB.
constexpr const char *kSide = "1024";
constexpr size_t kImageKib = 4096;
constexpr const char *kBudget = "67108864"; // 64 MiB per client

TEST(ConversionLimits, OneBufferOnManySurfacesSharesOneImage) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--image-budget-client", kBudget, "--print-stats"}));
	pid_t pid = fx.compositor().pid();
	size_t fds = count_fds(pid);
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot)); // warm up the renderer's own buffers
	size_t rss = rss_kib(pid);
	Process client;
	ASSERT_TRUE(client.start({build_path("PIXELPORT_CONVERSION_ATTACK"), "share-burst", "18", kSide, kSide}, fx.client_env()));
	std::string verdict, holding;
	ASSERT_TRUE(client.read_line(&verdict, 20000)) << client.err();
	EXPECT_EQ(verdict, "ok"); // 18 images would exceed the budget: they share one
	ASSERT_TRUE(client.read_line(&holding, 5000));
	ASSERT_TRUE(fx.screenshot(&shot)); // every surface drawn: every conversion done
	size_t during = rss_kib(pid);
	EXPECT_LT(during, rss + 3 * kImageKib) << "RSS " << rss << " -> " << during << " KiB";
	client.terminate();
	EXPECT_LE(settle_at_most(count_fds, pid, fds), fds);
	EXPECT_LE(settle_at_most(rss_kib, pid, rss + kImageKib / 2), rss + kImageKib / 2);
	expect_compositor_serves_others(fx);
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	EXPECT_EQ(stat_of(fx.compositor().out(), "budget_refusals"), 0u) << fx.compositor().out();
	EXPECT_EQ(stat_of(fx.compositor().out(), "image_bytes"), 0u) << fx.compositor().out();
}

TEST(ConversionLimits, ImagesOverTheClientBudgetAreANoMemoryError) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--image-budget-client", kBudget, "--print-stats"}));
	pid_t pid = fx.compositor().pid();
	size_t fds = count_fds(pid);
	size_t rss = rss_kib(pid);
	std::string out, err;
	// Released between surfaces: each commit is new content and needs its own image.
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_CONVERSION_ATTACK"), "share-sequential", "18", kSide, kSide}, 60000,
		&out, &err), 0) << err;
	// wl_display.error no_memory (libwayland-client reports it as ENOMEM), with the reason.
	EXPECT_EQ(out, "disconnected Cannot allocate memory\nholding\n");
	EXPECT_NE(err.find("would exceed the client's budget of 67108864 bytes"), std::string::npos) << err;
	EXPECT_LE(settle_at_most(count_fds, pid, fds), fds);
	EXPECT_LE(settle_at_most(rss_kib, pid, rss + kImageKib), rss + kImageKib);
	expect_compositor_serves_others(fx);
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	EXPECT_EQ(stat_of(fx.compositor().out(), "budget_refusals"), 1u) << fx.compositor().out();
}

TEST(ConversionLimits, ABurstOfCommitsConvertsOnlyWhatCanBeShown) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--print-stats"}));
	Process client;
	// The storm: 60 full-damage commits of a 4096x4096 NV12 buffer, no frame callbacks.
	ASSERT_TRUE(client.start({build_path("PIXELPORT_CONVERSION_ATTACK"), "storm", "60", "4096", "4096"}, fx.client_env()));
	std::string verdict, holding;
	ASSERT_TRUE(client.read_line(&verdict, 30000)) << client.err();
	EXPECT_EQ(verdict, "ok");
	ASSERT_TRUE(client.read_line(&holding, 5000));
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	expect_compositor_serves_others(fx);
	client.terminate();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	const std::string &stats = fx.compositor().out();
	// Commits superseded in the dispatch that applied them are never converted.
	EXPECT_LE(stat_of(stats, "converted_uploads"), 3u) << stats;
	EXPECT_GE(stat_of(stats, "skipped_conversions"), 57u) << stats;
}

} // namespace
