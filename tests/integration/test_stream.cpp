// pixelport-stream-v1 through the real pipeline: pixel-exact frames over socket and pipe in
// every accepted format, any split of the bytes, interleaved buffers and surfaces, held
// commits in order, and every bad input answered without hurting anyone else.
#include <gtest/gtest.h>

#include <drm_fourcc.h>

#include <fstream>

#include "harness.hpp"
#include "pattern.hpp"
#include "pixelport-stream-v1-client-protocol.h"
#include "pixelport/core/format.hpp"
#include "reference.hpp"
#include "xdg-shell-client-protocol.h"

using namespace pixelport;
using namespace pixelport::test;

namespace {

uint32_t drm_of(const std::string &name) {
	const core::FormatInfo *info = core::format_by_name(name);
	return info != nullptr ? info->fourcc : 0;
}

// Mismatching pixels between the screen's top-left w x h and `format` pattern `seed`.
int mismatches(const Image &shot, const std::string &format, int w, int h, uint32_t seed) {
	uint32_t drm = drm_of(format);
	return screen_mismatches(shot, pattern_reference(drm, w, h, seed), w, h, reference_tolerance(drm), false);
}

// pixelport-paint with `args` must print `frames` "presented ... via TRANSPORT" lines; the
// screen then shows the last frame's pattern.
void paint_and_check(const std::vector<std::string> &args, const std::string &format, int w, int h, uint32_t seed,
	const std::string &via, std::string *compositor_out = nullptr, const std::string &output = "256x256") {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--print-stats"}, output));
	std::vector<std::string> argv = {build_path("PIXELPORT_PAINT"), "--format", format, "--size",
		std::to_string(w) + "x" + std::to_string(h), "--seed", std::to_string(seed)};
	argv.insert(argv.end(), args.begin(), args.end());
	Process client;
	ASSERT_TRUE(client.start(argv, fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 20000)) << client.err();
	EXPECT_EQ(line, "presented " + format + " " + std::to_string(w) + "x" + std::to_string(h) + " via " + via);
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(mismatches(shot, format, w, h, seed), 0);
	client.terminate();
	ASSERT_EQ(fx.stop(), 0) << fx.compositor().err();
	if (compositor_out) *compositor_out = fx.compositor().out();
}

class StreamFormat : public testing::TestWithParam<std::string> {};

TEST_P(StreamFormat, ArrivesPixelExactOverASocket) {
	std::string out;
	paint_and_check({"--transport", "socket"}, GetParam(), 61, 37, 3, "socket", &out);
	EXPECT_NE(out.find("\"stream_writes\":1,"), std::string::npos) << out;
}

TEST_P(StreamFormat, ArrivesPixelExactThroughAVmsplicedPipe) {
	paint_and_check({"--transport", "pipe"}, GetParam(), 61, 37, 4, "pipe");
}

// The stream accepts what wl_shm serves.
INSTANTIATE_TEST_SUITE_P(Stream, StreamFormat, testing::ValuesIn(served_shm_format_names()));

class StreamSplit : public testing::TestWithParam<std::pair<std::string, std::string>> {};

// However the kernel hands the bytes over, the frame is the same.
TEST_P(StreamSplit, GivesTheSameFrame) {
	paint_and_check({"--transport", "socket", "--chunk", GetParam().second}, GetParam().first, 33, 17, 6, "socket");
}

INSTANTIATE_TEST_SUITE_P(Stream, StreamSplit,
	testing::Values(std::pair{"XRGB8888", "1"}, std::pair{"NV12", "1"}, std::pair{"RGB888", "random:97"},
		std::pair{"YUV420", "random:13"}, std::pair{"XRGB8888", "random:4096"}),
	[](const auto &info) {
		std::string name = info.param.first + "_" + info.param.second;
		for (char &c : name) c = isalnum(static_cast<unsigned char>(c)) ? c : '_';
		return name;
	});

// auto follows the compositor's size_hint (1 MiB by default): 48 KiB streams, 4 MiB uses shm.
TEST(StreamAuto, PicksTheStreamBelowTheSizeHintAndShmAbove) {
	paint_and_check({"--transport", "auto"}, "XRGB8888", 128, 96, 2, "socket");
	paint_and_check({"--transport", "auto"}, "XRGB8888", 1024, 1024, 2, "shm", nullptr, "1024x1024");
}

TEST(StreamLarge, OneHugeFrameArrivesWhole) {
	// 1920x1080 XRGB8888: 8 MiB in one writev, more than the socket and one dispatch take.
	paint_and_check({"--transport", "socket", "--frame", "size=1920x1080,seed=8"}, "XRGB8888", 1920, 1080, 8,
		"socket", nullptr, "1920x1080");
}

TEST(StreamLarge, ALargeConvertedFramePassesTheWindowManyTimes) {
	// NV12 1280x720: 1.3 MiB through a 1 MiB receive window.
	paint_and_check({"--transport", "pipe", "--frame", "size=1280x720,seed=9"}, "NV12", 1280, 720, 9, "pipe",
		nullptr, "1280x720");
}

TEST(StreamDamage, DoubleBufferedFramesWithPartialDamageStayExact) {
	// Five frames alternating two stream buffers, each changing one rectangle.
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process client;
	ASSERT_TRUE(client.start(
		{build_path("PIXELPORT_PAINT"), "--transport", "socket", "--format", "NV12", "--size", "64x48",
			"--frame", "size=64x48,seed=1", "--frame", "seed=2,fill=damage,damage=8:8:16:16", "--frame",
			"seed=3,fill=damage,damage=32:20:20:10", "--frame", "seed=4,fill=damage,damage=0:40:64:8"},
		fx.client_env()));
	for (int i = 0; i < 4; i++) {
		std::string line;
		ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	}
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	// Expected: seed 1 everywhere, overwritten by each frame's rectangle.
	size_t stride = shm_min_stride(DRM_FORMAT_NV12, 64);
	ShmLayout layout;
	shm_layout(DRM_FORMAT_NV12, 64, 48, stride, &layout);
	std::vector<uint8_t> bytes(layout.size, 0xa5);
	encode_pattern(DRM_FORMAT_NV12, 64, 48, stride, bytes.data(), 1, 0, 0, 64, 48);
	encode_pattern(DRM_FORMAT_NV12, 64, 48, stride, bytes.data(), 2, 8, 8, 16, 16);
	encode_pattern(DRM_FORMAT_NV12, 64, 48, stride, bytes.data(), 3, 32, 20, 20, 10);
	encode_pattern(DRM_FORMAT_NV12, 64, 48, stride, bytes.data(), 4, 0, 40, 64, 8);
	std::vector<uint32_t> want;
	ASSERT_TRUE(reference_rgb(DRM_FORMAT_NV12, 64, 48, stride, bytes.data(), &want));
	EXPECT_EQ(screen_mismatches(shot, want, 64, 48, reference_tolerance(DRM_FORMAT_NV12), false), 0);
}

// ---- the stream client's modes --------------------------------------------------------------

class StreamBadInput : public testing::TestWithParam<ErrorCase> {};

TEST_P(StreamBadInput, GetsTheProtocolErrorAndOthersGoOn) {
	expect_protocol_error(build_path("PIXELPORT_STREAM_CLIENT"), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Stream, StreamBadInput,
	testing::Values(ErrorCase{"not-a-socket", PP_STREAM_MANAGER_V1_ERROR_INVALID_FD, "pp_stream_manager_v1"},
		ErrorCase{"write-end-of-pipe", PP_STREAM_MANAGER_V1_ERROR_INVALID_FD, "pp_stream_manager_v1"},
		ErrorCase{"unknown-format", PP_STREAM_V1_ERROR_INVALID_FORMAT, "pp_stream_v1"},
		ErrorCase{"zero-size", PP_STREAM_V1_ERROR_INVALID_SIZE, "pp_stream_v1"},
		ErrorCase{"negative-size", PP_STREAM_V1_ERROR_INVALID_SIZE, "pp_stream_v1"},
		ErrorCase{"huge-size", PP_STREAM_V1_ERROR_INVALID_SIZE, "pp_stream_v1"},
		ErrorCase{"rect-outside", PP_STREAM_V1_ERROR_INVALID_RECT, "pp_stream_v1"},
		ErrorCase{"rect-overflowing", PP_STREAM_V1_ERROR_INVALID_RECT, "pp_stream_v1"},
		ErrorCase{"rect-off-chroma-grid", PP_STREAM_V1_ERROR_INVALID_RECT, "pp_stream_v1"},
		ErrorCase{"bad-length", PP_STREAM_V1_ERROR_BAD_LENGTH, "pp_stream_v1"},
		ErrorCase{"foreign-buffer", PP_STREAM_V1_ERROR_FOREIGN_BUFFER, "pp_stream_v1"},
		ErrorCase{"too-many-buffers", PP_STREAM_V1_ERROR_LIMIT_EXCEEDED, "pp_stream_v1"},
		ErrorCase{"too-many-bytes-in-flight", PP_STREAM_V1_ERROR_LIMIT_EXCEEDED, "pp_stream_v1"},
		ErrorCase{"eof-mid-write", PP_STREAM_V1_ERROR_DATA_FD, "pp_stream_v1"}),
	[](const auto &info) { return error_case_name(info.param); });

TEST(StreamBytes, ExtraAndUnannouncedBytesAreNotReadAndHarmNothing) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_STREAM_CLIENT"), "extra-bytes"}, 10000, &out, &err), 0) << err;
	EXPECT_EQ(out, "ok\n");
	expect_compositor_serves_others(fx);
}

TEST(StreamBytes, ABufferDestroyedWithBytesInFlightKeepsTheStreamInStep) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process client;
	std::string verdict;
	start_holding(fx, &client, build_path("PIXELPORT_STREAM_CLIENT"), "destroy-in-flight", &verdict);
	EXPECT_EQ(verdict, "ok");
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(mismatches(shot, "XRGB8888", 32, 32, 2), 0); // the second buffer's bytes, not the first's
	client.terminate();
}

