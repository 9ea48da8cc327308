// pixelport-sweep end to end against the reference compositor: a quick sweep writes every
// file with sane values, pressure mode runs two small instances, the waypipe peer row works
// (or is skipped with a note), and each bad input gives one clear error line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness.hpp"

using namespace pixelport::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kQuick = {"--warmup", "1", "--frames", "3", "--min-frames", "2", "--point-seconds",
	"0.05", "--timeout-ms", "5000", "--confirm-rounds", "2", "--confirm-seconds", "0.02"};

std::vector<std::string> sweep(std::vector<std::string> args, bool quick = true) {
	std::vector<std::string> argv = {build_path("PIXELPORT_SWEEP")};
	if (quick) argv.insert(argv.end(), kQuick.begin(), kQuick.end());
	argv.insert(argv.end(), args.begin(), args.end());
	return argv;
}

json read_json(const fs::path &p) {
	std::ifstream in(p);
	return json::parse(in);
}

size_t lines(const std::string &s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

const json *find_point(const json &j, const std::string &format, const std::string &transport) {
	for (const json &p : j["points"]) {
		if (p["format"] == format && p["transport"] == transport) return &p;
	}
	return nullptr;
}

// One error line on stderr naming the problem, a non-zero status, no files measured.
void expect_error(CompositorFixture &fx, const std::vector<std::string> &argv, int want_status,
	const std::string &needle, const std::map<std::string, std::string> &env_override = {}, bool only_line = true) {
	Process p;
	auto env = fx.client_env();
	for (const auto &[k, v] : env_override) env[k] = v;
	ASSERT_TRUE(p.start(argv, env));
	int status = p.wait(20000);
	if (status < 0) p.terminate(1000);
	EXPECT_EQ(status, want_status) << p.err();
	// Measuring runs print progress first; then the error is the last line.
	if (only_line) {
		EXPECT_EQ(lines(p.err()), 1u) << p.err();
	}
	std::string err = p.err();
	size_t start = err.size() > 1 ? err.rfind('\n', err.size() - 2) : std::string::npos;
	std::string last = start == std::string::npos ? err : err.substr(start + 1);
	EXPECT_EQ(last.rfind("pixelport-sweep: error: ", 0), 0u) << p.err();
	EXPECT_NE(last.find(needle), std::string::npos) << p.err();
}

} // namespace

