// pixelport-compare, run as the built binary (PIXELPORT_COMPARE, set by meson) on logs
// generated here with known distributions.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>

#include "compare.hpp"
#include "helpers.hpp"
#include "pixelport/timing/jsonl.hpp"
#include "plot.hpp"

extern char **environ;

namespace pixelport::timing {
namespace {

struct Result {
	int status = -1;
	std::string out, err;
};

class CompareTest : public test::TempDirTest {
protected:
	// Runs pixelport-compare with `args`; `path_env` replaces PATH when set.
	Result run(std::vector<std::string> args, const char *path_env = nullptr) {
		const char *exe = std::getenv("PIXELPORT_COMPARE");
		if (!exe) ADD_FAILURE() << "PIXELPORT_COMPARE is not set (run through meson test)";
		args.insert(args.begin(), exe ? exe : "pixelport-compare");
		std::vector<char *> argv;
		for (auto &a : args) argv.push_back(a.data());
		argv.push_back(nullptr);
		std::vector<std::string> env_store;
		for (char **e = environ; *e; ++e) {
			if (!path_env || std::string_view(*e).substr(0, 5) != "PATH=") env_store.emplace_back(*e);
		}
		if (path_env) env_store.push_back(std::string("PATH=") + path_env);
		std::vector<char *> envp;
		for (auto &e : env_store) envp.push_back(e.data());
		envp.push_back(nullptr);

		const std::string out = path("stdout"), err = path("stderr");
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		pid_t pid = 0;
		Result r;
		if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0) {
			int st = 0;
			waitpid(pid, &st, 0);
			r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		posix_spawn_file_actions_destroy(&fa);
		r.out = test::read_file(out);
		r.err = test::read_file(err);
		return r;
	}

