// Conversion off the compositor's main thread: a pool of worker threads that convert whole
// images in bands, and hand each finished job back to the event loop.
//
// The main thread makes a ConvertJob (source planes, destination image, options: everything
// the workers read is fixed before submit() and kept alive by the job's owner until the job
// is handed back), then goes on serving clients. Workers take one band at a time, round robin
// over the clients that have work, so a client converting 8K frames as fast as it can delays
// another client's frame by one band at most; within a client, its jobs (one per surface) take
// turns the same way, so a small window's frame does not wait behind the same client's large
// one. A finished (or cancelled) job is handed back on the main thread through an eventfd in the
// wl_event_loop: `done` runs there, never on a worker.
//
// A band of a job is a run of whole rows (a multiple of 4: chroma rows are never split), so
// several workers may convert one large image at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "pixelport/core/convert.hpp"

struct wl_event_loop;

namespace pixelport {

struct ConvertJob {
	// ---- fixed before submit(), read by the workers -----------------------------------------
	core::SrcImage src;
	core::DstImage dst;
	core::ConvertOptions options; // threads is forced to 1: the pool is the parallelism
	/** Whose queue the job joins (the wl_client): clients are served in turn. */
	const void *client = nullptr;
	/** Rows per band (rounded up to a multiple of 4 by submit()). */
	int32_t band_rows = 0;

	// ---- results, read on the main thread once the job is handed back ------------------------
	/** Every row converted (false when cancelled or when the core refused the images). */
	bool ok = false;
	bool cancelled = false;
	/** CLOCK_MONOTONIC ns: the first band began, the last band ended (0 if none ran). */
	uint64_t start_ns = 0, end_ns = 0;

	// ---- the pool's (under its mutex) -------------------------------------------------------
	int32_t next_row = 0;
	int32_t rows_done = 0;
	int32_t in_flight = 0;
	bool failed = false;
	bool queued = false;
	bool completed = false; // put on the hand-back list
};

class ConvertWorkers {
public:
	using Done = std::function<void(const std::shared_ptr<ConvertJob> &)>;

	/**
	 * Starts `threads` workers (at least 1, at most 64) and watches their eventfd in `loop`;
	 * `done` is called on the loop's thread for each job handed back. Null if no thread or
	 * eventfd could be made (the caller converts on the main thread then).
	 */
	static std::unique_ptr<ConvertWorkers> create(wl_event_loop *loop, unsigned threads, Done done);
	/**
	 * Stops the workers after the bands they are converting and joins them. Jobs not handed
	 * back yet are handed back (cancelled unless finished) before this returns.
	 */
	~ConvertWorkers();

	/** Queues a job; its owner keeps what it points at alive until `done` hands it back. */
	void submit(std::shared_ptr<ConvertJob> job);
	/**
	 * No band of the job starts after this call; it is handed back once the bands under way end
	 * (at once, on the next loop iteration, if none). Returns whether any band had started.
	 */
	bool cancel(const std::shared_ptr<ConvertJob> &job);
	/**
	 * Makes the job's rows complete now, on the calling thread: the bands no worker has begun
	 * are converted here, those under way on workers are waited for (one band each at most).
	 * `ok` is final on return; the job is still handed back through `done` as any other.
	 * For a commit that must show before its job would end; never for a cancelled job.
	 */
	void finish(const std::shared_ptr<ConvertJob> &job);

	unsigned threads() const;
	/** The default pool size: half the hardware threads, 1 to 8. */
	static unsigned default_threads();

	struct Impl;

private:
	ConvertWorkers() = default;
	std::unique_ptr<Impl> impl_;
};

} // namespace pixelport
