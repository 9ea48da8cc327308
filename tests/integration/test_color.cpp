// Colour representation of YCbCr buffers: wp_color_representation_v1 (the protocol's errors, and
// pixels for every coefficient/range pair the plugin advertises), the default rule for clients
// that say nothing, and GStreamer's waylandsink as a real video client.
#include <gtest/gtest.h>

#include <drm_fourcc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "color-representation-v1-client-protocol.h"
#include "harness.hpp"
#include "pattern.hpp"
#include "pixelport/core/format.hpp"
#include "reference.hpp"

using namespace pixelport;
using namespace pixelport::test;

namespace {

class HostileColor : public testing::TestWithParam<ErrorCase> {};

TEST_P(HostileColor, GetsTheProtocolErrorAndOthersGoOn) {
	expect_protocol_error(build_path("PIXELPORT_HOSTILE_CLIENT"), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Color, HostileColor,
	testing::Values(ErrorCase{"color-surface-exists", WP_COLOR_REPRESENTATION_MANAGER_V1_ERROR_SURFACE_EXISTS,
				"wp_color_representation_manager_v1"},
		ErrorCase{"color-unsupported-coefficients", WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_COEFFICIENTS,
			"wp_color_representation_surface_v1"},
		ErrorCase{"color-invalid-range", WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_COEFFICIENTS,
			"wp_color_representation_surface_v1"},
		ErrorCase{"color-optical-alpha", WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_ALPHA_MODE,
			"wp_color_representation_surface_v1"},
		ErrorCase{"color-unknown-alpha", WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_ALPHA_MODE,
			"wp_color_representation_surface_v1"},
		ErrorCase{"color-straight-on-rgba8888", WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_PIXEL_FORMAT,
			"wp_color_representation_surface_v1"},
		ErrorCase{"color-inert", WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_INERT,
			"wp_color_representation_surface_v1"},
		ErrorCase{"color-coefficients-on-rgb", WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_PIXEL_FORMAT,
			"wp_color_representation_surface_v1"},
		ErrorCase{"color-location-on-yuyv", WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_PIXEL_FORMAT,
			"wp_color_representation_surface_v1"}),
	[](const auto &info) { return error_case_name(info.param); });

TEST(Color, EverySupportedCombinationOnNv12IsAccepted) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_HOSTILE_CLIENT"), "color-yuv-ok"}, 20000, &out, &err), 0) << err;
	EXPECT_EQ(out, "ok\n");
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

TEST(Color, AdvertisesBt601Bt709Bt2020InBothRangesAndPremultipliedAndStraightAlpha) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_HOSTILE_CLIENT"), "color-list"}, 20000, &out, &err), 0) << err;
	// coefficients: bt709 2, bt601 4, bt2020 6; range: full 1, limited 2; alpha:
	// premultiplied_electrical 0, straight 2
	EXPECT_EQ(out,
		"coefficients 4 range 1\ncoefficients 4 range 2\ncoefficients 2 range 1\ncoefficients 2 range 2\n"
		"coefficients 6 range 1\ncoefficients 6 range 2\nalpha 0\nalpha 2\nok\n");
	// Stock wlroots 0.18 has no such global.
	ASSERT_EQ(fx.stop(), 0) << fx.compositor().err();
	ASSERT_TRUE(fx.start({"--no-plugin"}));
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_HOSTILE_CLIENT"), "color-list"}, 20000, &out, &err), 3) << out;
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

uint32_t drm_of(const std::string &name) {
	const core::FormatInfo *info = core::format_by_name(name);
	return info != nullptr ? info->fourcc : 0;
}

YuvColour colour_of(const std::string &spec) {
	bool full = spec.find(":full") != std::string::npos;
	if (spec.rfind("bt709", 0) == 0) return YuvColour::bt709(full);
	if (spec.rfind("bt2020", 0) == 0) return YuvColour::bt2020(full);
	return YuvColour::bt601(full);
}

// Per-channel differences above `tolerance` between two decodes of the same buffer.
int differences(const std::vector<uint32_t> &a, const std::vector<uint32_t> &b, int tolerance) {
	int n = 0;
	for (size_t i = 0; i < a.size(); i++) {
		for (int shift = 0; shift < 24; shift += 8) {
			int d = static_cast<int>((a[i] >> shift) & 0xff) - static_cast<int>((b[i] >> shift) & 0xff);
			if (d > tolerance || -d > tolerance) {
				n++;
				break;
			}
		}
	}
	return n;
}

struct PaintCase {
	std::string format;
	int width, height;
	std::string color; // pixelport-paint --color, "" for none
	std::string transport = "shm";
};

// Paints pattern 7 with pixelport-paint and compares the screen with the reference decode in
// `want`; the decode with `wrong` must differ (so the check can fail).
void expect_painted(const PaintCase &c, const YuvColour &want, const YuvColour &wrong, const std::string &output) {
	uint32_t drm = drm_of(c.format);
	ASSERT_NE(drm, 0u);
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({}, output));
	std::string size = std::to_string(c.width) + "x" + std::to_string(c.height);
	std::vector<std::string> argv = {build_path("PIXELPORT_PAINT"), "--format", c.format, "--size", size, "--seed",
		"7", "--transport", c.transport};
	if (!c.color.empty()) {
		argv.push_back("--color");
		argv.push_back(c.color);
	}
	Process client;
	ASSERT_TRUE(client.start(argv, fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	ASSERT_EQ(line.rfind("presented " + c.format + " " + size, 0), 0u) << line;

	size_t stride = shm_min_stride(drm, c.width);
	ShmLayout layout;
	ASSERT_TRUE(shm_layout(drm, c.width, c.height, stride, &layout));
	std::vector<uint8_t> bytes(layout.size, 0xa5);
	encode_pattern(drm, c.width, c.height, stride, bytes.data(), 7, 0, 0, c.width, c.height);
	std::vector<uint32_t> expected, other;
	ASSERT_TRUE(reference_rgb(drm, c.width, c.height, stride, bytes.data(), &expected, &want));
	ASSERT_TRUE(reference_rgb(drm, c.width, c.height, stride, bytes.data(), &other, &wrong));
	EXPECT_GT(differences(expected, other, reference_tolerance(drm)), c.width * c.height / 4)
		<< "the pattern does not tell the two colour representations apart";
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(screen_mismatches(shot, expected, c.width, c.height, reference_tolerance(drm), false), 0);
	client.terminate();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

class ColorPixels : public testing::TestWithParam<PaintCase> {};

// The client's choice decides how YCbCr is read; the default (BT.601 limited at this size)
// must look different, so the check can fail.
TEST_P(ColorPixels, MatchTheReferenceForTheClientsChoice) {
	const PaintCase &c = GetParam();
	YuvColour want = colour_of(c.color);
	YuvColour other = YuvColour::bt601(false);
	if (c.color == "bt601:limited") other = YuvColour::bt709(true);
	expect_painted(c, want, other, "256x256");
}

std::vector<PaintCase> color_cases() {
	std::vector<PaintCase> cases;
	for (const char *color :
		{"bt601:limited", "bt601:full", "bt709:limited", "bt709:full", "bt2020:limited", "bt2020:full"}) {
		cases.push_back({"NV12", 64, 48, color});
	}
	for (const char *format : {"YUV420", "YUYV", "P010", "NV16"}) {
		cases.push_back({format, 64, 48, "bt709:full"});
		cases.push_back({format, 64, 48, "bt2020:limited"});
	}
	// A chroma location is accepted; the kernels take the nearest sample for every type
	// (docs/design.md), so the pixels are those of the coefficients and range.
	cases.push_back({"NV12", 64, 48, "bt709:full:2"});
	cases.push_back({"NV12", 64, 48, "bt709:limited:1"});
	// The stream converts rows as they arrive, with the client's committed colour state.
	cases.push_back({"NV12", 64, 48, "bt709:full", "socket"});
	cases.push_back({"YUV420", 64, 48, "bt2020:full", "pipe"});
	return cases;
}

std::string case_name(const testing::TestParamInfo<PaintCase> &info) {
	std::string name = info.param.format + "_" + info.param.color + "_" + info.param.transport;
	for (char &ch : name) {
		if (ch == ':') ch = '_';
	}
	return name;
}

INSTANTIATE_TEST_SUITE_P(Color, ColorPixels, testing::ValuesIn(color_cases()), case_name);

// Without colour representation, the plugin follows GStreamer's rule: BT.709 limited above
// 576 lines, BT.601 limited up to 576.
TEST(ColorDefault, HdFramesAreBt709AndSdFramesBt601) {
	expect_painted({"NV12", 1280, 720, ""}, YuvColour::bt709(false), YuvColour::bt601(false), "1280x720");
	expect_painted({"NV12", 720, 576, ""}, YuvColour::bt601(false), YuvColour::bt709(false), "1280x720");
	expect_painted({"YUYV", 640, 578, ""}, YuvColour::bt709(false), YuvColour::bt601(false), "1280x720");
}

// ---- alpha mode ------------------------------------------------------------------------------

// A counter of the compositor's "pixelport-stats {...}" line (--print-stats), UINT64_MAX if absent.
uint64_t stat_counter(const std::string &out, const std::string &name) {
	size_t line = out.find("pixelport-stats ");
	size_t at = line == std::string::npos ? line : out.find("\"" + name + "\":", line);
	return at == std::string::npos ? UINT64_MAX : std::stoull(out.substr(at + name.size() + 3));
}

struct AlphaCase {
	std::string format;
	std::string transport = "shm";
};
void PrintTo(const AlphaCase &c, std::ostream *os) { *os << c.format << " over " << c.transport; }

struct AlphaRun {
	std::vector<uint32_t> premultiplied, straight; // the two readings of the pattern's bytes
	Image shot; // after the last frame
	int tolerance = 0;
	uint64_t converted_pixels = 0, native_uploads = 0;
	// Pixels of the screen off `want` (reported as failures).
	int mismatches(const std::vector<uint32_t> &want) const {
		return screen_mismatches(shot, want, 64, 48, tolerance, false);
	}
	// Pixels of the screen off `other` (silent: the reading that must not be shown).
	int differs_from(const std::vector<uint32_t> &other) const {
		std::vector<uint32_t> screen;
		for (int y = 0; y < 48 && y < shot.height; y++) {
			for (int x = 0; x < 64 && x < shot.width; x++) screen.push_back(shot.pixel(x, y));
		}
		return screen.size() == other.size() ? differences(screen, other, tolerance) : -1;
	}
};

// Runs pixelport-paint with `args` (pattern 7, 64x48, in `c.format` over `c.transport`), reads
// the screen after its last frame and the compositor's counters.
void paint_alpha(const AlphaCase &c, const std::vector<std::string> &args, int frames, AlphaRun *run) {
	const int w = 64, h = 48;
	uint32_t drm = drm_of(c.format);
	ASSERT_NE(drm, 0u);
	size_t stride = shm_min_stride(drm, w);
	ShmLayout layout;
	ASSERT_TRUE(shm_layout(drm, w, h, stride, &layout));
	std::vector<uint8_t> bytes(layout.size, 0xa5);
	encode_pattern(drm, w, h, stride, bytes.data(), 7, 0, 0, w, h);
	ASSERT_TRUE(reference_rgb(drm, w, h, stride, bytes.data(), &run->premultiplied));
	ASSERT_TRUE(reference_rgb_straight(drm, w, h, stride, bytes.data(), &run->straight));

	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--print-stats"}));
	std::vector<std::string> argv = {build_path("PIXELPORT_PAINT"), "--format", c.format, "--size", "64x48",
		"--seed", "7", "--transport", c.transport};
	argv.insert(argv.end(), args.begin(), args.end());
	Process client;
	ASSERT_TRUE(client.start(argv, fx.client_env()));
	for (int i = 0; i < frames; i++) {
		std::string line;
		ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
		ASSERT_EQ(line.rfind("presented " + c.format + " 64x48", 0), 0u) << line;
	}
	ASSERT_TRUE(fx.screenshot(&run->shot));
	run->tolerance = reference_tolerance(drm);
	client.terminate();
	ASSERT_EQ(fx.stop(), 0) << fx.compositor().err();
	run->converted_pixels = stat_counter(fx.compositor().out(), "converted_pixels");
	run->native_uploads = stat_counter(fx.compositor().out(), "native_uploads");
	ASSERT_NE(run->converted_pixels, UINT64_MAX) << fx.compositor().out();
	// The pattern's alpha varies, so the two readings differ (the checks below can fail).
	ASSERT_GT(differences(run->premultiplied, run->straight, run->tolerance), w * h / 4);
}

bool native_format(const std::string &format) { return is_native_shm_format(drm_of(format)); }

class ColorStraightAlpha : public testing::TestWithParam<AlphaCase> {};

// Straight colour is premultiplied on the way, for formats the renderer takes as they are
// (through a converted view of the commit), converted formats and the stream.
TEST_P(ColorStraightAlpha, ShowsTheColourTimesAlpha) {
	const AlphaCase &c = GetParam();
	AlphaRun run;
	const std::vector<std::string> args = {"--alpha", "straight"};
	ASSERT_NO_FATAL_FAILURE(paint_alpha(c, args, 1, &run));
	EXPECT_EQ(run.mismatches(run.straight), 0);
	EXPECT_GT(run.differs_from(run.premultiplied), 0);
	// Rows stored as sent (wl_shm, or a stream format the renderer takes) are converted once
	// by the view; the stream's converted formats premultiply as the rows land (not counted).
	bool stored_as_sent = c.transport == "shm" || native_format(c.format);
	if (stored_as_sent) {
		EXPECT_EQ(run.converted_pixels, 64u * 48u);
	}
}

INSTANTIATE_TEST_SUITE_P(Color, ColorStraightAlpha,
	testing::Values(AlphaCase{"ARGB8888"}, AlphaCase{"ABGR8888"}, AlphaCase{"ABGR2101010"},
		AlphaCase{"ARGB2101010"}, AlphaCase{"ARGB4444"}, AlphaCase{"ARGB8888", "socket"},
		AlphaCase{"ABGR8888", "pipe"}, AlphaCase{"ARGB4444", "socket"}),
	[](const auto &info) { return info.param.format + "_" + info.param.transport; });

class ColorPremultipliedAlpha : public testing::TestWithParam<AlphaCase> {};

// Saying premultiplied changes nothing: native formats are still read in place.
TEST_P(ColorPremultipliedAlpha, ShowsTheBufferUnchanged) {
	const AlphaCase &c = GetParam();
	AlphaRun run;
	const std::vector<std::string> args = {"--alpha", "premultiplied"};
	ASSERT_NO_FATAL_FAILURE(paint_alpha(c, args, 1, &run));
	EXPECT_EQ(run.mismatches(run.premultiplied), 0);
	EXPECT_GT(run.differs_from(run.straight), 0);
	if (native_format(c.format)) {
		EXPECT_EQ(run.converted_pixels, 0u);
		EXPECT_GE(run.native_uploads, 1u);
	}
}

INSTANTIATE_TEST_SUITE_P(Color, ColorPremultipliedAlpha,
	testing::Values(AlphaCase{"ARGB8888"}, AlphaCase{"ARGB4444"}, AlphaCase{"ARGB8888", "socket"}),
	[](const auto &info) { return info.param.format + "_" + info.param.transport; });

// Formats without alpha ignore the mode: XRGB8888 under straight alpha is still read in place.
TEST(ColorAlpha, StraightOnAnOpaqueFormatKeepsItInPlace) {
	const int w = 64, h = 48;
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--print-stats"}));
	Process client;
	ASSERT_TRUE(client.start({build_path("PIXELPORT_PAINT"), "--format", "XRGB8888", "--size", "64x48", "--seed",
					 "7", "--alpha", "straight"},
		fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(screen_mismatches(shot, pattern_reference(DRM_FORMAT_XRGB8888, w, h, 7), w, h, 0, false), 0);
	client.terminate();
	ASSERT_EQ(fx.stop(), 0) << fx.compositor().err();
	EXPECT_EQ(stat_counter(fx.compositor().out(), "converted_pixels"), 0u) << fx.compositor().out();
	EXPECT_GE(stat_counter(fx.compositor().out(), "native_uploads"), 1u);
}

// premultiplied (in place), straight (converted), premultiplied again: the last frame is shown
// unchanged and read in place again; only the straight frame was converted.
TEST(ColorAlpha, SwitchingBackToPremultipliedShowsTheBufferNativelyAgain) {
	AlphaRun run;
	const std::string f = "format=ARGB8888,size=64x48,seed=7,";
	const std::vector<std::string> args = {"--frame", f + "alpha=premultiplied,buffer=0", "--frame",
		f + "alpha=straight,buffer=1", "--frame", f + "alpha=premultiplied,buffer=0"};
	ASSERT_NO_FATAL_FAILURE(paint_alpha(AlphaCase{"ARGB8888"}, args, 3, &run));
	EXPECT_EQ(run.mismatches(run.premultiplied), 0);
	EXPECT_EQ(run.converted_pixels, 64u * 48u);
	EXPECT_GE(run.native_uploads, 2u);
}

// The other way round: the last, straight frame is premultiplied.
TEST(ColorAlpha, SwitchingToStraightPremultipliesTheNextFrame) {
	AlphaRun run;
	const std::string f = "format=ARGB8888,size=64x48,seed=7,";
	const std::vector<std::string> args = {
		"--frame", f + "alpha=premultiplied,buffer=0", "--frame", f + "alpha=straight,buffer=1"};
	ASSERT_NO_FATAL_FAILURE(paint_alpha(AlphaCase{"ARGB8888"}, args, 2, &run));
	EXPECT_EQ(run.mismatches(run.straight), 0);
	EXPECT_EQ(run.converted_pixels, 64u * 48u);
}

// One wl_buffer on two surfaces, one reading it as straight, the other as premultiplied: each
// shows its own reading (converted images are shared only between commits read alike), then
// both the same once the first goes back to premultiplied (pixelport-semantics-client).
class ColorAlphaShared : public testing::TestWithParam<AlphaCase> {};

TEST_P(ColorAlphaShared, EachSurfaceShowsItsOwnReading) {
	const AlphaCase &c = GetParam();
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	int status = fx.run_client(
		{build_path("PIXELPORT_SEMANTICS_CLIENT"), "alpha-shared", c.format, c.transport}, 60000, &out, &err);
	EXPECT_EQ(status, 0) << out << err;
	EXPECT_NE(out.find("all ok"), std::string::npos) << out << err;
	EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

INSTANTIATE_TEST_SUITE_P(Color, ColorAlphaShared,
	testing::Values(AlphaCase{"ARGB8888"}, AlphaCase{"ARGB4444"}, AlphaCase{"ARGB8888", "stream"}),
	[](const auto &info) { return info.param.format + "_" + info.param.transport; });

// ---- GStreamer's waylandsink -----------------------------------------------------------------

bool have_gstreamer() {
	return system("gst-inspect-1.0 waylandsink >/dev/null 2>&1 && gst-inspect-1.0 videotestsrc >/dev/null 2>&1") ==
		0;
}

std::string read_file(const std::string &path) {
	std::ifstream in(path, std::ios::binary);
	return std::string(std::istreambuf_iterator<char>(in), {});
}

struct GstCase {
	const char *gst_format; // GStreamer's name
	const char *drm_format; // the wl_shm format GStreamer's bytes are
	// A wl_shm format an older waylandsink declares instead, with red and blue swapped: 1.22
	// declares its 24-bit RGB (bytes R, G, B) as RGB888, whose bytes are B, G, R (drm_fourcc.h:
	// [23:0] R:G:B little endian); 1.26 declares BGR888. The screen follows the declaration
	// (with the rule on, 1.22 is not offered RGB888 and converts its RGB itself).
	const char *swapped_drm_format = nullptr;
};

// The wl_shm format waylandsink declares for its w x h buffers (its create_buffer requests in
// the client's WAYLAND_DEBUG log; it also makes a 1x1 one for the black background), as the
// core names it; "" when it made none.
std::string declared_shm_format(const std::string &log, int w, int h) {
	const std::string size = ", " + std::to_string(w) + ", " + std::to_string(h) + ", ";
	for (size_t at = log.find(".create_buffer("); at != std::string::npos;
		at = log.find(".create_buffer(", at + 1)) {
		size_t end = log.find(')', at), comma = log.rfind(',', end);
		if (end == std::string::npos || log.substr(at, end - at).find(size) == std::string::npos) continue;
		uint32_t shm = static_cast<uint32_t>(std::stoul(log.substr(comma + 1, end - comma - 1)));
		// wl_shm's codes are the DRM fourccs but for its two first formats.
		uint32_t drm = shm == 0 ? DRM_FORMAT_ARGB8888 : shm == 1 ? DRM_FORMAT_XRGB8888 : shm;
		const char *name = core::format_name(drm);
		return name != nullptr ? name : "";
	}
	return "";
}

class GstWaylandsink : public testing::TestWithParam<GstCase> {};

// waylandsink shows SMPTE 100% bars; the screen must match the reference decode of GStreamer's
// own bytes for the colorimetry GStreamer assumes (BT.709 limited at 1280x720, as the plugin's
// default), and each bar GStreamer's own conversion to RGB (videoconvert) within 4 levels:
// videoconvert's 8-bit integer matrix is itself up to 4 from the equations (100% yellow comes
// out as (251,251,0) where the exact BT.709 decode of its bytes, and the screen, give (254,255,0)).
TEST_P(GstWaylandsink, ShowsTheBarsInTheColoursGStreamerMeant) {
	if (!have_gstreamer()) {
		GTEST_SKIP() << "GStreamer (gstreamer1.0-tools, gstreamer1.0-plugins-bad) is not installed";
	}
	const GstCase &c = GetParam();
	const int w = 1280, h = 720;
	CompositorFixture fx;
	// Every format the sink can send reaches the plugin: the rule that withholds some from
	// GStreamer's clients is off (the real-client suite, tests/compositors, checks it on).
	ASSERT_TRUE(fx.start({"--gstreamer-withhold", "none"}, "1280x720"));
	std::string caps = std::string("video/x-raw,format=") + c.gst_format + ",width=" + std::to_string(w) +
		",height=" + std::to_string(h) + ",framerate=30/1";
	// GStreamer's bytes of one frame, and its own RGB conversion of them.
	std::string raw = fx.runtime_dir() + "/frame.raw", rgb = fx.runtime_dir() + "/frame.rgb";
	std::string out, err;
	ASSERT_EQ(fx.run_client({"gst-launch-1.0", "-q", "videotestsrc", "pattern=smpte100", "num-buffers=1", "!", caps,
					"!", "filesink", "location=" + raw},
			  60000, &out, &err),
		0)
		<< err;
	ASSERT_EQ(fx.run_client(
			  {"gst-launch-1.0", "-q", "videotestsrc", "pattern=smpte100", "num-buffers=1", "!", caps, "!",
				  "videoconvert", "!", "video/x-raw,format=RGB", "!", "filesink", "location=" + rgb},
			  60000, &out, &err),
		0)
		<< err;
	std::string frame = read_file(raw), converted = read_file(rgb);
	ASSERT_EQ(converted.size(), static_cast<size_t>(w) * h * 3);
	// What this GStreamer's waylandsink declares for the format decides what the screen shows.
	ASSERT_EQ(fx.run_client({"env", "WAYLAND_DEBUG=client", "gst-launch-1.0", "-q", "videotestsrc",
					"pattern=smpte100", "num-buffers=1", "!", caps, "!", "waylandsink"},
			  60000, &out, &err),
		0)
		<< err;
	const std::string declared = declared_shm_format(err, w, h);
	const bool swapped = c.swapped_drm_format != nullptr && declared == c.swapped_drm_format;
	ASSERT_TRUE(declared == c.drm_format || swapped)
		<< "waylandsink declared " << (declared.empty() ? "no buffer" : declared) << " for " << c.gst_format;

	Process sink;
	ASSERT_TRUE(sink.start({"gst-launch-1.0", "-q", "videotestsrc", "pattern=smpte100", "num-buffers=600", "!",
				       caps, "!", "waylandsink"},
		fx.client_env()));
	// Until the first frame is up (the output is black before), then until two screenshots in
	// a row are the same: the sink shows its frames steadily (every frame is the same picture).
	Image shot, before;
	bool shot_ok = true;
	bool shown = wait_until(
		[&] {
			shot_ok = shot_ok && fx.screenshot(&shot);
			return !shot_ok || shot.pixel(w / 14, h / 3) != 0;
		},
		std::chrono::seconds(10), std::chrono::milliseconds(50));
	ASSERT_TRUE(shot_ok);
	ASSERT_TRUE(shown) << sink.err();
	bool steady = wait_until(
		[&] {
			before = std::move(shot);
			shot_ok = shot_ok && fx.screenshot(&shot);
			return !shot_ok || (shot.rgb == before.rgb && shot.width == before.width);
		},
		std::chrono::seconds(10), std::chrono::milliseconds(50));
	ASSERT_TRUE(shot_ok);
	if (!steady) printf("the picture still changed after 10 s\n");
	sink.terminate();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();

	// The reference decode of GStreamer's bytes (GStreamer's default stride: rows on 4 bytes).
	uint32_t drm = drm_of(declared);
	ASSERT_NE(drm, 0u);
	std::vector<uint32_t> want;
	size_t stride = shm_min_stride(drm, w);
	ShmLayout layout;
	ASSERT_TRUE(shm_layout(drm, w, h, stride, &layout));
	ASSERT_EQ(frame.size(), layout.size) << "GStreamer's frame is not laid out as wl_shm's";
	YuvColour bt709 = YuvColour::bt709(false);
	ASSERT_TRUE(reference_rgb(drm, w, h, stride, reinterpret_cast<const uint8_t *>(frame.data()), &want, &bt709));
	EXPECT_EQ(screen_mismatches(shot, want, w, h, reference_tolerance(drm), false), 0);

	// The seven top bars, sampled mid-bar, against GStreamer's own conversion.
	for (int bar = 0; bar < 7; bar++) {
		int x = (2 * bar + 1) * w / 14, y = h / 3;
		const uint8_t *p =
			reinterpret_cast<const uint8_t *>(converted.data()) + (static_cast<size_t>(y) * w + x) * 3;
		uint32_t r = p[0], g = p[1], b = p[2];
		if (swapped) std::swap(r, b);
		uint32_t theirs = r << 16 | g << 8 | b, ours = shot.pixel(x, y);
		int tolerance = core::format_info(drm)->model == core::ColorModel::RGB ? 0 : 4;
		for (int shift = 0; shift < 24; shift += 8) {
			int d = static_cast<int>((theirs >> shift) & 0xff) - static_cast<int>((ours >> shift) & 0xff);
			EXPECT_LE(std::abs(d), tolerance)
				<< "bar " << bar << ": GStreamer " << std::hex << theirs << ", screen " << ours;
		}
	}
}

INSTANTIATE_TEST_SUITE_P(Color, GstWaylandsink,
	testing::Values(GstCase{"NV12", "NV12"}, GstCase{"I420", "YUV420"}, GstCase{"YUY2", "YUYV"},
		GstCase{"RGB", "BGR888", "RGB888"}, GstCase{"BGRx", "XRGB8888"}),
	[](const auto &info) { return std::string(info.param.gst_format); });

// scripts/demo's real-client block: both variants play every frame and are measured.
TEST(RealClient, ComparesWaylandsinkWithThePluginAndStock) {
	if (!have_gstreamer()) {
		GTEST_SKIP() << "GStreamer (gstreamer1.0-tools, gstreamer1.0-plugins-bad) is not installed";
	}
	char dir[] = "/tmp/pixelport-real-client-test-XXXXXX";
	ASSERT_NE(mkdtemp(dir), nullptr);
	std::string out, err;
	Process p;
	ASSERT_TRUE(p.start(
		{"python3", build_path("PIXELPORT_REAL_CLIENT"), "--compositor", build_path("PIXELPORT_COMPOSITOR"),
			"--out", dir, "--width", "320", "--height", "240", "--frames", "30", "--rounds", "1"},
		{}));
	ASSERT_EQ(p.wait(120000), 0) << p.err();
	std::string text = read_file(std::string(dir) + "/real-client.txt");
	EXPECT_NE(text.find("pixelport "), std::string::npos) << text;
	EXPECT_NE(text.find("stock "), std::string::npos) << text;
	EXPECT_NE(text.find("x of stock"), std::string::npos) << text;
	// The playing window's block: the compositor's main thread and process CPU, the probe's
	// roundtrips (pixelport-probe-client, from PIXELPORT_PROBE_CLIENT), pixelport / stock.
	EXPECT_NE(text.find("main thread"), std::string::npos) << text;
	EXPECT_NE(text.find("probe p50"), std::string::npos) << text;
	EXPECT_NE(text.find("pixelport/stock "), std::string::npos) << text;
	std::string json = read_file(std::string(dir) + "/real-client.json");
	EXPECT_NE(json.find("\"ratios\": "), std::string::npos) << json;
	// Both variants showed all 30 frames and cost CPU (compositor + client; the compositor's
	// share alone can be under one clock tick at this size).
	for (const char *variant : {"\"pixelport\"", "\"stock\""}) {
		size_t at = json.find(variant);
		ASSERT_NE(at, std::string::npos) << json;
		size_t shown = json.find("\"rendered\": ", at), cpu = json.find("\"total_ms_per_frame\": ", at);
		ASSERT_NE(shown, std::string::npos) << json;
		ASSERT_NE(cpu, std::string::npos) << json;
		EXPECT_GT(std::stoi(json.substr(shown + 12)), 20) << json;
		EXPECT_GT(std::stod(json.substr(cpu + 22)), 0.0) << json;
		// The window's figures are there (null only if the clip ended before the probe was up).
		for (const char *key : {"\"main_thread_pct\": ", "\"process_pct\": ", "\"probe_p50_ms\": ",
			     "\"probe_p99_ms\": ", "\"probe_worst_ms\": "}) {
			EXPECT_NE(json.find(key, at), std::string::npos) << key << " in " << json;
		}
	}
	std::filesystem::remove_all(dir);
}

} // namespace
