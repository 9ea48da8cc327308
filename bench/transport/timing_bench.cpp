// pixelport-bench-timing: what the timing export costs a client. One commit loop
// (small XRGB8888 wl_shm buffer, commit + wl_display_sync, as fast as possible) against plugin
// compositors running at once: no timing log ("off"), a second one started the same way
// ("off A/A": what two identical compositor processes differ by, the floor under any ratio
// between processes), --timing-log FILE ("log"), and the "off" compositor's own surface
// subscribed for the run through pixelport-timing-v1 version 2 ("subscriber v2": one report
// event per commit) or version 3 ("subscriber": batched reports): same process, same surface,
// so only the subscription differs; "off again" runs that surface unsubscribed, the control
// for those. Each set runs unpinned and pinned (client on one CPU, compositors on the others)
// in the same run: every round runs each variant once per mode, rotating the order, and the
// ratios to "off" come from the same rounds, with percentile-bootstrap 95% intervals (the
// per-round median's resamples compositor instances, whose rounds share their luck). A ratio
// below the target but inside its control's interval is reported as not resolved: on a noisy
// machine two identical setups differ by more than the 1% asked. Every compositor is started
// anew every --restart-every rounds, so that no variant's ratio rests on one process's luck.
#include <drm_fourcc.h>

#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <utility>

#include <CLI/CLI.hpp>

#include "bench_util.hpp"
#include "cli.hpp"

using namespace pixelport;
using namespace pixelport::bench;

