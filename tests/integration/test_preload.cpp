// libpixelport-preload.so in an unmodified wlroots 0.18 compositor: wlroots' own tinywl,
// headless with the pixman renderer, run with LD_PRELOAD as a user would.
//
// tinywl has neither wlr-screencopy nor presentation-time, so pixels cannot be read back
// here: pixelport-paint's "presented" lines (from frame callbacks) and the plugin's counters
// (PIXELPORT_STATS_FILE) show that buffers went through the plugin. The pixels themselves are
// checked in the reference compositor (test_shm.cpp), where the same plugin code runs.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness.hpp"

using namespace pixelport::test;

namespace {

std::string read_file(const std::string &path) {
	std::ifstream in(path);
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

// Waits until `path` exists with a whole line in it that satisfies `done`; returns that text.
template <typename Pred>
std::string wait_for_file(const std::string &path, Pred done, int timeout_ms = 5000) {
	std::string text;
	wait_until(
		[&] {
			text = read_file(path);
			return !text.empty() && text.back() == '\n' && done(text);
		},
		std::chrono::milliseconds(timeout_ms), std::chrono::milliseconds(20));
	return text;
}

uint64_t counter(const std::string &json, const std::string &name) {
	size_t at = json.find("\"" + name + "\":");
	return at == std::string::npos ? UINT64_MAX : std::stoull(json.substr(at + name.size() + 3));
}

size_t count(const std::string &text, const std::string &what) {
	size_t n = 0;
	for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += what.size()) n++;
	return n;
}

// LD_PRELOAD of the module, as a user would set it.
std::map<std::string, std::string> preload_env() {
	std::map<std::string, std::string> env = {{"LD_PRELOAD", build_path("PIXELPORT_PRELOAD")}};
#ifdef __SANITIZE_ADDRESS__
	// Preloaded, the (instrumented) module comes before the ASan runtime in the link order.
	// Harmless: programs built with ASan load the runtime themselves before any call, and the
	// others never call into the module. Leaks are still checked where a process exits cleanly.
	const char *options = getenv("ASAN_OPTIONS");
	env["ASAN_OPTIONS"] = std::string(options != nullptr ? options : "") + ":verify_asan_link_order=0";
#endif
	return env;
}

// tinywl, built by the wlroots subproject; absent when a system wlroots was used.
class Tinywl : public testing::Test {
protected:
	void SetUp() override {
		tinywl_ = build_path("PIXELPORT_TINYWL");
		if (access(tinywl_.c_str(), X_OK) != 0) {
			GTEST_SKIP() << "no tinywl at " << tinywl_ << " (wlroots not built from subprojects/)";
		}
	}

	// Starts tinywl with the module preloaded and `env` added; `startup` runs via tinywl -s.
	bool start(std::map<std::string, std::string> env, const std::string &startup) {
		env.merge(preload_env());
		env.insert({{"WLR_BACKENDS", "headless"}, {"WLR_RENDERER", "pixman"}, {"WLR_HEADLESS_OUTPUTS", "1"}});
		std::vector<std::string> argv = {tinywl_};
		if (!startup.empty()) argv.insert(argv.end(), {"-s", startup});
		return fx_.start_command(argv, env);
	}

