#include <gtest/gtest.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <thread>

#include "../integration/latency.hpp"
#include "../integration/wait_until.hpp"
#include "helpers.hpp"
#include "pixelport/timing/jsonl.hpp"
#include "pixelport/timing/log_writer.hpp"
#include "pixelport/timing/summary.hpp"

namespace pixelport::timing {
namespace {

using nlohmann::json;

class LogWriterTest : public test::TempDirTest {
protected:
	LogWriter::Options options(std::size_t capacity = 1024) {
		LogWriter::Options o;
		o.jsonl_path = path("log.jsonl");
		o.trace_path = path("trace.json");
		o.capacity = capacity;
		return o;
	}
	std::vector<json> jsonl() {
		std::vector<json> out;
		for (const std::string &line : test::read_lines(path("log.jsonl"))) {
			out.push_back(json::parse(line)); // throws, failing the test, on a bad line
		}
		return out;
	}
	json trace() { return json::parse(test::read_file(path("trace.json"))); }

	// Events of the trace with the given phase ("X", "i", "M").
	static std::vector<json> events(const json &trace, const std::string &ph) {
		std::vector<json> out;
		for (const json &e : trace.at("traceEvents")) {
			if (e.at("ph") == ph) out.push_back(e);
		}
		return out;
	}
};

TEST_F(LogWriterTest, RecordsWrittenParseLineByLineAndCarryThePushedValues) {
	LogWriter w(options());
	const CommitRecord c = test::sample_commit(1, 1'000'000);
	const FrameRecord f = test::sample_frame(9, 2'000'000);
	ASSERT_TRUE(w.push(c));
	ASSERT_TRUE(w.push(f));
	w.close();
	EXPECT_EQ(w.written(), 2u);
	EXPECT_EQ(w.dropped(), 0u);

	const std::vector<json> lines = jsonl();
	ASSERT_EQ(lines.size(), 3u);
	EXPECT_EQ(lines[0],
		json::parse(R"({"v":1,"type":"header","clock":"CLOCK_MONOTONIC","unit":"ns",
      "pid":)" + std::to_string(::getpid()) +
			R"(,"start_ns":)" + lines[0]["start_ns"].dump() + "}"));
	const json expected_commit = {{"v", 1}, {"type", "commit"}, {"surface", 12}, {"pid", 4242}, {"app_id", "foot"},
		{"title", "~ — shell"}, {"seq", 1}, {"transport", "shm"}, {"format", "XRGB8888"}, {"width", 800},
		{"height", 600}, {"bytes", 1'920'000}, {"damage_bytes", 4096}, {"t_commit", 1'000'000},
		{"t_data_complete", nullptr}, {"t_convert_start", 1'000'100}, {"t_convert_end", 1'001'100},
		{"t_upload_start", 1'002'000}, {"t_upload_end", 1'052'000}, {"t_present", 9'000'000},
		{"t_target", nullptr}, {"barrier_wait_ns", 0}, {"fifo", nullptr}, {"output", "HEADLESS-1"},
		{"discarded", false}};
	EXPECT_EQ(lines[1], expected_commit);
	const json expected_frame = {{"v", 1}, {"type", "frame"}, {"output", "HEADLESS-1"}, {"seq", 9},
		{"t_render_start", 2'000'000}, {"t_render_end", 2'300'000}, {"t_present", 6'000'000},
		{"refresh_ns", 16'666'666}, {"missed", false}};
	EXPECT_EQ(lines[2], expected_frame);
}

// The compositor pushes samples (no labels) and a surface's labels when they change: the lines
// are those of whole records, with the labels last pushed for the surface.
TEST_F(LogWriterTest, SamplesAreWrittenWithTheirSurfacesLabelsAsWholeRecordsAre) {
	LogWriter w(options());
	const CommitRecord whole = test::sample_commit(1, 1'000'000);
	CommitSample sample = whole;
	SurfaceLabels labels;
	labels.surface_id = whole.surface_id;
	labels.pid = whole.pid;
	labels.app_id = whole.app_id;
	labels.title = whole.title;
	ASSERT_TRUE(w.push(labels));
	ASSERT_TRUE(w.push(sample));
	CommitSample other = sample; // a surface with no labels pushed
	other.surface_id = 13;
	ASSERT_TRUE(w.push(other));
	labels.title = "vim";
	ASSERT_TRUE(w.push(labels));
	sample.seq = 2;
	ASSERT_TRUE(w.push(sample));
	ASSERT_TRUE(w.push(SurfaceLabels{.surface_id = whole.surface_id, .gone = true}));
	sample.seq = 3;
	ASSERT_TRUE(w.push(sample));
	w.close();
	EXPECT_EQ(w.written(), 4u); // labels are not records
	EXPECT_EQ(w.dropped(), 0u);

	const std::vector<json> lines = jsonl();
	ASSERT_EQ(lines.size(), 5u);
	EXPECT_EQ(lines[1], json::parse(commit_line(whole)));
	CommitRecord unlabelled;
	static_cast<CommitSample &>(unlabelled) = other;
	EXPECT_EQ(lines[2], json::parse(commit_line(unlabelled)));
	EXPECT_EQ(lines[2]["pid"], 0);
	EXPECT_EQ(lines[2]["app_id"], "");
	CommitRecord renamed = whole;
	renamed.seq = 2;
	renamed.title = "vim";
	EXPECT_EQ(lines[3], json::parse(commit_line(renamed)));
	EXPECT_EQ(lines[4]["seq"], 3);
	EXPECT_EQ(lines[4]["app_id"], ""); // forgotten with the surface
	EXPECT_EQ(lines[4]["title"], "");
}

TEST_F(LogWriterTest, LabelsThatDoNotFitAreRefusedWithoutCountingADrop) {
	LogWriter w(options(2));
	w.pause_writer_for_test(true);
	const CommitSample sample = test::sample_commit(1, 1'000'000);
	ASSERT_TRUE(w.push(sample));
	ASSERT_TRUE(w.push(sample));
	EXPECT_FALSE(w.push(SurfaceLabels{.surface_id = 12, .pid = 1}));
	EXPECT_EQ(w.dropped(), 0u);
	EXPECT_FALSE(w.push(sample));
	EXPECT_EQ(w.dropped(), 1u);
	w.close();
	EXPECT_EQ(w.written(), 2u);
}

TEST_F(LogWriterTest, RecordsKeepPushOrderAndTheirTimestampsStayMonotonic) {
	LogWriter w(options(64));
	std::uint64_t t = 1'000'000;
	std::size_t accepted = 0;
	for (std::uint64_t seq = 0; seq < 2000; ++seq) {
		t += 1000;
		// A small queue with a running writer: retry instead of dropping, to test ordering.
		while (!(seq % 3 ? w.push(test::sample_commit(seq, t)) : w.push(test::sample_frame(seq, t)))) {
			std::this_thread::yield();
		}
		++accepted;
	}
	w.close();
	std::vector<json> lines;
	for (json &j : jsonl()) {
		if (j["type"] == "commit" || j["type"] == "frame") lines.push_back(std::move(j));
	}
	ASSERT_EQ(lines.size(), accepted);
	std::uint64_t prev_seq = 0, prev_t = 0;
	bool first = true;
	for (std::size_t i = 0; i < lines.size(); ++i) {
		const std::uint64_t seq = lines[i]["seq"];
		const std::uint64_t ts =
			lines[i]["type"] == "commit" ? lines[i]["t_commit"] : lines[i]["t_render_start"];
		if (!first) {
			EXPECT_EQ(seq, prev_seq + 1);
			EXPECT_GT(ts, prev_t);
		}
		first = false;
		prev_seq = seq;
		prev_t = ts;
	}
}

TEST_F(LogWriterTest, TraceAfterCloseIsJsonWithOneNamedTrackPerSurfaceAndOutput) {
	LogWriter w(options());
	CommitRecord stream = test::sample_commit(2, 3'000'000);
	stream.surface_id = 13;
	stream.app_id = "mpv";
	stream.transport = Transport::Stream;
	stream.t_data_complete = stream.t_commit + 5000;
	w.push(test::sample_commit(1, 1'000'000));
	w.push(stream);
	w.push(test::sample_frame(1, 2'000'000));
	w.close();

	const json t = trace();
	EXPECT_EQ(t.at("displayTimeUnit"), "ns");
	std::map<int, std::string> names;
	for (const json &m : events(t, "M")) {
		if (m["name"] == "thread_name") names[m["tid"]] = m["args"]["name"];
	}
	std::set<std::string> tracks;
	for (const auto &[tid, name] : names) tracks.insert(name);
	EXPECT_EQ(tracks, (std::set<std::string>{"surface 12 (foot)", "surface 13 (mpv)", "output HEADLESS-1"}));

	std::multiset<std::string> spans;
	for (const json &x : events(t, "X")) {
		spans.insert(names.at(x["tid"]) + ":" + x["name"].get<std::string>());
		EXPECT_GE(x["dur"].get<double>(), 0.0);
	}
	EXPECT_EQ(spans,
		(std::multiset<std::string>{"surface 12 (foot):convert", "surface 12 (foot):upload",
			"surface 13 (mpv):transfer", "surface 13 (mpv):convert", "surface 13 (mpv):upload",
			"output HEADLESS-1:render"}));
	std::multiset<std::string> instants;
	for (const json &i : events(t, "i")) instants.insert(names.at(i["tid"]) + ":" + i["name"].get<std::string>());
	EXPECT_EQ(instants.count("surface 12 (foot):commit"), 1u);
	EXPECT_EQ(instants.count("surface 12 (foot):present"), 1u);
	EXPECT_EQ(instants.count("output HEADLESS-1:present"), 1u);
}

TEST_F(LogWriterTest, TraceTimesAreMicrosecondsKeepingNanosecondsAsFraction) {
	LogWriter w(options());
	w.push(test::sample_commit(1, 1'000'001, 1234));
	w.close();
	for (const json &x : events(trace(), "X")) {
		if (x["name"] == "convert") {
			EXPECT_DOUBLE_EQ(x["ts"].get<double>(), 1000.101);
			EXPECT_DOUBLE_EQ(x["dur"].get<double>(), 1.234);
		}
	}
}

TEST_F(LogWriterTest, FilesAreCompleteWhenCloseRunsWhileRecordsAreStillQueued) {
	LogWriter w(options(256));
	w.pause_writer_for_test(true);
	for (std::uint64_t i = 0; i < 200; ++i) ASSERT_TRUE(w.push(test::sample_commit(i, 1'000'000 + i * 1000)));
	w.close(); // as the host's SIGTERM path does
	EXPECT_EQ(w.written(), 200u);
	EXPECT_EQ(events(trace(), "X").size(), 400u); // convert + upload per commit
	EXPECT_EQ(jsonl().size(), 201u);
}

// The host's way: the signal arrives through a signalfd in its event loop (as
// wl_event_loop_add_signal does), and the handler calls close() while records keep coming.
class LogWriterSignalTest : public LogWriterTest, public ::testing::WithParamInterface<int> {};

TEST_P(LogWriterSignalTest, FilesAreCompleteAfterTheEventLoopClosesOnTheSignal) {
	int report[2];
	ASSERT_EQ(::pipe(report), 0);
	const pid_t child = ::fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, GetParam());
		sigprocmask(SIG_BLOCK, &set, nullptr);
		pollfd pfd{::signalfd(-1, &set, SFD_CLOEXEC), POLLIN, 0};
		LogWriter w(options(64)); // small: some records are still queued when the signal comes
		bool announced = false;
		std::uint64_t seq = 0;
		for (;; ++seq) {
			w.push(test::sample_commit(seq, 1'000'000 + seq * 1000));
			if (!announced && seq == 100) {
				announced = w.flush() && ::write(report[1], "r", 1) == 1;
			}
			if (::poll(&pfd, 1, 0) == 1) break; // the event loop's signal source fired
			if (seq % 16 == 0) ::usleep(100); // the producer's pace
		}
		w.close();
		const std::string counts = std::to_string(seq + 1) + " " + std::to_string(w.written()) + " " +
			std::to_string(w.dropped()) + "\n";
		const bool ok = ::write(report[1], counts.data(), counts.size()) == static_cast<ssize_t>(counts.size());
		::_exit(ok ? 0 : 1);
	}
	::close(report[1]);
	char ready = 0;
	ASSERT_EQ(::read(report[0], &ready, 1), 1);
	::kill(child, GetParam());
	int status = 0;
	ASSERT_EQ(::waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
	char buf[64] = {};
	ASSERT_GT(::read(report[0], buf, sizeof buf - 1), 0);
	::close(report[0]);
	unsigned long long pushed = 0, written = 0, dropped = 0;
	ASSERT_EQ(std::sscanf(buf, "%llu %llu %llu", &pushed, &written, &dropped), 3);

	std::uint64_t commits = 0, drops = 0;
	for (const json &line : jsonl()) { // every line parses
		commits += line["type"] == "commit";
		if (line["type"] == "drops") drops += line["count"].get<std::uint64_t>();
	}
	EXPECT_GT(written, 0u);
	EXPECT_EQ(written + dropped, pushed);
	EXPECT_EQ(commits, written);
	EXPECT_EQ(drops, dropped);
	const json t = trace(); // parses: the document is closed
	EXPECT_GE(events(t, "X").size(), 2 * written);
}

