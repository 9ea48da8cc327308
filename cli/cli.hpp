// Command-line checks shared by pixelport's programs: whole-string numbers (finite, in range,
// no overflow), CLI11 validators built on them, one-line usage errors with exit status 2, and
// input files read only once they are known to be regular files under a size cap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <CLI/CLI.hpp>

namespace pixelport::cli {

/** Exit status of every usage error (a bad option, argument or value). */
inline constexpr int kUsageError = 2;

/** A decimal integer ("-12"; no '+', blanks, 0x or octal), the whole string, in [lo, hi]. */
bool parse_int(std::string_view s, int64_t lo, int64_t hi, int64_t *out);
bool parse_uint(std::string_view s, uint64_t lo, uint64_t hi, uint64_t *out);
/** A decimal number ("0.25", "1e3"), the whole string, finite (no inf or nan), in [lo, hi]. */
bool parse_real(std::string_view s, double lo, double hi, double *out);
/**
 * A byte count: a number and an optional binary unit (B; K, KB or KiB; M...; G...; any case),
 * "4096", "64K", "1.5M", rounded to whole bytes, in [lo, hi].
 */
bool parse_bytes(std::string_view s, uint64_t lo, uint64_t hi, uint64_t *out);
/** "WxH" (x or X) with both decimal integers in [lo, hi]. */
bool parse_wxh(std::string_view s, int lo, int hi, int *w, int *h);

/** "lo..hi", as errors show an accepted range. */
std::string range_text(int64_t lo, int64_t hi);
std::string range_text(uint64_t lo, uint64_t hi);
std::string range_text(double lo, double hi);

namespace detail {
CLI::Validator int_range(int64_t lo, int64_t hi);
CLI::Validator uint_range(uint64_t lo, uint64_t hi);
CLI::Validator real_range(double lo, double hi);
} // namespace detail

/**
 * Validator of a numeric option of type T: the value must parse whole as above, in [lo, hi];
 * otherwise "--opt: 'VALUE' is not an integer in LO..HI". Add it with ->transform(): it also
 * rewrites an integer as plain decimal before CLI11 converts it (CLI11 alone reads 0x10 and
 * 010 as hex and octal, wraps -1 to 2^64-1, saturates overflow and lets nan past its Range).
 */
template <class T>
CLI::Validator Range(T lo, T hi) {
	if constexpr (std::is_floating_point_v<T>) {
		return detail::real_range(static_cast<double>(lo), static_cast<double>(hi));
	} else if constexpr (std::is_signed_v<T>) {
		return detail::int_range(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
	} else {
		return detail::uint_range(static_cast<uint64_t>(lo), static_cast<uint64_t>(hi));
	}
}

/**
 * app.parse(argc, argv). Returns -1 when the program goes on, else its exit status: 0 after
 * --help or --version (printed on stdout), kUsageError after one line "NAME: error: WHAT" on
 * stderr. Use: if (int rc = cli::parse(app, argc, argv, "pixelport-x"); rc >= 0) return rc;
 */
int parse(CLI::App &app, int argc, char **argv, const char *name);

/** Prints "NAME: error: WHAT" (one line) on stderr; returns kUsageError. */
int usage_error(const char *name, const std::string &what);

/**
 * Reads the file at `path` whole into `out`. It is opened with O_NONBLOCK (a FIFO cannot
 * block the open) and checked with fstat before a byte is read: a regular file of at most
 * `max_bytes`. On failure `error` is one of "cannot open: REASON", "not a regular file (a
 * FIFO)" (or a folder, device, socket), "too large: N bytes, at most M", "cannot read: REASON",
 * and nothing of the file is kept.
 */
bool read_file(const std::string &path, uint64_t max_bytes, std::string *out, std::string *error);

} // namespace pixelport::cli