	std::string tinywl_;
	CompositorFixture fx_;
};

TEST_F(Tinywl, ServesConvertedFormatsThroughThePreloadedPlugin) {
	std::string stats = fx_.runtime_dir() + "/stats.json";
	std::string startup_env = fx_.runtime_dir() + "/startup-env";
	ASSERT_TRUE(start({{"PIXELPORT_STATS_FILE", stats}},
		"env > " + startup_env + ".tmp && mv " + startup_env + ".tmp " + startup_env))
		<< fx_.compositor().err();

	// One wl_shm, the plugin's: pixman's formats plus the converted ones.
	std::string out, err;
	ASSERT_EQ(fx_.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
	EXPECT_EQ(shm_formats_from_wayland_info(out), served_shm_formats()) << out;
	EXPECT_EQ(count(out, "'wl_shm'"), 1u) << out;

	// Two converted formats and a native one, each shown on the output (frame callback).
	Process paint;
	ASSERT_TRUE(
		paint.start({build_path("PIXELPORT_PAINT"), "--frame", "format=NV12,size=64x48,seed=1", "--frame",
				    "format=RGB888,size=64x48,seed=2", "--frame", "format=XRGB8888,size=64x48,seed=3"},
			fx_.client_env()));
	for (const char *want : {"presented NV12 64x48", "presented RGB888 64x48", "presented XRGB8888 64x48"}) {
		std::string line;
		ASSERT_TRUE(paint.read_line(&line, 10000)) << paint.err() << fx_.compositor().err();
		EXPECT_EQ(line, want);
	}

	std::string json = wait_for_file(stats, [](const std::string &t) { return counter(t, "shm_buffers") >= 3; });
	EXPECT_EQ(counter(json, "converted_uploads"), 2u) << json;
	EXPECT_EQ(counter(json, "converted_pixels"), 2u * 64 * 48) << json;
	EXPECT_EQ(counter(json, "shm_buffers"), 3u) << json;
	EXPECT_GE(counter(json, "native_uploads"), 1u) << json;

	// tinywl's startup command (sh -c) did not inherit the module.
	std::string env = wait_for_file(startup_env, [](const std::string &) { return true; });
	EXPECT_NE(env.find("WAYLAND_DISPLAY="), std::string::npos) << env;
	std::istringstream lines(env);
	for (std::string line; std::getline(lines, line);) {
		if (line.rfind("LD_PRELOAD=", 0) == 0) {
			EXPECT_EQ(line.find("pixelport-preload"), std::string::npos) << line;
		}
	}

	paint.terminate();
	EXPECT_TRUE(fx_.compositor().running());
	fx_.stop();
	EXPECT_EQ(count(fx_.compositor().err(), "[pixelport-preload] pixelport serves wl_shm"), 1u)
		<< fx_.compositor().err();
}

// The stream transport and the timing protocol and log work inside tinywl too: the module
// follows outputs through wlr_output_init_render, so commits get presentation times.
TEST_F(Tinywl, StreamsAndReportsTimingThroughThePreloadedPlugin) {
	std::string log = fx_.runtime_dir() + "/timing.jsonl";
	ASSERT_TRUE(start({{"PIXELPORT_TIMING_LOG", log}}, "")) << fx_.compositor().err();
	std::string out, err;
	for (const char *transport : {"socket", "pipe"}) {
		ASSERT_EQ(fx_.run_client(
				  {build_path("PIXELPORT_PAINT"), "--hold-ms", "0", "--transport", transport, "--frame",
					  "format=NV12,size=64x48,seed=1", "--frame", "format=NV12,size=64x48,seed=2"},
				  10000, &out, &err),
			0)
			<< err;
		EXPECT_EQ(out,
			std::string("presented NV12 64x48 via ") + transport + "\npresented NV12 64x48 via " +
				transport + "\n");
	}
	ASSERT_EQ(fx_.run_client({build_path("PIXELPORT_TIMING_CLIENT"), "subscribe"}, 20000, &out, &err), 0) << err;
	EXPECT_EQ(out, "info 3 done 3 presented 3 ordered 1\nok\n");
	fx_.stop();
	std::string text =
		wait_for_file(log, [](const std::string &t) { return t.find("\"stream\"") != std::string::npos; });
	EXPECT_GE(count(text, "\"transport\":\"stream\""), 4u) << text.substr(0, 2000);
	EXPECT_NE(text.find("\"output\":\"HEADLESS-1\""), std::string::npos);
}

// A preloaded compositor records timing for pixelport-compare. PIXELPORT_TIMING_LOG
// and PIXELPORT_TIMING_TRACE reach the plugin; PIXELPORT_TIMING_SUMMARY gets the summary on
// SIGUSR1 (and once a second after commits, and when the display goes).
TEST_F(Tinywl, WritesATimingLogThatPixelportCompareReadsAndASummaryOnSigusr1) {
	std::string log = fx_.runtime_dir() + "/timing.jsonl", trace = fx_.runtime_dir() + "/trace.json",
		    summary = fx_.runtime_dir() + "/summary.txt";
	ASSERT_TRUE(start({{"PIXELPORT_TIMING_LOG", log}, {"PIXELPORT_TIMING_TRACE", trace},
				  {"PIXELPORT_TIMING_SUMMARY", summary}},
		""))
		<< fx_.compositor().err();
	std::string out, err;
	std::vector<std::string> paint = {build_path("PIXELPORT_PAINT"), "--hold-ms", "0"};
	for (int seed = 1; seed <= 6; seed++) {
		paint.insert(paint.end(), {"--frame", "format=NV12,size=64x48,seed=" + std::to_string(seed)});
	}
	ASSERT_EQ(fx_.run_client(paint, 10000, &out, &err), 0) << err;
	EXPECT_EQ(count(out, "presented NV12 64x48\n"), 6u) << out;
	std::remove(summary.c_str());
	ASSERT_EQ(kill(fx_.compositor().pid(), SIGUSR1), 0);
	std::string text =
		wait_for_file(summary, [](const std::string &t) { return t.find("NV12") != std::string::npos; });
	EXPECT_NE(text.find("convert"), std::string::npos) << text;
	EXPECT_TRUE(fx_.compositor().running());
	fx_.stop();
	std::string jsonl =
		wait_for_file(log, [](const std::string &t) { return count(t, "\"type\":\"commit\"") >= 6; });
	EXPECT_GE(count(jsonl, "\"format\":\"NV12\""), 6u) << jsonl.substr(0, 2000);
	EXPECT_NE(wait_for_file(trace, [](const std::string &t) { return !t.empty(); }).find("traceEvents"),
		std::string::npos);
	// The log of this run against itself: one paired group for the frame, ratio 1.
	ASSERT_EQ(fx_.run_client({build_path("PIXELPORT_COMPARE"), log, log}, 20000, &out, &err), 0) << err;
	EXPECT_NE(out.find("== NV12 64x48 shm"), std::string::npos) << out;
	EXPECT_NE(out.find("1.00x"), std::string::npos) << out;
	EXPECT_EQ(out.find("only in"), std::string::npos) << out;
}

// The demo client's quick sweep, every transport, inside unmodified
// tinywl with the module, with the compositor-side phases from the timing protocol.
TEST_F(Tinywl, RunsTheQuickSweepOverEveryTransport) {
	ASSERT_TRUE(start({}, "")) << fx_.compositor().err();
	std::string out_dir = fx_.runtime_dir() + "/sweep";
	std::string out, err;
	ASSERT_EQ(fx_.run_client({build_path("PIXELPORT_SWEEP"), "--warmup", "1", "--frames", "3", "--min-frames", "2",
					 "--point-seconds", "0.05", "--timeout-ms", "5000", "--sizes", "16K,256K",
					 "--formats", "XRGB8888,NV12", "--pattern", "--no-plot", "-o", out_dir},
			  60000, &out, &err),
		0)
		<< err << out;
	std::ifstream in(out_dir + "/sweep.json");
	nlohmann::json j = nlohmann::json::parse(in);
	// 2 sizes x 2 formats x 4 transports, none skipped, with the compositor's upload times.
	ASSERT_EQ(j["points"].size(), 16u);
	for (const auto &p : j["points"]) {
		EXPECT_TRUE(p["note"].is_null()) << p;
		EXPECT_FALSE(p["phases"]["upload"].is_null()) << p;
	}
	EXPECT_TRUE(fx_.compositor().running());
}

TEST_F(Tinywl, TakesOptionsFromTheEnvironment) {
	ASSERT_TRUE(start({{"PIXELPORT_SHM_VERSION", "1"}, {"PIXELPORT_CONVERT_THREADS", "many"}}, ""))
		<< fx_.compositor().err();
	std::string out, err;
	ASSERT_EQ(fx_.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
	EXPECT_NE(out.find("'wl_shm',                                     version:  1,"), std::string::npos) << out;
	fx_.stop();
	EXPECT_NE(fx_.compositor().err().find("ignoring PIXELPORT_CONVERT_THREADS=many"), std::string::npos)
		<< fx_.compositor().err();
}

// A missing symbol (simulated) leaves tinywl exactly as stock wlroots, with one line saying so.
TEST_F(Tinywl, IsStockWlrootsWhenASymbolIsMissing) {
	std::string stats = fx_.runtime_dir() + "/stats.json";
	ASSERT_TRUE(start({{"PIXELPORT_PRELOAD_HIDE", "wlr_compositor_create"}, {"PIXELPORT_STATS_FILE", stats}}, ""))
		<< fx_.compositor().err();
	std::string out, err;
	ASSERT_EQ(fx_.run_client({"wayland-info"}, 10000, &out, &err), 0) << err;
	EXPECT_EQ(shm_formats_from_wayland_info(out), native_shm_formats()) << out;

	ASSERT_EQ(fx_.run_client(
			  {build_path("PIXELPORT_PAINT"), "--format", "XRGB8888", "--size", "64x64", "--hold-ms", "0"},
			  10000, &out, &err),
		0)
		<< err;
	EXPECT_EQ(out, "presented XRGB8888 64x64\n");
	EXPECT_EQ(fx_.run_client(
			  {build_path("PIXELPORT_PAINT"), "--format", "NV12", "--hold-ms", "0"}, 10000, &out, &err),
		1);
	EXPECT_NE(err.find("does not advertise NV12"), std::string::npos) << err;

	fx_.stop();
	const std::string &log = fx_.compositor().err();
	EXPECT_EQ(count(log, "pixelport-preload"), 1u) << log;
	EXPECT_NE(log.find("pixelport-preload: wlr_compositor_create not found in this process"), std::string::npos)
		<< log;
	EXPECT_EQ(access(stats.c_str(), F_OK), -1);
}

// Wrappers (dbus-run-session, sh -c) inherit LD_PRELOAD too: there the module does nothing,
// says nothing, and passes LD_PRELOAD on to the compositor they start.
TEST(Preload, IsSilentAndInertInAProgramWithoutWlroots) {
	std::string module = build_path("PIXELPORT_PRELOAD");
	std::map<std::string, std::string> env = preload_env();
	env["LD_LIBRARY_PATH"] = Process::kUnset;
#ifdef __SANITIZE_ADDRESS__
	env["ASAN_OPTIONS"] += ":detect_leaks=0"; // sh's own allocations are not ours to judge
#endif
	Process sh;
	ASSERT_TRUE(sh.start({"sh", "-c", "printf '%s' \"$LD_PRELOAD\""}, env));
	EXPECT_EQ(sh.wait(10000), 0);
	EXPECT_EQ(sh.out(), module);
	EXPECT_EQ(sh.err(), "");
}

// tinywl dies on SIGTERM; pixelport-compositor --no-plugin (stock wlroots calls, like any
// compositor) tears its display down, which is where the module destroys the plugin.
TEST(Preload, DestroysThePluginWithTheDisplay) {
	CompositorFixture fx;
	std::string stats = fx.runtime_dir() + "/stats.json";
	std::map<std::string, std::string> env = preload_env();
	env["PIXELPORT_STATS_FILE"] = stats;
	ASSERT_TRUE(fx.start_command(
		{build_path("PIXELPORT_COMPOSITOR"), "--no-plugin", "--output", "128x128", "--log-level", "debug"},
		env))
		<< fx.compositor().err();
	std::string out, err;
	ASSERT_EQ(
		fx.run_client({build_path("PIXELPORT_PAINT"), "--format", "YUYV", "--size", "32x16", "--hold-ms", "0"},
			10000, &out, &err),
		0)
		<< err;
	EXPECT_EQ(out, "presented YUYV 32x16\n");
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
	const std::string &log = fx.compositor().err();
	EXPECT_NE(log.find("plugin destroyed"), std::string::npos) << log;
	std::string json = read_file(stats);
	EXPECT_EQ(counter(json, "converted_uploads"), 1u) << json;
	EXPECT_EQ(counter(json, "converted_pixels"), 32u * 16) << json;
}

} // namespace