INSTANTIATE_TEST_SUITE_P(Signals, LogWriterSignalTest, ::testing::Values(SIGTERM, SIGINT),
	[](const ::testing::TestParamInfo<int> &info) {
		return std::string(info.param == SIGTERM ? "SIGTERM" : "SIGINT");
	});

TEST_F(LogWriterTest, FlushTimesOutWhileTheWriterIsHeldBack) {
	LogWriter w(options());
	w.pause_writer_for_test(true);
	w.push(test::sample_frame(1, 1000));
	EXPECT_FALSE(w.flush(std::chrono::milliseconds(30)));
	w.pause_writer_for_test(false);
	EXPECT_TRUE(w.flush());
	EXPECT_EQ(w.written(), 1u);
}

TEST_F(LogWriterTest, ConstructorThrowsWhenTheHeaderCannotBeWritten) {
	LogWriter::Options o = options();
	o.jsonl_path = "/dev/full";
	o.trace_path.clear();
	EXPECT_THROW(LogWriter{o}, std::system_error);
}

TEST_F(LogWriterTest, TraceIsValidJsonBetweenBatchesBeforeClose) {
	LogWriter w(options());
	EXPECT_NO_THROW(trace()); // empty document right after construction
	w.push(test::sample_commit(1, 1'000'000));
	ASSERT_TRUE(w.flush());
	EXPECT_EQ(events(trace(), "X").size(), 2u); // a killed process leaves a file like this
	w.push(test::sample_commit(2, 2'000'000));
	ASSERT_TRUE(w.flush());
	EXPECT_EQ(events(trace(), "X").size(), 4u);
}

