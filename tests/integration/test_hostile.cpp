// Hostile wl_shm clients get their named protocol error and are disconnected; the
// compositor and every other client go on.
#include <gtest/gtest.h>

#include <drm_fourcc.h>

#include <algorithm>

#include "harness.hpp"
#include "pattern.hpp"
#include "reference.hpp"
#include <wayland-client-protocol.h>

using namespace pixelport::test;

namespace {

class HostileShm : public testing::TestWithParam<ErrorCase> {};

TEST_P(HostileShm, GetsTheProtocolErrorAndOthersGoOn) {
	expect_protocol_error(build_path("PIXELPORT_HOSTILE_CLIENT"), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shm, HostileShm,
	testing::Values(ErrorCase{"pool-size-zero", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm"},
		ErrorCase{"pool-size-negative", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm"},
		ErrorCase{"pool-pipe-fd", WL_SHM_ERROR_INVALID_FD, "wl_shm"},
		ErrorCase{"pool-larger-than-file", WL_SHM_ERROR_INVALID_FD, "wl_buffer"},
		ErrorCase{"buffer-negative-offset", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm_pool"},
		ErrorCase{"buffer-zero-width", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm_pool"},
		ErrorCase{"buffer-negative-height", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm_pool"},
		ErrorCase{"buffer-stride-in-pixels", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm_pool"},
		ErrorCase{"buffer-beyond-pool", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm_pool"},
		ErrorCase{"buffer-overflowing-size", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm_pool"},
		ErrorCase{"buffer-unknown-format", WL_SHM_ERROR_INVALID_FORMAT, "wl_shm_pool"},
		ErrorCase{"buffer-yuv420-odd-stride", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm_pool"},
		ErrorCase{"pool-shrink", WL_SHM_ERROR_INVALID_STRIDE, "wl_shm_pool"}),
	[](const auto &info) { return error_case_name(info.param); });

int count_window_pixels_not(const Image &shot, int w, int h, uint32_t value) {
	int n = 0;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) n += shot.pixel(x, y) != value;
	return n;
}

TEST(HostileShmTruncate, ShrinkingTheFileUnderAShownBufferReadsZeroes) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process client;
	std::string verdict;
	start_holding(fx, &client, build_path("PIXELPORT_HOSTILE_CLIENT"), "truncate-attached", &verdict);
	EXPECT_EQ(verdict, "ok"); // the plugin keeps the client: its content reads as zeroes
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot)); // rerenders from the truncated mapping
	EXPECT_EQ(count_window_pixels_not(shot, 64, 64, 0), 0);
	expect_compositor_serves_others(fx);
	client.terminate();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

TEST(HostileShmTruncate, ShrinkingTheFileOfAConvertedBufferReadsZeroes) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--print-stats"}));
	Process client;
	std::string verdict;
	start_holding(fx, &client, build_path("PIXELPORT_HOSTILE_CLIENT"), "truncate-converted-destroyed", &verdict);
	EXPECT_EQ(verdict, "ok");
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(count_window_pixels_not(shot, 64, 64, 0), 0);
	expect_compositor_serves_others(fx);
	client.terminate();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	EXPECT_NE(fx.compositor().out().find("\"sigbus_faults\":1"), std::string::npos) << fx.compositor().out();
}

// The fault happens on a conversion worker: the guard zero-fills there as on the main thread.
TEST(HostileShmTruncate, ShrinkingTheFileWhileAWorkerConvertsItReadsZeroes) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--print-stats", "--convert-threads", "2"}));
	Process client;
	std::string verdict;
	start_holding(fx, &client, build_path("PIXELPORT_HOSTILE_CLIENT"), "truncate-while-converting", &verdict);
	EXPECT_EQ(verdict, "ok"); // presented: the held commit applied after its conversion
	// Rows read before the truncation are grey, the rest converted zeroes; the row pair being
	// read when the pool went may have its luma from one and its chroma from the other (or
	// chroma between them, where rows are interpolated): each channel within what those give.
	const YuvColour colour = YuvColour::default_for(4096); // the plugin's rule for the buffer's height
	std::vector<uint32_t> want;
	for (uint8_t y : {0x80, 0x00}) {
		for (uint8_t uv : {0x80, 0x00}) {
			const std::vector<uint8_t> nv12 = {y, y, y, y, uv, uv}; // 2x2: luma, then one CbCr pair
			std::vector<uint32_t> rgb;
			ASSERT_TRUE(reference_rgb(DRM_FORMAT_NV12, 2, 2, 2, nv12.data(), &rgb, &colour));
			want.push_back(rgb[0]);
		}
	}
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	const int tol = reference_tolerance(DRM_FORMAT_NV12);
	int other = 0;
	for (int y = 0; y < 64; y++) {
		for (int x = 0; x < 64; x++) {
			const uint32_t p = shot.pixel(x, y);
			for (int shift = 0; shift < 24; shift += 8) {
				auto channel = [&](uint32_t v) { return static_cast<int>((v >> shift) & 0xff); };
				auto [lo, hi] = std::minmax_element(want.begin(), want.end(),
					[&](uint32_t a, uint32_t b) { return channel(a) < channel(b); });
				if (channel(p) < channel(*lo) - tol || channel(p) > channel(*hi) + tol) {
					other++;
					break;
				}
			}
		}
	}
	EXPECT_EQ(other, 0) << "grey " << std::hex << want[0] << " zero " << want[3];
	expect_compositor_serves_others(fx);
	client.terminate();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	EXPECT_NE(fx.compositor().out().find("\"sigbus_faults\":1"), std::string::npos) << fx.compositor().out();
}

TEST(HostileShmPool, GrowingAPoolInUseServesNewBuffersAtOnce) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process client;
	std::string verdict;
	start_holding(fx, &client, build_path("PIXELPORT_HOSTILE_CLIENT"), "pool-grow", &verdict);
	EXPECT_EQ(verdict, "ok");
	// The screen shows the second buffer (in the grown part), not the first one.
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(screen_mismatches(shot, pattern_reference(DRM_FORMAT_ARGB8888, 64, 64, 2), 64, 64, 0, true), 0);
	client.terminate();
	EXPECT_EQ(fx.stop(), 0);
}

// pixman takes any size, so the 45120x64 buffer is shown (its left 256 columns on the output);
// a renderer with a texture limit refuses it in wlroots ("Failed to upload buffer"). Either
// way the next, normal buffer must show exactly, with nothing of the huge one left.
TEST(HostileShmBuffer, AHugeBufferLeavesNothingBehindForTheNextOne) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process client;
	ASSERT_TRUE(client.start({build_path("PIXELPORT_HOSTILE_CLIENT"), "huge-then-normal"}, fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 20000)) << client.err();
	EXPECT_EQ(line, "huge shown");
	ASSERT_TRUE(client.read_line(&line, 5000));
	EXPECT_EQ(line, "ok");
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(screen_mismatches(shot, pattern_reference(DRM_FORMAT_ARGB8888, 64, 64, 1), 64, 64, 0, true), 0);
	expect_compositor_serves_others(fx);
	client.terminate();
}

TEST(HostileShmBuffer, DestroyedRightAfterCommitStillShowsThatCommit) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process client;
	std::string verdict;
	start_holding(fx, &client, build_path("PIXELPORT_HOSTILE_CLIENT"), "destroy-after-commit", &verdict);
	EXPECT_EQ(verdict, "ok");
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(screen_mismatches(shot, pattern_reference(DRM_FORMAT_ARGB8888, 64, 64, 1), 64, 64, 0, false), 0);
	client.terminate();
	EXPECT_EQ(fx.stop(), 0);
}

TEST(HostileShmChurn, ThousandsOfPoolsLeaveNoFdOrMappingBehind) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	expect_compositor_serves_others(fx); // warm up: first-use allocations
	pid_t pid = fx.compositor().pid();
	size_t fds0 = count_fds(pid), maps0 = count_maps(pid);
	Process client;
	std::string verdict;
	start_holding(fx, &client, build_path("PIXELPORT_HOSTILE_CLIENT"), "churn", &verdict);
	EXPECT_EQ(verdict, "ok");
	// While connected only the shown buffer's pool may remain (plus the client's socket).
	EXPECT_LE(settle_at_most(count_fds, pid, fds0 + 3), fds0 + 3);
	EXPECT_LE(settle_at_most(count_maps, pid, maps0 + 8 + kMapsSlack), maps0 + 8 + kMapsSlack);
	client.terminate();
	expect_compositor_serves_others(fx);
	EXPECT_LE(settle_at_most(count_fds, pid, fds0 + 1), fds0 + 1);
	EXPECT_LE(settle_at_most(count_maps, pid, maps0 + 4 + kMapsSlack), maps0 + 4 + kMapsSlack);
	EXPECT_EQ(fx.stop(), 0);
}

} // namespace
