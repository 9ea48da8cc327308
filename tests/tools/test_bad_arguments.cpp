// Every program's bad arguments, run as the built binaries (paths from meson). Each bad value is
// refused before the program does anything, with one line "PROGRAM: error: ..." naming the option
// and what it accepts, and exit status 2 (1 for an input file pixelport-compare cannot read, as it
// documents). Good values still pass every check: the programs then go on and stop only where
// this test leaves them no compositor (WAYLAND_DISPLAY names none): status 1, "cannot connect".
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../integration/wait_until.hpp"
#include "../timing/helpers.hpp"
#include "pixelport/timing/jsonl.hpp"

extern char **environ;

namespace {

namespace fs = std::filesystem;

struct Case {
	const char *name; // the test's name
	const char *program; // environment variable naming the binary (meson sets it)
	std::vector<std::string> args; // "{D}": the scratch folder
	int status;
	// The whole stderr ("{D}" as in args; "" for none), or, after a '~', text stderr contains.
	std::string err;
};

constexpr const char *kNoDisplay = "~cannot connect to the Wayland display (WAYLAND_DISPLAY=pixelport-no-display-here)";

std::string expand(std::string s, const std::string &dir) {
	for (size_t at; (at = s.find("{D}")) != std::string::npos;) s.replace(at, 3, dir);
	return s;
}

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

std::string slurp(const std::string &path) {
	std::ifstream in(path, std::ios::binary);
	std::stringstream ss;
	ss << in.rdbuf();
	return ss.str();
}

class BadArguments : public ::testing::TestWithParam<Case> {
protected:
	void SetUp() override {
		const char *tmp = std::getenv("TMPDIR");
		std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/pixelport-args-XXXXXX";
		ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
		dir_ = tmpl;
		ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
		fs::create_directory(dir_ + "/folder");
		// Sparse: one byte over each cap, no blocks on disk.
		sparse("/big.png", (off_t{256} << 20) + 1);
		sparse("/big.jsonl", (off_t{1} << 30) + 1);
		// A PNG whose header says 20000x20000 (more pixels than the sweep decodes), and no pixels.
		std::ofstream(dir_ + "/huge.png", std::ios::binary)
			<< std::string("\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x4e"
				       "\x20\x00\x00\x4e\x20\x08\x06\x00"
				       "\x00\x00\xe3\x70\x46\x39\x00\x00\x00\x00\x49\x44\x41\x54\x35\xaf\x06\x1e\x00"
				       "\x00\x00\x00\x49\x45\x4e\x44\xae"
				       "\x42\x60\x82",
				   57);
		using namespace pixelport::timing;
		std::ofstream(dir_ + "/good.jsonl") << header_line(1, 0) << commit_line(test::sample_commit(1, 1000))
						    << commit_line(test::sample_commit(2, 2000));
	}
	void TearDown() override {
		std::error_code ec;
		fs::remove_all(dir_, ec);
	}
	void sparse(const char *name, off_t size) {
		int fd = open((dir_ + name).c_str(), O_CREAT | O_WRONLY, 0600);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(ftruncate(fd, size), 0);
		close(fd);
	}

	// Runs the program; its exit status (-1 if it ran past 30 s and was killed), and its stderr.
	int run(const Case &c, std::string *err) {
		const char *exe = std::getenv(c.program);
		if (exe == nullptr) {
			ADD_FAILURE() << c.program << " is not set (run through meson test)";
			return -2;
		}
		std::vector<std::string> args = {exe};
		// pixelport-sweep makes its output folder before it connects: keep it in the scratch folder.
		if (std::string(c.program) == "PIXELPORT_SWEEP") args.insert(args.end(), {"-o", dir_ + "/sweep-out"});
		for (const std::string &a : c.args) args.push_back(expand(a, dir_));
		std::vector<char *> argv;
		for (auto &a : args) argv.push_back(a.data());
		argv.push_back(nullptr);
		std::vector<std::string> env_store;
		for (char **e = environ; *e; ++e) {
			std::string_view v(*e);
			if (v.rfind("WAYLAND_DISPLAY=", 0) != 0 && v.rfind("XDG_RUNTIME_DIR=", 0) != 0)
				env_store.emplace_back(v);
		}
		env_store.push_back("WAYLAND_DISPLAY=pixelport-no-display-here");
		env_store.push_back("XDG_RUNTIME_DIR=" + dir_);
		std::vector<char *> envp;
		for (auto &e : env_store) envp.push_back(e.data());
		envp.push_back(nullptr);

		const std::string out = dir_ + "/stdout", errp = dir_ + "/stderr";
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		posix_spawn_file_actions_addopen(&fa, 2, errp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		pid_t pid = 0;
		int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
		posix_spawn_file_actions_destroy(&fa);
		if (rc != 0) {
			ADD_FAILURE() << "cannot start " << exe << ": " << strerror(rc);
			return -2;
		}
		int st = 0;
		if (!pixelport::test::wait_until([&] { return waitpid(pid, &st, WNOHANG) != 0; },
			    std::chrono::seconds(30), std::chrono::milliseconds(5))) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			*err = slurp(errp);
			return -1;
		}
		*err = slurp(errp);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}