// This process's threads (/proc/self/task), by tid.
std::set<std::string> threads() {
	std::set<std::string> out;
	for (const auto &task : std::filesystem::directory_iterator("/proc/self/task"))
		out.insert(task.path().filename());
	return out;
}

// Voluntary context switches (sleeps) of thread `tid` of this process: its wake-ups.
std::uint64_t sleeps(const std::string &tid) {
	for (const std::string &line : test::read_lines("/proc/self/task/" + tid + "/status")) {
		if (line.starts_with("voluntary_ctxt_switches:")) return std::stoull(line.substr(line.find(':') + 1));
	}
	ADD_FAILURE() << "no voluntary_ctxt_switches for thread " << tid;
	return 0;
}

// An idle desktop's log must not wake a CPU every poll_interval: once polls find nothing
// (kIdleAfterEmptyPolls of them, 100 ms) the writer sleeps until a push() wakes it; at 10 ms
// it would wake ~100 times in the second measured here. The first record after the quiet
// spell is written at once, as by an awake writer, not after the idle_interval safety bound
// (10 s here). The bounds leave room for a SCHED_IDLE writer on a loaded machine.
TEST_F(LogWriterTest, AnIdleWriterSleepsUntilTheNextPushWakesIt) {
	LogWriter::Options o = options();
	o.idle_interval = std::chrono::seconds(10);
	const std::set<std::string> before_writer = threads();
	LogWriter w(o);
	std::vector<std::string> started; // the writer thread (a sanitizer may run threads of its own)
	std::ranges::set_difference(threads(), before_writer, std::back_inserter(started));
	ASSERT_EQ(started.size(), 1u);
	const std::string &writer = started[0];
	// The baseline: a record pushed while the writer is awake (it polls every poll_interval),
	// push to line in the file.
	const auto first = std::chrono::steady_clock::now();
	w.push(test::sample_commit(1, 1'000'000));
	pixelport::test::wait_until([&] { return test::read_lines(path("log.jsonl")).size() == 2; },
		std::chrono::seconds(12), std::chrono::milliseconds(1));
	const auto awake = std::chrono::steady_clock::now() - first;
	ASSERT_TRUE(w.flush());
	// Past the empty polls: until the writer stops waking (at most 5 s; a writer that polls
	// on never does, and fails below).
	pixelport::test::wait_until_steady(
		[&] { return sleeps(writer); }, 1, std::chrono::milliseconds(200), std::chrono::seconds(5));
	const std::uint64_t before = sleeps(writer);
	std::this_thread::sleep_for(std::chrono::milliseconds(1000)); // the idle second measured
	const std::uint64_t idle_wakes = sleeps(writer) - before;
	EXPECT_LE(idle_wakes, 1u) << "writer wake-ups in an idle second";

	w.push(test::sample_commit(2, 2'000'000));
	const auto pushed = std::chrono::steady_clock::now();
	std::size_t lines = 0;
	pixelport::test::wait_until([&] { return (lines = test::read_lines(path("log.jsonl")).size()) == 3; },
		std::chrono::seconds(12), std::chrono::milliseconds(5));
	const auto waited = std::chrono::steady_clock::now() - pushed;
	EXPECT_EQ(lines, 3u); // header and both commits
	// Written at once, as by an awake writer: the floor is 3 s, what a SCHED_IDLE writer may
	// wait on a loaded machine, well under the 10 s a writer sleeping out its idle interval takes.
	const auto us = [](auto d) {
		return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
	};
	pixelport::test::expect_latency("a record pushed after a quiet spell, push to line", us(waited),
		{us(awake), "a record pushed while the writer was awake, this test"}, 0,
		pixelport::test::LatencyRule{3'000'000});
}