TEST(StreamHeld, AStalledClientHoldsOnlyItsOwnSurface) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process stalled;
	std::string verdict;
	start_holding(fx, &stalled, build_path("PIXELPORT_STREAM_CLIENT"), "stall", &verdict);
	EXPECT_EQ(verdict, "ok");
	// Another client keeps committing and every frame is presented.
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_PAINT"), "--hold-ms", "0", "--frame", "seed=1", "--frame",
					"seed=2,buffer=1", "--frame", "seed=3"},
			  10000, &out, &err),
		0)
		<< err;
	EXPECT_EQ(out, "presented XRGB8888 128x96\npresented XRGB8888 128x96\npresented XRGB8888 128x96\n");
	stalled.terminate();
	EXPECT_EQ(fx.stop(), 0);
}

// A stream destroyed while a commit waits for its bytes, then its data fd closed with none or
// some of them sent: the bytes will never come, so the commit waits no more (it applies with what
// arrived, as a wl_shm buffer shows what its pool holds) and the surface goes on.
TEST(StreamHeld, ACommitWaitingOnADestroyedStreamAppliesOnceItsFdCloses) {
	for (const char *sent : {"0", "512"}) {
		SCOPED_TRACE(std::string("bytes sent before the close: ") + sent);
		CompositorFixture fx;
		ASSERT_TRUE(fx.start());
		Process client;
		ASSERT_TRUE(client.start(
			{build_path("PIXELPORT_STREAM_CLIENT"), "orphan-behind-held-commit", sent}, fx.client_env()));
		std::vector<std::string> lines;
		std::string line;
		while (line != "holding" && client.read_line(&line, 20000)) lines.push_back(line);
		EXPECT_EQ(lines,
			(std::vector<std::string>{"held", "held commit presented", "next presented", "ok", "holding"}))
			<< client.err();
		Image shot;
		ASSERT_TRUE(fx.screenshot(&shot));
		EXPECT_EQ(mismatches(shot, "XRGB8888", 32, 32, 7), 0);
		client.terminate();
		expect_compositor_serves_others(fx);
		EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	}
}

