// The progress line on stderr: a bar on a terminal, one line per step otherwise.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <string>

#include "wayland_client.hpp"

namespace pixelport::sweep {

/** Steps done of `total`, with an estimate of the time left. */
struct Progress {
	bool tty = isatty(STDERR_FILENO) != 0;
	int total = 0, done = 0;
	uint64_t start = client::now_ns();
	// "about 3 min left": the time so far per step times the steps left (sizes grow, so early
	// estimates are low; it says so by being an estimate).
	std::string left() const;
	void step(const std::string &label, const std::string &result);
};

} // namespace pixelport::sweep