// The writer writes a batch in chunks of a few KiB (so its text stays in cache); a batch of
// 2,000 lines (about 1 MB) must come out whole, each line once and in order.
TEST_F(LogWriterTest, ABatchLongerThanOneWriteChunkIsWrittenWholeInOrder) {
	LogWriter w(options(2048));
	w.pause_writer_for_test(true);
	std::string expected;
	for (std::uint64_t i = 0; i < 2000; ++i) {
		const CommitRecord r = test::sample_commit(i, 1'000'000 + i * 1000);
		ASSERT_TRUE(w.push(r));
		expected += commit_line(r);
	}
	ASSERT_GT(expected.size(), 32u * 16 * 1024); // many chunks
	w.pause_writer_for_test(false);
	ASSERT_TRUE(w.flush());
	EXPECT_EQ(w.written(), 2000u);
	EXPECT_EQ(w.io_errors(), 0u);
	const std::string file = test::read_file(path("log.jsonl"));
	const std::size_t header_end = file.find('\n') + 1;
	EXPECT_EQ(file.substr(header_end), expected); // byte for byte, nothing after
}

TEST_F(LogWriterTest, FullQueueDropsAndCountsRecordsAndLogsADropsRecord) {
	LogWriter w(options(4));
	w.pause_writer_for_test(true);
	std::size_t accepted = 0;
	for (std::uint64_t i = 0; i < 1000; ++i) accepted += w.push(test::sample_commit(i, 1'000'000 + i));
	EXPECT_EQ(accepted, 4u);
	EXPECT_EQ(w.dropped(), 996u);
	w.pause_writer_for_test(false);
	ASSERT_TRUE(w.flush());
	EXPECT_EQ(w.written(), 4u);

	const std::vector<json> lines = jsonl();
	ASSERT_EQ(lines.size(), 6u); // header, 4 commits, drops
	EXPECT_EQ(lines[5]["type"], "drops");
	EXPECT_EQ(lines[5]["count"], 996);
	EXPECT_EQ(lines[5]["since_ns"], lines[0]["start_ns"]);
	std::size_t drop_events = 0;
	for (const json &i : events(trace(), "i")) drop_events += i["name"] == "dropped 996 records";
	EXPECT_EQ(drop_events, 1u);

	// Later drops are reported as a new record counting only themselves.
	w.pause_writer_for_test(true);
	for (int i = 0; i < 10; ++i) w.push(test::sample_frame(1, 1));
	w.close();
	const std::vector<json> after = jsonl();
	EXPECT_EQ(after.back()["type"], "drops");
	EXPECT_EQ(after.back()["count"], 6);
	EXPECT_EQ(w.dropped(), 1002u);
}

