// Asynchronous writer of timing records to JSON Lines and/or a Chrome trace.
//
// Threading: push(), flush() and close() are called from one thread, the compositor's event
// loop (the queue is single-producer). push() never blocks and never does I/O: it copies the
// record into a bounded lock-free ring, or drops and counts it when the ring is full. A
// background thread formats and writes; it wakes every `poll_interval` while records come,
// or as soon as the ring is half full, so push() makes no system call in the common case.
// After a quiet spell (kIdleAfterEmptyPolls polls that found nothing) it sleeps until the next
// push() wakes it (one futex wake), so an idle log costs no wake-ups. The thread runs under
// SCHED_IDLE (sched(7)): any other runnable thread preempts it, so formatting uses CPU time
// the compositor and its clients leave idle instead of taking theirs. On a machine saturated
// for longer than the ring lasts (4096 records: 0.25 s at 16,000 commits/s, over a minute at
// 60) records are dropped and counted, never blocked on. Counters may be read from any
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "pixelport/timing/jsonl.hpp"
#include "pixelport/timing/records.hpp"

namespace pixelport::timing {

class Summary;
class TraceWriter;

class LogWriter {
public:
	struct Options {
		std::string jsonl_path; // empty = no JSON Lines file
		std::string trace_path; // empty = no trace file
		std::size_t capacity = 4096; // records the queue holds (exactly); >= 1
		Summary *summary = nullptr; // fed on the writer thread; not owned, must outlive this
		std::chrono::milliseconds poll_interval{10};
		// After kIdleAfterEmptyPolls polls in a row found nothing, the writer sleeps until a
		// push() wakes it, or at most this long: an idle desktop's log does not wake a CPU
		// every poll_interval.
		std::chrono::milliseconds idle_interval{1000};
	};

	// Opens (truncates) the files and starts the writer thread. The JSONL header and an empty
	// trace document are on disk when this returns. Throws std::system_error when a file cannot
	// be created, std::invalid_argument for capacity 0.
	explicit LogWriter(Options opts);
	~LogWriter(); // close()
	LogWriter(const LogWriter &) = delete;
	LogWriter &operator=(const LogWriter &) = delete;

	// Queues a copy. Returns false and counts a drop when the queue is full or after close().
	bool push(const CommitRecord &r);
	bool push(const FrameRecord &r);
	// A commit without labels: written with the labels its surface's last SurfaceLabels pushed
	// before it gave (none: pid 0, no app_id or title).
	bool push(const CommitSample &r);
	// Labels for the samples pushed after it; `gone` forgets them and everything else kept for
	// the surface (its summary rows, Summary::surface_gone; its trace track). Not counted as
	// written.
	bool push(const SurfaceLabels &labels);

	// Waits until every record pushed before the call is written (or dropped). False on timeout.
	bool flush(std::chrono::milliseconds timeout = std::chrono::seconds(2));
	// Writes everything still queued, finishes the files, joins the thread. Idempotent; safe to
	// call from the host's (event-loop side) SIGTERM/SIGINT handling. Does not wait for a
	// paused writer: close() resumes it.
	void close();

	std::uint64_t written() const { return written_.load(std::memory_order_relaxed); }
	std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
	// Write or format errors on the writer thread (the records involved are lost).
	std::uint64_t io_errors() const { return io_errors_.load(std::memory_order_relaxed); }

	// Test hook: hold the writer thread back so the queue fills. close() clears it.
	void pause_writer_for_test(bool paused);

private:
	using Item = std::variant<CommitRecord, FrameRecord, CommitSample, SurfaceLabels>;
	template <typename R>
	bool push_item(const R &r);
	// A surface's labels and its commit lines' repeating text (jsonl.hpp).
	struct Labelled {
		SurfaceLabels labels;
		CommitLines lines;
	};
	void run();
	// Formats and writes ring indices [first, last) and gives their slots back.
	void write_batch(std::uint64_t first, std::uint64_t last);
	Labelled *labelled(std::uint64_t surface_id); // nullptr: none pushed

	Options opts_;
	int jsonl_fd_ = -1;
	std::unique_ptr<TraceWriter> trace_;
	std::uint64_t start_ns_ = 0;
	std::uint64_t jsonl_offset_ = 0; // writer thread only (after the constructor)

	// Ring: indices grow forever; slot = index & mask_. Full when tail - head == capacity.
	std::vector<Item> slots_;
	std::size_t mask_ = 0;
	std::size_t wake_threshold_ = 1; // queued records at which push() wakes the writer early
	alignas(64) std::atomic<std::uint64_t> tail_{0}; // producer writes
	std::uint64_t cached_head_ = 0; // producer's last view of head_
	alignas(64) std::atomic<std::uint64_t> head_{0}; // consumer writes
	alignas(64) std::atomic<std::uint64_t> written_{0};
	std::atomic<std::uint64_t> dropped_{0};
	std::atomic<std::uint64_t> io_errors_{0};
	std::atomic<bool> paused_{false};
	std::atomic<bool> stop_{false};
	std::atomic<bool> wake_pending_{false};
	std::atomic<bool> writer_idle_{false}; // the writer sleeps until a push() wakes it
	static constexpr unsigned kIdleAfterEmptyPolls = 10; // 100 ms of no records at 10 ms
	bool closed_ = false;

	std::uint64_t drops_since_ns_ = 0; // writer thread only
	static constexpr std::size_t kWriteChunk = 16 * 1024; // JSONL bytes per pwrite()
	std::string lines_; // writer thread only: JSONL text not yet written
	std::unordered_map<std::uint64_t, Labelled> labels_; // writer thread only: by surface_id
	Labelled *last_labelled_ = nullptr; // writer thread only: the last one looked up

	std::mutex mu_;
	std::uint64_t done_ = 0; // under mu_: ring index through which records are written
	std::uint64_t dropped_reported_ = 0; // under mu_: drops already in a drops record
	std::condition_variable wake_cv_; // writer sleeps here
	std::condition_variable done_cv_; // flush() waits here
	std::thread thread_;
};

} // namespace pixelport::timing
