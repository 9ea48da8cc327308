// What pixelport-pacing-client printed, and the judgement of it, shared by test_pacing.cpp (the
// reference compositor) and tests/compositors (sway, labwc, cage).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace pixelport::test {

/** One line of the client: "frame I presented NS REFRESH" or "frame I discarded". */
struct PacedFrame {
	bool presented = false;
	uint64_t ns = 0, refresh = 0;
};

inline std::vector<PacedFrame> parse_paced(const std::string &out, const std::string &what = "frame") {
	std::vector<PacedFrame> frames;
	std::istringstream lines(out);
	for (std::string line; std::getline(lines, line);) {
		std::istringstream words(line);
		std::string kind, state;
		size_t i = 0;
		if (!(words >> kind >> i >> state) || kind != what || i > 100000) continue;
		PacedFrame s;
		s.presented = state == "presented";
		if (s.presented) words >> s.ns >> s.refresh;
		if (frames.size() <= i) frames.resize(i + 1);
		frames[i] = s;
	}
	return frames;
}

/**
 * The output's refresh as the frames show it: what wp_presentation reported, else (wlroots'
 * headless outputs report 0) the median interval between consecutive presentations.
 */
inline uint64_t paced_refresh(const std::vector<PacedFrame> &frames) {
	std::vector<uint64_t> gaps;
	for (size_t i = 0; i < frames.size(); i++) {
		if (frames[i].presented && frames[i].refresh != 0) return frames[i].refresh;
		if (i > 0 && frames[i].presented && frames[i - 1].presented && frames[i].ns > frames[i - 1].ns) {
			gaps.push_back(frames[i].ns - frames[i - 1].ns);
		}
	}
	if (gaps.empty()) return 0;
	std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
	return gaps[gaps.size() / 2];
}

/**
 * Every frame presented, one per refresh: none in the same refresh as the one before (merged),
 * none a refresh or more late (skipped). What failed, "" if nothing did.
 * A skipped refresh lengthens a gap by a whole refresh; a frame timer that fires late by the
 * same by its lateness, and wlroots' headless output re-arms its timer at each commit
 * (backend/headless/output.c), so a main thread woken 11 ms late on a loaded machine shows as a
 * 27 ms gap with no frame skipped. A gap is a skip past 1.75 refreshes, and beyond that by no
 * more than `stolen_ns` in all (time the hypervisor did not run the machine in the window,
 * latency.hpp's StealWindow).
 */
inline std::string paced_verdict(
	const std::vector<PacedFrame> &frames, size_t expected, uint64_t refresh, uint64_t stolen_ns = 0) {
	std::ostringstream why;
	if (frames.size() != expected) why << frames.size() << " frames reported, " << expected << " committed; ";
	if (refresh == 0) why << "no refresh known; ";
	uint64_t excused = 0; // of stolen_ns
	for (size_t i = 0; i < frames.size(); i++) {
		if (!frames[i].presented) why << "frame " << i << " not presented; ";
		if (i == 0 || !frames[i].presented || !frames[i - 1].presented) continue;
		const uint64_t gap = frames[i].ns > frames[i - 1].ns ? frames[i].ns - frames[i - 1].ns : 0;
		const uint64_t skip = refresh * 7 / 4;
		if (gap < refresh / 2) {
			why << "frames " << i - 1 << " and " << i << " in one refresh; ";
		} else if (gap > skip && (excused += gap - skip) > stolen_ns) {
			why << "frame " << i << " " << gap / 1000 << " us after the one before; ";
		}
	}
	return why.str();
}

/** "timed I target NS present NS refresh NS" lines: each at or after its target, within a refresh. */
inline std::string timed_verdict(const std::string &out, int expected) {
	std::ostringstream why;
	std::istringstream lines(out);
	int seen = 0;
	for (std::string line; std::getline(lines, line);) {
		unsigned long long i = 0, target = 0, present = 0, refresh = 0;
		if (sscanf(line.c_str(), "timed %llu target %llu present %llu refresh %llu", &i, &target, &present,
			    &refresh) != 4) {
			continue;
		}
		seen++;
		if (present < target) why << "frame " << i << " " << (target - present) / 1000 << " us early; ";
		if (present >= target + refresh)
			why << "frame " << i << " " << (present - target) / 1000 << " us late; ";
	}
	if (seen != expected) why << seen << " timed frames reported, " << expected << " made; ";
	return why.str();
}

} // namespace pixelport::test