	std::string dir_;
};

TEST_P(BadArguments, RefusedWithOneLineAndItsStatus) {
	const Case &c = GetParam();
	std::string err;
	const int status = run(c, &err);
	EXPECT_EQ(status, c.status) << (status == -1 ? "timed out (blocked?); " : "") << "stderr: " << err;
	if (!c.err.empty() && c.err[0] == '~') {
		EXPECT_NE(err.find(c.err.substr(1)), std::string::npos) << err;
	} else {
		EXPECT_EQ(err, c.err.empty() ? "" : expand(c.err, dir_) + "\n");
	}
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) { return info.param.name; }

// pixelport-compare: built in every configuration.
INSTANTIATE_TEST_SUITE_P(Compare, BadArguments,
	::testing::Values(Case{"dev_zero", "PIXELPORT_COMPARE", {"/dev/zero", "{D}/good.jsonl"}, 1,
				  "pixelport-compare: error: /dev/zero: not a regular file (a character device)"},
		Case{"fifo", "PIXELPORT_COMPARE", {"{D}/good.jsonl", "{D}/fifo"}, 1,
			"pixelport-compare: error: {D}/fifo: not a regular file (a FIFO)"},
		Case{"folder", "PIXELPORT_COMPARE", {"{D}/folder", "{D}/good.jsonl"}, 1,
			"pixelport-compare: error: {D}/folder: not a regular file (a folder)"},
		Case{"over_1GiB", "PIXELPORT_COMPARE", {"{D}/big.jsonl", "{D}/good.jsonl"}, 1,
			"pixelport-compare: error: {D}/big.jsonl: too large: 1073741825 bytes, at most 1073741824"},
		Case{"alpha_nan", "PIXELPORT_COMPARE", {"{D}/good.jsonl", "{D}/good.jsonl", "--alpha", "nan"}, 2,
			"pixelport-compare: error: --alpha: 'nan' is not a number in 0.0001..0.5"},
		Case{"alpha_inf", "PIXELPORT_COMPARE", {"{D}/good.jsonl", "{D}/good.jsonl", "--alpha", "inf"}, 2,
			"pixelport-compare: error: --alpha: 'inf' is not a number in 0.0001..0.5"},
		Case{"alpha_high", "PIXELPORT_COMPARE", {"{D}/good.jsonl", "{D}/good.jsonl", "--alpha", "0.6"}, 2,
			"pixelport-compare: error: --alpha: '0.6' is not a number in 0.0001..0.5"},
		Case{"resamples_0", "PIXELPORT_COMPARE", {"{D}/good.jsonl", "{D}/good.jsonl", "--resamples", "0"}, 2,
			"pixelport-compare: error: --resamples: '0' is not an integer in 1..1000000"},
		Case{"resamples_1e3", "PIXELPORT_COMPARE", {"{D}/good.jsonl", "{D}/good.jsonl", "--resamples", "1e3"},
			2, "pixelport-compare: error: --resamples: '1e3' is not an integer in 1..1000000"},
		Case{"resamples_2e64", "PIXELPORT_COMPARE",
			{"{D}/good.jsonl", "{D}/good.jsonl", "--resamples", "18446744073709551616"}, 2,
			"pixelport-compare: error: --resamples: '18446744073709551616' is not an integer in "
			"1..1000000"},
		Case{"seed_minus", "PIXELPORT_COMPARE", {"{D}/good.jsonl", "{D}/good.jsonl", "--seed", "-1"}, 2,
			"pixelport-compare: error: --seed: '-1' is not an integer in 0..18446744073709551615"},
		Case{"seed_hex", "PIXELPORT_COMPARE", {"{D}/good.jsonl", "{D}/good.jsonl", "--seed", "0x10"}, 2,
			"pixelport-compare: error: --seed: '0x10' is not an integer in 0..18446744073709551615"},
		Case{"no_candidate", "PIXELPORT_COMPARE", {"{D}/good.jsonl"}, 2,
			"pixelport-compare: error: CANDIDATE is required"},
		Case{"good_values", "PIXELPORT_COMPARE",
			{"{D}/good.jsonl", "{D}/good.jsonl", "--alpha", "0.5", "--resamples", "100", "--seed",
				"18446744073709551615"},
			0, ""}),
	case_name);

#ifdef PIXELPORT_WAYLAND_TOOLS
INSTANTIATE_TEST_SUITE_P(Sweep, BadArguments,
	::testing::Values(Case{"image_dev_zero", "PIXELPORT_SWEEP", {"--image", "/dev/zero"}, 2,
				  "pixelport-sweep: error: /dev/zero: not a regular file (a character device)"},
		Case{"image_fifo", "PIXELPORT_SWEEP", {"--image", "{D}/fifo"}, 2,
			"pixelport-sweep: error: {D}/fifo: not a regular file (a FIFO)"},
		Case{"image_folder", "PIXELPORT_SWEEP", {"--image", "{D}/folder"}, 2,
			"pixelport-sweep: error: {D}/folder: not a regular file (a folder)"},
		Case{"image_over_256MiB", "PIXELPORT_SWEEP", {"--image", "{D}/big.png"}, 2,
			"pixelport-sweep: error: {D}/big.png: too large: 268435457 bytes, at most 268435456"},
		Case{"image_too_many_pixels", "PIXELPORT_SWEEP", {"--image", "{D}/huge.png"}, 2,
			"pixelport-sweep: error: {D}/huge.png: 20000x20000 is more than 268435456 pixels"},
		Case{"sizes_inf", "PIXELPORT_SWEEP", {"--pattern", "--sizes", "inf"}, 2,
			"pixelport-sweep: error: --sizes: bad size 'inf' (want WxH or bytes 1..2G (4096, 64K, 1.5M))"},
		Case{"sizes_1e300", "PIXELPORT_SWEEP", {"--pattern", "--sizes", "1e300"}, 2,
			"pixelport-sweep: error: --sizes: bad size '1e300' (want WxH or bytes 1..2G (4096, 64K, "
			"1.5M))"},
		Case{"sizes_2e64", "PIXELPORT_SWEEP", {"--pattern", "--sizes", "18446744073709551616"}, 2,
			"pixelport-sweep: error: --sizes: bad size '18446744073709551616' (want WxH or bytes 1..2G "
			"(4096, 64K, 1.5M))"},
		Case{"sizes_nan", "PIXELPORT_SWEEP", {"--pattern", "--sizes", "16K,nan"}, 2,
			"pixelport-sweep: error: --sizes: bad size 'nan' (want WxH or bytes 1..2G (4096, 64K, 1.5M))"},
		Case{"sizes_3G", "PIXELPORT_SWEEP", {"--pattern", "--sizes", "3G"}, 2,
			"pixelport-sweep: error: --sizes: bad size '3G' (want WxH or bytes 1..2G (4096, 64K, 1.5M))"},
		Case{"sizes_zero", "PIXELPORT_SWEEP", {"--pattern", "--sizes", "0"}, 2,
			"pixelport-sweep: error: --sizes: bad size '0' (want WxH or bytes 1..2G (4096, 64K, 1.5M))"},
		Case{"sizes_empty", "PIXELPORT_SWEEP", {"--pattern", "--sizes", ""}, 2,
			"pixelport-sweep: error: --sizes: empty (want WxH or bytes 1..2G (4096, 64K, 1.5M), "
			"comma-separated)"},
		Case{"sizes_empty_item", "PIXELPORT_SWEEP", {"--pattern", "--sizes", "16K,,64K"}, 2,
			"pixelport-sweep: error: --sizes: bad size '' (want WxH or bytes 1..2G (4096, 64K, 1.5M))"},
		Case{"sizes_wxh_overflow", "PIXELPORT_SWEEP", {"--pattern", "--sizes", "99999999999x2"}, 2,
			"pixelport-sweep: error: --sizes: size '99999999999x2' does not fit (want WxH, width and "
			"height 1..32767)"},
		Case{"sizes_wxh_junk", "PIXELPORT_SWEEP", {"--pattern", "--sizes", "64x48x2"}, 2,
			"pixelport-sweep: error: --sizes: size '64x48x2' does not fit (want WxH, width and height "
			"1..32767)"},
		Case{"min_size_nan", "PIXELPORT_SWEEP", {"--pattern", "--min-size", "nan"}, 2,
			"pixelport-sweep: error: --min-size: bad size 'nan' (want bytes 1..2G (4096, 64K, 1.5M))"},
		Case{"max_size_1e300", "PIXELPORT_SWEEP", {"--pattern", "--max-size", "1e300"}, 2,
			"pixelport-sweep: error: --max-size: bad size '1e300' (want bytes 1..2G (4096, 64K, 1.5M))"},
		Case{"min_over_max", "PIXELPORT_SWEEP", {"--pattern", "--min-size", "1M", "--max-size", "4K"}, 2,
			"pixelport-sweep: error: --min-size 1M is larger than --max-size 4K"},
		Case{"point_seconds_nan", "PIXELPORT_SWEEP", {"--pattern", "--point-seconds", "nan"}, 2,
			"pixelport-sweep: error: --point-seconds: 'nan' is not a number in 0..3600"},
		Case{"point_seconds_inf", "PIXELPORT_SWEEP", {"--pattern", "--point-seconds", "inf"}, 2,
			"pixelport-sweep: error: --point-seconds: 'inf' is not a number in 0..3600"},
		Case{"point_seconds_negative", "PIXELPORT_SWEEP", {"--pattern", "--point-seconds", "-1"}, 2,
			"pixelport-sweep: error: --point-seconds: '-1' is not a number in 0..3600"},
		Case{"confirm_seconds_nan", "PIXELPORT_SWEEP", {"--pattern", "--confirm-seconds", "nan"}, 2,
			"pixelport-sweep: error: --confirm-seconds: 'nan' is not a number in 0..60"},
		Case{"steps_zero", "PIXELPORT_SWEEP", {"--pattern", "--steps", "0"}, 2,
			"pixelport-sweep: error: --steps: '0' is not an integer in 1..64"},
		Case{"steps_hex", "PIXELPORT_SWEEP", {"--pattern", "--steps", "0x10"}, 2,
			"pixelport-sweep: error: --steps: '0x10' is not an integer in 1..64"},
		Case{"frames_overflow", "PIXELPORT_SWEEP", {"--pattern", "--frames", "99999999999999999999"}, 2,
			"pixelport-sweep: error: --frames: '99999999999999999999' is not an integer in 1..100000"},
		Case{"warmup_negative", "PIXELPORT_SWEEP", {"--pattern", "--warmup", "-1"}, 2,
			"pixelport-sweep: error: --warmup: '-1' is not an integer in 0..1000"},
		Case{"timeout_low", "PIXELPORT_SWEEP", {"--pattern", "--timeout-ms", "99"}, 2,
			"pixelport-sweep: error: --timeout-ms: '99' is not an integer in 100..600000"},
		Case{"seed_minus", "PIXELPORT_SWEEP", {"--pattern", "--seed", "-1"}, 2,
			"pixelport-sweep: error: --seed: '-1' is not an integer in 0..4294967295"},
		Case{"seed_2e32", "PIXELPORT_SWEEP", {"--pattern", "--seed", "4294967296"}, 2,
			"pixelport-sweep: error: --seed: '4294967296' is not an integer in 0..4294967295"},
		Case{"compositor_pid_minus", "PIXELPORT_SWEEP", {"--pattern", "--compositor-pid", "-1"}, 2,
			"pixelport-sweep: error: --compositor-pid: '-1' is not an integer in 0..4194304"},
		Case{"peer_timeout_zero", "PIXELPORT_SWEEP", {"--pattern", "--peer-timeout", "0"}, 2,
			"pixelport-sweep: error: --peer-timeout: '0' is not an integer in 1..86400"},
		Case{"instances_zero", "PIXELPORT_SWEEP", {"--pattern", "--instances", "0"}, 2,
			"pixelport-sweep: error: --instances: '0' is not an integer in 1..64"},
		Case{"pressure_size", "PIXELPORT_SWEEP", {"--pattern", "--instances", "1", "--pressure-size", "0x10"},
			2, "pixelport-sweep: error: --pressure-size '0x10' does not fit (want WxH, each 1..32767)"},
		Case{"unknown_option", "PIXELPORT_SWEEP", {"--pattern", "--size", "4K"}, 2,
			"pixelport-sweep: error: The following arguments were not expected: 4K --size"},
		Case{"good_values", "PIXELPORT_SWEEP",
			{"--pattern", "--sizes", "1,16K,1.5M,64x48", "--point-seconds", "0", "--confirm-seconds", "60",
				"--steps", "64", "--seed", "4294967295", "--frames", "100000", "--warmup", "0",
				"--timeout-ms", "100", "--compositor-pid", "0", "--peer-timeout", "86400"},
			1, kNoDisplay},
		Case{"good_range", "PIXELPORT_SWEEP",
			{"--pattern", "--min-size", "4K", "--max-size", "4K", "--steps", "1"}, 1, kNoDisplay}),
	case_name);

INSTANTIATE_TEST_SUITE_P(Compositor, BadArguments,
	::testing::Values(Case{"output_nan", "PIXELPORT_COMPOSITOR", {"--output", "100x100@nan"}, 2,
				  "pixelport-compositor: error: --output '100x100@nan': want WIDTHxHEIGHT[@HZ], width "
				  "and height 1..16384, HZ "
				  "0.001..1000 (e.g. 1920x1080@60)"},
		Case{"output_inf", "PIXELPORT_COMPOSITOR", {"--output", "100x100@inf"}, 2,
			"~--output '100x100@inf': want"},
		Case{"output_zero_hz", "PIXELPORT_COMPOSITOR", {"--output", "100x100@0"}, 2,
			"~--output '100x100@0': want"},
		Case{"output_fast", "PIXELPORT_COMPOSITOR", {"--output", "100x100@1001"}, 2,
			"~--output '100x100@1001': want"},
		Case{"output_hz_junk", "PIXELPORT_COMPOSITOR", {"--output", "100x100@60Hz"}, 2,
			"~--output '100x100@60Hz': want"},
		Case{"output_zero_width", "PIXELPORT_COMPOSITOR", {"--output", "0x100"}, 2, "~--output '0x100': want"},
		Case{"output_wide", "PIXELPORT_COMPOSITOR", {"--output", "16385x100"}, 2,
			"~--output '16385x100': want"},
		Case{"output_overflow", "PIXELPORT_COMPOSITOR", {"--output", "4294967397x100"}, 2,
			"~--output '4294967397x100': want"},
		Case{"output_junk", "PIXELPORT_COMPOSITOR", {"--output", "100x100junk"}, 2,
			"~--output '100x100junk': want"},
		Case{"outputs_zero", "PIXELPORT_COMPOSITOR", {"--outputs", "0"}, 2,
			"pixelport-compositor: error: --outputs: '0' is not an integer in 1..16"},
		Case{"outputs_nan", "PIXELPORT_COMPOSITOR", {"--outputs", "nan"}, 2,
			"pixelport-compositor: error: --outputs: 'nan' is not an integer in 1..16"},
		Case{"convert_threads", "PIXELPORT_COMPOSITOR", {"--convert-threads", "65"}, 2,
			"pixelport-compositor: error: --convert-threads: '65' is not an integer in 1..64"},
		Case{"image_budget_low", "PIXELPORT_COMPOSITOR", {"--image-budget-client", "1"}, 2,
			"pixelport-compositor: error: --image-budget-client: '1' is not an integer in "
			"1048576..70368744177664"},
		Case{"image_budget_2e64", "PIXELPORT_COMPOSITOR", {"--image-budget-total", "18446744073709551616"}, 2,
			"pixelport-compositor: error: --image-budget-total: '18446744073709551616' is not an integer "
			"in "
			"1048576..70368744177664"},
		Case{"stream_buffer_bytes_minus", "PIXELPORT_COMPOSITOR", {"--stream-max-buffer-bytes", "-1"}, 2,
			"pixelport-compositor: error: --stream-max-buffer-bytes: '-1' is not an integer in "
			"0..70368744177664"},
		Case{"stream_buffers", "PIXELPORT_COMPOSITOR", {"--stream-max-buffers", "1048577"}, 2,
			"pixelport-compositor: error: --stream-max-buffers: '1048577' is not an integer in 0..1048576"},
		Case{"stream_inflight_real", "PIXELPORT_COMPOSITOR", {"--stream-max-inflight-bytes", "1e9"}, 2,
			"pixelport-compositor: error: --stream-max-inflight-bytes: '1e9' is not an integer in "
			"0..70368744177664"},
		Case{"stream_streams", "PIXELPORT_COMPOSITOR", {"--stream-max-streams", "65537"}, 2,
			"pixelport-compositor: error: --stream-max-streams: '65537' is not an integer in 0..65536"},
		Case{"stream_client_bytes_hex", "PIXELPORT_COMPOSITOR", {"--stream-max-client-bytes", "0x10"}, 2,
			"pixelport-compositor: error: --stream-max-client-bytes: '0x10' is not an integer in "
			"0..70368744177664"},
		Case{"unknown_option", "PIXELPORT_COMPOSITOR", {"--bogus"}, 2,
			"pixelport-compositor: error: The following argument was not expected: --bogus"},
		// Starts for real (headless) and ends with its startup command.
		Case{"good_values", "PIXELPORT_COMPOSITOR",
			{"--output", "320x200@0.5", "--outputs", "16", "--convert-threads", "64",
				"--stream-max-buffers", "0", "--stream-max-client-bytes", "70368744177664",
				"--image-budget-client", "1048576", "--log-level", "error", "--startup", "true"},
			0, ""}),
	case_name);

INSTANTIATE_TEST_SUITE_P(Paint, BadArguments,
	::testing::Values(Case{"size_zero", "PIXELPORT_PAINT", {"--size", "0x10"}, 2,
				  "pixelport-paint: error: --size '0x10': want WIDTHxHEIGHT, each 1..65535"},
		Case{"size_junk", "PIXELPORT_PAINT", {"--size", "10x10junk"}, 2,
			"pixelport-paint: error: --size '10x10junk': want WIDTHxHEIGHT, each 1..65535"},
		Case{"size_overflow", "PIXELPORT_PAINT", {"--size", "4294967297x1"}, 2,
			"pixelport-paint: error: --size '4294967297x1': want WIDTHxHEIGHT, each 1..65535"},
		Case{"seed_2e32", "PIXELPORT_PAINT", {"--seed", "4294967296"}, 2,
			"pixelport-paint: error: --seed: '4294967296' is not an integer in 0..4294967295"},
		Case{"stride_pad", "PIXELPORT_PAINT", {"--stride-pad", "4097"}, 2,
			"pixelport-paint: error: --stride-pad: '4097' is not an integer in 0..4096"},
		Case{"hold_ms", "PIXELPORT_PAINT", {"--hold-ms", "-2"}, 2,
			"pixelport-paint: error: --hold-ms: '-2' is not an integer in -1..2147483647"},
		Case{"chunk_zero", "PIXELPORT_PAINT", {"--chunk", "0"}, 2,
			"pixelport-paint: error: --chunk '0': want N or random:N, N 1..1073741824"},
		Case{"chunk_random_junk", "PIXELPORT_PAINT", {"--chunk", "random:x"}, 2,
			"pixelport-paint: error: --chunk 'random:x': want N or random:N, N 1..1073741824"},
		Case{"frame_seed_word", "PIXELPORT_PAINT", {"--frame", "seed=abc"}, 2,
			"pixelport-paint: error: --frame 'seed=abc': bad seed 'abc' (want 0..4294967295)"},
		Case{"frame_seed_minus", "PIXELPORT_PAINT", {"--frame", "seed=-1"}, 2,
			"pixelport-paint: error: --frame 'seed=-1': bad seed '-1' (want 0..4294967295)"},
		Case{"frame_damage_short", "PIXELPORT_PAINT", {"--frame", "damage=1:2:3"}, 2,
			"pixelport-paint: error: --frame 'damage=1:2:3': bad damage '1:2:3' (want x:y:w:h, each "
			"-65535..65535)"},
		Case{"frame_damage_long", "PIXELPORT_PAINT", {"--frame", "damage=1:2:3:4:5"}, 2,
			"pixelport-paint: error: --frame 'damage=1:2:3:4:5': bad damage '1:2:3:4:5' (want x:y:w:h, "
			"each -65535..65535)"},
		Case{"frame_damage_huge", "PIXELPORT_PAINT", {"--frame", "damage=0:0:2147483647:1"}, 2,
			"pixelport-paint: error: --frame 'damage=0:0:2147483647:1': bad damage '0:0:2147483647:1' "
			"(want x:y:w:h, each "
			"-65535..65535)"},
		Case{"frame_size", "PIXELPORT_PAINT", {"--frame", "size=0x0"}, 2,
			"pixelport-paint: error: --frame 'size=0x0': bad size '0x0' (want WxH, each 1..65535)"},
		Case{"frame_fill", "PIXELPORT_PAINT", {"--frame", "fill=some"}, 2,
			"pixelport-paint: error: --frame 'fill=some': bad fill 'some' (want all or damage)"},
		Case{"frame_buffer", "PIXELPORT_PAINT", {"--frame", "buffer=2"}, 2,
			"pixelport-paint: error: --frame 'buffer=2': bad buffer '2' (want 0 or 1)"},
		Case{"transport", "PIXELPORT_PAINT", {"--transport", "carrier-pigeon"}, 2,
			"pixelport-paint: error: --transport 'carrier-pigeon': want shm, shm-new, socket, pipe or "
			"auto"},
		Case{"good_values", "PIXELPORT_PAINT",
			{"--size", "65535x1", "--seed", "4294967295", "--stride-pad", "4096", "--hold-ms", "-1",
				"--chunk", "random:4096", "--frame",
				"seed=3,damage=-65535:0:8:8,fill=damage,buffer=1,size=64X48"},
			1, kNoDisplay}),
	case_name);

// pixelport-bench-shm: built only with Google Benchmark, after this test; bench/transport runs
// these cases as their own meson test (bench-shm-arguments), the bad-arguments test leaves them out.
INSTANTIATE_TEST_SUITE_P(BenchShm, BadArguments,
	::testing::Values(Case{"small_runs_minus", "PIXELPORT_BENCH_SHM", {"--small-runs", "-1"}, 2,
				  "pixelport-bench-shm: error: --small-runs: '-1' is not an integer in 0..1000"},
		Case{"small_runs_hex", "PIXELPORT_BENCH_SHM", {"--small-runs", "0x10"}, 2,
			"pixelport-bench-shm: error: --small-runs: '0x10' is not an integer in 0..1000"},
		Case{"small_runs_over", "PIXELPORT_BENCH_SHM", {"--small-runs", "1001"}, 2,
			"pixelport-bench-shm: error: --small-runs: '1001' is not an integer in 0..1000"},
		Case{"busy_word", "PIXELPORT_BENCH_SHM", {"--busy", "sometimes"}, 2,
			"pixelport-bench-shm: error: --busy: sometimes not in {off,on,alternate}"},
		Case{"busy_alternate_alone", "PIXELPORT_BENCH_SHM", {"--busy", "alternate"}, 2,
			"pixelport-bench-shm: error: --busy alternate needs --small-runs"},
		Case{"busy_cpu_low", "PIXELPORT_BENCH_SHM", {"--busy-cpu", "-2"}, 2,
			"pixelport-bench-shm: error: --busy-cpu: '-2' is not an integer in -1..1023"},
		Case{"busy_cpu_nan", "PIXELPORT_BENCH_SHM", {"--busy-cpu", "nan"}, 2,
			"pixelport-bench-shm: error: --busy-cpu: 'nan' is not an integer in -1..1023"},
		Case{"busy_cpu_not_ours", "PIXELPORT_BENCH_SHM", {"--busy-cpu", "1023"}, 2,
			"pixelport-bench-shm: error: --busy-cpu: CPU 1023 is not one this process may run on"},
		Case{"frames_scale_nan", "PIXELPORT_BENCH_SHM", {"--frames-scale", "nan"}, 2,
			"pixelport-bench-shm: error: --frames-scale: 'nan' is not a number in 0.01..100"},
		Case{"frames_scale_zero", "PIXELPORT_BENCH_SHM", {"--frames-scale", "0"}, 2,
			"pixelport-bench-shm: error: --frames-scale: '0' is not a number in 0.01..100"},
		Case{"unknown_option", "PIXELPORT_BENCH_SHM", {"--bogus"}, 2,
			"pixelport-bench-shm: error: The following argument was not expected: --bogus"},
		// Goes on: the busy loop starts, the first compositor cannot, and the loop is ended.
		Case{"good_values", "PIXELPORT_BENCH_SHM",
			{"--small-runs", "1000", "--busy", "on", "--busy-cpu", "-1", "--quick", "--frames-scale", "100",
				"--compositor", "{D}/no-compositor"},
			1, "~pixelport-bench-shm: run 1: plugin: "}),
	case_name);
#endif

} // namespace