TEST_F(LogWriterTest, CloseIsIdempotentAndPushAfterCloseIsDroppedAndCounted) {
	LogWriter w(options());
	w.push(test::sample_frame(1, 1000));
	w.close();
	w.close();
	EXPECT_FALSE(w.push(test::sample_frame(2, 2000)));
	EXPECT_EQ(w.dropped(), 1u);
	EXPECT_TRUE(w.flush());
	EXPECT_EQ(jsonl().size(), 2u);
}

TEST_F(LogWriterTest, EitherPathMayBeEmpty) {
	LogWriter::Options o = options();
	o.trace_path.clear();
	{
		LogWriter w(o);
		w.push(test::sample_frame(1, 1000));
	} // destructor closes
	EXPECT_EQ(jsonl().size(), 2u);
	EXPECT_FALSE(std::filesystem::exists(path("trace.json")));
	o.jsonl_path.clear();
	LogWriter none(o);
	EXPECT_TRUE(none.push(test::sample_frame(1, 1000)));
	EXPECT_TRUE(none.flush());
	EXPECT_EQ(none.written(), 1u);
}

TEST_F(LogWriterTest, ConstructorThrowsWhenAFileCannotBeCreated) {
	LogWriter::Options o = options();
	o.trace_path = path("no-such-dir/trace.json");
	EXPECT_THROW(LogWriter{o}, std::system_error);
	o.trace_path.clear();
	o.capacity = 0;
	EXPECT_THROW(LogWriter{o}, std::invalid_argument);
}

