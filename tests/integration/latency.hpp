// The one rule for every latency a test asserts (a second client's roundtrip, a frame's commit to
// presentation, an exit, a request's answer): it is held to a baseline measured in the same test
// under the same conditions (the same machine, its load at that moment, the same build), never
// to a fixed number alone. A latency passes when it is at most
//
//     max(floor, factor x baseline) + steal
//
// where the baseline is stock wlroots' figure (pixelport-compositor --no-plugin) for the same
// client, or where stock cannot serve that client (the plugin's own protocols, formats stock
// does not take), the same compositor's figure without what the test adds (say which, and why,
// where the test takes it). The floor (50 ms by default) is what scheduling alone costs a busy
// machine; the factor (2) is the slack of two measurements of one thing; steal is CPU time the
// hypervisor took from the machine in the window (no process ran then: StealWindow).
// docs/testing.md, "Latencies".
#pragma once

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace pixelport::test {

/**
 * The sanitizers slow every process several times (every byte copied and converted is
 * checked): their builds get floors kLatencyScale times as long.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr int kLatencyScale = 4;
#else
inline constexpr int kLatencyScale = 1;
#endif

/** The default floor, ms: below it, the machine's scheduling decides, not the compositor. */
inline constexpr int kLatencyFloorMs = 50 * kLatencyScale;

/** A latency's baseline: a figure of the same test, and what it is. */
struct LatencyBaseline {
	uint64_t us = 0; // µs
	std::string what; // e.g. "stock wlroots (--no-plugin), the same client"
};

/** How a latency is held to its baseline: at most max(floor_us, factor x baseline). */
struct LatencyRule {
	uint64_t floor_us = static_cast<uint64_t>(kLatencyFloorMs) * 1000;
	double factor = 2.0;
};

/** max(rule.floor_us, rule.factor x base.us) + steal_us, µs. */
inline uint64_t latency_bound_us(const LatencyBaseline &base, uint64_t steal_us = 0, const LatencyRule &rule = {}) {
	const auto scaled = static_cast<uint64_t>(rule.factor * static_cast<double>(base.us));
	return std::max(rule.floor_us, scaled) + steal_us;
}

/**
 * Expects `got_us` (µs) within latency_bound_us(base, steal_us, rule), reporting both figures
 * when not; prints one line "latency NAME got_us=N baseline_us=N bound_us=N (WHAT)" either way,
 * so that runs can be compared. Returns whether it was within.
 */
inline bool expect_latency(const std::string &name, uint64_t got_us, const LatencyBaseline &base, uint64_t steal_us = 0,
	const LatencyRule &rule = {}) {
	const uint64_t bound = latency_bound_us(base, steal_us, rule);
	printf("latency %s got_us=%llu baseline_us=%llu bound_us=%llu (%s)\n", name.c_str(),
		static_cast<unsigned long long>(got_us), static_cast<unsigned long long>(base.us),
		static_cast<unsigned long long>(bound), base.what.c_str());
	fflush(stdout);
	EXPECT_LE(got_us, bound) << name << ": " << got_us << " us against a baseline of " << base.us << " us ("
				 << base.what << "): at most max(" << rule.floor_us << " us, " << rule.factor
				 << " x baseline) + " << steal_us << " us stolen by the hypervisor";
	return got_us <= bound;
}

/**
 * Time the hypervisor held a CPU without telling the guest. Some VMs (this project's CI machines
 * among them) report no steal in /proc/stat, yet now and then do not run a vCPU at all for
 * 50-180 ms, which the guest charges as run time to whatever thread was on it (seen with perf: a
 * CPU with no sample for 105 ms while the compositor's main thread was "running" there, and a
 * sleeper pinned to that CPU waking that late). One thread pinned to each CPU sleeps 1 ms at a
 * time and counts how late it wakes beyond kSlackNs: a nice-0 thread that sleeps almost all the
 * time waits a few scheduler slices at most (under 11 ms measured here beside four spinning
 * processes), so lateness beyond the slack is time that CPU did not run.
 */
class StallWatch {
public:
	static constexpr uint64_t kSlackNs = 20'000'000;
	static constexpr uint64_t kSleepNs = 1'000'000;
	static constexpr int kMaxCpus = 256;

	/** The process's watch, started at the first call; never destroyed (its threads run until
	 * the process exits). */
	static StallWatch &get() {
		static StallWatch *watch = new StallWatch();
		return *watch;
	}
	/** Time CPU `cpu` stalled since the watch started, µs (0 for a CPU not watched). */
	uint64_t stalled_us(int cpu) const {
		return cpu >= 0 && cpu < kMaxCpus ? stalled_ns_[cpu].load(std::memory_order_relaxed) / 1000 : 0;
	}

private:
	StallWatch() {
		cpu_set_t allowed;
		CPU_ZERO(&allowed);
		if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
		for (int cpu = 0; cpu < kMaxCpus; cpu++) {
			if (!CPU_ISSET(cpu, &allowed)) continue;
			try {
				std::thread([this, cpu] { watch(cpu); }).detach();
			} catch (const std::system_error &) {
				return;
			}
		}
	}
	static uint64_t now_ns() {
		timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
	}
	void watch(int cpu) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) return;
		for (;;) {
			const uint64_t before = now_ns();
			timespec nap = {0, static_cast<long>(kSleepNs)};
			nanosleep(&nap, nullptr);
			const uint64_t slept = now_ns() - before;
			if (slept > kSleepNs + kSlackNs)
				stalled_ns_[cpu].fetch_add(slept - kSleepNs - kSlackNs, std::memory_order_relaxed);
		}
	}
	std::atomic<uint64_t> stalled_ns_[kMaxCpus] = {};
};

/**
 * Time taken from each CPU since boot (index: /proc/stat's order), µs: its steal (/proc/stat
 * "cpuN" lines, 8th value, USER_HZ ticks) and the stalls StallWatch saw on it since it started.
 */
inline std::vector<uint64_t> cpu_stolen_us() {
	StallWatch &watch = StallWatch::get();
	std::vector<uint64_t> out;
	std::ifstream in("/proc/stat");
	std::string line;
	const long hz = sysconf(_SC_CLK_TCK);
	while (std::getline(in, line)) {
		if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !isdigit(static_cast<unsigned char>(line[3])))
			continue;
		const int cpu = atoi(line.c_str() + 3);
		std::istringstream fields(line.substr(line.find(' ')));
		uint64_t v[8] = {};
		for (uint64_t &x : v) fields >> x;
		out.push_back((hz > 0 ? v[7] * 1000000u / static_cast<uint64_t>(hz) : 0) + watch.stalled_us(cpu));
	}
	return out;
}

/** The most time taken from any one CPU between two cpu_stolen_us() readings, µs. */
inline uint64_t stolen_between(const std::vector<uint64_t> &before, const std::vector<uint64_t> &after) {
	uint64_t most = 0;
	for (size_t i = 0; i < before.size() && i < after.size(); i++) {
		if (after[i] > before[i]) most = std::max(most, after[i] - before[i]);
	}
	return most;
}

/** The steal of a window: from construction to each us(). */
class StealWindow {
public:
	StealWindow() : start_(cpu_stolen_us()) {}
	uint64_t us() const { return stolen_between(start_, cpu_stolen_us()); }

private:
	std::vector<uint64_t> start_;
};

} // namespace pixelport::test