namespace {

// One compositor process with the client's connection and surface on it (members are
// destroyed surface first, compositor last).
struct Instance {
	Compositor compositor;
	client::Connection conn;
	BenchSurface surface;
};

// What a variant's recorded runs measured. A warm-up run measures into a scratch one.
struct Measured {
	std::vector<double> rates; // commits/s per run, one per round
	std::vector<double> steal; // host steal during each run / its length (all CPUs' steal over one CPU's time)
	std::vector<double> latencies; // commit -> sync done, ns, every commit
	uint64_t records = 0;
	uint64_t events = 0; // timing events the client got (subscribers)
	uint64_t commits = 0;
	double cpu_client = 0, cpu_main = 0, cpu_others = 0; // ns over all runs
};

struct Variant {
	const char *name = "";
	std::vector<std::string> args;
	bool subscribe = false;
	bool pinned = false;
	Variant *host = nullptr; // runs on this variant's compositor and surface (subscribers)
	std::unique_ptr<client::TimingClient> timing; // subscribers: on the host's connection
	std::unique_ptr<Instance> at; // variants with their own compositor (host == nullptr)
	Measured m;
	uint64_t events_before = 0; // reports_events() when the run started
	uint64_t finished_before = 0; // finished() when the run started
};

// Commits for `seconds`; false on error. Commits/s and latencies go into v.
bool run(Variant &v, const Frame &a, const Frame &b, double seconds, std::string *error) {
	Variant &on = v.host != nullptr ? *v.host : v;
	BenchSurface &surface = on.at->surface;
	if (v.subscribe) {
		v.events_before = v.timing->reports_events();
		v.finished_before = v.timing->finished();
		v.timing->subscribe(surface.window.surface);
		if (!surface.conn->roundtrip()) { // subscribed before the first timed commit
			*error = "roundtrip failed: " + surface.conn->error_text();
			return false;
		}
	}
	const pid_t compositor = on.at->compositor.process.pid();
	CpuTime before = process_cpu(compositor);
	CpuTime client_before = process_cpu(getpid());
	const double steal_before = host_steal_ns();
	uint64_t start = now_ns(), end = start + static_cast<uint64_t>(seconds * 1e9);
	uint64_t commits = 0;
	while (now_ns() < end) {
		uint64_t done = surface.put_and_sync(commits % 2 ? b.px : a.px, now_ns(), error);
		if (done == 0) return false;
		v.m.latencies.push_back(static_cast<double>(done - surface.writer->timing().committed));
		commits++;
	}
	const double elapsed = static_cast<double>(now_ns() - start);
	v.m.rates.push_back(static_cast<double>(commits) * 1e9 / elapsed);
	v.m.steal.push_back((host_steal_ns() - steal_before) / elapsed);
	CpuTime after = process_cpu(compositor), client_after = process_cpu(getpid());
	v.m.cpu_main += after.main - before.main;
	v.m.cpu_others += after.others - before.others;
	v.m.cpu_client += client_after.main + client_after.others - client_before.main - client_before.others;
	v.m.commits += commits;
	if (v.subscribe) {
		v.timing->flush(); // batched: the reports still queued, then count
		if (!surface.conn->roundtrip()) {
			*error = "roundtrip failed: " + surface.conn->error_text();
			return false;
		}
		uint64_t finished = v.timing->finished() - v.finished_before;
		v.m.records += finished;
		v.m.events += v.timing->batching() ? v.timing->reports_events() - v.events_before : finished;
		v.timing->unsubscribe();
	}
	surface.clear();
	return true;
}

// (Re)starts every variant's compositor, connection and surface (subscribers get a new
// TimingClient on their host's connection) and runs each variant 0.2 s unrecorded: the first
// commits map pools and create textures. The previous instances stop first.
bool start_instances(std::vector<std::unique_ptr<Variant>> &variants, const std::string &binary, RuntimeDir &dir,
	const Frame &a, const Frame &b) {
	for (auto &v : variants) v->timing.reset(); // before their host's connection goes
	for (auto &v : variants) v->at.reset();
	std::string error;
	for (auto &v : variants) {
		if (v->host != nullptr) continue;
		pin_client_thread(v->pinned);
		v->at = std::make_unique<Instance>();
		Instance &in = *v->at;
		in.compositor.process.compositor_side = v->pinned;
		// Every surface gets a timing client (its own registry); only the subscriber's runs subscribe.
		if (!in.compositor.start(binary, dir, v->args, &error) ||
			!connect_to(&in.conn, in.compositor.socket_path, &error) ||
			!in.surface.open(&in.conn, client::TransportChoice::ShmReused, &error, true)) {
			fprintf(stderr, "pixelport-bench-timing: %s: %s\n", v->name, error.c_str());
			return false;
		}
		if (!in.surface.timed) {
			fprintf(stderr, "pixelport-bench-timing: no pixelport-timing-v1 global (plugin not loaded?)\n");
			return false;
		}
		in.surface.timing->unsubscribe();
	}
	for (auto &v : variants) {
		if (!v->subscribe) continue;
		bool batched = std::string(v->name) == "subscriber";
		// Counts what it receives and keeps one commit, as a subscriber that reads its reports
		// does (keeping every one would time this process's growing vector too).
		v->timing = std::make_unique<client::TimingClient>(&v->host->at->conn, 1, batched);
		if (!v->timing->available()) {
			fprintf(stderr, "pixelport-bench-timing: no pixelport-timing-v1 global\n");
			return false;
		}
	}
	for (auto &v : variants) {
		pin_client_thread(v->pinned);
		Measured kept = std::exchange(v->m, {}); // the recorded runs so far
		if (!run(*v, a, b, 0.2, &error)) {
			fprintf(stderr, "pixelport-bench-timing: %s\n", error.c_str());
			return false;
		}
		v->m = std::move(kept);
	}
	return true;
}

double median_of(std::vector<double> v) { return stats_of(std::move(v)).median; }

struct Interval {
	double value = 0, low = 0, high = 0;
};

// Percentile bootstrap (2000 resamples, fixed seed: the same rates give the same interval).
constexpr int kResamples = 2000;

Interval percentile_interval(double value, std::vector<double> &samples) {
	std::sort(samples.begin(), samples.end());
	auto at = [&](double q) {
		return samples[static_cast<size_t>(q * static_cast<double>(samples.size() - 1) + 0.5)];
	};
	return {value, at(0.025), at(0.975)};
}

// median(cand) / median(base), resampling each variant's runs independently.
Interval ratio_of_medians(const std::vector<double> &base, const std::vector<double> &cand, uint64_t seed) {
	std::mt19937_64 rng(seed);
	std::vector<double> ratios, b(base.size()), c(cand.size());
	std::uniform_int_distribution<size_t> pick_b(0, base.size() - 1), pick_c(0, cand.size() - 1);
	for (int i = 0; i < kResamples; i++) {
		for (double &x : b) x = base[pick_b(rng)];
		for (double &x : c) x = cand[pick_c(rng)];
		ratios.push_back(median_of(c) / median_of(b));
	}
	return percentile_interval(median_of(cand) / median_of(base), ratios);
}

// Median of the per-round ratios cand[i] / base[i]. Rounds of one compositor instance share its
// luck (memory layout, which pages), so the interval resamples instances, not rounds: `block[i]`
// is the instance round i ran on, and each resample draws as many instances as there are, with
// their rounds. With one instance per variant this is resampling rounds.
Interval paired_median(const std::vector<double> &base, const std::vector<double> &cand,
	const std::vector<size_t> &block, uint64_t seed) {
	std::vector<double> paired;
	std::vector<std::vector<double>> blocks;
	for (size_t i = 0; i < base.size(); i++) {
		paired.push_back(cand[i] / base[i]);
		if (i == 0 || block[i] != block[i - 1]) blocks.emplace_back();
		blocks.back().push_back(paired.back());
	}
	if (blocks.size() < 2) { // one instance: its rounds are all there is to resample
		blocks.clear();
		for (double x : paired) blocks.push_back({x});
	}
	std::mt19937_64 rng(seed);
	std::uniform_int_distribution<size_t> pick(0, blocks.size() - 1);
	std::vector<double> medians, resample;
	for (int i = 0; i < kResamples; i++) {
		resample.clear();
		for (size_t b = 0; b < blocks.size(); b++) {
			const std::vector<double> &drawn = blocks[pick(rng)];
			resample.insert(resample.end(), drawn.begin(), drawn.end());
		}
		medians.push_back(median_of(resample));
	}
	return percentile_interval(median_of(paired), medians);
}

bool is_tmpfs(const std::string &path) {
	struct statfs fs;
	return statfs(path.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

std::string fmt_interval(const Interval &i) {
	char buf[64];
	snprintf(buf, sizeof(buf), "%.3fx [%.3f, %.3f]", i.value, i.low, i.high);
	return buf;
}

} // namespace

int main(int argc, char *argv[]) {
	CommonOptions common;
	int runs = 10;
	double seconds = 2.0;
	int size = 64;
	std::string modes = "both";
	int restart_every = 10;
	double max_steal_percent = 2;
	std::string log_dir = is_tmpfs("/dev/shm") ? "/dev/shm" : "";
	CLI::App app{"pixelport-bench-timing: commits/s with the timing export off, logging, and subscribed"};
	add_common_options(app, &common, false);
	app.add_option("--runs", runs, "rounds; each runs every variant once per mode")
		->capture_default_str()
		->transform(cli::Range(2, 1000));
	app.add_option("--seconds", seconds, "length of one run")
		->capture_default_str()
		->transform(cli::Range(0.1, 60.0));
	app.add_option("--size", size, "buffer width and height")
		->capture_default_str()
		->transform(cli::Range(1, 4096));
	app.add_option("--modes", modes, "unpinned, pinned or both (in the same rounds); --pin means pinned")
		->capture_default_str()
		->check(CLI::IsMember({"both", "unpinned", "pinned"}));
	app.add_option("--restart-every", restart_every,
		   "start every compositor anew after this many rounds (0: never): a process's own luck "
		   "(memory layout, which pages) is averaged over instances, as off A/A shows it must be")
		->capture_default_str()
		->transform(cli::Range(0, 1000));
	app.add_option("--max-steal", max_steal_percent,
		   "leave out rounds in which the hypervisor took more than this share of a run's time "
		   "(/proc/stat steal, all CPUs over one; 100: keep every round)")
		->capture_default_str()
		->transform(cli::Range(0.0, 100.0));
	app.add_option("--log-dir", log_dir,
		   "where the log variant writes its timing log (default /dev/shm, memory, as a desktop's "
		   "XDG_RUNTIME_DIR is; on a disk, the kernel's writeback of its 10 MB/s runs during the "
		   "other variants' rounds too)")
		->capture_default_str()
		->check(CLI::ExistingDirectory);
	if (int rc = cli::parse(app, argc, argv, "pixelport-bench-timing"); rc >= 0) return rc;
	const double max_steal = max_steal_percent / 100;
	if (common.quick) {
		runs = 3;
		seconds = 0.5;
	}
	if (common.pin) modes = "pinned";

	// Pinned compositors start on the compositor side's CPUs, unpinned ones on all; the client
	// thread moves between its CPU and all CPUs before each mode's runs.
	pin_client_side(modes != "unpinned");
	std::vector<bool> pin_modes;
	if (modes != "pinned") pin_modes.push_back(false);
	if (modes != "unpinned") {
		if (pin_client_thread(true)) {
			pin_modes.push_back(true);
		} else {
			fprintf(stderr,
				"pixelport-bench-timing: cannot pin (fewer than 2 CPUs); pinned mode left out\n");
			if (pin_modes.empty()) return 1;
		}
	}
	RuntimeDir dir;
	RuntimeDir logs(log_dir);
	if (logs.path().empty()) {
		fprintf(stderr, "pixelport-bench-timing: cannot make a directory in %s\n",
			log_dir.empty() ? "the temporary directory" : log_dir.c_str());
		return 1;
	}
	std::string error;
	constexpr size_t kVariants = 6; // per mode: off, off A/A, log, subscriber v2, subscriber, off again
	std::vector<std::unique_ptr<Variant>> variants;
	for (bool pinned : pin_modes) {
		Variant *off = nullptr;
		for (size_t k = 0; k < kVariants; k++) {
			auto v = std::make_unique<Variant>();
			v->pinned = pinned;
			v->name = k == 0 ? "off"
				: k == 1 ? "off A/A"
				: k == 2 ? "log"
				: k == 3 ? "subscriber v2"
				: k == 4 ? "subscriber"
					 : "off again";
			if (k == 2)
				v->args = {"--timing-log",
					logs.path() + "/timing-" + std::to_string(variants.size()) + ".jsonl"};
			v->subscribe = k == 3 || k == 4;
			if (k == 0) off = v.get();
			if (k >= 3) v->host = off;
			v->args.insert(v->args.end(), {"--output", common.output});
			variants.push_back(std::move(v));
		}
	}
	Frame a(DRM_FORMAT_XRGB8888, size, size, 1), b(DRM_FORMAT_XRGB8888, size, size, 2);
	double load[1] = {0};
	getloadavg(load, 1);
	printf("pixelport-bench-timing: %dx%d XRGB8888 wl_shm, commit + wl_display_sync loop, %d rounds x %.2f s per "
	       "variant and mode, alternating; %s; %u cores, load average %.2f; modes: %s%s; timing log in %s (%s)\n",
		size, size, runs, seconds,
		restart_every > 0 && restart_every < runs
			? ("compositors started anew every " + std::to_string(restart_every) + " rounds").c_str()
			: "one compositor process per variant",
		std::thread::hardware_concurrency(), load[0],
		pin_modes.size() == 2  ? "unpinned and pinned"
			: pin_modes[0] ? "pinned"
				       : "unpinned",
		pin_modes.back() ? " (pinned: client on the first CPU, compositors on the others)" : "",
		logs.path().c_str(), is_tmpfs(logs.path()) ? "tmpfs" : "not tmpfs");
	fflush(stdout);

	if (!start_instances(variants, common.compositor, dir, a, b)) return 1;
	size_t n_modes = pin_modes.size();
	for (int r = 0; r < runs; r++) {
		if (restart_every > 0 && r > 0 && r % restart_every == 0 &&
			!start_instances(variants, common.compositor, dir, a, b)) {
			return 1;
		}
		for (size_t m = 0; m < n_modes; m++) {
			size_t mode = (m + static_cast<size_t>(r)) % n_modes; // alternate which mode goes first
			pin_client_thread(pin_modes[mode]);
			for (size_t k = 0; k < kVariants; k++) {
				Variant &v = *variants[mode * kVariants +
					(static_cast<size_t>(r) + k) % kVariants]; // rotate who goes first
				if (!run(v, a, b, seconds, &error)) {
					fprintf(stderr, "pixelport-bench-timing: %s\n", error.c_str());
					return 1;
				}
			}
		}
	}
	pin_client_thread(false);

	std::vector<std::string> verdicts;
	for (size_t mode = 0; mode < n_modes; mode++) {
		// Rounds in which the hypervisor took CPU time from a run are left out: on a shared
		// host a burst of steal slows one run of a round and not the others, more than the 1%
		// this measures. All rounds count when too few are clean.
		std::vector<size_t> clean;
		for (size_t r = 0; r < static_cast<size_t>(runs); r++) {
			bool ok = true;
			for (size_t k = 0; k < kVariants; k++)
				ok = ok && variants[mode * kVariants + k]->m.steal[r] <= max_steal;
			if (ok) clean.push_back(r);
		}
		const size_t enough = std::max<size_t>(5, static_cast<size_t>(runs) / 5);
		char steal_text[32];
		snprintf(steal_text, sizeof(steal_text), "%g%%", max_steal_percent);
		std::string rounds_note = std::to_string(clean.size()) + " of " + std::to_string(runs) +
			" rounds with host steal at most " + steal_text + " of each run";
		if (clean.size() < enough) {
			rounds_note += ": too few, all rounds used";
			clean.clear();
			for (size_t r = 0; r < static_cast<size_t>(runs); r++) clean.push_back(r);
		}
		// The instance each clean round ran on (rounds [0, restart_every) on the first, ...).
		std::vector<size_t> instance;
		for (size_t r : clean)
			instance.push_back(restart_every > 0 ? r / static_cast<size_t>(restart_every) : 0);
		std::vector<std::vector<double>> rates(kVariants);
		for (size_t k = 0; k < kVariants; k++) {
			for (size_t r : clean) rates[k].push_back(variants[mode * kVariants + k]->m.rates[r]);
		}
		const std::vector<double> &off_rates = rates[0];
		Interval aa, same;
		// The controls' intervals are needed first.
		same = paired_median(off_rates, rates[kVariants - 1], instance, 1700 + kVariants - 1);
		Table t({"variant", "commits/s median", "min run", "max run", "ratio of medians [95% CI]",
			"per-round median [95% CI]", "commit->sync p50", "p95", "reports/commit", "events/commit",
			"CPU/commit: client", "compositor main", "other threads"});
		for (size_t k = 0; k < kVariants; k++) {
			const Variant &v = *variants[mode * kVariants + k];
			const std::vector<double> &v_rates = rates[k];
			Stats s = stats_of(v_rates), l = stats_of(v.m.latencies);
			char buf[5][32];
			snprintf(buf[0], sizeof(buf[0]), "%.0f", s.median);
			snprintf(buf[1], sizeof(buf[1]), "%.0f", *std::min_element(v_rates.begin(), v_rates.end()));
			snprintf(buf[2], sizeof(buf[2]), "%.0f", *std::max_element(v_rates.begin(), v_rates.end()));
			snprintf(buf[3], sizeof(buf[3]), "%.3f",
				static_cast<double>(v.m.records) / static_cast<double>(v.m.commits));
			snprintf(buf[4], sizeof(buf[4]), "%.3f",
				static_cast<double>(v.m.events) / static_cast<double>(v.m.commits));
			auto per_commit = [&](double ns) { return fmt_ns(ns / static_cast<double>(v.m.commits)); };
			std::string ratio = "1", paired = "1";
			if (k > 0) {
				Interval rm = ratio_of_medians(off_rates, v_rates, 17 + k);
				Interval pm = paired_median(off_rates, v_rates, instance, 1700 + k);
				ratio = fmt_interval(rm);
				paired = fmt_interval(pm);
				// Controls: "off A/A" for the other processes, "off again" for the off one's.
				if (k == 1) aa = pm;
				if (k == kVariants - 1) same = pm;
				char line[320];
				std::string verdict =
					pm.value >= 0.99 ? "target >= 0.990x met" : "below the 0.990x target";
				if (k == 1 || k == kVariants - 1) {
					verdict = k == 1 ? "control: two compositors started alike"
							 : "control: the off compositor against itself";
				} else if (pm.value < 0.99) {
					const Interval &control = v.host != nullptr ? same : aa;
					if (pm.value >= control.low)
						verdict += " (not resolved: inside the control's interval)";
				}
				snprintf(line, sizeof(line), "%s %s/off per-round median %s, ratio of medians %s: %s",
					pin_modes[mode] ? "pinned" : "unpinned", v.name, paired.c_str(), ratio.c_str(),
					verdict.c_str());
				verdicts.push_back(line);
			}
			t.row({v.name, buf[0], buf[1], buf[2], ratio, paired, fmt_ns(l.median), fmt_ns(l.p95),
				v.subscribe ? buf[3] : "-", v.subscribe ? buf[4] : "-", per_commit(v.m.cpu_client),
				per_commit(v.m.cpu_main), per_commit(v.m.cpu_others)});
		}
		t.print(std::string(pin_modes[mode] ? "Pinned (client on one CPU, compositors on the others)"
						    : "Unpinned (all processes on all CPUs)") +
			": timing export overhead, target per-round median >= 0.990x; " + rounds_note);
	}
	printf("\n");
	for (const std::string &line : verdicts) printf("%s\n", line.c_str());
	getloadavg(load, 1);
	printf("load average at the end: %.2f\n", load[0]);
	int rc = 0;
	for (auto &v : variants) {
		// Every commit but the last few of a run is reported (the rest are still queued).
		if (v->subscribe && v->m.records * 10 < v->m.commits * 9) {
			fprintf(stderr, "pixelport-bench-timing: %s got reports for %llu of %llu commits\n", v->name,
				static_cast<unsigned long long>(v->m.records),
				static_cast<unsigned long long>(v->m.commits));
			rc = 1;
		}
		v->timing.reset(); // on the hosts' connections, which go first
	}
	return rc; // surfaces, connections, then compositors go in that order
}
