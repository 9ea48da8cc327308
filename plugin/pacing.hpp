// Frame pacing: when a commit may apply, as wp_fifo_v1 (fifo.cpp) and wp_commit_timing_v1
// (commit_timing.cpp) ask, through the hold ledger (HoldReason::FifoBarrier, TargetTime).
//
// Readiness is decided when a commit would apply, never at its arrival: a commit that waits for
// a barrier or a target time is held while older commits of its surface are still to apply (held
// for their conversion, their stream bytes, anything), and decided once they have applied. A
// barrier is set when the commit carrying set_barrier applies, latched by the next frame an
// output showing the surface commits, and cleared when that frame is presented. A commit with a
// target time is released when the next frame would be presented at or after its target
// (each output's latch-to-presentation delay is measured). docs/design.md, "Frame pacing", has
// the rules (hidden surfaces, synchronized subsurfaces) and what they cost.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>

#include "listener.hpp"
#include "presentation_delay.hpp"
#include "surface_ref.hpp"
#include "timing.hpp"
#include "wlr.hpp"

struct pixelport_plugin;

namespace pixelport {

struct SurfaceState;

/**
 * A barrier no frame has cleared this long after it was set clears anyway (an output that
 * stopped presenting: disabled, powered off, not followed by the plugin), in ns.
 */
inline constexpr uint64_t kBarrierTimeoutNs = 100'000'000;

/** What one commit asks of the pacing: double-buffered, carried by wlroots with its state. */
struct PacingRequest {
	/** wp_commit_timer_v1.set_timestamp, CLOCK_MONOTONIC ns (saturated at UINT64_MAX). */
	uint64_t target_ns = 0;
	bool has_target = false;
	bool set_barrier = false;
	bool wait_barrier = false;
};

class Pacing;

/**
 * Pacing's state of one surface (SurfaceState::pacing): made by the surface's first wp_fifo_v1
 * or wp_commit_timer_v1, kept until the surface goes (what those objects set outlives them).
 */
struct SurfacePacing {
	SurfacePacing(Pacing *pacing, SurfaceState *surface);
	~SurfacePacing();
	SurfacePacing(const SurfacePacing &) = delete;
	SurfacePacing &operator=(const SurfacePacing &) = delete;

	Pacing *const pacing;
	SurfaceState *const state;
	/** The surface's protocol objects (at most one each: already_exists, commit_timer_exists). */
	wl_resource *fifo = nullptr;
	wl_resource *timer = nullptr;
	/**
	 * The request being made (pending_request, set by the protocols' requests) and that of the
	 * state wlroots applied last (current_request); cached states carry theirs in between.
	 */
	PacingRequest pending_request;
	PacingRequest current_request;

	/** A commit held for pacing, in commit order. */
	struct Waiting {
		uint64_t commit = 0;
		bool fifo = false; // holds HoldReason::FifoBarrier
		bool timed = false; // holds HoldReason::TargetTime
		uint64_t target_ns = 0;
		/** When every older commit had applied (0: not yet): its barrier wait starts. */
		uint64_t turn_ns = 0;
	};
	std::deque<Waiting> waiting;
	/** Commits carrying set_barrier that have not applied yet, in commit order. */
	std::deque<uint64_t> sets;

	/** The fifo barrier: set by an applied set_barrier, latched by an output frame. */
	bool barrier = false;
	wlr_output *latched_on = nullptr;
	uint32_t latched_seq = 0;
	/** The barrier wait of the commit released last, for its timing record. */
	uint64_t released_commit = 0;
	uint64_t released_wait_ns = 0;

	/** On Pacing::barriers_ while the barrier is set. */
	ListHook<SurfacePacing> barrier_link;
	/** Its entries in Pacing::deadlines_ (end() when none). */
	std::multimap<uint64_t, SurfacePacing *>::iterator barrier_deadline, target_deadline;
	bool has_barrier_deadline = false, has_target_deadline = false;
	/** decide() runs (a release may apply commits, whose apply asks again). */
	bool deciding = false, decide_again = false;

private:
	friend class Pacing;
	wlr_surface_synced synced_{};
	bool synced_ok_ = false;
};

class Pacing {
public:
	/** Null when out of resources (no timer). */
	static std::unique_ptr<Pacing> create(pixelport_plugin *plugin);
	~Pacing();
	Pacing(const Pacing &) = delete;
	Pacing &operator=(const Pacing &) = delete;

