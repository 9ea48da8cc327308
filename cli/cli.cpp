#include "cli.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace pixelport::cli {

namespace {

template <class T>
bool whole(std::string_view s, T *out) {
	if (s.empty()) return false;
	const char *end = s.data() + s.size();
	auto [ptr, ec] = std::from_chars(s.data(), end, *out);
	return ec == std::errc() && ptr == end;
}

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

} // namespace

bool parse_int(std::string_view s, int64_t lo, int64_t hi, int64_t *out) {
	int64_t v = 0;
	if (!whole(s, &v) || v < lo || v > hi) return false;
	*out = v;
	return true;
}

bool parse_uint(std::string_view s, uint64_t lo, uint64_t hi, uint64_t *out) {
	uint64_t v = 0;
	if (!whole(s, &v) || v < lo || v > hi) return false;
	*out = v;
	return true;
}

bool parse_real(std::string_view s, double lo, double hi, double *out) {
	double v = 0;
	if (!whole(s, &v) || !std::isfinite(v) || !(v >= lo && v <= hi)) return false;
	*out = v;
	return true;
}

bool parse_bytes(std::string_view s, uint64_t lo, uint64_t hi, uint64_t *out) {
	size_t digits = s.size();
	while (digits > 0 && isalpha(static_cast<unsigned char>(s[digits - 1]))) digits--;
	std::string unit(s.substr(digits));
	for (char &c : unit) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
	double scale;
	if (unit == "" || unit == "B") {
		scale = 1;
	} else if (unit == "K" || unit == "KB" || unit == "KIB") {
		scale = 0x1p10;
	} else if (unit == "M" || unit == "MB" || unit == "MIB") {
		scale = 0x1p20;
	} else if (unit == "G" || unit == "GB" || unit == "GIB") {
		scale = 0x1p30;
	} else {
		return false;
	}
	double v = 0;
	if (!parse_real(s.substr(0, digits), 0, 0x1p64, &v)) return false;
	double bytes = std::round(v * scale);
	if (!(bytes < 0x1p64)) return false; // 2^64 and more do not fit
	uint64_t b = static_cast<uint64_t>(bytes);
	if (b < lo || b > hi) return false;
	*out = b;
	return true;
}

bool parse_wxh(std::string_view s, int lo, int hi, int *w, int *h) {
	size_t x = s.find_first_of("xX");
	int64_t pw = 0, ph = 0;
	if (x == std::string_view::npos || !parse_int(s.substr(0, x), lo, hi, &pw) ||
		!parse_int(s.substr(x + 1), lo, hi, &ph)) {
		return false;
	}
	*w = static_cast<int>(pw);
	*h = static_cast<int>(ph);
	return true;
}

std::string range_text(int64_t lo, int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

std::string range_text(uint64_t lo, uint64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

std::string range_text(double lo, double hi) {
	char buf[64];
	snprintf(buf, sizeof(buf), "%g..%g", lo, hi);
	return buf;
}

namespace detail {

CLI::Validator int_range(int64_t lo, int64_t hi) {
	std::string range = range_text(lo, hi);
	return CLI::Validator(
		[lo, hi, range](std::string &s) -> std::string {
			int64_t v = 0;
			if (!parse_int(s, lo, hi, &v)) return in_quotes(s) + " is not an integer in " + range;
			s = std::to_string(v);
			return "";
		},
		"in " + range);
}

CLI::Validator uint_range(uint64_t lo, uint64_t hi) {
	std::string range = range_text(lo, hi);
	return CLI::Validator(
		[lo, hi, range](std::string &s) -> std::string {
			uint64_t v = 0;
			if (!parse_uint(s, lo, hi, &v)) return in_quotes(s) + " is not an integer in " + range;
			s = std::to_string(v);
			return "";
		},
		"in " + range);
}

CLI::Validator real_range(double lo, double hi) {
	std::string range = range_text(lo, hi);
	return CLI::Validator(
		[lo, hi, range](std::string &s) -> std::string {
			double v = 0;
			if (!parse_real(s, lo, hi, &v)) return in_quotes(s) + " is not a number in " + range;
			return ""; // the string parses whole: CLI11 reads the same value
		},
		"in " + range);
}

} // namespace detail

int usage_error(const char *name, const std::string &what) {
	std::string line = what;
	for (char &c : line) {
		if (c == '\n' || c == '\r') c = ' ';
	}
	fprintf(stderr, "%s: error: %s\n", name, line.c_str());
	return kUsageError;
}

int parse(CLI::App &app, int argc, char **argv, const char *name) {
	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
			return app.exit(e); // --help, --version
		return usage_error(name, e.what());
	}
	return -1;
}

bool read_file(const std::string &path, uint64_t max_bytes, std::string *out, std::string *error) {
	out->clear();
	int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		*error = std::string("cannot open: ") + strerror(errno);
		return false;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		*error = std::string("cannot read: ") + strerror(errno);
		close(fd);
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		const char *what = S_ISDIR(st.st_mode) ? "a folder"
			: S_ISFIFO(st.st_mode)         ? "a FIFO"
			: S_ISCHR(st.st_mode)          ? "a character device"
			: S_ISBLK(st.st_mode)          ? "a block device"
			: S_ISSOCK(st.st_mode)         ? "a socket"
						       : "not a file";
		*error = std::string("not a regular file (") + what + ")";
		close(fd);
		return false;
	}
	const uint64_t size = static_cast<uint64_t>(st.st_size);
	if (size > max_bytes) {
		*error = "too large: " + std::to_string(size) + " bytes, at most " + std::to_string(max_bytes);
		close(fd);
		return false;
	}
	// The file may grow while it is read: one byte past max_bytes tells, and is all it costs.
	out->resize(static_cast<size_t>(size));
	size_t got = 0;
	for (;;) {
		if (got == out->size()) {
			if (got > max_bytes) {
				*error = "too large: grew past " + std::to_string(max_bytes) + " bytes while read";
				out->clear();
				close(fd);
				return false;
			}
			out->resize(static_cast<size_t>(std::min<uint64_t>(max_bytes + 1, got + 65536)));
		}
		ssize_t n = read(fd, out->data() + got, out->size() - got);
		if (n == 0) break;
		if (n < 0) {
			if (errno == EINTR) continue;
			*error = std::string("cannot read: ") + strerror(errno);
			out->clear();
			close(fd);
			return false;
		}
		got += static_cast<size_t>(n);
	}
	out->resize(got);
	close(fd);
	return true;
}

} // namespace pixelport::cli
