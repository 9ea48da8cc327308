// The plugin in the compositors people run: sway, labwc and cage, built from their release
// sources by tests/compositors/build-hosts against the wlroots release this tree was built for,
// each run headless on pixman with LD_PRELOAD=libpixelport-preload.so, and stock without it.
//
// Windows are put at the output origin without decorations (sway: floating, no border; labwc:
// a window rule; cage: its one maximized view), so a screenshot (grim: all three serve
// wlr-screencopy) compares against the reference compositor's screenshot of the same frame.
// A host that was not built (no ../shared/sources) is skipped with the reason. With
// PIXELPORT_HOSTS (scripts/test --hosts labwc) only the listed hosts run, and each must be there.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <drm_fourcc.h>
#include <nlohmann/json.hpp>
#include <wlr/version.h>

#include "harness.hpp"
#include "pacing_verdict.hpp"
#include "reference.hpp"

using namespace pixelport::test;

namespace {

std::string read_file(const std::string &path) {
	std::ifstream in(path);
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

void write_file(const std::string &path, const std::string &text) {
	std::ofstream out(path);
	out << text;
}

// Waits until `path` holds at least one whole line; returns its text ("" on timeout).
std::string wait_for_file(const std::string &path, int timeout_ms = 10000) {
	std::string text;
	wait_until(
		[&] {
			text = read_file(path);
			return !text.empty() && text.back() == '\n';
		},
		std::chrono::milliseconds(timeout_ms), std::chrono::milliseconds(20));
	return text;
}

size_t count(const std::string &text, const std::string &what) {
	size_t n = 0;
	for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += what.size()) n++;
	return n;
}

std::string prefix() { return build_path("PIXELPORT_HOSTS_PREFIX"); }

// PIXELPORT_HOSTS, comma-separated; "" when unset (every host).
std::string hosts_asked() {
	const char *only = getenv("PIXELPORT_HOSTS");
	return only ? only : "";
}

bool asked_for(const std::string &name) {
	std::string list = "," + hosts_asked() + ",";
	return hosts_asked().empty() || list.find("," + name + ",") != std::string::npos;
}

struct Host {
	const char *name;
	bool preload;
};

std::string host_name(const testing::TestParamInfo<Host> &info) {
	return std::string(info.param.name) + (info.param.preload ? "_preload" : "_stock");
}

class RealCompositor : public testing::TestWithParam<Host> {
protected:
	void SetUp() override {
		binary_ = prefix() + "/bin/" + GetParam().name;
		if (!asked_for(GetParam().name)) {
			GTEST_SKIP() << GetParam().name << " not asked for (PIXELPORT_HOSTS=" << hosts_asked()
				     << ", scripts/test --hosts)";
		}
		if (access(binary_.c_str(), X_OK) != 0 && !hosts_asked().empty()) {
			GTEST_FAIL() << "no " << binary_ << ", asked for by PIXELPORT_HOSTS=" << hosts_asked();
		}
		if (access(binary_.c_str(), X_OK) != 0) {
			GTEST_SKIP() << "no " << binary_
				     << ": scripts/test builds sway, labwc and cage when the release "
					"sources are present (../shared/sources or --sources DIR); on a system "
					"wlroots, install the distribution's sway, labwc and cage";
		}
		dir_ = fx_.runtime_dir();
		env_file_ = dir_ + "/child-env";
	}

