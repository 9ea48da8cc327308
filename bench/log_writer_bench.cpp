// pixelport-bench-log-writer: CPU time of LogWriter's writer thread per record, by where the
// JSON Lines go. No compositor: one thread pushes CommitSamples at a compositor's rate (the
// bench-timing loop's 21,500 commits/s by default) in 1 ms ticks, as the event loop would,
// and the writer thread's CPU time (/proc/self/task/TID/schedstat, ns) is divided by the
// records. Variants alternate within each repetition so drift falls on all alike:
//   tmpfs           the log in --dir (default /dev/shm), as the compositor writes it
//   tmpfs, prealloc the same file with its pages allocated beforehand
//                   (fallocate FALLOC_FL_KEEP_SIZE): what page allocation costs
//   /dev/null       formatting, summary and pwrite() of the same text, no page cache
//   /dev/null, no summary
// Ratios are against /dev/null in the same run (docs/timing.md, "What timing costs").
#include <dirent.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "pixelport/timing/log_writer.hpp"
#include "pixelport/timing/summary.hpp"

namespace {

using namespace pixelport::timing;

// CPU time (ns) of every thread of this process but the caller: the writer thread here.
std::uint64_t other_threads_cpu_ns() {
	std::uint64_t sum = 0;
	const pid_t self = gettid();
	DIR *d = opendir("/proc/self/task");
	if (d == nullptr) return 0;
	while (dirent *e = readdir(d)) {
		if (e->d_name[0] == '.' || std::atoi(e->d_name) == self) continue;
		std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/schedstat");
		std::uint64_t ns = 0;
		f >> ns; // first field: time on a CPU
		sum += ns;
	}
	closedir(d);
	return sum;
}

struct Variant {
	const char *name;
	bool to_null;
	bool prealloc;
	bool summary;
	std::vector<double> ns_per_record;
	std::uint64_t dropped = 0;
};

struct Result {
	double ns_per_record;
	std::uint64_t dropped;
};

Result run_one(const Variant &v, const std::string &file, double seconds, int rate) {
	Summary summary;
	LogWriter::Options o;
	o.jsonl_path = v.to_null ? "/dev/null" : file;
	o.summary = v.summary ? &summary : nullptr;
	LogWriter w(o);
	if (v.prealloc) {
		const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
		// About 420 bytes a line; twice that for slack.
		const auto bytes = static_cast<off_t>(seconds * rate * 840);
		if (fd < 0 || fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, bytes) != 0) std::perror("fallocate");
		if (fd >= 0) ::close(fd);
	}
	SurfaceLabels labels;
	labels.surface_id = 3;
	labels.pid = 4242;
	labels.app_id = "pixelport-bench-timing";
	w.push(labels);
	CommitSample s;
	s.surface_id = 3;
	s.transport = Transport::ShmReused;
	s.format = fourcc('X', 'R', '2', '4');
	s.width = s.height = 64;
	s.bytes = s.damage_bytes = 64 * 64 * 4;
	s.output = "HEADLESS-1";
	const int per_tick = std::max(1, rate / 1000);
	const int ticks = static_cast<int>(seconds * 1000);
	const std::uint64_t before = other_threads_cpu_ns();
	std::uint64_t n = 0;
	auto next = std::chrono::steady_clock::now();
	for (int tick = 0; tick < ticks; tick++) {
		for (int i = 0; i < per_tick; i++) {
			const std::uint64_t t = monotonic_ns();
			s.seq = ++n;
			s.t_commit = t;
			s.t_upload_start = t + 2'000;
			s.t_upload_end = t + 9'000;
			s.t_present = t + 16'000'000;
			w.push(s);
		}
		next += std::chrono::milliseconds(1);
		std::this_thread::sleep_until(next);
	}
	w.flush(std::chrono::seconds(10));
	const std::uint64_t after = other_threads_cpu_ns();
	w.close();
	return {static_cast<double>(after - before) / static_cast<double>(n), w.dropped()};
}

double median(std::vector<double> v) {
	std::sort(v.begin(), v.end());
	const std::size_t m = v.size() / 2;
	return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

} // namespace

int main(int argc, char **argv) {
	CLI::App app("pixelport-bench-log-writer: the timing log writer thread's CPU per record, by destination");
	double seconds = 1;
	int reps = 10;
	int rate = 21'500;
	// A tmpfs, as a desktop's XDG_RUNTIME_DIR is; the temporary directory where there is none.
	std::string dir = std::filesystem::is_directory("/dev/shm") ? "/dev/shm"
		: std::getenv("TMPDIR") != nullptr                  ? std::getenv("TMPDIR")
								    : "/tmp";
	app.add_option("--seconds", seconds, "length of one variant's run")->check(CLI::Range(0.05, 60.0));
	app.add_option("--reps", reps, "repetitions; each runs every variant once")->check(CLI::Range(1, 1000));
	app.add_option("--rate", rate, "records pushed per second, in 1 ms ticks")->check(CLI::Range(1000, 1'000'000));
	app.add_option("--dir", dir, "where the file variants write (default /dev/shm: a tmpfs, as XDG_RUNTIME_DIR is)")
		->check(CLI::ExistingDirectory);
	CLI11_PARSE(app, argc, argv);

	std::vector<Variant> variants = {
		{"tmpfs", false, false, true, {}},
		{"tmpfs, prealloc", false, true, true, {}},
		{"/dev/null", true, false, true, {}},
		{"/dev/null, no summary", true, false, false, {}},
	};
	const std::string file = dir + "/pixelport-bench-log-writer-" + std::to_string(getpid()) + ".jsonl";
	std::printf("pixelport-bench-log-writer: %d records/s for %.2f s per run, %d repetitions, log file %s\n", rate,
		seconds, reps, file.c_str());
	std::fflush(stdout);
	try {
		for (int r = 0; r < reps; r++) {
			for (std::size_t k = 0; k < variants.size(); k++) {
				Variant &v = variants[(k + static_cast<std::size_t>(r)) % variants.size()];
				const Result res = run_one(v, file, seconds, rate);
				::unlink(file.c_str());
				v.ns_per_record.push_back(res.ns_per_record);
				v.dropped += res.dropped;
			}
		}
	} catch (const std::system_error &e) { // the log file cannot be made in --dir
		std::fprintf(stderr, "pixelport-bench-log-writer: %s\n", e.what());
		return 1;
	}
	const double base = median(variants[2].ns_per_record);
	std::printf("%-24s %14s %10s %10s %16s %8s\n", "variant", "median ns/rec", "min", "max", "ratio /dev/null",
		"dropped");
	int status = 0;
	for (const Variant &v : variants) {
		const auto [lo, hi] = std::minmax_element(v.ns_per_record.begin(), v.ns_per_record.end());
		std::printf("%-24s %14.0f %10.0f %10.0f %15.2fx %8llu\n", v.name, median(v.ns_per_record), *lo, *hi,
			median(v.ns_per_record) / base, static_cast<unsigned long long>(v.dropped));
		if (v.dropped != 0) status = 1; // the writer fell behind: per-record CPU is not comparable
	}
	return status;
}
