// Per-surface timing (protocols/pixelport-timing-v1.xml and the JSON Lines / trace logs of
// timing): every commit that attaches a buffer gets a record with its bytes,
// transport, format and the CLOCK_MONOTONIC times of commit, data complete (stream),
// conversion, upload and first presentation (or discard). Nothing is recorded for a surface
// nobody listens to: no subscriber and no log means no clock read and no allocation.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "client_account.hpp"
#include "listener.hpp"
#include "pixelport/timing/log_writer.hpp"
#include "pixelport/timing/records.hpp"
#include "pixelport/timing/summary.hpp"
#include "surface_ref.hpp"
#include "wlr.hpp"

struct pixelport_plugin;

namespace pixelport {

struct SurfaceState;

/** CLOCK_MONOTONIC now, ns: the clock of every timing record. */
uint64_t monotonic_ns();

/**
 * What timing asks of a buffer whose commits it records. The plugin's buffers implement it
 * (PixelBuffer, buffer.hpp); timing itself knows no buffer kind.
 */
class TimedBuffer {
public:
	/** At the client's commit: transport, format and bytes of the buffer. */
	virtual void describe(timing::CommitSample *record) = 0;
	/** When the commit applies: phases that happened before (stream receive, conversion). */
	virtual void applied(timing::CommitSample *record) {}

protected:
	~TimedBuffer() = default;
};

class Timing;

/** An object's place on one IntrusiveList. */
template <typename T>
struct ListHook {
	T *prev = nullptr, *next = nullptr;
	bool linked = false;
};

/**
 * A doubly linked list threaded through its objects' ListHook `hook`: insertion and removal in
 * constant time, nothing allocated. For every list a client can grow (subscriptions, surfaces
 * waiting for presentation), so teardown is linear in what the client made.
 */
template <typename T, ListHook<T> T::*hook>
class IntrusiveList {
public:
	bool empty() const { return head_ == nullptr; }
	T *front() const { return head_; }
	void push_back(T *item) {
		ListHook<T> &h = item->*hook;
		if (h.linked) return;
		h = {.prev = tail_, .next = nullptr, .linked = true};
		(tail_ != nullptr ? (tail_->*hook).next : head_) = item;
		tail_ = item;
	}
	/** Takes `item` off this list; nothing if it is on none. */
	void remove(T *item) {
		ListHook<T> &h = item->*hook;
		if (!h.linked) return;
		(h.prev != nullptr ? (h.prev->*hook).next : head_) = h.next;
		(h.next != nullptr ? (h.next->*hook).prev : tail_) = h.prev;
		h = {};
	}
	/** Calls f(item) for each, in order; f may remove the item it is given. */
	template <typename F>
	void for_each(F &&f) const {
		for (T *item = head_; item != nullptr;) {
			T *next = (item->*hook).next;
			f(item);
			item = next;
		}
	}

private:
	T *head_ = nullptr, *tail_ = nullptr;
};

/**
 * One pp_surface_timing_v1: the resource's user data, freed with the resource. Every list it
 * is on is an IntrusiveList, so a client's subscriptions go in time linear in their number
 * however they are ordered.
 */
struct TimingSubscription {
	wl_resource *resource = nullptr;
	Timing *timing = nullptr; // null once the plugin's Timing is gone
	SurfaceRef surface; // empty once the surface is gone (inert)
	/** The resource's version, read once: finish() picks the events by it per commit. */
	int version = 0;
	/** On SurfaceTiming::subscribers and Timing::subscriptions_. */
	ListHook<TimingSubscription> surface_link, all_link;
	/** Counts it against its client's cap (client_account.hpp). */
	AccountSlot slot;
	/**
	 * Version 3: the surface's batch (SurfaceTiming::batch) is shared by its subscriptions;
	 * each has been sent the records before this number (counted from the surface's first).
	 */
	uint64_t next_record = 0;
	/**
	 * Version 3: this subscription's id for each of the surface's output ids (index + 1), 0
	 * while not announced by output_name; ids are per subscription (protocol), from 1.
	 */
	std::vector<uint32_t> output_ids;
	uint32_t outputs_announced = 0;
};

/**
 * A FIFO of records whose slots are kept from commit to commit: after the first commits no
 * record is allocated or freed (a std::deque of 312-byte records allocates one per record).
 * References stay valid until the record is popped or a push outgrows the slots; timing holds
 * one only from a renderer's begin to end of data access, within one dispatch.
 */
class RecordFifo {
public:
	bool empty() const { return size_ == 0; }
	timing::CommitSample &front() { return slots_[head_]; }
	/** A cleared record at the back. */
	timing::CommitSample &emplace_back();
	void pop_front() {
		head_ = head_ + 1 == slots_.size() ? 0 : head_ + 1;
		size_--;
	}

private:
	std::vector<timing::CommitSample> slots_;
	size_t head_ = 0, size_ = 0;
};

/** Timing's state of one surface (SurfaceState::timing). */
struct SurfaceTiming {
	SurfaceTiming() = default;
	~SurfaceTiming();
	SurfaceTiming(const SurfaceTiming &) = delete;
	SurfaceTiming &operator=(const SurfaceTiming &) = delete;
	/** Its subscriptions (owned by their resources). */
	IntrusiveList<TimingSubscription, &TimingSubscription::surface_link> subscribers;
	/** Its version 3 subscriptions, and the others (sent each record as it finishes). */
	size_t batched_subscribers = 0, unbatched_subscribers = 0;
	/**
	 * Version 3: finished records not yet sent to every subscription, kReportStride values each
	 * (protocol record enum, the output as the surface's own output id), shared by all of them:
	 * a commit costs one record whatever the number of subscriptions. `batch_first` counts the
	 * records sent before it. At most one event's worth; kept while the surface commits fast.
	 */
	std::vector<uint64_t> batch;
	uint64_t batch_first = 0;
	/** Output names in the batch's records: the surface's output id is the index + 1. */
	std::vector<std::string> outputs;
	/** On Timing::waiting_ while `shown` has records; on Timing::batching_ while `batch` has. */
	ListHook<SurfaceTiming> waiting_link, batch_link;
	SurfaceState *state = nullptr; // whose this is
	/** Records between client_commit and apply, in commit order (as wlroots applies cached states). */
	RecordFifo unapplied;
	/** The labels the log has for this surface (log only); pid -1 until read. */
	timing::SurfaceLabels labels{.pid = -1};
	bool labels_logged = false;
	/** Something of this surface went to the log: the writer is told when it goes. */
	bool in_log = false;
	/** Set when the toplevel's app_id or title changed (or it went) since they were logged. */
	bool labels_changed = true;
	/** Where the labels come from: not known yet (no role, or an xdg_surface without one). */
	enum class LabelSource { Unknown, Toplevel, None } label_source = LabelSource::Unknown;
	/** The xdg_toplevel watched for set_title, set_app_id and destroy (LabelSource::Toplevel). */
	wlr_xdg_toplevel *toplevel = nullptr;
	Listener toplevel_title, toplevel_app_id, toplevel_destroy;
	/**
	 * Applied records, in commit order, until reported: each waits for an output to present
	 * it (or for a newer one to replace it first), then for the records before it, so that
	 * reports keep commit order.
	 */
	struct Shown {
		timing::CommitSample record;
		wlr_output *output = nullptr; // set when an output commit showed it
		uint32_t output_commit_seq = 0;
		bool done = false; // presented or discarded: reported once those before it are
	};
	std::deque<Shown> shown;
};

class Timing {
public:
	/** Timing, with the log writer if paths are given. */
	static std::unique_ptr<Timing> create(pixelport_plugin *plugin, const char *log_path, const char *trace_path);
	~Timing();
	/** A pp_timing_manager_v1 global (version 1 to 3); its owner destroys it (pixelport.cpp). */
	wl_global *create_global(uint32_t version);

