// Formats withheld from a client (plugin/format_policy.cpp, docs/design.md "Formats withheld
// from a client"): a client whose process maps GStreamer's Wayland library is not told about
// the formats its release mislabels or cannot lay out; every other client, at the same time,
// still gets them, converted. GStreamer is stood in for by a file mapped under its library's
// name before the client connects (pixelport-hostile-client shm-formats-mapping: what the
// plugin reads is the process's memory map), so these cases run without GStreamer and under
// the sanitizers alike; the real waylandsink is the real-client suite's (tests/compositors).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <set>
#include <sstream>

#include "harness.hpp"
#include "pixelport/core/format.hpp"
#include "reference.hpp"

using namespace pixelport;
using namespace pixelport::test;

namespace {

size_t count(const std::string &text, const std::string &what) {
	size_t n = 0;
	for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) n++;
	return n;
}

// A file named as GStreamer 1.`minor` names its Wayland library (its bytes do not matter).
std::string fake_gst_wayland(const CompositorFixture &fx, int minor) {
	std::string dir = fx.runtime_dir() + "/gst-1." + std::to_string(minor);
	mkdir(dir.c_str(), 0700);
	std::string path = dir + "/libgstwayland-1.0.so.0." + std::to_string(minor) + "00.0";
	std::ofstream(path) << std::string(4096, '\x7f');
	return path;
}

// The reference compositor with the plugin, logging at info (the withholding line is info).
bool start(CompositorFixture &fx, const std::vector<std::string> &args = {},
	const std::map<std::string, std::string> &env = {}) {
	std::vector<std::string> argv = {build_path("PIXELPORT_COMPOSITOR"), "--socket", fx.socket(), "--output",
		"256x256", "--log-level", "info"};
	argv.insert(argv.end(), args.begin(), args.end());
	return fx.start_command(argv, env, fx.socket());
}

// The wl_shm formats a client is told, as wayland-info names them: a client that has `mapped`
// in its memory map ("": a plain client, wayland-info itself).
std::set<std::string> formats_seen(CompositorFixture &fx, const std::string &mapped) {
	std::vector<std::string> argv = {"wayland-info"};
	if (!mapped.empty()) argv = {build_path("PIXELPORT_HOSTILE_CLIENT"), "shm-formats-mapping", mapped};
	Process client;
	if (!client.start(argv, fx.client_env()) || client.wait(10000) != 0) {
		ADD_FAILURE() << argv[0] << ": " << client.err();
		return {};
	}
	if (mapped.empty()) return shm_formats_from_wayland_info(client.out());
	std::set<std::string> names;
	std::istringstream lines(client.out());
	for (std::string line; std::getline(lines, line);)
		if (line != "ok") names.insert(line);
	return names;
}

// wayland-info names formats by their fourcc's four characters (RGB888: "RG24").
std::string info_name(const std::string &name) {
	uint32_t code = core::format_by_name(name)->fourcc;
	return {static_cast<char>(code), static_cast<char>(code >> 8), static_cast<char>(code >> 16),
		static_cast<char>(code >> 24)};
}

// `all` less the formats named as the core names them.
std::set<std::string> without(std::set<std::string> all, std::initializer_list<const char *> names) {
	for (const char *n : names) all.erase(info_name(n));
	return all;
}

const std::initializer_list<const char *> kPlanar420 = {"NV12", "NV21", "YUV420", "YVU420", "P010"};

} // namespace

TEST(WithheldFormats, GStreamerClientsLoseWhatTheirReleaseGetsWrongOthersKeepEverything) {
	CompositorFixture fx;
	ASSERT_TRUE(start(fx)) << fx.compositor().err();
	const std::set<std::string> &all = served_shm_formats();
	ASSERT_TRUE(all.count(info_name("RGB888")) && all.count(info_name("NV12")))
		<< "the plugin serves them converted";
	std::string gst122 = fake_gst_wayland(fx, 22), gst126 = fake_gst_wayland(fx, 26);

	// A client of GStreamer 1.22 holds its connection while others bind: each list is its own.
	Process held;
	ASSERT_TRUE(held.start(
		{build_path("PIXELPORT_HOSTILE_CLIENT"), "shm-formats-mapping", gst122, "hold"}, fx.client_env()));
	std::set<std::string> held_formats;
	for (std::string line; held.read_line(&line, 10000) && line != "holding";) held_formats.insert(line);
	EXPECT_EQ(held_formats.erase("ok"), 1u) << held.err();
	const std::set<std::string> old_release =
		without(all, {"RGB888", "BGR888", "NV12", "NV21", "YUV420", "YVU420", "P010"});
	EXPECT_EQ(held_formats, old_release);
	EXPECT_EQ(formats_seen(fx, ""), all) << "a client without GStreamer, while the other is connected";
	EXPECT_EQ(formats_seen(fx, gst122), old_release);
	EXPECT_EQ(formats_seen(fx, gst126), without(all, kPlanar420)) << "1.26 labels RGB right";
	// A file of another name is not GStreamer.
	std::string other = fx.runtime_dir() + "/libgstvideo-1.0.so.0.2200.0";
	std::ofstream(other) << std::string(4096, '\x7f');
	EXPECT_EQ(formats_seen(fx, other), all);
	EXPECT_EQ(formats_seen(fx, ""), all) << "after them, again everything";
	held.terminate();

	// One line per client that had formats withheld (the held one and the two runs after it);
	// it names the process, the release and the reason.
	ASSERT_EQ(fx.stop(), 0);
	const std::string &log = fx.compositor().err();
	EXPECT_EQ(count(log, "maps GStreamer's Wayland library"), 3u) << log;
	EXPECT_EQ(count(log,
			  "(1.22.0): wl_shm formats withheld from it: RGB888, BGR888 (its waylandsink labels RGB bytes "
			  "as RGB888 and BGR bytes as BGR888); NV12, NV21, YUV420, YVU420, P010 (its waylandsink "
			  "refuses 4:2:0 planes at odd sizes); PIXELPORT_GSTREAMER_WITHHOLD changes this"),
		2u)
		<< log;
	EXPECT_EQ(count(log,
			  "maps GStreamer's Wayland library (1.26.0): wl_shm formats withheld from it: NV12, NV21, "
			  "YUV420, "
			  "YVU420, P010 (its waylandsink"),
		1u)
		<< log;
	EXPECT_EQ(count(log, "(pixelport-hosti) maps"), 3u) << "the process's name (comm, 15 characters)" << log;
}