	// Starts the host; its child (sway exec, labwc -s, cage's application) writes its environment.
	bool start() {
		std::map<std::string, std::string> env = {{"WLR_BACKENDS", "headless"}, {"WLR_RENDERER", "pixman"},
			{"WLR_HEADLESS_OUTPUTS", "1"}, {"WLR_LIBINPUT_NO_DEVICES", "1"},
			{"LD_LIBRARY_PATH", prefix() + "/lib"}, {"WAYLAND_DISPLAY", Process::kUnset},
			{"DISPLAY", Process::kUnset}, {"HOME", dir_}, {"XDG_CONFIG_HOME", dir_ + "/config"},
			{"PIXELPORT_STATS_FILE", dir_ + "/stats.json"}};
		if (GetParam().preload) env["LD_PRELOAD"] = build_path("PIXELPORT_PRELOAD");
		std::string child = "env > " + env_file_ + ".tmp && mv " + env_file_ + ".tmp " + env_file_;
		std::string name = GetParam().name;
		std::vector<std::string> argv;
		if (name == "sway") {
			std::string config = dir_ + "/sway.conf";
			write_file(config,
				"default_border none\n"
				"default_floating_border none\n"
				"floating_minimum_size 1 x 1\n"
				"for_window [app_id=\".*\"] floating enable, move absolute position 0 0\n"
				"exec " +
					child + "\n");
			argv = {binary_, "-V", "-c", config}; // -V: info lines, the module's among them
		} else if (name == "labwc") {
			std::string config = dir_ + "/labwc";
			mkdir(config.c_str(), 0700);
			write_file(config + "/rc.xml",
				"<labwc_config>\n"
				"  <windowRules>\n"
				"    <windowRule identifier=\"*\" serverDecoration=\"no\">\n"
				"      <action name=\"MoveTo\" x=\"0\" y=\"0\"/>\n"
				"    </windowRule>\n"
				"  </windowRules>\n"
				"</labwc_config>\n");
			// labwc splits -s into words itself (no shell).
			argv = {binary_, "-V", "-C", config, "-s", "sh -c '" + child + "'"};
		} else {
			// cage exits when its application does and waits for it on SIGTERM: the application
			// is a client that ends when the compositor goes away.
			argv = {binary_, "--", "sh", "-c",
				child + " && exec " + build_path("PIXELPORT_PAINT") +
					" --format XRGB8888 --size 8x8 --seed 99"};
		}
		if (!fx_.start_command(argv, env)) return false;
		if (name == "cage") {
			// cage 0.2.0 logs errors only unless built as a debug build: no module line to see.
			std::string version;
			Process v;
			if (v.start({binary_, "-v"}, {{"LD_LIBRARY_PATH", prefix() + "/lib"}})) {
				v.wait(5000);
				version = v.out() + v.err();
			}
			logs_info_ = version.find("0.2.0") == std::string::npos;
			// Its application's window first, so that the test's windows stack above it.
			std::string line;
			if (!fx_.compositor().read_line(&line, 10000) || line != "presented XRGB8888 8x8") return false;
		}
		return true;
	}

	// SIGTERM to the compositor alone (its children get nothing), as a session manager does;
	// returns its exit status.
	int stop() {
		kill(fx_.compositor().pid(), SIGTERM);
		int status = fx_.compositor().wait(10000);
		return status >= 0 ? status : fx_.stop();
	}

	static std::vector<std::string> paint_argv(const std::string &format, const std::vector<std::string> &extra) {
		std::vector<std::string> argv = {
			build_path("PIXELPORT_PAINT"), "--format", format, "--size", "64x48", "--seed", "1"};
		argv.insert(argv.end(), extra.begin(), extra.end());
		return argv;
	}

	// The window's pixels in the host after pixelport-paint shows `format` (seed 1, 64x48).
	void paint(const std::string &format, Process *client, const std::vector<std::string> &extra = {}) {
		ASSERT_TRUE(client->start(paint_argv(format, extra), fx_.client_env()));
		std::string line;
		ASSERT_TRUE(client->read_line(&line, 10000)) << client->err() << fx_.compositor().err();
		EXPECT_EQ(line, "presented " + format + " 64x48");
	}

	// The same frame in pixelport-compositor (the plugin loaded directly): the reference.
	static Image reference_shot(const std::string &format, const std::vector<std::string> &extra = {}) {
		CompositorFixture ref;
		Image shot;
		if (!ref.start()) return shot;
		Process client;
		if (!client.start(paint_argv(format, extra), ref.client_env())) return shot;
		std::string line;
		if (client.read_line(&line, 10000)) ref.screenshot(&shot);
		client.terminate();
		ref.stop();
		return shot;
	}

	// The child's environment has WAYLAND_DISPLAY and no pixelport-preload in LD_PRELOAD.
	void expect_child_without_preload() {
		std::string env = wait_for_file(env_file_);
		EXPECT_NE(env.find("WAYLAND_DISPLAY="), std::string::npos) << env;
		std::istringstream lines(env);
		for (std::string line; std::getline(lines, line);) {
			if (line.rfind("LD_PRELOAD=", 0) == 0) {
				EXPECT_EQ(line.find("pixelport-preload"), std::string::npos) << line;
			}
		}
	}