TEST(Sweep, QuickSweepWritesEveryFileWithSaneValues) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	fs::path out = fs::path(fx.runtime_dir()) / "quick";
	std::string so, se;
	ASSERT_EQ(fx.run_client(
			  sweep({"--sizes", "16K,256K", "--formats", "XRGB8888,NV12", "--pattern", "-o", out.string()}),
			  30000, &so, &se),
		0)
		<< se;
	for (const char *f :
		{"sweep.csv", "sweep.json", "frames.csv", "table.txt", "sweep.png", "verdict.txt", "verdict.json"}) {
		EXPECT_GT(fs::file_size(out / f), 0u) << f;
	}
	json j = read_json(out / "sweep.json");
	ASSERT_EQ(j["points"].size(), 2u * 2u * 4u);
	for (const json &p : j["points"]) {
		SCOPED_TRACE(p["format"].get<std::string>() + " " + p["transport"].get<std::string>());
		ASSERT_TRUE(p["note"].is_null()) << p["note"];
		// Sizes as asked: within the 4:3 rounding of the requested bytes.
		EXPECT_GT(p["width"].get<int>(), 0);
		EXPECT_GT(p["height"].get<int>(), 0);
		double bytes = p["bytes"].get<double>();
		double asked = bytes < 100000 ? 16384 : 262144;
		EXPECT_NEAR(bytes / asked, 1.0, 0.1);
		EXPECT_EQ(p["content"], "pattern");
		EXPECT_GE(p["frames"].get<int>(), 2);
		for (const char *ph : {"fill", "submit", "cost"}) {
			ASSERT_FALSE(p["phases"][ph].is_null()) << ph;
			EXPECT_GT(p["phases"][ph]["median_ns"].get<double>(), 0) << ph;
			EXPECT_GE(p["phases"][ph]["p95_ns"].get<double>(), p["phases"][ph]["median_ns"].get<double>())
				<< ph;
		}
		double mbs = p["throughput_mbs"].get<double>();
		EXPECT_TRUE(std::isfinite(mbs) && mbs > 0) << mbs;
		// The shown pixels were read back (grim) and match what was sent.
		ASSERT_TRUE(p["pixels"].is_object());
		EXPECT_EQ(p["pixels"]["status"], "ok") << p["pixels"]["note"];
		EXPECT_TRUE(p["valid"].get<bool>());
	}
	// The verdict: both questions, each comparison with its sizes, the confirmed ones with
	// 1 + 2 runs (the sweep and two alternating rounds).
	const json &v = j["verdict"];
	ASSERT_TRUE(v.is_object());
	std::string vt = v["text"];
	EXPECT_NE(vt.find("1. At which frame size does shared memory beat the socket?"), std::string::npos) << vt;
	EXPECT_NE(vt.find("2. Does conversion during streaming pay off?"), std::string::npos) << vt;
	// Question 1 for two formats x (shm, shm-new); question 2 for NV12 x (socket, pipe).
	ASSERT_EQ(v["comparisons"].size(), 6u) << v.dump(1);
	for (const json &c : v["comparisons"]) {
		SCOPED_TRACE(c["text"].get<std::string>());
		EXPECT_NE(vt.find(c["text"].get<std::string>()), std::string::npos);
		int confirmed = 0;
		for (const json &sz : c["sizes"]) {
			size_t runs = sz["ratios_a_over_b"].size();
			EXPECT_TRUE(runs == 1 || runs == 3) << runs;
			confirmed += runs == 3;
			for (const json &r : sz["ratios_a_over_b"]) EXPECT_GT(r.get<double>(), 0);
		}
		EXPECT_GE(confirmed, 1);
	}
	EXPECT_EQ(read_json(out / "verdict.json"), v);
	EXPECT_NE(so.find(vt), std::string::npos) << so;
	// Every pair of the four transports, per format: a crossover or "none in range".
	ASSERT_EQ(j["crossovers"].size(), 2u * 6u);
	for (const json &c : j["crossovers"]) {
		std::string text = c["text"];
		EXPECT_TRUE(
			text.find(" beats ") != std::string::npos || text.find("none in range") != std::string::npos)
			<< text;
		if (c["found"].get<bool>()) {
			EXPECT_GE(c["at_bytes"].get<double>(), c["between_bytes"][0].get<double>());
			EXPECT_LE(c["at_bytes"].get<double>(), c["between_bytes"][1].get<double>());
		}
	}
	std::ifstream csv(out / "sweep.csv");
	std::stringstream csv_text;
	csv_text << csv.rdbuf();
	EXPECT_EQ(lines(csv_text.str()), 1u + 16u);
	// The printed table and crossovers.
	EXPECT_NE(so.find("transport"), std::string::npos);
	EXPECT_NE(so.find("crossovers"), std::string::npos);
	EXPECT_NE(so.find("XRGB8888: "), std::string::npos);
	EXPECT_TRUE(fx.compositor().running());
}