	/** Whether this surface's commits are recorded at all. */
	bool active(const SurfaceState *surface) const;
	bool logging() const { return log_ != nullptr; }

	/**
	 * client_commit: starts the record of the pending state (if it attaches a buffer);
	 * `buffer` is the attached buffer if the plugin made it, else null.
	 */
	void client_commit(SurfaceState *surface, TimedBuffer *buffer);
	/** The record whose state wlroots is applying right now (texture time), or null. */
	timing::CommitSample *applying(SurfaceState *surface);
	/**
	 * A renderer reads the buffer of the state being applied: the first such read is the
	 * upload. Returns the record with its upload start set now, or null (nobody listens, or
	 * not the first read); the caller sets t_upload_end when the read ends.
	 */
	timing::CommitSample *upload_started(SurfaceState *surface);
	/**
	 * The record to time a conversion done after the apply (lazy conversion): the surface's
	 * newest applied record, if it has no conversion time yet; else null.
	 */
	timing::CommitSample *converting(SurfaceState *surface);
	/**
	 * commit (state applied): the record now waits for an output to present it. `buffer`:
	 * the applied buffer if the plugin made it (not a converted view), else null.
	 */
	void applied(SurfaceState *surface, TimedBuffer *buffer);
	/** The surface is going: its records end as discarded, its subscriptions go quiet. */
	void surface_destroyed(SurfaceState *surface);