	std::string binary_, dir_, env_file_;
	bool logs_info_ = true;
	CompositorFixture fx_;
};

TEST_P(RealCompositor, ServesTheRightFormatsShowsPixelsExactlyAndExitsCleanly) {
	ASSERT_TRUE(start()) << fx_.compositor().err();
	bool preload = GetParam().preload;

	// wayland-info: the plugin's formats with the module, the renderer's alone without.
	std::string out, err;
	ASSERT_EQ(fx_.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
	const std::set<std::string> &expected = preload ? served_shm_formats() : native_shm_formats();
	EXPECT_EQ(shm_formats_from_wayland_info(out), expected) << out;
	EXPECT_EQ(count(out, "'wl_shm'"), 1u) << out;

	// Two converted formats and a native one with the module; the native one stock.
	std::vector<std::pair<std::string, uint32_t>> formats = {{"XRGB8888", DRM_FORMAT_XRGB8888}};
	if (preload) formats.insert(formats.begin(), {{"NV12", DRM_FORMAT_NV12}, {"RGB888", DRM_FORMAT_RGB888}});
	for (const auto &[format, drm] : formats) {
		SCOPED_TRACE(format);
		Process client;
		paint(format, &client);
		if (HasFatalFailure()) return;
		Image shot;
		ASSERT_TRUE(fx_.screenshot(&shot)) << fx_.compositor().err();
		// Against the independent decoder, then byte for byte against the reference compositor.
		EXPECT_EQ(screen_mismatches(
				  shot, pattern_reference(drm, 64, 48, 1), 64, 48, reference_tolerance(drm), false),
			0);
		Image ref = reference_shot(format);
		ASSERT_GE(ref.width, 64);
		std::vector<uint32_t> want;
		for (int y = 0; y < 48; y++)
			for (int x = 0; x < 64; x++) want.push_back(ref.pixel(x, y));
		EXPECT_EQ(screen_mismatches(shot, want, 64, 48, 0, false), 0);
		client.terminate();
	}

	expect_child_without_preload();
	EXPECT_TRUE(fx_.compositor().running());
	EXPECT_EQ(stop(), 0) << fx_.compositor().err();
	const std::string &log = fx_.compositor().err();
	if (logs_info_) {
		EXPECT_EQ(count(log, "[pixelport-preload] pixelport serves wl_shm"), preload ? 1u : 0u) << log;
	}
	// The module's counters (written when the display is destroyed): the two converted frames.
	std::string stats = read_file(dir_ + "/stats.json");
	if (preload) {
		size_t at = stats.find("\"converted_uploads\":");
		ASSERT_NE(at, std::string::npos) << stats;
		EXPECT_GE(std::stoull(stats.substr(at + 20)), 2u) << stats;
	} else {
		EXPECT_EQ(stats, "") << "no module, no counters";
	}
}

// wlroots 0.20 serves wp_color_representation_manager_v1 itself where the compositor asks (sway
// and labwc do). With the module the plugin's is the one global of the interface: the colour a
// client declares reaches its conversion, and coefficients on an RGB buffer get the protocol's
// error from it. Stock, wlroots' own is there (identity coefficients only on pixman) or none.
TEST_P(RealCompositor, AdvertisesOneColourRepresentationGlobalWhoseStateReachesTheConversion) {
	ASSERT_TRUE(start()) << fx_.compositor().err();
	bool wlroots_serves = WLR_VERSION_MINOR >= 20 && std::string(GetParam().name) != "cage";
	std::string out, err;
	ASSERT_EQ(fx_.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
	EXPECT_EQ(count(out, "'wp_color_representation_manager_v1'"), GetParam().preload || wlroots_serves ? 1u : 0u)
		<< out;
	std::string hostile = build_path("PIXELPORT_HOSTILE_CLIENT");
	int status = fx_.run_client({hostile, "color-list"}, 20000, &out, &err);
	if (!GetParam().preload) {
		// wlroots' list: identity in full range (no renderer encodes YCbCr here), premultiplied.
		EXPECT_EQ(status, wlroots_serves ? 0 : 3) << err;
		if (wlroots_serves) {
			EXPECT_EQ(out, "coefficients 1 range 1\nalpha 0\nok\n");
		}
		EXPECT_EQ(stop(), 0) << fx_.compositor().err();
		return;
	}
	// coefficients: bt709 2, bt601 4, bt2020 6; range: full 1, limited 2 (the plugin's list).
	ASSERT_EQ(status, 0) << err;
	EXPECT_EQ(out,
		"coefficients 4 range 1\ncoefficients 4 range 2\ncoefficients 2 range 1\ncoefficients 2 range 2\n"
		"coefficients 6 range 1\ncoefficients 6 range 2\nalpha 0\nalpha 2\nok\n");

	// BT.2020 full range on NV12: the reference compositor's pixels, which the default rule's
	// (BT.601 limited at this size) are not.
	std::vector<std::string> bt2020 = {"--color", "bt2020:full"};
	Process client;
	paint("NV12", &client, bt2020);
	if (HasFatalFailure()) return;
	Image shot;
	ASSERT_TRUE(fx_.screenshot(&shot)) << fx_.compositor().err();
	Image ref = reference_shot("NV12", bt2020);
	ASSERT_GE(ref.width, 64);
	std::vector<uint32_t> want;
	for (int y = 0; y < 48; y++)
		for (int x = 0; x < 64; x++) want.push_back(ref.pixel(x, y));
	EXPECT_EQ(screen_mismatches(shot, want, 64, 48, 0, false), 0);
	std::vector<uint32_t> default_rule = pattern_reference(DRM_FORMAT_NV12, 64, 48, 1);
	int tolerance = reference_tolerance(DRM_FORMAT_NV12), differ = 0;
	for (int i = 0; i < 64 * 48; i++) {
		for (int c = 0; c < 24; c += 8) {
			int d = static_cast<int>((shot.pixel(i % 64, i / 64) >> c) & 0xff) -
				static_cast<int>((default_rule[i] >> c) & 0xff);
			if (std::abs(d) > tolerance) {
				differ++;
				break;
			}
		}
	}
	EXPECT_GT(differ, 64 * 48 / 4) << "the default rule's pixels: the declared colour did not count";
	client.terminate();

	ASSERT_EQ(fx_.run_client({hostile, "color-coefficients-on-rgb"}, 20000, &out, &err), 0) << err;
	EXPECT_EQ(out, "error 3 wp_color_representation_surface_v1\n"); // pixel_format
	EXPECT_TRUE(fx_.compositor().running());
	EXPECT_EQ(stop(), 0) << fx_.compositor().err();
}

// A quick sweep completes; with the module it has the compositor's phases (timing protocol,
// presentation included), stock it has the client's own times only.
TEST_P(RealCompositor, RunsAQuickSweep) {
	ASSERT_TRUE(start()) << fx_.compositor().err();
	std::string out_dir = dir_ + "/sweep", out, err;
	ASSERT_EQ(fx_.run_client({build_path("PIXELPORT_SWEEP"), "--warmup", "1", "--frames", "3", "--min-frames", "2",
					 "--point-seconds", "0.05", "--timeout-ms", "5000", "--sizes", "16K,256K",
					 "--formats", GetParam().preload ? "XRGB8888,NV12" : "XRGB8888", "--pattern",
					 "--no-plot", "-o", out_dir},
			  60000, &out, &err),
		0)
		<< err << out;
	std::ifstream in(out_dir + "/sweep.json");
	nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
	ASSERT_FALSE(j.is_discarded()) << out;
	size_t measured = 0;
	for (const auto &p : j["points"]) {
		if (!p["note"].is_null()) continue; // stock: no pixelport stream
		measured++;
		EXPECT_EQ(p["phases"]["upload"].is_null(), !GetParam().preload) << p;
		EXPECT_EQ(p["phases"]["present"].is_null(), !GetParam().preload) << p;
	}
	// With the module: 2 sizes x 2 formats x 4 transports; stock: XRGB8888 over shm and shm-new.
	EXPECT_EQ(measured, GetParam().preload ? 16u : 4u) << out;
	EXPECT_TRUE(fx_.compositor().running());
	EXPECT_EQ(stop(), 0) << fx_.compositor().err();
}

// No wlroots release serves wp_fifo_v1 or wp_commit_timing_v1: with the module the plugin does.
// The same pacing client as against the reference compositor (tests/integration/test_pacing.cpp):
// fifo frames one per refresh (native, converted on the workers at the client's 60 Hz, streamed),
// a synchronized subsurface's barrier ignored, a hidden window not stalled, timed commits at or
// after their target within a refresh, and each protocol error. Stock: neither is advertised.
TEST_P(RealCompositor, PacesFifoAndTimedCommitsWithThePlugin) {
	ASSERT_TRUE(start()) << fx_.compositor().err();
	const std::string client = build_path("PIXELPORT_PACING_CLIENT");
	std::string out, err;
	if (!GetParam().preload) {
		EXPECT_EQ(fx_.run_client({client, "fifo", "XRGB8888", "shm", "2", "8x8", "0"}, 10000, &out, &err), 3)
			<< err;
		EXPECT_EQ(out, "no fifo\n");
		EXPECT_EQ(fx_.run_client({client, "timed", "1"}, 10000, &out, &err), 3) << err;
		EXPECT_EQ(out, "no commit-timing\n");
		EXPECT_EQ(stop(), 0) << fx_.compositor().err();
		return;
	}
	for (const std::vector<std::string> &args : std::vector<std::vector<std::string>>{
		     {"fifo", "XRGB8888", "shm", "30", "64x48", "0"}, {"fifo", "NV12", "shm", "30", "320x240", "60"},
		     {"fifo", "XRGB8888", "socket", "20", "64x48", "0"}}) {
		std::vector<std::string> argv = {client};
		argv.insert(argv.end(), args.begin(), args.end());
		ASSERT_EQ(fx_.run_client(argv, 30000, &out, &err), 0) << err;
		std::vector<PacedFrame> frames = parse_paced(out);
		EXPECT_EQ(paced_verdict(frames, std::stoul(args[3]), paced_refresh(frames)), "")
			<< args[1] << " " << args[2];
	}
	ASSERT_EQ(fx_.run_client({client, "sync-subsurface", "4"}, 30000, &out, &err), 0) << err;
	std::vector<PacedFrame> children = parse_paced(out, "child"), parent = parse_paced(out, "parent");
	ASSERT_EQ(children.size(), 4u) << out;
	ASSERT_EQ(parent.size(), 1u) << out;
	EXPECT_TRUE(parent[0].presented && children[3].presented && children[3].ns == parent[0].ns) << out;
	for (size_t i = 0; i < 3; i++) EXPECT_FALSE(children[i].presented) << out;
	// Under an opaque window the scene sends the surface no output: its 20 frames take less
	// than half the 20 refreshes they would take shown.
	// (Where the scene keeps the covered window on its output, there is no hidden window to test:
	// said, as test_pacing.cpp does.)
	ASSERT_EQ(fx_.run_client({client, "hidden", "20"}, 30000, &out, &err), 0) << err;
	size_t at = out.find(" frames in ");
	ASSERT_NE(at, std::string::npos) << out;
	if (out.find("covered: on 0 output(s)") != std::string::npos) {
		EXPECT_LT(std::stoull(out.substr(at + 11)), 20u * 16667u / 2) << out;
	} else {
		printf("%s: the covered window stays on its output; its barrier is in force\n", GetParam().name);
	}
	ASSERT_EQ(fx_.run_client({client, "timed", "8"}, 30000, &out, &err), 0) << err;
	EXPECT_EQ(timed_verdict(out, 8), "") << out;
	for (const auto &[misuse, line] : std::vector<std::pair<const char *, const char *>>{
		     {"error-already-exists", "error 0 wp_fifo_manager_v1\n"},
		     {"error-commit-timer-exists", "error 0 wp_commit_timing_manager_v1\n"},
		     {"error-invalid-timestamp", "error 0 wp_commit_timer_v1\n"},
		     {"error-timestamp-exists", "error 1 wp_commit_timer_v1\n"},
		     {"error-fifo-surface-destroyed", "error 0 wp_fifo_v1\n"},
		     {"error-timer-surface-destroyed", "error 2 wp_commit_timer_v1\n"}}) {
		ASSERT_EQ(fx_.run_client({client, misuse}, 10000, &out, &err), 0) << err;
		EXPECT_EQ(out, line) << misuse;
	}
	EXPECT_TRUE(fx_.compositor().running());
	EXPECT_EQ(stop(), 0) << fx_.compositor().err();
	std::string stats = read_file(dir_ + "/stats.json");
	EXPECT_NE(stats.find("\"barrier_timeouts\":0"), std::string::npos) << stats;
}

INSTANTIATE_TEST_SUITE_P(Hosts, RealCompositor,
	testing::Values(Host{"sway", true}, Host{"sway", false}, Host{"labwc", true}, Host{"labwc", false},
		Host{"cage", true}, Host{"cage", false}),
	host_name);

} // namespace