TEST(StreamHeld, CommitsApplyInOrderOnceTheBytesArrive) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process client;
	std::string go = fx.runtime_dir() + "/go";
	ASSERT_TRUE(client.start({build_path("PIXELPORT_STREAM_CLIENT"), "held-order", go}, fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	EXPECT_EQ(line, "held 0 0"); // neither commit is applied while A's bytes are missing
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(mismatches(shot, "XRGB8888", 64, 64, 10), 0); // still the frame before A
	std::ofstream(go).put('\n');
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	EXPECT_EQ(line, "order discarded presented"); // A applied, then replaced by B before a frame
	ASSERT_TRUE(client.read_line(&line, 10000));
	EXPECT_EQ(line, "ok");
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(mismatches(shot, "XRGB8888", 64, 64, 12), 0); // B on top
	client.terminate();
}

// A surface without a role is not held: its state would otherwise apply as the first commit
// of an xdg role given meanwhile, which wlroots aborts on (found by tests/fuzz). Applied at
// once, the client gets what wlroots answers for any buffer there, wl_shm included.
TEST(StreamHeld, ACommitBeforeTheSurfaceHasARoleIsNotHeld) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string shm_out, stream_out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_STREAM_CLIENT"), "role-after-held-commit", "shm"}, 10000,
			  &shm_out, &err),
		0)
		<< err;
	EXPECT_EQ(shm_out,
		protocol_error_line(XDG_SURFACE_ERROR_UNCONFIGURED_BUFFER, "xdg_wm_base")); // a buffer at creation
	ASSERT_EQ(fx.run_client(
			  {build_path("PIXELPORT_STREAM_CLIENT"), "role-after-held-commit"}, 10000, &stream_out, &err),
		0)
		<< err;
	EXPECT_EQ(stream_out, shm_out);
	expect_compositor_serves_others(fx);
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