// --confirm-compositor: each confirming round in a compositor of its own (none of the rounds'
// commits reach the sweep's compositor), stopped after its round; a command that does not
// start one leaves the rounds to the sweep's compositor, with one line saying so.
// The client's own phases after cost: the frame callbacks' interval and commit to release. A
// buffer the plugin converts comes back once converted; one it shows in place comes back only
// after the next commit, which the sweep sends once this one was presented.
TEST(Sweep, FrameIntervalAndReleaseAreTheClientsToo) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	fs::path out = fs::path(fx.runtime_dir()) / "client-phases";
	std::string so, se;
	ASSERT_EQ(fx.run_client(sweep({"--sizes", "256x256", "--formats", "XRGB8888,NV12", "--transports", "shm",
					      "--warmup", "1", "--frames", "8", "--min-frames", "8", "--point-seconds",
					      "0", "--timeout-ms", "5000", "--pattern", "--no-plot", "--no-verify",
					      "--confirm-rounds", "0", "-o", out.string()},
					false),
			  30000, &so, &se),
		0)
		<< se;
	json j = read_json(out / "sweep.json");
	const json &order = j["sample_phases"];
	auto index = [&](const std::string &phase) {
		auto at = std::find(order.begin(), order.end(), phase);
		EXPECT_NE(at, order.end()) << phase;
		return static_cast<size_t>(at - order.begin());
	};
	const size_t latency = index("latency"), frame = index("frame"), interval = index("frame_interval"),
		     release = index("release");
	std::map<std::string, std::vector<double>> releases;
	for (const char *format : {"XRGB8888", "NV12"}) {
		const json *p = find_point(j, format, "shm");
		ASSERT_NE(p, nullptr) << format;
		const json &samples = (*p)["samples"];
		ASSERT_EQ(samples.size(), 8u) << format;
		int intervals = 0;
		for (size_t i = 0; i < samples.size(); i++) {
			const json &s = samples[i];
			ASSERT_FALSE(s[frame].is_null()) << format << " frame " << i;
			EXPECT_GT(s[frame].get<int64_t>(), 0);
			if (!s[interval].is_null()) {
				intervals++;
				// Each frame is committed once the last was presented: at least the hand-over apart.
				EXPECT_GE(s[interval].get<int64_t>(), s[frame].get<int64_t>() / 4)
					<< format << " " << i;
			}
			if (!s[release].is_null()) {
				releases[format].push_back(s[release].get<double>());
				if (std::string(format) == "XRGB8888") {
					// Shown in place: released after the next commit, after this one's presentation.
					EXPECT_GT(s[release].get<int64_t>(), s[latency].get<int64_t>()) << i;
				}
			}
		}
		EXPECT_EQ(intervals, 7) << format << ": every frame but the first";
	}
	// The last buffer (and, shown in place, the one before it) is still held at the point's end.
	EXPECT_GE(releases["XRGB8888"].size(), 6u);
	EXPECT_GE(releases["NV12"].size(), 7u);
	auto median = [](std::vector<double> v) {
		std::sort(v.begin(), v.end());
		return v.empty() ? 0.0 : v[v.size() / 2];
	};
	EXPECT_LT(median(releases["NV12"]), median(releases["XRGB8888"]));
	std::ifstream csv(out / "sweep.csv");
	std::string header;
	std::getline(csv, header);
	EXPECT_NE(header.find("frame_interval_median_ns"), std::string::npos) << header;
	EXPECT_NE(header.find("release_median_ns"), std::string::npos) << header;
}

TEST(Sweep, ConfirmingRoundsRunInCompositorsOfTheirOwn) {
	for (bool good : {true, false}) {
		SCOPED_TRACE(good ? "a compositor per round" : "a command that fails");
		CompositorFixture fx;
		fs::path log = fs::path(fx.runtime_dir()) / "timing.jsonl";
		ASSERT_TRUE(fx.start({"--timing-log", log.string()}));
		fs::path out = fs::path(fx.runtime_dir()) / "own";
		std::string cmd = good ? build_path("PIXELPORT_COMPOSITOR") + " --log-level error --output 256x256"
				       : std::string("/nonexistent/compositor");
		std::string so, se;
		ASSERT_EQ(fx.run_client(sweep({"--sizes", "16K,256K", "--formats", "XRGB8888", "--transports",
						"shm,socket", "--pattern", "--no-plot", "--no-verify",
						"--confirm-compositor", cmd, "-o", out.string()}),
				  60000, &so, &se),
			0)
			<< se;
		const json v = read_json(out / "verdict.json");
		const std::string text = v["text"];
		EXPECT_NE(text.find(good ? "each in a compositor of its own" : "each on a new connection"),
			std::string::npos)
			<< text;
		size_t repeated = 0;
		for (const json &c : v["comparisons"]) {
			for (const json &sz : c["sizes"]) repeated += sz["ratios_a_over_b"].size() == 3;
		}
		EXPECT_GE(repeated, 1u) << v.dump(1);
		EXPECT_EQ(v["rounds_in_own_compositor"], good ? v["rounds_run"] : json(0));
		EXPECT_EQ(se.find("confirming rounds in the sweep's compositor: '") != std::string::npos, !good) << se;
		// Each round's compositor is gone, its socket removed.
		for (const auto &e : fs::directory_iterator(fx.runtime_dir()))
			EXPECT_EQ(e.path().filename().string().rfind("pixelport-confirm-", 0), std::string::npos)
				<< e.path();
		EXPECT_EQ(fx.stop(), 0);
		std::ifstream in(log);
		size_t sweep_commits = 0, confirm_commits = 0;
		for (std::string line; std::getline(in, line);) {
			json r = json::parse(line, nullptr, false);
			if (r.is_discarded() || r["type"] != "commit") continue;
			std::string title = r.value("title", "");
			sweep_commits += title.rfind("pixelport-sweep ", 0) == 0;
			confirm_commits += title.size() > 8 && title.compare(title.size() - 8, 8, " confirm") == 0;
		}
		EXPECT_GT(sweep_commits, 0u);
		if (good)
			EXPECT_EQ(confirm_commits, 0u);
		else
			EXPECT_GT(confirm_commits, 0u);
	}
}