TEST(WithheldFormats, TheSwitchNamesFormatsTakesThemOutOrTurnsTheRuleOff) {
	struct Case {
		std::vector<std::string> args;
		std::map<std::string, std::string> env;
		std::set<std::string> withheld_122;
	};
	const std::set<std::string> &all = served_shm_formats();
	std::vector<Case> cases = {
		{{"--gstreamer-withhold", "none"}, {}, {}},
		{{"--gstreamer-withhold", "rgb888"}, {}, {"RGB888"}},
		{{}, {{"PIXELPORT_GSTREAMER_WITHHOLD", "auto,-NV12,-YUV420,UYVY"}},
			{"RGB888", "BGR888", "NV21", "YVU420", "P010", "UYVY"}},
		// The flag wins over the environment.
		{{"--gstreamer-withhold", "BGR888"}, {{"PIXELPORT_GSTREAMER_WITHHOLD", "none"}}, {"BGR888"}},
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(c.args.empty() ? c.env.begin()->second : c.args[1]);
		CompositorFixture fx;
		ASSERT_TRUE(start(fx, c.args, c.env)) << fx.compositor().err();
		std::set<std::string> want = all;
		for (const std::string &f : c.withheld_122) want.erase(info_name(f));
		EXPECT_EQ(formats_seen(fx, fake_gst_wayland(fx, 22)), want);
		EXPECT_EQ(formats_seen(fx, ""), all);
		ASSERT_EQ(fx.stop(), 0);
		// Nothing withheld, nothing logged.
		EXPECT_EQ(count(fx.compositor().err(), "withheld from it"), c.withheld_122.empty() ? 0u : 1u)
			<< fx.compositor().err();
	}
}

TEST(WithheldFormats, AnUnknownFormatStopsThePluginFromTheFlagIsIgnoredFromTheEnvironment) {
	// The host's option (the flag): the plugin does not start, the line names the item.
	CompositorFixture fx;
	Process p;
	ASSERT_TRUE(p.start({build_path("PIXELPORT_COMPOSITOR"), "--socket", fx.socket(), "--log-level", "error",
				    "--gstreamer-withhold", "RGB888,RGB24", "-s", "true"},
		{}));
	EXPECT_EQ(p.wait(10000), 1);
	EXPECT_NE(p.err().find("pixelport_options.gstreamer_withhold: unknown format \"RGB24\""), std::string::npos)
		<< p.err();
	// The user's variable, read in whatever compositor runs the plugin: ignored, the rule as
	// without it.
	ASSERT_TRUE(start(fx, {}, {{"PIXELPORT_GSTREAMER_WITHHOLD", "RGB888,RGB24"}})) << fx.compositor().err();
	EXPECT_EQ(formats_seen(fx, fake_gst_wayland(fx, 26)), without(served_shm_formats(), kPlanar420));
	ASSERT_EQ(fx.stop(), 0);
	EXPECT_NE(fx.compositor().err().find(
			  "PIXELPORT_GSTREAMER_WITHHOLD ignored (auto instead): unknown format \"RGB24\""),
		std::string::npos)
		<< fx.compositor().err();
}

// A client that labels its bytes right gets RGB888, BGR888 and 4:2:0 at the sizes GStreamer's
// waylandsink refuses, converted: the screen is the independent decode of its bytes.
class OwnClientKeeps : public testing::TestWithParam<std::tuple<std::string, int, int>> {};

TEST_P(OwnClientKeeps, TheFormatAtItsSize) {
	auto [format, w, h] = GetParam();
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({}, "1280x720")) << fx.compositor().err();
	Process client;
	ASSERT_TRUE(client.start({build_path("PIXELPORT_PAINT"), "--format", format, "--size",
					 std::to_string(w) + "x" + std::to_string(h), "--seed", "3"},
		fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 20000)) << client.err();
	EXPECT_EQ(line, "presented " + format + " " + std::to_string(w) + "x" + std::to_string(h));
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	uint32_t drm = core::format_by_name(format)->fourcc;
	EXPECT_EQ(screen_mismatches(shot, pattern_reference(drm, w, h, 3), w, h, reference_tolerance(drm), true), 0);
	client.terminate();
	EXPECT_EQ(fx.stop(), 0);
}

INSTANTIATE_TEST_SUITE_P(WithheldFormats, OwnClientKeeps,
	testing::Values(std::make_tuple("RGB888", 1280, 720), std::make_tuple("BGR888", 1280, 720),
		std::make_tuple("YVU420", 641, 481), std::make_tuple("YUV420", 644, 480),
		std::make_tuple("YUV420", 648, 481), std::make_tuple("NV12", 641, 481)),
	[](const auto &info) {
		return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "x" +
			std::to_string(std::get<2>(info.param));
	});
