// Per-commit timing through the real pipeline: JSON Lines and trace logs from the compositor,
// the summary at exit and on SIGUSR1, and the pp_surface_timing_v1 events a client receives.
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "harness.hpp"

using namespace pixelport::test;
using nlohmann::json;

namespace {

std::vector<json> read_jsonl(const std::string &path) {
	std::vector<json> out;
	std::ifstream in(path);
	std::string line;
	while (std::getline(in, line)) out.push_back(json::parse(line)); // throws on a bad line
	return out;
}

uint64_t ns(const json &j, const char *key) { return j.at(key).is_null() ? 0 : j.at(key).get<uint64_t>(); }

TEST(TimingLog, RecordsEveryCommitWithOrderedTimestamps) {
	CompositorFixture fx;
	std::string log = fx.runtime_dir() + "/timing.jsonl", trace = fx.runtime_dir() + "/timing.json";
	ASSERT_TRUE(fx.start({"--timing-log", log, "--timing-trace", trace}));
	std::string out, err;
	// shm native, shm converted, stream converted: three frames each.
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_PAINT"), "--hold-ms", "0", "--format", "XRGB8888", "--frame",
					"seed=1", "--frame", "seed=2,buffer=1", "--frame", "seed=3"},
			  10000, &out, &err),
		0)
		<< err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_PAINT"), "--hold-ms", "0", "--format", "RGB888", "--frame",
					"seed=1", "--frame", "seed=2,buffer=1", "--frame", "seed=3"},
			  10000, &out, &err),
		0)
		<< err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_PAINT"), "--hold-ms", "0", "--transport", "socket", "--format",
					"NV12", "--frame", "seed=1", "--frame", "seed=2", "--frame", "seed=3"},
			  10000, &out, &err),
		0)
		<< err;
	ASSERT_EQ(fx.stop(), 0);
	// The summary goes to stderr at exit.
	EXPECT_NE(fx.compositor().err().find("output HEADLESS-1"), std::string::npos) << fx.compositor().err();

	std::vector<json> records = read_jsonl(log);
	ASSERT_FALSE(records.empty());
	EXPECT_EQ(records.front().at("type"), "header");
	std::map<std::string, int> by_key;
	std::map<std::string, std::set<int>> pids; // by format: one client each
	std::set<uint64_t> surfaces;
	int frames = 0;
	for (const json &r : records) {
		if (r.at("type") == "frame") {
			frames++;
			continue;
		}
		if (r.at("type") != "commit") continue;
		std::string key = r.at("transport").get<std::string>() + "/" + r.at("format").get<std::string>();
		by_key[key]++;
		// Labels (pushed apart from the records, joined by the writer): each client's own.
		EXPECT_EQ(r.at("app_id"), "pixelport") << r;
		EXPECT_EQ(r.at("title"), "pixelport-paint") << r;
		pids[key.substr(key.find('/') + 1)].insert(r.at("pid").get<int>());
		surfaces.insert(r.at("surface").get<uint64_t>());
		EXPECT_EQ(r.at("width"), 128);
		EXPECT_EQ(r.at("height"), 96);
		uint64_t commit = ns(r, "t_commit"), up0 = ns(r, "t_upload_start"), up1 = ns(r, "t_upload_end");
		uint64_t present = ns(r, "t_present");
		ASSERT_GT(commit, 0u);
		EXPECT_LE(commit, up0) << r;
		EXPECT_LE(up0, up1) << r;
		if (!r.at("discarded").get<bool>()) {
			EXPECT_LE(up1, present) << r;
			EXPECT_EQ(r.at("output"), "HEADLESS-1");
		}
		if (r.at("format") != "XRGB8888") {
			EXPECT_LE(ns(r, "t_convert_start"), ns(r, "t_convert_end")) << r;
			EXPECT_GT(ns(r, "t_convert_start"), 0u) << r;
		} else {
			EXPECT_EQ(ns(r, "t_convert_start"), 0u) << r; // used in place: nothing converted
		}
		if (r.at("transport") == "stream") {
			EXPECT_GT(ns(r, "t_data_complete"), 0u) << r;
			EXPECT_EQ(r.at("bytes"), 128 * 96 + 64 * 48 * 2); // NV12 packed
		}
	}
	// The first frame of each reused-pool client maps a new pool; later ones reuse it.
	EXPECT_EQ(by_key["shm-new/XRGB8888"] + by_key["shm/XRGB8888"], 3);
	EXPECT_EQ(by_key["shm-new/RGB888"] + by_key["shm/RGB888"], 3);
	EXPECT_EQ(by_key["stream/NV12"], 3);
	EXPECT_GT(frames, 0);
	EXPECT_EQ(surfaces.size(), 3u);
	std::set<int> all;
	for (const auto &[format, set] : pids) {
		ASSERT_EQ(set.size(), 1u) << format;
		EXPECT_GT(*set.begin(), 0) << format;
		all.insert(*set.begin());
	}
	EXPECT_EQ(all.size(), 3u); // three clients, three pids

	std::ifstream tin(trace);
	json doc = json::parse(tin); // valid after SIGTERM
	ASSERT_TRUE(doc.contains("traceEvents"));
	EXPECT_GT(doc.at("traceEvents").size(), 9u);
}