TEST(Sweep, RealImagesDecodeAsContent) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	// A PNG: a screenshot of a frame (grim writes PNG).
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_PAINT"), "--hold-ms", "0"}, 10000), 0);
	fs::path png = fs::path(fx.runtime_dir()) / "shot.png";
	ASSERT_EQ(fx.run_client({"grim", png.string()}, 10000), 0);
	fs::path out = fs::path(fx.runtime_dir()) / "png";
	std::string so, se;
	ASSERT_EQ(fx.run_client(sweep({"--sizes", "64x48,8K", "--formats", "XRGB8888,RGB888,NV12", "--transports",
					"shm,socket", "--image", png.string(), "--no-plot", "-o", out.string()}),
			  30000, &so, &se),
		0)
		<< se;
	json j = read_json(out / "sweep.json");
	ASSERT_EQ(j["points"].size(), 2u * 3u * 2u);
	EXPECT_EQ(j["points"][0]["width"], 64);
	EXPECT_EQ(j["points"][0]["height"], 48);
	for (const json &p : j["points"]) EXPECT_EQ(p["content"], "image") << p["format"];
	EXPECT_NE(j["meta"]["content"].get<std::string>().find(png.string()), std::string::npos);
	EXPECT_FALSE(fs::exists(out / "sweep.png"));
}

TEST(Sweep, PressureModeReportsEveryInstance) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	fs::path out = fs::path(fx.runtime_dir()) / "pressure";
	std::string so, se;
	ASSERT_EQ(fx.run_client(sweep({"--instances", "2", "--pressure-size", "320x240", "--pressure-frames", "2",
					      "--pattern", "-o", out.string()},
					false),
			  30000, &so, &se),
		0)
		<< se;
	json j = read_json(out / "pressure.json");
	ASSERT_EQ(j["instances_result"].size(), 2u);
	for (const json &r : j["instances_result"]) {
		EXPECT_TRUE(r["finished"].get<bool>()) << r;
		EXPECT_EQ(r["frames"], 2);
		EXPECT_GT(r["real_s"].get<double>(), 0);
		// Each instance decoded, scaled and sent frames: it used CPU time, and no more than its
		// wall time on every core.
		const double cpu = r["user_s"].get<double>() + r["sys_s"].get<double>();
		EXPECT_GT(cpu, 0);
		EXPECT_LE(cpu, r["real_s"].get<double>() * std::max(1u, std::thread::hardware_concurrency()) + 0.01);
		EXPECT_GT(r["minflt"].get<long>(), 0);
		EXPECT_GT(r["maxrss_bytes"].get<double>(), 0);
	}
	EXPECT_EQ(j["compositor_pid"].get<int>(), fx.compositor().pid());
	EXPECT_GT(j["compositor"]["vmhwm_before"].get<double>(), 0);
	EXPECT_GE(j["compositor"]["vmhwm_after"].get<double>(), j["compositor"]["vmhwm_before"].get<double>());
	EXPECT_NE(so.find("compositor memory per surface"), std::string::npos) << so;
	EXPECT_TRUE(fs::exists(out / "pressure.csv"));
}

