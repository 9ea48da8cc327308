// Client side of pixelport-timing-v1: what the compositor reports about each commit of a
// surface this client subscribed to. Used by pixelport-sweep and the transport benchmarks.
// Tolerant: when the compositor has no pp_timing_manager_v1 (no plugin, or a plugin without
// the timing protocol), available() is false and callers use client-side times only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "pixelport-timing-v1-client-protocol.h"
#include "pixelport/timing/phases.hpp"
#include "pixelport/timing/records.hpp"
#include "wayland_client.hpp"

namespace pixelport::client {

/**
 * One finished commit as the compositor reported it. Times are CLOCK_MONOTONIC ns
 * (timing::monotonic_ns()), 0 = not reported; the phase durations come from
 * pixelport/timing/phases.hpp (phases()), never from the raw times by hand.
 */
struct CommitTiming {
	uint32_t seq = 0;
	uint32_t transport = 0; // pp_surface_timing_v1_transport
	uint32_t format = 0; // DRM fourcc
	int width = 0, height = 0;
	uint64_t bytes = 0, damage_bytes = 0;
	uint64_t t[7] = {}; // indexed by pp_surface_timing_v1_phase
	/** Version 4: the commit's target time (0: none) and its wait for a fifo barrier, ns. */
	uint64_t target = 0, barrier_wait = 0;
	bool presented = false;
	std::string output;

	uint64_t phase(uint32_t p) const { return p < 7 ? t[p] : 0; }
	/** When the renderer has the pixels: the later of upload end and convert end (0 if neither). */
	uint64_t ready() const;
	/** The same commit as the timing core's record (surface id, pid, app_id and title left empty). */
	timing::CommitRecord record() const;
	/** timing::disjoint_phases() of record(): transfer, convert, upload (without a nested convert), present. */
	timing::PhaseDurations phases() const;
};

/** Binds pp_timing_manager_v1 through its own registry (Connection does not know it). */
class TimingClient {
public:
	/**
	 * Binds the global (one roundtrip); keeps at most `keep` finished commits not yet taken.
	 * `batched`: bind version 3 where offered, whose reports come up to 31 commits per event
	 * and up to 10 ms late (the waits below flush); else version 2, one event per commit.
	 */
	explicit TimingClient(Connection *conn, size_t keep = 256, bool batched = false);
	~TimingClient();
	TimingClient(const TimingClient &) = delete;
	TimingClient &operator=(const TimingClient &) = delete;
	bool available() const { return manager_ != nullptr; }

	/** Reports every commit of `surface` from now on; replaces an earlier subscription. False if !available(). */
	bool subscribe(wl_surface *surface);
	/** Ends the subscription and forgets its commits. */
	void unsubscribe();
	/** Whether the subscription is version 3 (batched reports). */
	bool batching() const;
	/** Batched: asks for the queued reports now (they arrive with the next dispatch); else nothing. */
	void flush();
	/** Batched: reports events received so far (each carries one or more commits). */
	uint64_t reports_events() const { return reports_events_; }
	/** Finished commits received so far, kept or not (a counter that only grows). */
	uint64_t finished() const { return finished_; }
	/**
	 * Waits (dispatching, at most timeout_ms) for a finished commit that carried a buffer and
	 * whose commit phase is at or after `since_ns`; takes it and drops older ones.
	 */
	bool wait_commit(uint64_t since_ns, int timeout_ms, CommitTiming *out);
	/** Dispatches until `count` finished commits are kept or timeout_ms passed; false on timeout or error. */
	bool wait_for(size_t count, int timeout_ms);
	/**
	 * Finished commits in the order reported, oldest first (at most `keep`). A deque: once
	 * `keep` are held, each new one drops the oldest in constant time (a vector moved all
	 * `keep` per report).
	 */
	std::deque<CommitTiming> commits;

	// For the listeners.
	pp_timing_manager_v1 *manager_ = nullptr;
	std::map<uint32_t, CommitTiming> pending_; // version 1: commits whose done has not come
	std::vector<std::string> output_names_; // version 3: by output id - 1
	uint64_t reports_events_ = 0;
	uint64_t finished_ = 0;
	bool batched_;
	void finish(CommitTiming c);

private:
	Connection *conn_;
	size_t keep_;
	wl_registry *registry_ = nullptr;
	pp_surface_timing_v1 *sub_ = nullptr;
};

/**
 * Pairs frames with commits: frame i (put() started at starts[i]) gets the first commit
 * whose commit phase is at or after starts[i] and before starts[i + 1]; nullptr where none.
 */
std::vector<const CommitTiming *> match_commits(
	const std::deque<CommitTiming> &commits, const std::vector<uint64_t> &starts);

} // namespace pixelport::client
