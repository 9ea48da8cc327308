// Shared by the test clients that take a MODE on their command line (stream_client,
// timing_client, hostile_client): the mode's arguments, main()'s dispatch to the mode's
// function, and the test pattern's frames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

// These clients stop mid-protocol on purpose and leave their objects to the exit: no leak
// reports from LeakSanitizer in the sanitizer build (weak: absent in normal builds).
extern "C" void __lsan_disable(void) __attribute__((weak));

namespace pixelport::test {

/** What follows the mode on the command line (argv[2], argv[3], ...), passed to the mode. */
struct ModeArgs {
	std::vector<const char *> args;

	/** Argument `i` (0: the first after the mode), or `fallback` when there is none. */
	const char *at(size_t i, const char *fallback = "") const { return i < args.size() ? args[i] : fallback; }
	/** Argument `i` as a decimal number; 0 when there is none. */
	long number(size_t i) const;
	/** Whether argument `i` is there and is `value`. */
	bool is(size_t i, const char *value) const;
};

using Mode = int (*)(const ModeArgs &);
using ModeTable = std::map<std::string, Mode>;

/** Connects the client's connection for `mode`; false with *error set when it cannot serve. */
using ModeConnect = bool (*)(const std::string &mode, const ModeArgs &args, std::string *error);

/**
 * main() of a client with modes: disables LeakSanitizer, connects (a failure: its error on
 * stderr, exit status 1) and runs argv[1]'s function from `modes` with the arguments after it
 * (no mode or an unknown one: exit status 2).
 */
int run_mode(int argc, char *argv[], const ModeTable &modes, ModeConnect connect);

/** An XRGB8888 frame `w` x `h` of the test pattern with `seed`, tightly packed. */
std::vector<uint8_t> xrgb_frame(int w, int h, uint32_t seed);

} // namespace pixelport::test