TEST(Sweep, WaypipePeerRowOrAClearNote) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	fs::path out = fs::path(fx.runtime_dir()) / "peer";
	std::string so, se;
	ASSERT_EQ(fx.run_client(sweep({"--sizes", "64x48", "--formats", "XRGB8888,NV12", "--transports", "shm",
					"--pattern", "--no-plot", "--peer", "waypipe", "--peer-compress", "none",
					"--peer-timeout", "60", "-o", out.string()}),
			  90000, &so, &se),
		0)
		<< se;
	json j = read_json(out / "sweep.json");
	const json *peer = find_point(j, "XRGB8888", "shm@waypipe-none");
	if (system("command -v waypipe >/dev/null 2>&1") != 0) {
		EXPECT_EQ(peer, nullptr);
		EXPECT_NE(so.find("peer waypipe skipped: waypipe is not installed"), std::string::npos) << so;
		GTEST_SKIP() << "waypipe not installed: the note was checked";
	}
	if (peer == nullptr) {
		std::ifstream log(out / "peer-waypipe-none" / "waypipe.log");
		std::stringstream waypipe;
		waypipe << log.rdbuf();
		FAIL() << "no waypipe point\n" << so << se << "\nwaypipe.log:\n" << waypipe.str();
	}
	EXPECT_GE((*peer)["frames"].get<int>(), 2);
	EXPECT_NE(so.find("shm@waypipe-none"), std::string::npos) << so;
	// The peer's pixels are checked too (screenshots straight from the compositor).
	EXPECT_EQ((*peer)["pixels"]["status"], "ok") << (*peer)["pixels"];
	EXPECT_TRUE((*peer)["valid"].get<bool>());
	// Debian 12's waypipe 0.8.4 forwards only the first plane of a multi-planar wl_shm buffer:
	// NV12 arrives without chroma. That point is marked invalid and has no throughput.
	const json *nv12 = find_point(j, "NV12", "shm@waypipe-none");
	ASSERT_NE(nv12, nullptr);
	std::string version;
	fx.run_client({"waypipe", "--version"}, 5000, &version);
	if (version.find("0.8.4") != std::string::npos) {
		EXPECT_EQ((*nv12)["pixels"]["status"], "wrong") << (*nv12)["pixels"];
		EXPECT_FALSE((*nv12)["valid"].get<bool>());
		EXPECT_TRUE((*nv12)["throughput_mbs"].is_null());
		EXPECT_NE(so.find("INVALID, wrong pixels"), std::string::npos) << so;
	} else {
		EXPECT_NE((*nv12)["pixels"]["status"], "unverified") << (*nv12)["pixels"];
		EXPECT_EQ((*nv12)["valid"].get<bool>(), (*nv12)["pixels"]["status"] == "ok");
	}
	EXPECT_EQ(find_point(j, "NV12", "shm")->at("pixels")["status"], "ok");
}

// A deliberately wrong comparison (the reference inverted): every point is marked invalid with
// the reason, has no throughput, and no crossover or verdict is drawn from it.
TEST(Sweep, PointsWithWrongPixelsAreInvalidAndLeftOut) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	fs::path out = fs::path(fx.runtime_dir()) / "wrong";
	std::string so, se;
	ASSERT_EQ(fx.run_client(sweep({"--sizes", "8K,64K", "--formats", "XRGB8888", "--transports", "shm,socket",
					"--pattern", "--no-plot", "--test-wrong-reference", "-o", out.string()}),
			  30000, &so, &se),
		0)
		<< se;
	json j = read_json(out / "sweep.json");
	ASSERT_EQ(j["points"].size(), 4u);
	for (const json &p : j["points"]) {
		EXPECT_EQ(p["pixels"]["status"], "wrong");
		EXPECT_NE(p["pixels"]["note"].get<std::string>().find("sampled pixels differ by more than"),
			std::string::npos);
		EXPECT_FALSE(p["valid"].get<bool>());
		EXPECT_TRUE(p["throughput_mbs"].is_null());
	}
	EXPECT_TRUE(j["crossovers"].empty() || !j["crossovers"][0]["found"].get<bool>());
	EXPECT_TRUE(j["verdict"]["comparisons"].empty());
	EXPECT_NE(j["verdict"]["text"].get<std::string>().find("4 point(s) showed wrong pixels"), std::string::npos);
	EXPECT_NE(so.find("INVALID, wrong pixels"), std::string::npos) << so;
}

