// Chrome trace event JSON (Object Format) writer that keeps its file valid JSON at all times.
//
// Every batch is written with one pwrite() at the end of the events, followed by the closing
// tail `]...}`; the next batch overwrites that tail. The file therefore always ends in a
// complete document — after close(), after a crash between batches, and while running — and
// close() only has to stop appending. Opens in Perfetto UI and chrome://tracing.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "pixelport/timing/records.hpp"

namespace pixelport::timing {

class TraceWriter {
public:
	// Creates/truncates `path` and writes an empty, valid document. Throws std::system_error.
	TraceWriter(const std::string &path, std::int32_t pid);
	~TraceWriter();
	TraceWriter(const TraceWriter &) = delete;
	TraceWriter &operator=(const TraceWriter &) = delete;

	// Formatting into the pending batch; nothing reaches the file before commit_batch().
	void add(const CommitRecord &r);
	void add(const FrameRecord &r);
	void add_drops(std::uint64_t count, std::uint64_t at_ns);

	// Appends the pending batch and the closing tail. False on an I/O error (file left as it was
	// before this batch, which is still valid JSON).
	bool commit_batch();

private:
	int track_for_surface(const CommitRecord &r);
	int track_for_output(std::string_view name);
	void append_event(const std::string &json);

	int fd_ = -1;
	std::int32_t pid_;
	std::uint64_t events_end_ = 0; // file offset where the tail starts
	std::string batch_;
	struct SurfaceTrack {
		int tid;
		std::string app_id;
	};
	std::unordered_map<std::uint64_t, SurfaceTrack> surfaces_;
	std::unordered_map<std::string, int> outputs_;
};

} // namespace pixelport::timing
