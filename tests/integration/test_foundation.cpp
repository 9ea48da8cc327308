// The reference compositor hosts the plugin: real clients, real pixels, real errors.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "harness.hpp"
#include "pattern.hpp"
#include "pixelport/pixelport.h"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::test;

namespace {

struct PaintCase {
	const char *format;
	bool plugin;
	int stride_pad;
};

std::string case_name(const testing::TestParamInfo<PaintCase> &info) {
	return std::string(info.param.format) + (info.param.plugin ? "_plugin" : "_stock") +
		(info.param.stride_pad ? "_padded" : "");
}

class PatternOnOutput : public testing::TestWithParam<PaintCase> {};

// The client's premultiplied pattern composited over the black background gives its RGB.
TEST_P(PatternOnOutput, AppearsPixelExact) {
	const PaintCase &c = GetParam();
	CompositorFixture fx;
	ASSERT_TRUE(fx.start(c.plugin ? std::vector<std::string>{} : std::vector<std::string>{"--no-plugin"}))
		<< fx.compositor().err();

	const int w = 123, h = 77; // odd sizes catch stride mistakes
	Process client;
	ASSERT_TRUE(client.start({build_path("PIXELPORT_PAINT"), "--format", c.format, "--size",
					 std::to_string(w) + "x" + std::to_string(h), "--seed", "7", "--stride-pad",
					 std::to_string(c.stride_pad)},
		fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	EXPECT_EQ(line, std::string("presented ") + c.format + " 123x77");

	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	ASSERT_EQ(shot.width, 256);
	ASSERT_EQ(shot.height, 256);
	std::vector<uint32_t> want;
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			want.push_back(pattern_argb(static_cast<uint32_t>(x), static_cast<uint32_t>(y), 7) & 0xffffff);
		}
	}
	EXPECT_EQ(screen_mismatches(shot, want, w, h, 0, true), 0);
	client.terminate();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

INSTANTIATE_TEST_SUITE_P(Shm, PatternOnOutput,
	testing::Values(PaintCase{"XRGB8888", true, 0}, PaintCase{"ARGB8888", true, 0}, PaintCase{"XRGB8888", true, 12},
		PaintCase{"ARGB8888", true, 4}, PaintCase{"XRGB8888", false, 0}, PaintCase{"ARGB8888", false, 0}),
	case_name);

TEST(Compositor, WestonSimpleShmRunsWithoutProtocolError) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	// timeout(1) ends it after 3 s with status 124; a protocol error ends it sooner with another.
	int status = fx.run_client({"timeout", "3", "weston-simple-shm"}, 15000, &out, &err);
	EXPECT_EQ(status, 124) << "stdout: " << out << "\nstderr: " << err;
	EXPECT_EQ(err.find("error"), std::string::npos) << err;
	EXPECT_TRUE(fx.compositor().running());
	EXPECT_EQ(fx.stop(), 0);
}

// The expected sets come from the renderer at run time; they must still hold what wl_shm
// requires and what the tests below paint, and not overlap.
TEST(Compositor, RendererFormatSetsHoldWhatTheTestsNeed) {
	const std::set<std::string> &native = native_shm_formats(), &converted = converted_shm_formats();
	for (const char *f : {"AR24", "XR24"}) EXPECT_EQ(native.count(f), 1u) << f;
	for (const char *f : {"RG24", "NV12", "YUYV", "P010"}) EXPECT_EQ(converted.count(f), 1u) << f;
	for (const std::string &f : converted) EXPECT_EQ(native.count(f), 0u) << f;
}

TEST(Compositor, StockWlrootsListsOnlyTheRenderersFormats) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--no-plugin"}));
	std::string out, err;
	ASSERT_EQ(fx.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
	EXPECT_EQ(shm_formats_from_wayland_info(out), native_shm_formats()) << out;
	// Nor wlroots 0.20's colour representation global: the compositor never makes it.
	EXPECT_EQ(out.find("'wp_color_representation_manager_v1'"), std::string::npos) << out;
}

TEST(Compositor, WaylandInfoListsThePluginsShmFormats) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	ASSERT_EQ(fx.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
	EXPECT_EQ(shm_formats_from_wayland_info(out), served_shm_formats()) << out;
	// Exactly one wl_shm global: the compositor must not add its own beside the plugin's.
	size_t count = 0;
	for (size_t pos = 0; (pos = out.find("'wl_shm'", pos)) != std::string::npos; pos++) count++;
	EXPECT_EQ(count, 1u);
	// And one wp_color_representation_manager_v1, the plugin's (wlroots 0.20 has its own).
	count = 0;
	for (size_t pos = 0; (pos = out.find("'wp_color_representation_manager_v1'", pos)) != std::string::npos; pos++)
		count++;
	EXPECT_EQ(count, 1u) << out;
}

// A host takes only the globals it wants (pixelport_shm_create and the others): the ones left out
// are not advertised, and wl_shm still converts what the renderer lacks.
TEST(Compositor, GlobalsLeftOutAreNotAdvertisedAndWlShmStillConverts) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--without", "pp_stream_manager_v1", "--without", "wp_color_representation_manager_v1"}))
		<< fx.compositor().err();
	std::string out, err;
	ASSERT_EQ(fx.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
	EXPECT_EQ(out.find("'pp_stream_manager_v1'"), std::string::npos) << out;
	EXPECT_EQ(out.find("'wp_color_representation_manager_v1'"), std::string::npos) << out;
	EXPECT_NE(out.find("'pp_timing_manager_v1'"), std::string::npos) << out;
	EXPECT_EQ(shm_formats_from_wayland_info(out), served_shm_formats()) << out;
	Process client;
	ASSERT_TRUE(client.start({build_path("PIXELPORT_PAINT"), "--format", "NV12", "--size", "64x32", "--seed", "3"},
		fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	EXPECT_EQ(line, "presented NV12 64x32");
	client.terminate();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

TEST(Compositor, RefusesAPluginWithAnotherAbiVersion) {
	CompositorFixture fx;
	EXPECT_FALSE(fx.start({"--plugin", build_path("PIXELPORT_BAD_ABI_PLUGIN")}));
	EXPECT_EQ(fx.compositor().wait(5000), 1);
	const std::string &err = fx.compositor().err();
	EXPECT_NE(err.find("has ABI version 9999, this compositor needs ABI version " +
			  std::to_string(PIXELPORT_ABI_VERSION)),
		std::string::npos)
		<< err;
}

TEST(Compositor, RefusesALibraryThatIsNotAPlugin) {
	CompositorFixture fx;
	EXPECT_FALSE(fx.start({"--plugin", "libm.so.6"}));
	EXPECT_EQ(fx.compositor().wait(5000), 1);
	EXPECT_NE(fx.compositor().err().find("is not a pixelport plugin"), std::string::npos) << fx.compositor().err();
}

TEST(Compositor, ReportsAMissingPluginFile) {
	CompositorFixture fx;
	EXPECT_FALSE(fx.start({"--plugin", "/nonexistent/libpixelport.so"}));
	EXPECT_EQ(fx.compositor().wait(5000), 1);
	EXPECT_NE(fx.compositor().err().find("cannot load plugin /nonexistent/libpixelport.so"), std::string::npos);
}

TEST(Compositor, ExitsWithTheStartupCommandsStatus) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"-s", "exit 7"}) || fx.compositor().wait(0) >= 0);
	EXPECT_EQ(fx.compositor().wait(10000), 7);
}