// Fuzz seed 1796096318: a null attach (an unmap) cached behind a held commit let the next
// buffer commit pass xdg_surface's "configured" check made before the unmap applied; when the
// held commits applied, that buffer mapped the surface as its role's initial commit and the next
// unmap aborted wlroots (xdg_surface_role_commit: !initial_commit). Likewise a held commit that
// applied after its toplevel was destroyed, as the first commit of the next one. The plugin
// answers what stock wlroots answers, whether the held commit waits for stream bytes or for a
// banded conversion.
TEST(StreamHeld, AnUnmapOrARoleChangeBehindAHeldCommitAppliesItFirst) {
	const std::vector<std::vector<std::string>> sequences = {
		{"unmap-behind-held-commit"},
		{"role-destroyed-behind-held-commit", "toplevel"},
		{"role-destroyed-behind-held-commit", "xdg-surface"},
	};
	auto argv = [](const std::vector<std::string> &seq, const char *kind) {
		std::vector<std::string> a = {build_path("PIXELPORT_STREAM_CLIENT"), seq[0], kind};
		a.insert(a.end(), seq.begin() + 1, seq.end());
		return a;
	};
	std::vector<std::string> stock_out(sequences.size());
	std::string err;
	{
		CompositorFixture stock;
		ASSERT_TRUE(stock.start({"--no-plugin"}));
		for (size_t i = 0; i < sequences.size(); i++) {
			ASSERT_EQ(stock.run_client(argv(sequences[i], "shm"), 10000, &stock_out[i], &err), 0) << err;
		}
		EXPECT_EQ(stock.stop(), 0) << stock.compositor().err();
	}
	EXPECT_EQ(stock_out[0],
		protocol_error_line(XDG_SURFACE_ERROR_UNCONFIGURED_BUFFER, "xdg_surface")); // after the unmap
	EXPECT_EQ(stock_out[1], "configured\nok\n"); // the new toplevel's initial commit
	EXPECT_EQ(stock_out[2],
		protocol_error_line(XDG_SURFACE_ERROR_UNCONFIGURED_BUFFER, "xdg_wm_base")); // the surface has a buffer
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--print-stats"}));
	for (size_t i = 0; i < sequences.size(); i++) {
		for (const char *kind : {"shm", "stream", "large"}) {
			std::string out;
			ASSERT_EQ(fx.run_client(argv(sequences[i], kind), 10000, &out, &err), 0)
				<< sequences[i][0] << " " << kind << ": " << err;
			EXPECT_EQ(out, stock_out[i]) << sequences[i][0] << " " << kind;
		}
	}
	expect_compositor_serves_others(fx);
	ASSERT_EQ(fx.stop(), 0) << fx.compositor().err();
	// Each stream commit and large NV12 one was held: the sequences tested what they say.
	EXPECT_NE(fx.compositor().out().find("\"held_commits\":6,"), std::string::npos) << fx.compositor().out();
}