TEST_F(LogWriterTest, WriterThreadFeedsTheSummary) {
	Summary summary;
	LogWriter::Options o = options();
	o.summary = &summary;
	LogWriter w(o);
	for (std::uint64_t i = 1; i <= 10; ++i) w.push(test::sample_commit(i, i * 1'000'000, i * 1000));
	w.close();
	std::size_t convert_rows = 0;
	for (const Summary::Row &r : summary.rows()) {
		if (r.phase == Phase::Convert) {
			++convert_rows;
			EXPECT_EQ(r.target, "surface 12 (foot)");
			EXPECT_EQ(r.stats.count, 10u);
			EXPECT_EQ(r.stats.p50, 5000u);
		}
	}
	EXPECT_EQ(convert_rows, 1u);
}

// A gone surface's state goes from the writer: its labels (a later sample of the same id is
// written without them), its summary rows (merged once more than the last few went) and its
// trace track (a later sample gets a new one; tids are never reused).
TEST_F(LogWriterTest, AGoneSurfaceIsForgottenByLabelsSummaryAndTrace) {
	Summary summary;
	LogWriter::Options o = options();
	o.summary = &summary;
	LogWriter w(o);
	constexpr std::uint64_t kSurfaces = 50;
	for (std::uint64_t id = 1; id <= kSurfaces; ++id) {
		SurfaceLabels labels{.surface_id = id, .pid = 7};
		labels.app_id = "app";
		ASSERT_TRUE(w.push(labels));
		CommitRecord c = test::sample_commit(id, id * 1'000'000);
		c.surface_id = id;
		ASSERT_TRUE(w.push(static_cast<const CommitSample &>(c)));
		ASSERT_TRUE(w.push(SurfaceLabels{.surface_id = id, .gone = true}));
	}
	CommitRecord again = test::sample_commit(99, 99'000'000);
	again.surface_id = 1; // the id once more, after its gone
	ASSERT_TRUE(w.push(static_cast<const CommitSample &>(again)));
	w.close();

	const std::vector<json> lines = jsonl();
	ASSERT_EQ(lines.back().at("seq"), 99);
	EXPECT_EQ(lines.back().at("app_id"), "") << "labels forgotten";
	EXPECT_EQ(lines.front().at("type"), "header");
	EXPECT_EQ(lines[1].at("app_id"), "app");

	std::set<std::string> targets;
	for (const Summary::Row &r : summary.rows()) targets.insert(r.target);
	const std::string merged = "surfaces ended earlier (" + std::to_string(kSurfaces - Summary::kEndedKept) + ")";
	EXPECT_EQ(targets.count(merged), 1u);
	EXPECT_EQ(targets.size(), Summary::kEndedKept + 2) << "the last 8, the merged ones, surface 1 again";

	std::map<int, int> names_per_tid;
	std::multiset<std::string> surface_tracks;
	for (const json &m : events(trace(), "M")) {
		if (m["name"] != "thread_name" || m["tid"].get<int>() < 1000) continue;
		names_per_tid[m["tid"]]++;
		surface_tracks.insert(m["args"]["name"].get<std::string>());
	}
	EXPECT_EQ(names_per_tid.size(), kSurfaces + 1) << "a new track for surface 1 after it went";
	for (const auto &[tid, n] : names_per_tid) EXPECT_EQ(n, 1) << "tid " << tid << " named twice";
	EXPECT_EQ(surface_tracks.count("surface 1 (app)"), 1u);
	EXPECT_EQ(surface_tracks.count("surface 1"), 1u);
}

