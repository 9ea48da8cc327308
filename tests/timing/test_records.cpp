#include <gtest/gtest.h>

#include "helpers.h"
#include "pixelport/timing/jsonl.h"
#include "pixelport/timing/phases.h"
#include "pixelport/timing/records.h"

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
}

TEST(FormatName, ParsesBackEveryNameItWrites) {
  for (std::uint32_t code : {fourcc('X', 'R', '2', '4'), fourcc('P', '0', '1', '0'), fourcc('X', 'R', '4', '8'),
                             std::uint32_t{0x01020304}, fourcc('R', '8', ' ', ' ')}) {
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
  EXPECT_EQ(transport_name(Transport::ShmNewPool), "shm-new-pool");
}

TEST(FixedString, TruncatesLongStringsWithoutSplittingAUtf8Character) {
  FixedString<5> s;
  s.assign("abcé");  // 'é' is 2 bytes: "abc" + 2 = 5 bytes, one more than fits
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

class JsonlRoundTrip : public test::TempDirTest {};

TEST_F(JsonlRoundTrip, ReadLogGivesBackTheRecordsThatTheLineFormattersWrote) {
  CommitRecord c = test::sample_commit(7, 10'000);
  c.t_upload_start = c.t_upload_end = 0;  // absent: written as null, read back as 0
  c.output = "";
  c.discarded = true;
  const FrameRecord f = test::sample_frame(3, 20'000);
  test::write_file(path("log.jsonl"),
                   header_line(99, 5) + commit_line(c) + frame_line(f) + drops_line(4, 6) + drops_line(1, 8));
  const Log log = read_log(path("log.jsonl"));
  EXPECT_EQ(log.pid, 99);
  EXPECT_EQ(log.start_ns, 5u);
  ASSERT_EQ(log.commits.size(), 1u);
  ASSERT_EQ(log.frames.size(), 1u);
  EXPECT_EQ(log.dropped, 5u);
  const CommitRecord& back = log.commits[0];
  EXPECT_EQ(back.app_id, c.app_id);
  EXPECT_EQ(back.title, c.title);
  EXPECT_EQ(back.seq, 7u);
  EXPECT_EQ(back.t_upload_start, 0u);
  EXPECT_EQ(back.t_convert_end, c.t_convert_end);
  EXPECT_TRUE(back.output.empty());
  EXPECT_TRUE(back.discarded);
  EXPECT_EQ(log.frames[0].t_render_end, f.t_render_end);
  EXPECT_EQ(log.frames[0].refresh_ns, f.refresh_ns);
}

TEST(JsonlLines, WriteInvalidUtf8FromClientsAsReplacementCharacters) {
  CommitRecord c = test::sample_commit(1, 1);
  c.title = std::string_view("bad \xff byte");
  const std::string line = commit_line(c);
  EXPECT_NE(line.find("bad \xef\xbf\xbd byte"), std::string::npos) << line;
}

}  // namespace
}  // namespace pixelport::timing