TEST(Sweep, WithoutThePluginShmRunsAndTheStreamIsSkipped) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--no-plugin"}));
	fs::path out = fs::path(fx.runtime_dir()) / "stock";
	std::string so, se;
	ASSERT_EQ(fx.run_client(sweep({"--sizes", "16K", "--formats", "XRGB8888", "--pattern", "--no-plot", "-o",
					out.string()}),
			  30000, &so, &se),
		0)
		<< se;
	json j = read_json(out / "sweep.json");
	for (const char *t : {"shm", "shm-new"}) {
		const json *p = find_point(j, "XRGB8888", t);
		ASSERT_NE(p, nullptr);
		EXPECT_GE((*p)["frames"].get<int>(), 2) << t;
		EXPECT_TRUE((*p)["phases"]["convert"].is_null()) << "no timing protocol without the plugin";
	}
	for (const char *t : {"socket", "pipe"}) {
		const json *p = find_point(j, "XRGB8888", t);
		ASSERT_NE(p, nullptr);
		EXPECT_EQ((*p)["frames"], 0);
		EXPECT_NE((*p)["note"].get<std::string>().find("no pixelport stream"), std::string::npos) << *p;
	}
	EXPECT_NE(so.find("skipped: no pixelport stream"), std::string::npos) << so;
}

TEST(Sweep, EachBadInputGivesOneClearError) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	fs::path dir = fx.runtime_dir();
	fs::path out = dir / "bad";
	std::ofstream(dir / "notes.txt") << "not an image\n";
	SCOPED_TRACE("no compositor");
	expect_error(fx, sweep({"--pattern", "-o", out.string()}), 1, "cannot connect to the Wayland display",
		{{"WAYLAND_DISPLAY", "pixelport-nobody-here"}});
	SCOPED_TRACE("unreadable file");
	expect_error(fx, sweep({"--image", (dir / "missing.jpg").string(), "-o", out.string()}), 2, "cannot open");
	SCOPED_TRACE("not an image");
	expect_error(
		fx, sweep({"--image", (dir / "notes.txt").string(), "-o", out.string()}), 2, "not a JPEG, PNG or WebP");
	SCOPED_TRACE("sizes that do not fit");
	expect_error(fx, sweep({"--pattern", "--sizes", "40000x40000", "-o", out.string()}), 2, "does not fit");
	expect_error(fx, sweep({"--pattern", "--sizes", "30000x30000", "-o", out.string()}), 2,
		"wl_shm pools hold at most 2 GiB");
	expect_error(fx, sweep({"--pattern", "--sizes", "lots", "-o", out.string()}), 2, "bad size");
	expect_error(fx, sweep({"--pattern", "--formats", "NV12", "--sizes", "33x33", "-o", out.string()}), 2,
		"chroma grid");
	SCOPED_TRACE("output folder that cannot be written");
	expect_error(fx, sweep({"--pattern", "-o", (dir / "notes.txt" / "sub").string()}), 2,
		"cannot write to output folder");
}

TEST(Sweep, NothingMeasurableIsAnError) {
	// Stock wlroots wl_shm has no NV12 and no stream: not one point can run.
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--no-plugin"}));
	expect_error(fx,
		sweep({"--pattern", "--formats", "NV12", "--sizes", "16K", "--no-plot", "-o",
			(fs::path(fx.runtime_dir()) / "none").string()}),
		1, "nothing could be measured", {}, false);
}