// A batch whose trace text is many times the trace's write chunk is written in chunks, and the
// file is one valid document with every event.
TEST_F(LogWriterTest, ATraceBatchLargerThanItsChunkIsWrittenWhole) {
	LogWriter::Options o = options(8192);
	o.jsonl_path.clear();
	LogWriter w(o);
	w.pause_writer_for_test(true);
	constexpr std::uint64_t kRecords = 2000; // about 1 KiB of trace each
	for (std::uint64_t i = 1; i <= kRecords; ++i) ASSERT_TRUE(w.push(test::sample_commit(i, i * 1'000'000)));
	w.pause_writer_for_test(false);
	ASSERT_TRUE(w.flush());
	EXPECT_GT(std::filesystem::file_size(path("trace.json")), 8 * 64 * 1024u);
	std::size_t commits = 0;
	for (const json &i : events(trace(), "i")) commits += i["name"] == "commit";
	EXPECT_EQ(commits, kRecords);
	w.close();
}

// Not a pass/fail timing assertion: prints what push() costs on this machine.
TEST_F(LogWriterTest, PushCostIsMeasuredAndPrinted) {
	constexpr std::size_t kRecords = 16384;
	constexpr int kRounds = 8;
	LogWriter::Options o; // no files: measures the queue, not the disk
	o.capacity = kRecords;
	LogWriter w(o);
	// What the compositor pushes (a sample) and what other producers may (a whole record).
	auto measure = [&](const auto &record, const char *what) {
		double best = 1e18, total = 0;
		for (int round = 0; round <= kRounds; ++round) {
			w.pause_writer_for_test(true); // the producer alone, as between two writer wake-ups
			const auto start = std::chrono::steady_clock::now();
			for (std::size_t i = 0; i < kRecords; ++i) w.push(record);
			const double ns =
				std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
					.count();
			w.pause_writer_for_test(false);
			ASSERT_TRUE(w.flush(std::chrono::seconds(10)));
			if (round == 0) continue; // first round pays the page faults of the fresh ring
			best = std::min(best, ns / kRecords);
			total += ns / kRecords;
		}
		std::printf("push(%s, %zu bytes): best %.1f ns, mean %.1f ns per record (%d rounds of %zu)\n", what,
			sizeof(record), best, total / kRounds, kRounds, kRecords);
	};
	const CommitRecord c = test::sample_commit(1, 1'000'000);
	measure(c, "CommitRecord");
	measure(static_cast<const CommitSample &>(c), "CommitSample");
	EXPECT_EQ(w.dropped(), 0u);
	EXPECT_EQ(w.written(), 2 * kRecords * (kRounds + 1));
}

