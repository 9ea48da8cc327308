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
// hypervisor took from the machine in the window (no process ran then). docs/testing.md,
// "Latencies".
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

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

} // namespace pixelport::test
