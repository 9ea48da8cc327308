// Waiting for a state: the one way the tests and their clients wait for something another
// process or thread does without telling them (a file written, a count dropping, a thread
// named, a compositor idle again). Never a fixed sleep: a sleep that is long enough on a quiet
// machine is too short on a busy one, and too long everywhere else. Header-only, so that
// every test program and test client can use it.
#pragma once

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>

namespace pixelport::test {

/** CLOCK_MONOTONIC, ms. */
inline uint64_t monotonic_ms() {
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

/**
 * Calls done() until it returns true or `timeout` has passed (CLOCK_MONOTONIC), every
 * `interval` in between; done() is asked once more at the deadline. Returns its last answer.
 * The interval is how often to look, not a guess of how long the state takes.
 */
inline bool wait_until(const std::function<bool()> &done, std::chrono::milliseconds timeout,
	std::chrono::microseconds interval = std::chrono::milliseconds(10)) {
	const uint64_t deadline = monotonic_ms() + static_cast<uint64_t>(timeout.count());
	for (;;) {
		if (done()) return true;
		const uint64_t now = monotonic_ms();
		if (now >= deadline) return done();
		const uint64_t left_us = (deadline - now) * 1000;
		const uint64_t step_us = static_cast<uint64_t>(interval.count());
		usleep(static_cast<useconds_t>(step_us < left_us ? step_us : left_us)); // the polling interval
	}
}

/**
 * Waits until value() moves by at most `tolerance` between looks `still` times in a row,
 * `interval` apart (the first look one interval after the call), or `timeout` passed: a file
 * another process writes that stopped growing, a thread's CPU time or wake-ups that stopped
 * advancing. Returns whether it settled.
 */
inline bool wait_until_steady(const std::function<uint64_t()> &value, int still, std::chrono::milliseconds interval,
	std::chrono::milliseconds timeout, uint64_t tolerance = 0) {
	const uint64_t deadline = monotonic_ms() + static_cast<uint64_t>(timeout.count());
	uint64_t last = value();
	int same = 0;
	while (monotonic_ms() < deadline) {
		usleep(static_cast<useconds_t>(interval.count()) * 1000); // the polling interval
		const uint64_t now = value();
		same = (now >= last ? now - last : last - now) <= tolerance ? same + 1 : 0;
		last = now;
		if (same >= still) return true;
	}
	return false;
}

} // namespace pixelport::test