// The writer thread's share per record: its JSONL line, and the summary, in batches as run()
// does them (no file: formatting, not the disk). Thread CPU time, so that a busy machine's
// preemptions do not count.
TEST_F(LogWriterTest, WriterCostPerRecordIsMeasuredAndPrinted) {
	constexpr std::size_t kRecords = 4096;
	constexpr int kRounds = 8;
	std::vector<CommitRecord> records;
	for (std::size_t i = 0; i < kRecords; ++i) records.push_back(test::sample_commit(i, 1'000'000 + i * 50'000));
	auto cpu_ns = [] {
		timespec ts{};
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
	};
	Summary summary;
	std::string lines, sample_lines;
	CommitLines surface_lines(12, 4242, "foot", "~ — shell");
	double best_line = 1e18, best_sample = 1e18, best_summary = 1e18;
	for (int round = 0; round <= kRounds; ++round) {
		const double t0 = cpu_ns();
		lines.clear();
		for (const CommitRecord &r : records) append_commit_line(lines, r);
		const double t1 = cpu_ns();
		sample_lines.clear();
		for (const CommitRecord &r : records) surface_lines.append(sample_lines, r);
		const double t2 = cpu_ns();
		for (const CommitRecord &r : records) summary.add(r);
		const double t3 = cpu_ns();
		if (round == 0) continue; // first round grows the buffers
		best_line = std::min(best_line, (t1 - t0) / kRecords);
		best_sample = std::min(best_sample, (t2 - t1) / kRecords);
		best_summary = std::min(best_summary, (t3 - t2) / kRecords);
	}
	std::printf(
		"writer thread per record (CPU time, best of %d rounds of %zu): JSONL line of a CommitRecord %.0f ns, "
		"of a CommitSample by its surface's CommitLines (the compositor's case) %.0f ns; summary %.0f ns\n",
		kRounds, kRecords, best_line, best_sample, best_summary);
	EXPECT_EQ(sample_lines, lines);
	std::size_t expected = 0;
	for (const CommitRecord &r : records) expected += commit_line(r).size();
	EXPECT_EQ(lines.size(), expected);
	EXPECT_EQ(summary.rows().size(), 3u); // one surface with convert, upload, present (no transfer)
}

} // namespace
} // namespace pixelport::timing