	/**
	 * Timing's listeners on one output: render start and end, the commit that takes the applied
	 * records along, presentation. Owned by the plugin's entry for the output (plugin.hpp).
	 */
	struct OutputTiming {
		Timing *timing = nullptr;
		wlr_output *output = nullptr;
		timing::FrameRecord frame;
		unsigned last_vblank = 0;
		Listener frame_event, precommit, commit, present;
	};
	/** Follows an output's frames until the returned state is freed. */
	std::unique_ptr<OutputTiming> attach_output(wlr_output *output);
	/** The output is going: records waiting for it to present end as discarded. */
	void detach_output(OutputTiming &output);

	/** Per surface and output: count and p50/p95/p99 of each phase, as a text table. */
	std::string summary() const;

	/** Version 3 flush request: sends `sub` what its surface's batch has for it. */
	void send_queued(TimingSubscription *sub);
	/** The subscription's resource is being destroyed. */
	void subscription_destroyed(TimingSubscription *sub);
	/** A new subscription (created by the manager's subscribe request). */
	void subscription_created(TimingSubscription *sub) { subscriptions_.push_back(sub); }
	pixelport_plugin *plugin() const { return plugin_; }

private:
	Timing() = default;
	void finish(SurfaceState *surface, timing::CommitSample &record);
	/** Reports the surface's done records at the front of `shown`, in order. */
	void finish_done(SurfaceState *surface, SurfaceTiming &st);
	void log_labels(SurfaceState *surface, SurfaceTiming &st);
	void watch_labels(SurfaceState *surface, SurfaceTiming &st);
	void push_labels_gone();
	void queue_report(SurfaceTiming &st, const timing::CommitSample &record);
	/** Sends every version 3 subscription of the surface its part of the batch, and empties it. */
	void send_batch(SurfaceTiming &st, bool keep_buffer);
	void send_records(TimingSubscription *sub, SurfaceTiming &st);
	static int batch_timer_fired(void *data);
	static int gone_timer_fired(void *data);
	void output_committed(OutputTiming *output);
	void output_presented(OutputTiming *output, const wlr_output_event_present *event);

	pixelport_plugin *plugin_ = nullptr;
	std::unique_ptr<timing::Summary> summary_;
	std::unique_ptr<timing::LogWriter> log_;
	/** Surfaces with applied records that wait for presentation. */
	IntrusiveList<SurfaceTiming, &SurfaceTiming::waiting_link> waiting_;
	/** Every live subscription (their Timing pointer is cleared when this goes). */
	IntrusiveList<TimingSubscription, &TimingSubscription::all_link> subscriptions_;
	/** Surfaces with version 3 records not yet sent. */
	IntrusiveList<SurfaceTiming, &SurfaceTiming::batch_link> batching_;
	/** A batch with its output ids rewritten for one subscription (rare: see send_records). */
	std::vector<uint64_t> scratch_;
	/**
	 * Sends the batches at most kBatchMs after their first record. Armed when a record is
	 * queued and it is not; a batch that fills and leaves does not disarm it (two
	 * timerfd_settime calls per batch cost more than one early, partial batch per kBatchMs).
	 */
	wl_event_source *batch_timer_ = nullptr;
	bool batch_timer_armed_ = false;
	/**
	 * Destroyed surfaces the log writer has not been told of yet (the ring was full): pushed
	 * with the next record, or by gone_timer_ when none comes, so the writer forgets them.
	 */
	std::vector<uint64_t> labels_gone_;
	wl_event_source *gone_timer_ = nullptr;
};

} // namespace pixelport