	/** The wp_fifo_manager_v1 global (version 1); its owner destroys it (pixelport.cpp). */
	wl_global *create_fifo_global(uint32_t version);
	/** The wp_commit_timing_manager_v1 global (version 1). */
	wl_global *create_commit_timing_global(uint32_t version);

	/** The surface's pacing state, made at its first protocol object (null when out of memory). */
	SurfacePacing *pacing_of(SurfaceState *surface);

	/**
	 * From the surface's client_commit: holds a commit that waits for a barrier or a target
	 * time unless it could apply now (nothing older to apply, and what it waits for is there).
	 */
	void client_commit(SurfaceState *surface);
	/**
	 * From the surface's commit (a state applied): a set_barrier sets the barrier, the commit's
	 * record gets its barrier wait and target, and the next held commit is decided.
	 */
	void applied(SurfaceState *surface);
	/** The surface is going: its deadlines and barrier go (the ledger drops its holds). */
	void surface_destroyed(SurfaceState *surface);

	/** Pacing's listeners on one output: latch, presentation, frame-to-presentation delay. */
	struct OutputPacing {
		Pacing *pacing = nullptr;
		wlr_output *output = nullptr;
		uint64_t frame_ns = 0; // the last frame event
		/** The frame event of each buffer commit not presented yet, by commit_seq. */
		std::deque<std::pair<uint32_t, uint64_t>> committed;
		/** The last few frame-to-presentation delays, ns. */
		uint64_t delays[kPresentationDelayWindow] = {};
		size_t delay_count = 0, delay_next = 0;
		Listener frame, commit, present;
		/** presentation_delay_bound() of the last delays, ns. */
		uint64_t delay_bound() const;
	};
	/**
	 * Follows an output's frames until the returned state is freed (before the host's listeners
	 * and wp_presentation's: a present event with refresh 0 gets the output mode's refresh).
	 */
	std::unique_ptr<OutputPacing> attach_output(wlr_output *output);
	/** The output is going: barriers it latched clear. */
	void detach_output(OutputPacing &output);

	pixelport_plugin *plugin() const { return plugin_; }

private:
	Pacing() = default;
	/**
	 * Decides the surface's oldest held commit if its turn came (every older commit applied)
	 * and releases it when ready: `now` outside wlroots' handling of the surface, else at the
	 * next idle.
	 */
	void decide(SurfaceState *s, bool now);
	/**
	 * Whether the surface's barrier is in force: set, and the surface on an output the plugin
	 * follows (else it is cleared now).
	 */
	bool barrier_in_force(SurfacePacing *p);
	/** Released at `now`, the commit would be presented at or after `target_ns`. */
	bool target_ready(SurfaceState *s, uint64_t target_ns, uint64_t now) const;
	/** The timer wakes the surface when its held commit's target is near enough. */
	void wake_for_target(SurfacePacing *p, uint64_t target_ns);
	void set_barrier(SurfacePacing *p);
	void clear_barrier(SurfacePacing *p);
	/** The least delay_bound() of the followed outputs the surface is on, ns; -1: on none. */
	int64_t least_delay(SurfaceState *s) const;
	void set_deadline(SurfacePacing *p, bool target, uint64_t at);
	void drop_deadline(SurfacePacing *p, bool target);
	void arm_timer();
	static int timer_fired(int fd, uint32_t mask, void *data);
	void output_committed(OutputPacing *o);
	void output_presented(OutputPacing *o, const wlr_output_event_present *event);

	pixelport_plugin *plugin_ = nullptr;
	/** Surfaces whose barrier is set. */
	IntrusiveList<SurfacePacing, &SurfacePacing::barrier_link> barriers_;
	/** Barrier timeouts and target wake-ups, by CLOCK_MONOTONIC ns: one timerfd for them all. */
	std::multimap<uint64_t, SurfacePacing *> deadlines_;
	int timer_fd_ = -1;
	wl_event_source *timer_source_ = nullptr;
	uint64_t armed_at_ = 0;
};

} // namespace pixelport
