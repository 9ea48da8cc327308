#include <functional>
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "pixelport/timing/jsonl.hpp"
#include "pixelport/timing/phases.hpp"
#include "pixelport/timing/records.hpp"

namespace pixelport::timing {
namespace {

TEST(FormatName, UsesDrmNamesWithoutPrefixForKnownFormats) {
	EXPECT_EQ(format_name(fourcc('X', 'R', '2', '4')), "XRGB8888");
	EXPECT_EQ(format_name(fourcc('N', 'V', '1', '2')), "NV12");
	EXPECT_EQ(format_name(fourcc('R', '8', ' ', ' ')), "R8");
}

TEST(FormatName, DecodesUnknownFourccsToTheirCharactersOrHex) {
	EXPECT_EQ(format_name(fourcc('X', 'R', '4', '8')), "XR48");
	EXPECT_EQ(format_name(0x01020304), "0x01020304");
	EXPECT_EQ(format_name(fourcc('n', 'v', '1', '2')), "nv12"); // not NV12
}

TEST(FormatName, ParsesBackEveryNameItWrites) {
	for (std::uint32_t code : {fourcc('X', 'R', '2', '4'), fourcc('P', '0', '1', '0'), fourcc('X', 'R', '4', '8'),
		     std::uint32_t{0x01020304}, fourcc('R', '8', ' ', ' '), fourcc('n', 'v', '1', '2'),
		     fourcc(' ', ' ', ' ', ' ')}) {
		std::uint32_t back = 0;
		ASSERT_TRUE(parse_format(format_name(code), back)) << format_name(code);
		EXPECT_EQ(back, code);
	}
	std::uint32_t ignored;
	EXPECT_FALSE(parse_format("NOT-A-FORMAT", ignored));
}

TEST(TransportName, RoundTripsEveryTransport) {
	for (Transport t : {Transport::Unknown, Transport::ShmReused, Transport::ShmNewPool, Transport::Stream}) {
		Transport back{};
		ASSERT_TRUE(parse_transport(transport_name(t), back));
		EXPECT_EQ(back, t);
	}
	EXPECT_EQ(transport_name(Transport::ShmNewPool), "shm-new");
	// Logs written before the names were unified spell it "shm-new-pool": still read.
	Transport old{};
	ASSERT_TRUE(parse_transport("shm-new-pool", old));
	EXPECT_EQ(old, Transport::ShmNewPool);
	EXPECT_FALSE(parse_transport("shm-new-", old));
}

TEST(FixedString, TruncatesLongStringsWithoutSplittingAUtf8Character) {
	FixedString<5> s;
	s.assign("abcé"); // 'é' is 2 bytes: "abc" + 2 = 5 bytes, one more than fits
	EXPECT_EQ(s.view(), "abc");
	s.assign("abcd");
	EXPECT_EQ(s.view(), "abcd");
}

TEST(DerivePhases, ComputesEachPhaseFromItsTimestamps) {
	CommitRecord r = test::sample_commit(1, 1'000'000, 1234);
	r.transport = Transport::Stream;
	r.t_data_complete = r.t_commit + 777;
	const PhaseDurations d = derive_phases(r);
	EXPECT_EQ(d[static_cast<std::size_t>(Phase::Transfer)], 777u);
	EXPECT_EQ(d[static_cast<std::size_t>(Phase::Convert)], 1234u);
	EXPECT_EQ(d[static_cast<std::size_t>(Phase::Upload)], 50'000u);
	EXPECT_EQ(d[static_cast<std::size_t>(Phase::Present)], 8'000'000u);
	EXPECT_FALSE(d[static_cast<std::size_t>(Phase::Render)].has_value());
	EXPECT_EQ(derive_phases(test::sample_frame(1, 5000, 300))[static_cast<std::size_t>(Phase::Render)], 300u);
}

TEST(DerivePhases, GivesNoValueRatherThanZeroWhenATimestampIsAbsentOrReversed) {
	CommitRecord r = test::sample_commit(1, 1'000'000);
	r.t_present = 0;
	r.t_upload_end = r.t_upload_start - 1;
	const PhaseDurations d = derive_phases(r);
	EXPECT_FALSE(d[static_cast<std::size_t>(Phase::Transfer)].has_value());
	EXPECT_FALSE(d[static_cast<std::size_t>(Phase::Present)].has_value());
	EXPECT_FALSE(d[static_cast<std::size_t>(Phase::Upload)].has_value());
}

TEST(DisjointPhases, SubtractsAConversionNestedInTheUploadAndNothingElse) {
	// wl_shm: the conversion (2500..3700) inside the upload (2000..52000).
	CommitRecord r = test::sample_commit(1, 1'000'000, 1200);
	r.t_convert_start = r.t_commit + 2500;
	r.t_convert_end = r.t_commit + 3700;
	bool nested = false;
	PhaseDurations d = disjoint_phases(r, &nested);
	EXPECT_TRUE(nested);
	EXPECT_EQ(d[static_cast<std::size_t>(Phase::Convert)], 1200u);
	EXPECT_EQ(d[static_cast<std::size_t>(Phase::Upload)], 50'000u - 1200u);
	EXPECT_EQ(d[static_cast<std::size_t>(Phase::Present)], 8'000'000u);
	// The sample's conversion (100..1300) ends before the upload starts: kept as measured.
	nested = false;
	d = disjoint_phases(test::sample_commit(1, 1'000'000, 1200), &nested);
	EXPECT_FALSE(nested);
	EXPECT_EQ(d[static_cast<std::size_t>(Phase::Upload)], 50'000u);
	EXPECT_EQ(d, derive_phases(test::sample_commit(1, 1'000'000, 1200)));
}

class JsonlRoundTrip : public test::TempDirTest {};

TEST_F(JsonlRoundTrip, ReadLogGivesBackTheRecordsThatTheLineFormattersWrote) {
	CommitRecord c = test::sample_commit(7, 10'000);
	c.t_upload_start = c.t_upload_end = 0; // absent: written as null, read back as 0
	c.output = "";
	c.discarded = true;
	c.t_target = c.t_commit + 16'000'000;
	c.barrier_wait = 7'000'000;
	c.fifo = kFifoSetBarrier;
	const FrameRecord f = test::sample_frame(3, 20'000);
	test::write_file(path("log.jsonl"),
		header_line(99, 5) + commit_line(c) + frame_line(f) + drops_line(4, 6) + drops_line(1, 8));
	const Log log = read_log(path("log.jsonl"));
	EXPECT_EQ(log.pid, 99);
	EXPECT_EQ(log.start_ns, 5u);
	ASSERT_EQ(log.commits.size(), 1u);
	ASSERT_EQ(log.frames.size(), 1u);
	EXPECT_EQ(log.dropped, 5u);
	const CommitRecord &back = log.commits[0];
	EXPECT_EQ(back.app_id, c.app_id);
	EXPECT_EQ(back.title, c.title);
	EXPECT_EQ(back.seq, 7u);
	EXPECT_EQ(back.t_upload_start, 0u);
	EXPECT_EQ(back.t_convert_end, c.t_convert_end);
	EXPECT_TRUE(back.output.empty());
	EXPECT_TRUE(back.discarded);
	EXPECT_EQ(back.t_target, c.t_target);
	EXPECT_EQ(back.barrier_wait, 7'000'000u);
	EXPECT_EQ(back.fifo, kFifoSetBarrier);
	EXPECT_EQ(log.frames[0].t_render_end, f.t_render_end);
	EXPECT_EQ(log.frames[0].refresh_ns, f.refresh_ns);
}

TEST(JsonlLines, WriteInvalidUtf8FromClientsAsReplacementCharacters) {
	CommitRecord c = test::sample_commit(1, 1);
	c.title = std::string_view("bad \xff byte");
	const std::string line = commit_line(c);
	EXPECT_NE(line.find("bad \xef\xbf\xbd byte"), std::string::npos) << line;
}

// The lines are written by hand for speed; these are the bytes nlohmann's ordered_json writes
// for the documented keys (the schema's reference), for values at their limits and strings
// that need escaping or replacing.
std::string reference_commit_line(const CommitRecord &r) {
	using ojson = nlohmann::ordered_json;
	auto ts = [](std::uint64_t ns) { return ns == 0 ? ojson(nullptr) : ojson(ns); };
	ojson j;
	j["v"] = 1;
	j["type"] = "commit";
	j["surface"] = r.surface_id;
	j["pid"] = r.pid;
	j["app_id"] = std::string(r.app_id.view());
	j["title"] = std::string(r.title.view());
	j["seq"] = r.seq;
	j["transport"] = std::string(transport_name(r.transport));
	j["format"] = format_name(r.format);
	j["width"] = r.width;
	j["height"] = r.height;
	j["bytes"] = r.bytes;
	j["damage_bytes"] = r.damage_bytes;
	j["t_commit"] = ts(r.t_commit);
	j["t_data_complete"] = ts(r.t_data_complete);
	j["t_convert_start"] = ts(r.t_convert_start);
	j["t_convert_end"] = ts(r.t_convert_end);
	j["t_upload_start"] = ts(r.t_upload_start);
	j["t_upload_end"] = ts(r.t_upload_end);
	j["t_present"] = ts(r.t_present);
	j["t_target"] = ts(r.t_target);
	j["barrier_wait_ns"] = r.barrier_wait;
	j["fifo"] = fifo_name(r.fifo) ? ojson(fifo_name(r.fifo)) : ojson(nullptr);
	j["output"] = r.output.empty() ? ojson(nullptr) : ojson(std::string(r.output.view()));
	j["discarded"] = r.discarded;
	return j.dump(-1, ' ', false, ojson::error_handler_t::replace) + "\n";
}

std::string reference_frame_line(const FrameRecord &r) {
	using ojson = nlohmann::ordered_json;
	auto ts = [](std::uint64_t ns) { return ns == 0 ? ojson(nullptr) : ojson(ns); };
	ojson j;
	j["v"] = 1;
	j["type"] = "frame";
	j["output"] = std::string(r.output.view());
	j["seq"] = r.seq;
	j["t_render_start"] = ts(r.t_render_start);
	j["t_render_end"] = ts(r.t_render_end);
	j["t_present"] = ts(r.t_present);
	j["refresh_ns"] = r.refresh_ns;
	j["missed"] = r.missed;
	return j.dump(-1, ' ', false, ojson::error_handler_t::replace) + "\n";
}

TEST(JsonlLines, HandWrittenLinesAreTheBytesNlohmannWrites) {
	constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
	std::vector<CommitRecord> commits;
	commits.push_back(test::sample_commit(7, 81'300'000'000));
	CommitRecord big = test::sample_commit(kMax, kMax);
	big.surface_id = kMax;
	big.pid = std::numeric_limits<std::int32_t>::min();
	big.width = std::numeric_limits<std::int32_t>::max();
	big.height = -1;
	big.bytes = big.damage_bytes = kMax;
	big.t_data_complete = big.t_present = big.t_target = big.barrier_wait = kMax;
	big.fifo = timing::kFifoSetBarrier | timing::kFifoWaitBarrier;
	big.app_id = std::string(63, 'a'); // every string at its longest
	big.title = std::string(95, 'z');
	big.output = std::string(31, 'O');
	big.transport = Transport::Stream;
	big.discarded = true;
	commits.push_back(big);
	CommitRecord empty; // all absent: nulls, empty strings, zeros
	commits.push_back(empty);
	CommitRecord odd = test::sample_commit(1, 1);
	odd.app_id = std::string_view("quote\" back\\slash \x01\x1f tab\t");
	odd.title = std::string_view("\xff\xfe bad, then \xc3\xa9 good \xe2\x80");
	odd.output = std::string_view("out\"put");
	odd.format = fourcc('"', '\\', 'A', 'B'); // printable, but needs escaping
	odd.transport = static_cast<Transport>(200);
	commits.push_back(odd);
	CommitRecord hex = test::sample_commit(2, 2);
	hex.format = 0x01020304;
	commits.push_back(hex);
	// Timestamps share their leading digits with t_commit's text only where they agree above
	// the last eight: across a power of ten, before t_commit, far after it, or under 10^8.
	CommitRecord near = test::sample_commit(3, 999'999'999);
	near.t_data_complete = 1'000'000'001; // one more digit
	near.t_convert_start = 999'999'998; // before
	near.t_convert_end = 900'000'000; // lowest with the same leading digit
	near.t_upload_start = 899'999'999; // just below it
	near.t_upload_end = 999'999'999'000; // far after
	near.t_present = 1'000'000'000;
	commits.push_back(near);
	CommitRecord small = test::sample_commit(4, 99'999'999); // eight digits: none shared
	small.t_present = 100'000'007;
	small.t_upload_end = 5;
	commits.push_back(small);
	CommitRecord zeros = test::sample_commit(5, 1'234'500'000'000'000); // low digits 0: kept
	zeros.t_data_complete = 1'234'500'000'000'007;
	zeros.t_present = 1'234'500'099'999'999;
	commits.push_back(zeros);
	for (const CommitRecord &c : commits) {
		EXPECT_EQ(commit_line(c), reference_commit_line(c));
	}
	// LogWriter's way: one CommitLines per surface, its kept text made again when a field
	// changes between commits (each record here differs from the one before in several).
	CommitLines lines(12, 4242, "foot", "~ — shell");
	for (CommitRecord c : commits) {
		c.surface_id = 12;
		c.pid = 4242;
		c.app_id = "foot";
		c.title = "~ — shell";
		for (int twice = 0; twice < 2; ++twice) {
			std::string out = "before\n";
			lines.append(out, c);
			EXPECT_EQ(out, "before\n" + reference_commit_line(c));
		}
	}
	CommitRecord changed = test::sample_commit(8, 1'000'000'000);
	for (auto change : std::vector<std::function<void(CommitRecord &)>>{
		     [](CommitRecord &r) { r.transport = Transport::Stream; },
		     [](CommitRecord &r) { r.format = fourcc('N', 'V', '1', '2'); },
		     [](CommitRecord &r) { r.width = 801; }, [](CommitRecord &r) { r.height = 601; },
		     [](CommitRecord &r) { r.bytes = 1; }, [](CommitRecord &r) { r.damage_bytes = 2; },
		     [](CommitRecord &r) { r.output = "HEADLESS-2"; }, [](CommitRecord &r) { r.output = ""; },
		     [](CommitRecord &r) { r.discarded = !r.discarded; },
		     [](CommitRecord &r) { r.t_target = r.t_commit + 16'666'667; },
		     [](CommitRecord &r) { r.barrier_wait = 8'000'000; },
		     [](CommitRecord &r) { r.fifo = kFifoWaitBarrier; },
		     [](CommitRecord &r) { r.fifo = kFifoSetBarrier | kFifoWaitBarrier; }}) {
		change(changed);
		std::string out;
		lines.append(out, changed);
		EXPECT_EQ(out, reference_commit_line(changed));
	}
	// Appending continues a batch: the same lines, one after another.
	std::string batch = "prefix\n";
	for (const CommitRecord &c : commits) append_commit_line(batch, c);
	std::string expected = "prefix\n";
	for (const CommitRecord &c : commits) expected += reference_commit_line(c);
	EXPECT_EQ(batch, expected);

	std::vector<FrameRecord> frames = {test::sample_frame(9, 2'000'000), FrameRecord{}};
	FrameRecord f = test::sample_frame(kMax, kMax);
	f.refresh_ns = kMax;
	f.missed = true;
	f.output = std::string_view("\xff\"\\");
	frames.push_back(f);
	for (const FrameRecord &fr : frames) {
		EXPECT_EQ(frame_line(fr), reference_frame_line(fr));
	}
}

} // namespace
} // namespace pixelport::timing