TEST(Compositor, ShutsDownCleanlyOnSigterm) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process client;
	ASSERT_TRUE(client.start({build_path("PIXELPORT_PAINT")}, fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	// The client sees the connection close and exits on its own.
	EXPECT_EQ(client.wait(5000), 1);
}

} // namespace

// With WLR_BACKENDS set, wlroots' autocreate adds WLR_HEADLESS_OUTPUTS (default 1)
// outputs of its own to the headless backend; the compositor must still have exactly --outputs
// outputs of the --output mode.
TEST(Compositor, OutputsAreExactlyWhatTheOptionsSayWhenWlrBackendsIsSet) {
	for (const auto &[n, extra] : std::vector<std::pair<int, std::string>>{{1, ""}, {2, ""}, {1, "3"}}) {
		CompositorFixture fx;
		std::map<std::string, std::string> env = {{"WLR_BACKENDS", "headless"}, {"WLR_RENDERER", "pixman"}};
		if (!extra.empty()) env["WLR_HEADLESS_OUTPUTS"] = extra;
		ASSERT_TRUE(fx.start_command({build_path("PIXELPORT_COMPOSITOR"), "--socket", "pp-outputs", "--output",
						     "320x200", "--outputs", std::to_string(n), "--log-level", "error"},
			env, "pp-outputs"));
		std::string out, err;
		ASSERT_EQ(fx.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
		size_t count = 0;
		for (size_t pos = 0; (pos = out.find("'wl_output'", pos)) != std::string::npos; pos++) count++;
		EXPECT_EQ(count, static_cast<size_t>(n)) << "WLR_HEADLESS_OUTPUTS=" << extra << "\n" << out;
		EXPECT_EQ(out.find("width: 1280 px"), std::string::npos) << out;
		EXPECT_NE(out.find("width: 320 px, height: 200 px"), std::string::npos) << out;
		EXPECT_EQ(fx.stop(), 0);
	}
}

// A compositor that went away while a request was still queued: the client's flush meets EPIPE.
// dispatch_timeout must then read the hangup (the display's error set) rather than return at once
// with no error, which left a client waiting for that error spinning on the CPU after its
// compositor was gone (cage's application in the compositor comparison).
TEST(ClientConnection, AHangupWithRequestsQueuedSetsTheDisplaysError) {
	int fds[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
	client::Connection conn;
	conn.display = wl_display_connect_to_fd(fds[0]);
	ASSERT_NE(conn.display, nullptr);
	close(fds[1]);
	wl_callback *cb = wl_display_sync(conn.display); // queued, not flushed
	EXPECT_FALSE(conn.dispatch_timeout(1000));
	EXPECT_NE(wl_display_get_error(conn.display), 0);
	wl_callback_destroy(cb);
}
