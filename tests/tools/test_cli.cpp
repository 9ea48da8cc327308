// The shared command-line checks (cli/): number parsing, the CLI11 validators, the
// one-line usage errors and the checked file read.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../integration/latency.hpp"
#include "cli.hpp"

namespace pixelport::cli {
namespace {

struct IntCase {
	const char *text;
	bool ok;
	int64_t value;
};

TEST(CliParse, IntegersAreWholeDecimalAndInRange) {
	const IntCase cases[] = {
		{"0", true, 0},
		{"-5", true, -5},
		{"10", true, 10},
		{"010", true, 10},
		{"", false, 0},
		{" 1", false, 0},
		{"1 ", false, 0},
		{"+1", false, 0},
		{"0x10", false, 0},
		{"1e3", false, 0},
		{"1.5", false, 0},
		{"nan", false, 0},
		{"11", false, 0},
		{"-6", false, 0},
		{"99999999999999999999", false, 0},
		{"-99999999999999999999", false, 0},
	};
	for (const IntCase &c : cases) {
		int64_t v = 12345;
		EXPECT_EQ(parse_int(c.text, -5, 10, &v), c.ok) << "'" << c.text << "'";
		EXPECT_EQ(v, c.ok ? c.value : 12345) << "'" << c.text << "' (untouched when refused)";
	}
	int64_t v = 0;
	EXPECT_TRUE(parse_int("-9223372036854775808", INT64_MIN, INT64_MAX, &v));
	EXPECT_EQ(v, INT64_MIN);
	EXPECT_FALSE(parse_int("9223372036854775808", INT64_MIN, INT64_MAX, &v));
}

TEST(CliParse, UnsignedRefusesMinusAndOverflow) {
	uint64_t v = 7;
	EXPECT_FALSE(parse_uint("-1", 0, UINT64_MAX, &v));
	EXPECT_FALSE(parse_uint("18446744073709551616", 0, UINT64_MAX, &v));
	EXPECT_EQ(v, 7u);
	EXPECT_TRUE(parse_uint("18446744073709551615", 0, UINT64_MAX, &v));
	EXPECT_EQ(v, UINT64_MAX);
	EXPECT_FALSE(parse_uint("4294967296", 0, UINT32_MAX, &v));
}

TEST(CliParse, RealsAreFiniteAndInRange) {
	double v = 0;
	for (const char *bad :
		{"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e400", "", "1s", " 1", "0x1p3", "3600.5", "-0.1"}) {
		EXPECT_FALSE(parse_real(bad, 0, 3600, &v)) << "'" << bad << "'";
	}
	EXPECT_TRUE(parse_real("0.25", 0, 3600, &v));
	EXPECT_EQ(v, 0.25);
	EXPECT_TRUE(parse_real("1e3", 0, 3600, &v));
	EXPECT_EQ(v, 1000.0);
	EXPECT_TRUE(parse_real("3600", 0, 3600, &v));
	EXPECT_TRUE(parse_real("0", 0, 3600, &v));
	EXPECT_EQ(v, 0.0);
}

TEST(CliParse, BytesTakeBinaryUnitsAndRefuseWhatDoesNotFit) {
	struct Case {
		const char *text;
		uint64_t value; // 0: refused
	};
	const Case cases[] = {
		{"4096", 4096},
		{"4K", 4096},
		{"4k", 4096},
		{"4KiB", 4096},
		{"4KB", 4096},
		{"1.5M", 1572864},
		{"2G", 1ull << 31},
		{"1B", 1},
		{"2.5e3", 2500},
		{"0", 0},
		{"0.4", 0},
		{"-1", 0},
		{"", 0},
		{"K", 0},
		{"4X", 0},
		{"4 K", 0},
		{"inf", 0},
		{"nan", 0},
		{"1e300", 0},
		{"18446744073709551616", 0},
		{"16E", 0},
		{"2.1G", 0},
	};
	for (const Case &c : cases) {
		uint64_t v = 99;
		EXPECT_EQ(parse_bytes(c.text, 1, 1ull << 31, &v), c.value != 0) << "'" << c.text << "'";
		EXPECT_EQ(v, c.value != 0 ? c.value : 99) << "'" << c.text << "'";
	}
	uint64_t v = 0;
	EXPECT_TRUE(parse_bytes("16G", 0, UINT64_MAX, &v));
	EXPECT_EQ(v, 16ull << 30);
	EXPECT_FALSE(parse_bytes("20000000000G", 0, UINT64_MAX, &v)) << "2^64 and more do not fit";
}

TEST(CliParse, SizesAreTwoIntegersInRange) {
	int w = 0, h = 0;
	EXPECT_TRUE(parse_wxh("640x480", 1, 32767, &w, &h));
	EXPECT_EQ(w, 640);
	EXPECT_EQ(h, 480);
	EXPECT_TRUE(parse_wxh("2X3", 1, 32767, &w, &h));
	EXPECT_EQ(w, 2);
	EXPECT_EQ(h, 3);
	for (const char *bad : {"0x10", "10x0", "x", "10x", "x10", "10x10x2", "10x10junk", "-1x5", "32768x1",
		     "99999999999x1", "1.5x2", "10 x 10", ""}) {
		EXPECT_FALSE(parse_wxh(bad, 1, 32767, &w, &h)) << "'" << bad << "'";
	}
}

// A CLI11 app with the validators, as the programs use them.
struct App {
	CLI::App app{"test"};
	int small = 5;
	uint64_t big = 0;
	uint32_t seed = 0;
	double seconds = 1;
	App() {
		app.add_option("--small", small)->transform(Range(1, 64));
		app.add_option("--big", big)->transform(Range(uint64_t{0}, uint64_t{1} << 46));
		app.add_option("--seed", seed)->transform(Range(0u, UINT32_MAX));
		app.add_option("--seconds", seconds)->transform(Range(0.0, 3600.0));
	}
	// The exit status parse() gives (-1: go on) and what it wrote on stderr.
	int run(std::vector<std::string> args, std::string *err) {
		args.insert(args.begin(), "test");
		std::vector<char *> argv;
		for (auto &a : args) argv.push_back(a.data());
		testing::internal::CaptureStderr();
		testing::internal::CaptureStdout();
		int rc = parse(app, static_cast<int>(argv.size()), argv.data(), "pixelport-test");
		*err = testing::internal::GetCapturedStderr();
		testing::internal::GetCapturedStdout();
		return rc;
	}
};

TEST(CliValidators, GoodValuesAreConvertedAsDecimal) {
	App a;
	std::string err;
	ASSERT_EQ(
		a.run({"--small", "010", "--big", "70368744177664", "--seed", "4294967295", "--seconds", "0.5"}, &err),
		-1)
		<< err;
	EXPECT_EQ(a.small, 10) << "010 is ten, not octal eight";
	EXPECT_EQ(a.big, uint64_t{1} << 46);
	EXPECT_EQ(a.seed, UINT32_MAX);
	EXPECT_EQ(a.seconds, 0.5);
	EXPECT_EQ(err, "");
}

TEST(CliValidators, BadValuesAreOneLineNamingOptionAndRange) {
	struct Case {
		std::vector<std::string> args;
		const char *err;
	};
	const Case cases[] = {
		{{"--small", "0"}, "--small: '0' is not an integer in 1..64"},
		{{"--small", "0x10"}, "--small: '0x10' is not an integer in 1..64"},
		{{"--small", "99999999999999999999"}, "--small: '99999999999999999999' is not an integer in 1..64"},
		{{"--small", ""}, "--small: '' is not an integer in 1..64"},
		{{"--big", "-1"}, "--big: '-1' is not an integer in 0..70368744177664"},
		{{"--big", "18446744073709551616"},
			"--big: '18446744073709551616' is not an integer in 0..70368744177664"},
		{{"--seed", "4294967296"}, "--seed: '4294967296' is not an integer in 0..4294967295"},
		{{"--seconds", "nan"}, "--seconds: 'nan' is not a number in 0..3600"},
		{{"--seconds", "inf"}, "--seconds: 'inf' is not a number in 0..3600"},
		{{"--seconds", "-1"}, "--seconds: '-1' is not a number in 0..3600"},
		{{"--nope"}, "The following argument was not expected: --nope"},
	};
	for (const Case &c : cases) {
		App a;
		std::string err;
		EXPECT_EQ(a.run(c.args, &err), kUsageError) << c.err;
		EXPECT_EQ(err, std::string("pixelport-test: error: ") + c.err + "\n");
	}
}

TEST(CliValidators, HelpIsNotAnError) {
	App a;
	std::string err;
	EXPECT_EQ(a.run({"--help"}, &err), 0);
	EXPECT_EQ(err, "");
}

class CliReadFile : public ::testing::Test {
protected:
	void SetUp() override {
		const char *tmp = std::getenv("TMPDIR");
		std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/pixelport-cli-XXXXXX";
		ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
		dir_ = tmpl;
	}
	void TearDown() override {
		std::error_code ec;
		std::filesystem::remove_all(dir_, ec);
	}
	std::string path(const char *name) const { return (dir_ / name).string(); }
	std::filesystem::path dir_;
};

TEST_F(CliReadFile, ReadsARegularFileUpToTheCap) {
	std::ofstream(path("ten")) << "0123456789";
	std::string text, error;
	ASSERT_TRUE(read_file(path("ten"), 10, &text, &error)) << error;
	EXPECT_EQ(text, "0123456789");
	EXPECT_FALSE(read_file(path("ten"), 9, &text, &error));
	EXPECT_EQ(error, "too large: 10 bytes, at most 9");
	EXPECT_EQ(text, "");
	std::ofstream(path("empty")).flush();
	ASSERT_TRUE(read_file(path("empty"), 0, &text, &error)) << error;
	EXPECT_EQ(text, "");
}

TEST_F(CliReadFile, RefusesWhatIsNotARegularFileWithoutReadingOrBlocking) {
	ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
	std::string text, error;
	const auto us = [](auto d) {
		return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
	};
	std::ofstream(path("regular")).flush();
	auto t0 = std::chrono::steady_clock::now();
	ASSERT_TRUE(read_file(path("regular"), 1 << 20, &text, &error)) << error;
	const uint64_t regular_us = us(std::chrono::steady_clock::now() - t0);
	t0 = std::chrono::steady_clock::now();
	EXPECT_FALSE(read_file(path("fifo"), 1 << 20, &text, &error));
	EXPECT_EQ(error, "not a regular file (a FIFO)");
	// A FIFO with no writer must not block: it answers as a regular file does (a blocked open
	// would never return; the floor, 2 s, is what a busy machine may delay any call).
	pixelport::test::expect_latency("read_file of a FIFO with no writer", us(std::chrono::steady_clock::now() - t0),
		{regular_us, "read_file of an empty regular file, this test"}, 0,
		pixelport::test::LatencyRule{2'000'000});
	EXPECT_FALSE(read_file("/dev/zero", 1 << 20, &text, &error));
	EXPECT_EQ(error, "not a regular file (a character device)");
	EXPECT_FALSE(read_file(dir_.string(), 1 << 20, &text, &error));
	EXPECT_EQ(error, "not a regular file (a folder)");
	EXPECT_FALSE(read_file(path("missing"), 1 << 20, &text, &error));
	EXPECT_EQ(error, "cannot open: No such file or directory");
}

TEST_F(CliReadFile, ASparseHugeFileIsRefusedByItsSize) {
	int fd = open(path("huge").c_str(), O_CREAT | O_WRONLY, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, off_t{1} << 31), 0); // 2 GiB, no blocks
	close(fd);
	std::string text, error;
	EXPECT_FALSE(read_file(path("huge"), 1 << 30, &text, &error));
	EXPECT_EQ(error, "too large: 2147483648 bytes, at most 1073741824");
	EXPECT_LT(text.capacity(), 1u << 20) << "nothing of it was held";
}

} // namespace
} // namespace pixelport::cli