TEST(StreamMany, BuffersAndSurfacesInterleaveOnOneStream) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process client;
	std::string verdict;
	start_holding(fx, &client, build_path("PIXELPORT_STREAM_CLIENT"), "interleave", &verdict);
	EXPECT_EQ(verdict, "ok");
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	// The small surface (later, on top) covers the big one's top-left 32x32.
	std::vector<uint8_t> big(96 * 64 * 4), small(32 * 32 * 4);
	encode_pattern(DRM_FORMAT_XRGB8888, 96, 64, 384, big.data(), 21, 0, 0, 96, 64);
	encode_pattern(DRM_FORMAT_XRGB8888, 32, 32, 128, small.data(), 22, 0, 0, 32, 32);
	int bad = 0;
	for (int y = 0; y < 64; y++)
		for (int x = 0; x < 96; x++) {
			uint32_t want = x < 32 && y < 32 ? reinterpret_cast<uint32_t *>(small.data())[y * 32 + x]
							 : reinterpret_cast<uint32_t *>(big.data())[y * 96 + x];
			bad += shot.pixel(x, y) != (want & 0xffffff);
		}
	EXPECT_EQ(bad, 0);
	client.terminate();
}

TEST(StreamLifetime, ADisconnectMidFrameFreesEverything) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	expect_compositor_serves_others(fx);
	pid_t pid = fx.compositor().pid();
	size_t fds0 = count_fds(pid), maps0 = count_maps(pid);
	for (int i = 0; i < 20; i++) {
		std::string out, err;
		ASSERT_EQ(fx.run_client(
				  {build_path("PIXELPORT_STREAM_CLIENT"), "disconnect-mid-frame"}, 10000, &out, &err),
			0);
	}
	expect_compositor_serves_others(fx);
	EXPECT_LE(settle_at_most(count_fds, pid, fds0 + 1), fds0 + 1);
	EXPECT_LE(settle_at_most(count_maps, pid, maps0 + 4 + kMapsSlack), maps0 + 4 + kMapsSlack);
}

TEST(StreamLifetime, ThousandsOfFramesLeaveNoFdOrMappingBehind) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--print-stats"}));
	expect_compositor_serves_others(fx);
	pid_t pid = fx.compositor().pid();
	size_t fds0 = count_fds(pid), maps0 = count_maps(pid);
	Process client;
	std::string verdict;
	start_holding(fx, &client, build_path("PIXELPORT_STREAM_CLIENT"), "churn", &verdict);
	EXPECT_EQ(verdict, "ok");
	EXPECT_LE(settle_at_most(count_fds, pid, fds0 + 4), fds0 + 4);
	EXPECT_LE(settle_at_most(count_maps, pid, maps0 + 8 + kMapsSlack), maps0 + 8 + kMapsSlack);
	client.terminate();
	expect_compositor_serves_others(fx);
	EXPECT_LE(settle_at_most(count_fds, pid, fds0 + 1), fds0 + 1);
	EXPECT_LE(settle_at_most(count_maps, pid, maps0 + 4 + kMapsSlack), maps0 + 4 + kMapsSlack);
	ASSERT_EQ(fx.stop(), 0);
	EXPECT_NE(fx.compositor().out().find("\"stream_writes\":2000,"), std::string::npos) << fx.compositor().out();
}

} // namespace