	// Base: convert = 10, 20, ... 1010 µs (median 510 µs); candidate the same times `scale`.
	// Upload and render: the same values in both runs, in another order (ratio exactly 1).
	void write_runs(double scale) {
		std::string base = header_line(1, 0), cand = header_line(2, 0);
		std::vector<std::uint64_t> order(101);
		std::iota(order.begin(), order.end(), 1);
		std::vector<std::uint64_t> shuffled = order;
		std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(7));
		for (std::size_t i = 0; i < order.size(); ++i) {
			const std::uint64_t t0 = 1'000'000'000 + i * 16'000'000;
			CommitRecord b = test::sample_commit(i, t0, order[i] * 10'000);
			b.t_upload_end = b.t_upload_start + order[i] * 1000;
			CommitRecord c =
				test::sample_commit(i, t0, static_cast<std::uint64_t>(order[i] * 10'000 * scale));
			c.t_upload_end = c.t_upload_start + shuffled[i] * 1000;
			base += commit_line(b);
			cand += commit_line(c);
			base += frame_line(test::sample_frame(i, t0, 200'000 + order[i] * 1000));
			cand += frame_line(test::sample_frame(i, t0, 200'000 + shuffled[i] * 1000));
		}
		CommitRecord only_base = test::sample_commit(1, 5);
		only_base.transport = Transport::Stream;
		only_base.format = fourcc('N', 'V', '1', '2');
		only_base.bytes = 3'110'400;
		base += commit_line(only_base);
		FrameRecord only_cand = test::sample_frame(1, 5);
		only_cand.output = "DP-1";
		cand += frame_line(only_cand);
		test::write_file(path("base.jsonl"), base);
		test::write_file(path("cand.jsonl"), cand);
	}

	static std::string line_with(const std::string &text, const std::string &start) {
		for (std::size_t pos = 0; pos < text.size();) {
			const std::size_t end = text.find('\n', pos);
			const std::string line = text.substr(pos, end - pos);
			if (line.rfind(start, 0) == 0) return line;
			if (end == std::string::npos) break;
			pos = end + 1;
		}
		return "";
	}
};

TEST_F(CompareTest, PrintsTheKnownMediansAndFlagsATwofoldSlowdown) {
	write_runs(2.0);
	const Result r = run({path("base.jsonl"), path("cand.jsonl")});
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.err, "");
	EXPECT_NE(r.out.find("== XRGB8888 800x600 shm\n"), std::string::npos) << r.out;
	const std::string convert = line_with(r.out, "convert");
	EXPECT_NE(convert.find(" 510 µs "), std::string::npos) << convert;
	EXPECT_NE(convert.find(" 1.02 ms "), std::string::npos) << convert;
	EXPECT_NE(convert.find(" 2.00x "), std::string::npos) << convert;
	EXPECT_NE(convert.find("slower"), std::string::npos) << convert;
}

TEST_F(CompareTest, DoesNotFlagPhasesWhoseRatioIsOne) {
	write_runs(2.0);
	const Result r = run({path("base.jsonl"), path("cand.jsonl")});
	ASSERT_EQ(r.status, 0) << r.err;
	for (const char *phase : {"upload", "render", "present"}) {
		const std::string line = line_with(r.out, phase);
		EXPECT_NE(line.find(" 1.00x "), std::string::npos) << line;
		EXPECT_EQ(line.find("slower"), std::string::npos) << line;
		EXPECT_EQ(line.find("faster"), std::string::npos) << line;
	}
	EXPECT_NE(line_with(r.out, "upload").find(" 51.0 µs "), std::string::npos) << r.out;
}

TEST_F(CompareTest, FlagsAFasterCandidate) {
	write_runs(0.5);
	const Result r = run({path("base.jsonl"), path("cand.jsonl")});
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(line_with(r.out, "convert").find("faster"), std::string::npos) << r.out;
}

TEST_F(CompareTest, ListsGroupsFoundInOnlyOneRun) {
	write_runs(1.0);
	const Result r = run({path("base.jsonl"), path("cand.jsonl")});
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("only in base: NV12 800x600 stream (1 commit)\n"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("only in candidate: output DP-1\n"), std::string::npos) << r.out;
}

TEST_F(CompareTest, OutputIsReproducibleWithTheDefaultSeedAndFollowsSeedAndResamples) {
	write_runs(1.3);
	const Result a = run({path("base.jsonl"), path("cand.jsonl")});
	const Result b = run({path("base.jsonl"), path("cand.jsonl")});
	ASSERT_EQ(a.status, 0) << a.err;
	EXPECT_EQ(a.out, b.out);
	const Result c =
		run({path("base.jsonl"), path("cand.jsonl"), "--seed", "99", "--resamples", "500", "--alpha", "0.01"});
	ASSERT_EQ(c.status, 0) << c.err;
	EXPECT_NE(c.out.find("99% CI"), std::string::npos) << c.out;
}

TEST_F(CompareTest, WritesCsvWithTheSameColumnsAsTheTable) {
	write_runs(2.0);
	const Result r = run({path("base.jsonl"), path("cand.jsonl"), "--csv", path("out.csv")});
	ASSERT_EQ(r.status, 0) << r.err;
	const std::vector<std::string> rows = test::read_lines(path("out.csv"));
	ASSERT_GE(rows.size(), 2u);
	EXPECT_EQ(rows[0],
		"group,phase,base_count,base_median_ns,base_p95_ns,base_p99_ns,cand_count,cand_median_ns,"
		"cand_p95_ns,cand_p99_ns,ratio,ci_low,ci_high,mark");
	for (const std::string &row : rows) EXPECT_EQ(std::count(row.begin(), row.end(), ','), 13) << row;
	EXPECT_NE(std::find_if(rows.begin(), rows.end(),
			  [](const std::string &s) {
				  return s.rfind("XRGB8888 800x600 shm,convert,101,510000,", 0) == 0 &&
					  s.find(",1020000,") != std::string::npos && s.ends_with(",slower");
			  }),
		rows.end());
	EXPECT_NE(std::find(rows.begin(), rows.end(), "output DP-1,,,,,,,,,,,,,only-candidate"), rows.end());
}

TEST_F(CompareTest, PlotsAPngThroughGnuplot) {
	if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
	write_runs(2.0);
	const Result r = run({path("base.jsonl"), path("cand.jsonl"), "--plot", path("plot.png")});
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(test::read_file(path("plot.png")).substr(0, 8), "\x89PNG\r\n\x1a\n");
}

// The legend names the two runs, and the present phase (milliseconds, the wait for the refresh)
// has a panel and axis of its own.
TEST_F(CompareTest, PlotScriptNamesTheRunsAndGivesPresentItsOwnAxis) {
	compare::PlotPage p;
	p.path = "out.png";
	p.others_file = "others.tsv";
	p.present_file = "present.tsv";
	p.base_name = "shm";
	p.cand_name = "socket";
	p.has_others = p.has_present = true;
	const std::string s = compare::plot_script(p);
	EXPECT_NE(s.find("title 'shm'"), std::string::npos) << s;
	EXPECT_NE(s.find("title 'socket'"), std::string::npos) << s;
	EXPECT_EQ(s.find("'base'"), std::string::npos) << s;
	EXPECT_EQ(s.find("'candidate'"), std::string::npos) << s;
	EXPECT_NE(s.find("set multiplot layout 2,1 title 'pixelport-compare: shm vs socket'"), std::string::npos) << s;
	const auto others = s.find("plot 'others.tsv'"), present = s.find("plot 'present.tsv'");
	ASSERT_NE(others, std::string::npos) << s;
	ASSERT_NE(present, std::string::npos) << s;
	// Two plot commands: each panel autoscales its own axis.
	EXPECT_LT(others, present);
	EXPECT_NE(s.find("unset multiplot"), std::string::npos);
	p.has_present = false;
	const std::string one = compare::plot_script(p);
	EXPECT_EQ(one.find("multiplot"), std::string::npos) << one;
	EXPECT_EQ(one.find("present.tsv"), std::string::npos) << one;
}

TEST_F(CompareTest, PlotsNamedRunsWithPresentApart) {
	if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
	write_runs(2.0);
	const Result r = run({path("base.jsonl"), path("cand.jsonl"), "--plot", path("named.png"), "--base-name", "shm",
		"--cand-name", "socket"});
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(test::read_file(path("named.png")).substr(0, 8), "\x89PNG\r\n\x1a\n");
}

// Many groups go on pages of at most 1,600 px, not one 12,000 px image.
TEST_F(CompareTest, PlotsManyGroupsOnPagesAtMost1600PixelsWide) {
	if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
	std::string base = header_line(1, 0);
	for (int size = 0; size < 10; ++size) {
		for (std::uint64_t i = 0; i < 3; ++i) {
			CommitRecord c = test::sample_commit(i, 1000 + i * 100'000);
			c.width = 64 * (size + 1);
			base += commit_line(c);
		}
	}
	test::write_file(path("many.jsonl"), base);
	const Result r = run({path("many.jsonl"), path("many.jsonl"), "--plot", path("many.png")});
	ASSERT_EQ(r.status, 0) << r.err;
	auto width = [](const std::string &png) {
		const std::string head = test::read_file(png).substr(0, 24);
		if (head.size() < 24) return 0u;
		auto b = [&](int i) {
			return static_cast<unsigned>(static_cast<unsigned char>(head[static_cast<std::size_t>(i)]));
		};
		return b(16) << 24 | b(17) << 16 | b(18) << 8 | b(19);
	};
	// 10 sizes x 3 phases = 30 bar pairs: three pages.
	for (const char *page : {"many.png", "many-2.png", "many-3.png"}) {
		EXPECT_GT(width(path(page)), 0u) << page;
		EXPECT_LE(width(path(page)), 1600u) << page;
	}
	EXPECT_FALSE(std::filesystem::exists(path("many-4.png")));
}

TEST_F(CompareTest, MissingGnuplotIsOneClearErrorAndAFailure) {
	write_runs(2.0);
	const Result r =
		run({path("base.jsonl"), path("cand.jsonl"), "--plot", path("plot.png")}, path("empty-path").c_str());
	EXPECT_NE(r.status, 0);
	EXPECT_EQ(r.err, "pixelport-compare: error: gnuplot not found on PATH (install gnuplot-nox to use --plot)\n");
}

// Bad inputs: each is one error line naming the file (and line), a non-zero exit, no table.
struct BadInput {
	const char *name;
	std::string content; // "<missing>" = do not create the file
	std::string expected; // what follows "FILE" in the error line
};

class CompareBadInput : public CompareTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(CompareBadInput, GivesOneErrorLineNamingFileAndLineAndFails) {
	write_runs(1.0);
	const BadInput &p = GetParam();
	const std::string bad = path(std::string(p.name) + ".jsonl");
	if (p.content != "<missing>") test::write_file(bad, p.content);
	for (const auto &args : {std::vector<std::string>{bad, path("cand.jsonl")},
		     std::vector<std::string>{path("base.jsonl"), bad}}) {
		const Result r = run(args);
		EXPECT_NE(r.status, 0);
		EXPECT_EQ(r.out, "");
		EXPECT_EQ(r.err, "pixelport-compare: error: " + bad + p.expected + "\n");
	}
}

std::string valid_head() { return header_line(1, 0) + commit_line(test::sample_commit(1, 1000)); }

INSTANTIATE_TEST_SUITE_P(Cases, CompareBadInput,
	::testing::Values(BadInput{"missing", "<missing>", ": cannot open: No such file or directory"},
		BadInput{"empty", "", ": empty file, not a pixelport timing log"},
		BadInput{"truncated", valid_head() + commit_line(test::sample_commit(2, 2000)).substr(0, 60),
			":3: truncated line (file ends mid-record)"},
		BadInput{"foreign_json", "{\"name\":\"x\",\"values\":[1,2,3]}\n",
			":1: not a pixelport timing log record (no \"v\"/\"type\")"},
		BadInput{"binary",
			std::string("\x7f"
				    "ELF\x02\x01\x01\0\0\0\0",
				12) +
				"\n\x01\x02",
			":1: binary data, not a pixelport timing log"},
		BadInput{"not_json", "hello world\n", ":1: not valid JSON"},
		BadInput{"version2", "{\"v\":2,\"type\":\"header\"}\n",
			":1: unsupported schema version 2 (this tool reads 1)"},
		BadInput{"no_header", commit_line(test::sample_commit(1, 1000)),
			":1: first line is not a pixelport timing header"},
		BadInput{"missing_field", valid_head() + "{\"v\":1,\"type\":\"frame\",\"output\":\"X\"}\n",
			":3: missing field \"seq\""},
		BadInput{"unknown_type", valid_head() + "{\"v\":1,\"type\":\"mystery\"}\n",
			":3: unknown record type \"mystery\""},
		BadInput{"bad_line_inside", valid_head() + "{\"v\":1,\n" + commit_line(test::sample_commit(2, 1)),
			":3: not valid JSON"}),
	[](const ::testing::TestParamInfo<BadInput> &info) { return std::string(info.param.name); });

TEST(CompareReport, ShowsAPhaseMeasuredInOnlyOneRunWithoutARatio) {
	Log base, cand;
	base.commits.push_back(test::sample_commit(1, 1000));
	CommitRecord streamed = test::sample_commit(1, 1000);
	streamed.t_data_complete = streamed.t_commit + 500; // same group, but a transfer phase
	cand.commits.push_back(streamed);
	const compare::Report r = compare::compare(base, cand, {});
	const auto transfer = std::find_if(
		r.rows.begin(), r.rows.end(), [](const compare::Row &row) { return row.phase == Phase::Transfer; });
	ASSERT_NE(transfer, r.rows.end());
	EXPECT_EQ(transfer->base.count, 0u);
	EXPECT_EQ(transfer->cand.count, 1u);
	EXPECT_FALSE(transfer->ratio.has_value());
	const std::string table = compare::format_table(r);
	EXPECT_NE(table.find("transfer         0          -          -          -       1     500 ns     500 ns     "
			     "500 ns        -"),
		std::string::npos)
		<< table;
}

// The same frame through wl_shm (stride-padded, another byte count) and the stream
// pairs by its pixel size and format, labelled with both transports and run names.
TEST(CompareReport, PairsTheSameFrameSizeAcrossTransportsAndNamesThem) {
	Log base, cand;
	for (std::uint64_t i = 0; i < 6; ++i) {
		CommitRecord b = test::sample_commit(i, 1000 + i * 100'000);
		b.bytes = 832u * 600u * 4u; // padded stride
		base.commits.push_back(b);
		CommitRecord c = test::sample_commit(i, 1000 + i * 100'000);
		c.transport = Transport::Stream;
		c.t_data_complete = c.t_commit + 700;
		cand.commits.push_back(c);
	}
	compare::Options opts;
	opts.base_name = "shm";
	opts.cand_name = "socket";
	const compare::Report r = compare::compare(base, cand, opts);
	EXPECT_TRUE(r.only_base.empty());
	EXPECT_TRUE(r.only_cand.empty());
	ASSERT_FALSE(r.rows.empty());
	EXPECT_EQ(r.rows[0].group, "XRGB8888 800x600: shm (shm) vs socket (stream)");
	const std::string table = compare::format_table(r);
	EXPECT_EQ(table.find("unknown"), std::string::npos) << table;
	// Another size is not paired with it.
	cand.commits[0].width = 640;
	const compare::Report r2 = compare::compare(base, cand, opts);
	EXPECT_EQ(r2.rows[0].group, "XRGB8888 800x600: shm (shm) vs socket (stream)");
	ASSERT_EQ(r2.only_cand.size(), 1u);
	EXPECT_EQ(r2.only_cand[0], "XRGB8888 640x600 stream (1 commit)");
}

// A run's main transport at a size pairs with the other's; a few commits of another transport
// (the first frames of a reused pool are a new pool) do not take its place.
TEST(CompareReport, PairsEachRunsMainTransportAtASize) {
	Log base, cand;
	for (std::uint64_t i = 0; i < 8; ++i) {
		CommitRecord b = test::sample_commit(i, 1000 + i * 100'000);
		b.transport = i < 2 ? Transport::ShmNewPool : Transport::ShmReused;
		base.commits.push_back(b);
		CommitRecord c = test::sample_commit(i, 1000 + i * 100'000);
		c.transport = Transport::ShmNewPool;
		cand.commits.push_back(c);
	}
	compare::Options opts;
	opts.base_name = "shm";
	opts.cand_name = "shm-new";
	const compare::Report r = compare::compare(base, cand, opts);
	ASSERT_FALSE(r.rows.empty());
	EXPECT_EQ(r.rows[0].group, "XRGB8888 800x600: shm (shm) vs shm-new (shm-new)");
	EXPECT_EQ(r.rows[0].base.count, 6u);
	EXPECT_EQ(r.rows[0].cand.count, 8u);
	EXPECT_EQ(r.only_base, (std::vector<std::string>{"XRGB8888 800x600 shm-new (2 commits)"}));
	EXPECT_TRUE(r.only_cand.empty());
}

// Two clients (say direct and through a peer) stay apart, named by app_id.
TEST(CompareReport, KeepsClientsApartByAppId) {
	Log base, cand;
	for (const char *app : {"direct", "peer"}) {
		CommitRecord c = test::sample_commit(1, 1000);
		c.app_id = app;
		base.commits.push_back(c);
		cand.commits.push_back(c);
	}
	const compare::Report r = compare::compare(base, cand, {});
	std::set<std::string> groups;
	for (const auto &row : r.rows) groups.insert(row.group);
	EXPECT_EQ(groups, (std::set<std::string>{"XRGB8888 800x600 shm direct", "XRGB8888 800x600 shm peer"}));
}

// wl_shm converts inside its upload: the upload row excludes the conversion, and says so.
TEST(CompareReport, UploadExcludesANestedConversionSoPhasesAddUp) {
	Log base, cand;
	CommitRecord c = test::sample_commit(1, 1000, 30'000);
	c.t_convert_start = c.t_upload_start + 1000; // upload 50 µs contains convert 30 µs
	c.t_convert_end = c.t_convert_start + 30'000;
	base.commits.push_back(c);
	cand.commits.push_back(c);
	const compare::Report r = compare::compare(base, cand, {});
	EXPECT_TRUE(r.upload_minus_convert);
	const auto upload = std::find_if(
		r.rows.begin(), r.rows.end(), [](const compare::Row &row) { return row.phase == Phase::Upload; });
	ASSERT_NE(upload, r.rows.end());
	EXPECT_EQ(upload->base.p50, 20'000u);
	EXPECT_NE(compare::format_table(r).find("note: upload excludes convert"), std::string::npos);
	// Not nested (the sample's convert precedes its upload): left alone.
	Log b2;
	b2.commits.push_back(test::sample_commit(1, 1000));
	const compare::Report r2 = compare::compare(b2, b2, {});
	EXPECT_FALSE(r2.upload_minus_convert);
}

TEST(BootstrapMedianRatio, IsReproducibleAndBracketsTheObservedRatio) {
	std::vector<std::uint64_t> base, cand;
	std::mt19937_64 rng(3);
	for (int i = 0; i < 300; ++i) {
		base.push_back(1000 + rng() % 200);
		cand.push_back(1500 + rng() % 300);
	}
	const compare::Options opts;
	const auto a = compare::bootstrap_median_ratio(base, cand, opts, 1);
	const auto b = compare::bootstrap_median_ratio(base, cand, opts, 1);
	ASSERT_TRUE(a && b);
	EXPECT_EQ(a->low, b->low);
	EXPECT_EQ(a->high, b->high);
	EXPECT_LE(a->low, a->value);
	EXPECT_GE(a->high, a->value);
	EXPECT_NEAR(a->value, 1.5, 0.05);
	EXPECT_GT(a->low, 1.0);
	EXPECT_FALSE(compare::bootstrap_median_ratio({}, cand, opts, 1).has_value());
}

} // namespace
} // namespace pixelport::timing