// Labels reach the log apart from the records (the writer joins them): a title and app_id set
// between frames label the frames after, the earlier ones keep theirs.
TEST(TimingLog, ATitleChangedBetweenFramesLabelsTheFramesAfterIt) {
	CompositorFixture fx;
	std::string log = fx.runtime_dir() + "/timing.jsonl";
	ASSERT_TRUE(fx.start({"--timing-log", log}));
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_TIMING_CLIENT"), "retitle"}, 20000, &out, &err), 0) << err;
	EXPECT_EQ(out, "ok\n");
	ASSERT_EQ(fx.stop(), 0);
	std::vector<std::string> labels;
	for (const json &r : read_jsonl(log)) {
		if (r.at("type") != "commit") continue;
		labels.push_back(r.at("app_id").get<std::string>() + "/" + r.at("title").get<std::string>() + "/" +
			std::to_string(r.at("seq").get<uint64_t>()));
	}
	// Commit 1 is the initial (buffer-less) commit, not recorded.
	EXPECT_EQ(labels, (std::vector<std::string>{"one/first/2", "one/first/3", "two/second/4", "two/second/5"}));
}

TEST(TimingLog, SigusrOnePrintsTheSummaryWhileRunning) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--timing-log", fx.runtime_dir() + "/t.jsonl"}));
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_PAINT"), "--hold-ms", "0"}, 10000, &out, &err), 0) << err;
	kill(fx.compositor().pid(), SIGUSR1);
	EXPECT_TRUE(fx.compositor().wait_for_err("pixelport timing", 10000)) << fx.compositor().err();
	EXPECT_TRUE(fx.compositor().running());
	EXPECT_EQ(fx.stop(), 0);
}

TEST(TimingProtocol, ASubscriberGetsExactlyItsSurfacesEvents) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_TIMING_CLIENT"), "subscribe"}, 20000, &out, &err), 0) << err;
	// Three commits of the subscribed surface, none of the other one, in commit order.
	EXPECT_EQ(out, "info 3 done 3 presented 3 ordered 1\nok\n");
}

// Version 2: one report per commit with its sizes, all seven phases and frame pacing's two values
// (15 x 8 bytes: version 4's array, which a version 2 client accepts), nothing of version 1.
TEST(TimingProtocol, AVersionTwoSubscriberGetsOneReportPerCommit) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_TIMING_CLIENT"), "subscribe-v2"}, 20000, &out, &err), 0) << err;
	EXPECT_EQ(out, "report 3 presented 3 ordered 1 checked 3 values 120 output HEADLESS-1 v1 0\nok\n");
}

// Commits faster than the output: every one reported once, in commit order; the replaced ones
// as discarded, the last as presented.
TEST(TimingProtocol, AVersionTwoBurstIsReportedOnceEachInOrder) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_TIMING_CLIENT"), "subscribe-v2-burst"}, 20000, &out, &err), 0)
		<< err;
	EXPECT_EQ(out, "reports 20 ordered 1 last presented 1 some discarded 1\nok\n");
}

// Version 3 next to version 2 on one surface: 41 commits, each v3 record equal to the v2
// report of the same commit (flags, output, all 15 values), in order, several per event and at
// most 28 (the 4096-byte message limit at version 4's stride, 18); a flush after the burst brings all 40 finished ones,
// the last commit's record comes without one (batch timer); no v1/v2 events on the v3 object.
TEST(TimingProtocol, AVersionThreeSubscriberGetsTheSameRecordsBatched) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_TIMING_CLIENT"), "subscribe-v3"}, 20000, &out, &err), 0) << err;
	EXPECT_EQ(out,
		"flushed 40 records 41 batched 1 max<=28 1 stride 18 ordered 1 equal 41 presented>=2 1 outputs 1 "
		"other 0\nok\n");
}

// Object ids live in each client's own namespace: a subscription can only name a surface the
// client created. Naming any other id makes libwayland-server post wl_display.error
// invalid_method ("invalid arguments for pp_timing_manager_v1.subscribe"), which the client
// library reports as EINVAL. The plugin also checks the surface's client explicitly
// (foreign_surface), unreachable through libwayland but kept as the protocol's stated rule.
TEST(TimingProtocol, ASubscriptionToASurfaceTheClientDoesNotOwnIsAProtocolError) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	// Another client's surface exists on the server meanwhile.
	Process other;
	ASSERT_TRUE(other.start({build_path("PIXELPORT_PAINT")}, fx.client_env()));
	std::string line;
	ASSERT_TRUE(other.read_line(&line, 10000));
	std::string out, err;
	ASSERT_EQ(fx.run_client({build_path("PIXELPORT_TIMING_CLIENT"), "foreign-subscribe"}, 10000, &out, &err), 0)
		<< err;
	EXPECT_EQ(out, "disconnected Invalid argument\n");
	EXPECT_TRUE(fx.compositor().running());
	other.terminate();
}

} // namespace
