#include <gtest/gtest.h>

#include <numeric>

#include "helpers.hpp"
#include "pixelport/timing/stats.hpp"
#include "pixelport/timing/summary.hpp"

namespace pixelport::timing {
namespace {

TEST(Percentiles, OfOneToHundredAreFiftyNinetyFiveAndNinetyNineByNearestRank) {
	std::vector<std::uint64_t> v(100);
	std::iota(v.rbegin(), v.rend(), 1); // descending: percentiles() sorts
	const Percentiles p = percentiles(v);
	EXPECT_EQ(p.count, 100u);
	EXPECT_EQ(p.p50, 50u);
	EXPECT_EQ(p.p95, 95u);
	EXPECT_EQ(p.p99, 99u);
}

TEST(Percentiles, OfFewValuesPickAnActualValue) {
	std::vector<std::uint64_t> one{7};
	EXPECT_EQ(percentiles(one).p99, 7u);
	std::vector<std::uint64_t> four{10, 20, 30, 40};
	const Percentiles p = percentiles(four);
	EXPECT_EQ(p.p50, 20u); // rank ceil(0.5 * 4) = 2
	EXPECT_EQ(p.p95, 40u);
	std::vector<std::uint64_t> none;
	EXPECT_EQ(percentiles(none).count, 0u);
}

TEST(FormatDuration, UsesHumanUnitsWithThreeSignificantDigits) {
	EXPECT_EQ(format_duration_ns(850), "850 ns");
	EXPECT_EQ(format_duration_ns(12'345), "12.3 µs");
	EXPECT_EQ(format_duration_ns(4'560'000), "4.56 ms");
	EXPECT_EQ(format_duration_ns(1'230'000'000), "1.23 s");
}

TEST(SizeBucket, NamesPowerOfTwoRanges) {
	EXPECT_EQ(size_bucket_label(0), "0 B");
	EXPECT_EQ(size_bucket_label(1), "1-2 B");
	EXPECT_EQ(size_bucket_label(1'920'000), "1-2 MiB");
	EXPECT_EQ(size_bucket_label(600 * 1024), "512 KiB-1 MiB");
	EXPECT_EQ(size_bucket_label(8ull << 20), "8-16 MiB");
	EXPECT_LT(size_bucket_index(600 * 1024), size_bucket_index(1'920'000));
}

TEST(Pad, CountsColumnsNotBytes) {
	EXPECT_EQ(pad("1 µs", 6, true), "  1 µs");
	EXPECT_EQ(pad("ab", 4, false), "ab  ");
	EXPECT_EQ(pad("toolong", 3, true), "toolong");
}

TEST(Summary, KeepsSeparateStatisticsPerSurfaceAndPerOutput) {
	Summary s;
	for (std::uint64_t i = 1; i <= 100; ++i) {
		CommitRecord c = test::sample_commit(i, 1'000'000 * i, i * 1000);
		s.add(c);
		c.surface_id = 40;
		c.app_id = "";
		c.t_convert_end = c.t_convert_start + 7;
		s.add(c);
		s.add(test::sample_frame(i, 1'000'000 * i, i));
	}
	std::map<std::string, Percentiles> by;
	for (const Summary::Row &r : s.rows()) by[r.target + "/" + std::string(phase_name(r.phase))] = r.stats;
	EXPECT_EQ(by.at("surface 12 (foot)/convert").p95, 95'000u);
	EXPECT_EQ(by.at("surface 40/convert").p50, 7u);
	EXPECT_EQ(by.at("output HEADLESS-1/render").p99, 99u);
	EXPECT_EQ(by.count("surface 12 (foot)/transfer"), 0u); // shm: no transfer values at all

	const std::string table = s.format_summary();
	EXPECT_NE(table.find("surface 12 (foot)  convert"), std::string::npos) << table;
	EXPECT_NE(table.find("95.0 µs"), std::string::npos) << table;
	EXPECT_NE(table.find("output HEADLESS-1"), std::string::npos) << table;
}

TEST(Summary, KeepsOnlyTheMostRecentWindowOfValues) {
	Summary s(10);
	for (std::uint64_t i = 1; i <= 100; ++i) s.add(test::sample_frame(i, 1000, i));
	const auto rows = s.rows();
	ASSERT_EQ(rows.size(), 1u);
	EXPECT_EQ(rows[0].stats.count, 10u);
	EXPECT_EQ(rows[0].stats.p50, 95u); // values 91..100
}

// Surfaces that went keep their rows only among the last kEndedKept; older ones merge into one
// target, so the summary does not grow with the number of surfaces ever seen.
TEST(Summary, MergesSurfacesThatWentBeyondTheLastFew) {
	Summary s;
	constexpr std::uint64_t kSurfaces = 100;
	for (std::uint64_t id = 1; id <= kSurfaces; ++id) {
		CommitRecord c = test::sample_commit(1, 1'000'000, id * 1000);
		c.surface_id = id;
		c.app_id = "";
		s.add(c);
		s.add(c);
		s.surface_gone(id);
	}
	CommitRecord live = test::sample_commit(1, 1'000'000, 7);
	live.surface_id = 500;
	live.app_id = "";
	s.add(live);
	s.surface_gone(12345); // never seen: nothing happens
	std::map<std::string, Percentiles> convert;
	for (const Summary::Row &r : s.rows()) {
		if (r.phase == Phase::Convert) convert[r.target] = r.stats;
	}
	const std::size_t merged = kSurfaces - Summary::kEndedKept;
	ASSERT_EQ(convert.size(), Summary::kEndedKept + 2) << "the last 8 that went, the merged target, the live one";
	const std::string label = "surfaces ended earlier (" + std::to_string(merged) + ")";
	ASSERT_EQ(convert.count(label), 1u);
	EXPECT_EQ(convert.at(label).count, 2 * merged); // every value of the merged ones
	EXPECT_EQ(convert.at(label).p50, 46'000u); // surfaces 1..92 twice: rank 92 of 184
	EXPECT_EQ(convert.at(label).p99, 92'000u); // rank 183
	EXPECT_EQ(convert.count("surface " + std::to_string(kSurfaces)), 1u);
	EXPECT_EQ(convert.count("surface " + std::to_string(merged)), 0u);
	EXPECT_EQ(convert.at("surface 500").p50, 7u);
}

TEST(Summary, SaysSoWhenNothingWasRecorded) {
	Summary s;
	EXPECT_EQ(s.format_summary(), "pixelport timing: no records\n");
	s.add(test::sample_frame(1, 1000));
	s.clear();
	EXPECT_TRUE(s.rows().empty());
}

} // namespace
} // namespace pixelport::timing
