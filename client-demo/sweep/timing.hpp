// Client side of pixelport-timing-v1: per-commit compositor phases of the sweep's own surface.
// Tolerant: when the compositor has no pp_timing_manager_v1 (no plugin, or a plugin without
// the timing protocol), available() is false and the sweep uses client-side times only.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "pixelport-timing-v1-client-protocol.h"
#include "wayland_client.hpp"

namespace pixelport::sweep {

/** One commit as the compositor reported it (protocol phases; 0 = not reported). */
struct CommitTiming {
	uint32_t seq = 0;
	uint32_t transport = 0; // pp_surface_timing_v1_transport
	uint32_t format = 0;
	int width = 0, height = 0;
	uint64_t bytes = 0, damage_bytes = 0;
	uint64_t t[7] = {}; // indexed by pp_surface_timing_v1_phase
	bool presented = false;
	std::string output;
};

/** Binds pp_timing_manager_v1 through its own registry (Connection does not know it). */
class TimingClient {
public:
	explicit TimingClient(client::Connection *conn);
	~TimingClient();
	TimingClient(const TimingClient &) = delete;
	TimingClient &operator=(const TimingClient &) = delete;
	bool available() const { return manager_ != nullptr; }

	/** Reports every commit of `surface` from now on; replaces an earlier subscription. */
	void subscribe(wl_surface *surface);
	void unsubscribe();
	/**
	 * Waits (dispatching, at most timeout_ms) for a finished commit that carried a buffer and
	 * whose commit phase is at or after `since_ns`; takes it and drops older ones.
	 */
	bool wait_commit(uint64_t since_ns, int timeout_ms, CommitTiming *out);

	// For the listeners.
	pp_timing_manager_v1 *manager_ = nullptr;
	std::map<uint32_t, CommitTiming> pending_;
	std::deque<CommitTiming> done_;

private:
	client::Connection *conn_;
	wl_registry *registry_ = nullptr;
	pp_surface_timing_v1 *sub_ = nullptr;
};

} // namespace pixelport::sweep
