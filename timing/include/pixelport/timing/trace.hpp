// Chrome trace event JSON (Object Format) writer that keeps its file valid JSON at all times.
//
// Every batch (or each 64 KiB of it) is written with one pwrite() at the end of the events,
// followed by the closing tail `]...}`; the next write overwrites that tail. The file therefore always ends in a
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
	// The surface is destroyed: its track is forgotten (a later surface gets a new track).
	void surface_gone(std::uint64_t surface_id) { surfaces_.erase(surface_id); }

	// Appends the pending events and the closing tail. False on an I/O error since the last
	// call (the file is valid JSON still: each write ends in the tail, and a failed one left the
	// file as it was). Events are also written whenever kChunk bytes of them are pending, so
	// the pending text never holds more than one chunk and one event.
	bool commit_batch();
	static constexpr std::size_t kChunk = 64 * 1024;

private:
	int track_for_surface(const CommitRecord &r);
	int track_for_output(std::string_view name);
	void append_event(const std::string &json);
	void write_pending();

	int fd_ = -1;
	std::int32_t pid_;
	std::uint64_t events_end_ = 0; // file offset where the tail starts
	std::string batch_;
	bool failed_ = false; // a write since the last commit_batch() failed
	int next_surface_tid_;
	struct SurfaceTrack {
		int tid;
		std::string app_id;
	};
	std::unordered_map<std::uint64_t, SurfaceTrack> surfaces_;
	std::unordered_map<std::string, int> outputs_;
};

} // namespace pixelport::timing
