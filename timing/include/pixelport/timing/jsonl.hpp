// JSON Lines schema version 1 (docs/timing.md): formatting used by LogWriter and parsing used by
// pixelport-compare and the tests, kept side by side so both follow one schema.
#pragma once

#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pixelport/timing/records.hpp"

namespace pixelport::timing {

inline constexpr int kSchemaVersion = 1;

// Each returns one line including its trailing '\n'. Absent timestamps (0) and an empty output
// name are written as null. Strings are valid UTF-8 (invalid bytes become U+FFFD).
std::string header_line(std::int32_t pid, std::uint64_t start_ns);
std::string commit_line(const CommitRecord &r);
std::string frame_line(const FrameRecord &r);
std::string drops_line(std::uint64_t count, std::uint64_t since_ns);
// The same text as commit_line() / frame_line(), appended to `out` (LogWriter's batches).
void append_commit_line(std::string &out, const CommitRecord &r);
void append_frame_line(std::string &out, const FrameRecord &r);
// The commit lines of one surface, as LogWriter writes them. The parts of a line that repeat
// from one commit to the next (the labels; transport, format and size; the output) are kept as
// text and made again only when they change. append() writes the same text as commit_line()
// of the sample with these labels.
class CommitLines {
public:
	CommitLines(std::uint64_t surface_id, std::int32_t pid, std::string_view app_id, std::string_view title);
	void append(std::string &out, const CommitSample &s);

private:
	struct Shape {
		Transport transport;
		std::uint32_t format;
		std::int32_t width, height;
		std::uint64_t bytes, damage_bytes;
		bool operator==(const Shape &) const = default;
	};
	std::string head_; // {"v":1,...,"title":"...","seq":
	Shape shape_{};
	std::string shape_text_; // ,"transport":...,"damage_bytes":N,"t_commit":  (empty: not made)
	FixedString<32> output_;
	std::string output_text_; // ,"output":...,"discarded":  (empty: not made)
};

// A whole log read back. Records keep file order.
struct Log {
	std::int32_t pid = 0;
	std::uint64_t start_ns = 0;
	std::vector<CommitRecord> commits;
	std::vector<FrameRecord> frames;
	std::uint64_t dropped = 0; // sum of all drops records
};

// Thrown by read_log(); what() is one line "PATH:LINE: reason" (LINE omitted when the file
// cannot be opened). `line` is 1-based, 0 for errors about the whole file.
class LogError : public std::runtime_error {
public:
	LogError(const std::string &path, std::size_t line, const std::string &reason);
	std::string path;
	std::size_t line;
};

// Reads a schema-1 log. Throws LogError for a missing/unreadable or empty file, a first line
// that is not a version-1 header, a line that is not JSON or lacks a field (a cut last line
// is reported as truncated), an unknown record type, or a NUL byte (binary file).
// Opens `path` as it is: for logs this process or its tests wrote. A path from a user goes
// through a checked read first (pixelport-compare: cli::read_file) and then the overload below.
Log read_log(const std::string &path);
// The same from `in`; `path` names it in errors.
Log read_log(std::istream &in, const std::string &path);

} // namespace pixelport::timing
