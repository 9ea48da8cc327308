#include "timing.hpp"

#include <algorithm>
#include <iterator>
#include <memory>
#include <system_error>

#include <ctime>

#include "pixelport-timing-v1-protocol.h"
#include "plugin.hpp"
#include "surface_state.hpp"

namespace pixelport {

uint64_t monotonic_ns() {
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {

void send_time(wl_resource *r, uint32_t seq, uint32_t phase, uint64_t ns) {
	if (ns == 0) return;
	uint64_t sec = ns / 1000000000u;
	pp_surface_timing_v1_send_timestamp(r, seq, phase, static_cast<uint32_t>(sec >> 32), static_cast<uint32_t>(sec),
		static_cast<uint32_t>(ns % 1000000000u));
}

uint32_t protocol_transport(timing::Transport t);

// Version 1: info, a timestamp per phase that happened, done (up to 9 events).
void send_v1(wl_resource *sub, const timing::CommitSample &r) {
	uint32_t seq = static_cast<uint32_t>(r.seq);
	pp_surface_timing_v1_send_info(sub, seq, protocol_transport(r.transport), r.format, r.width, r.height,
		static_cast<uint32_t>(r.bytes >> 32), static_cast<uint32_t>(r.bytes),
		static_cast<uint32_t>(r.damage_bytes >> 32), static_cast<uint32_t>(r.damage_bytes));
	send_time(sub, seq, PP_SURFACE_TIMING_V1_PHASE_COMMIT, r.t_commit);
	send_time(sub, seq, PP_SURFACE_TIMING_V1_PHASE_DATA_COMPLETE, r.t_data_complete);
	send_time(sub, seq, PP_SURFACE_TIMING_V1_PHASE_CONVERT_START, r.t_convert_start);
	send_time(sub, seq, PP_SURFACE_TIMING_V1_PHASE_CONVERT_END, r.t_convert_end);
	send_time(sub, seq, PP_SURFACE_TIMING_V1_PHASE_UPLOAD_START, r.t_upload_start);
	send_time(sub, seq, PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END, r.t_upload_end);
	send_time(sub, seq, PP_SURFACE_TIMING_V1_PHASE_PRESENT, r.t_present);
	pp_surface_timing_v1_send_done(sub, seq, r.discarded ? 0 : PP_SURFACE_TIMING_V1_FLAGS_PRESENTED,
		r.output.empty() ? nullptr : r.output.data);
}

// Version 2: the whole commit in one report event of four arguments; the array points at the
// stack (libwayland copies it into the connection buffer while marshalling).
// The value enum's entries of a record (version 2's report array, the tail of a version 3 record).
constexpr size_t kReportValues = size_t{PP_SURFACE_TIMING_V1_VALUE_BARRIER_WAIT} + 1;
static_assert(PP_SURFACE_TIMING_V1_VALUE_TARGET ==
	size_t{PP_SURFACE_TIMING_V1_VALUE_PHASE_COMMIT} + PP_SURFACE_TIMING_V1_PHASE_PRESENT + 1);

// Writes kReportValues values at `values`.
void fill_values(const timing::CommitSample &r, uint64_t *values) {
	const uint64_t v[] = {protocol_transport(r.transport), r.format, static_cast<uint32_t>(r.width),
		static_cast<uint32_t>(r.height), r.bytes, r.damage_bytes, r.t_commit, r.t_data_complete,
		r.t_convert_start, r.t_convert_end, r.t_upload_start, r.t_upload_end, r.t_present, r.t_target,
		r.barrier_wait};
	static_assert(std::size(v) == kReportValues);
	std::copy(std::begin(v), std::end(v), values);
}

// `values`: fill_values() of `r`, made once for all the surface's subscriptions.
void send_report(wl_resource *sub, const timing::CommitSample &r, uint64_t *values) {
	wl_array array = {.size = kReportValues * sizeof(uint64_t), .alloc = 0, .data = values};
	pp_surface_timing_v1_send_report(sub, static_cast<uint32_t>(r.seq),
		r.discarded ? 0 : PP_SURFACE_TIMING_V1_FLAGS_PRESENTED, &array,
		r.output.empty() ? nullptr : r.output.data);
}

// Version 3 record layout (protocol record enum): seq, flags, output id, then the values.
constexpr size_t kReportStride = PP_SURFACE_TIMING_V1_RECORD_VALUE_TRANSPORT + kReportValues;
// libwayland's messages are at most 4096 bytes (clients such as Debian 12's 1.21 cannot read
// longer ones): 8-byte header, the stride, the array's length, then the records.
constexpr size_t kReportsPerEvent = (4096 - 8 - 4 - 4) / (kReportStride * sizeof(uint64_t));
static_assert(kReportStride == 18 && kReportsPerEvent == 28); // as the protocol says
// A queued record waits at most this long (protocol: flush request).
constexpr int kBatchMs = 10;

uint32_t protocol_transport(timing::Transport t) {
	switch (t) {
	case timing::Transport::ShmReused: return PP_SURFACE_TIMING_V1_TRANSPORT_SHM;
	case timing::Transport::ShmNewPool: return PP_SURFACE_TIMING_V1_TRANSPORT_SHM_NEW_POOL;
	case timing::Transport::Stream: return PP_SURFACE_TIMING_V1_TRANSPORT_STREAM;
	default: return PP_SURFACE_TIMING_V1_TRANSPORT_OTHER;
	}
}

uint64_t ns_of(const timespec *ts) {
	return static_cast<uint64_t>(ts->tv_sec) * 1000000000u + static_cast<uint64_t>(ts->tv_nsec);
}

SurfaceTiming &timing_of(SurfaceState *s) {
	if (s->timing == nullptr) {
		s->timing = std::make_unique<SurfaceTiming>();
		s->timing->state = s;
	}
	return *s->timing;
}

// A pp_surface_timing_v1's user data is its TimingSubscription.
void subscription_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void subscription_flush(wl_client *, wl_resource *resource) {
	auto *sub = static_cast<TimingSubscription *>(wl_resource_get_user_data(resource));
	if (sub->timing != nullptr) sub->timing->send_queued(sub);
}

const struct pp_surface_timing_v1_interface kSubscriptionImpl = {
	.destroy = subscription_destroy,
	.flush = subscription_flush,
};

void subscription_resource_destroy(wl_resource *resource) {
	auto *sub = static_cast<TimingSubscription *>(wl_resource_get_user_data(resource));
	if (sub->timing != nullptr) sub->timing->subscription_destroyed(sub);
	if (SurfaceState *surface = sub->surface.get()) {
		SurfaceTiming &st = *surface->timing;
		st.subscribers.remove(sub);
		(sub->version >= PP_SURFACE_TIMING_V1_REPORTS_SINCE_VERSION ? st.batched_subscribers
									    : st.unbatched_subscribers)--;
	}
	delete sub;
}

void manager_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void manager_subscribe(wl_client *client, wl_resource *resource, uint32_t id, wl_resource *surface_resource) {
	auto *timing = static_cast<Timing *>(wl_resource_get_user_data(resource));
	// libwayland already refuses other clients' object ids; the rule stays explicit here.
	if (wl_resource_get_client(surface_resource) != client) {
		wl_resource_post_error(resource, PP_TIMING_MANAGER_V1_ERROR_FOREIGN_SURFACE, "not your surface");
		return;
	}
	AccountSlot slot = client_account_take(&timing->plugin()->options, client, ClientObject::TimingSubscription,
		resource, PP_TIMING_MANAGER_V1_ERROR_LIMIT_EXCEEDED);
	if (!slot) return; // the error is posted
	wl_resource *sub =
		wl_resource_create(client, &pp_surface_timing_v1_interface, wl_resource_get_version(resource), id);
	if (sub == nullptr) {
		wl_client_post_no_memory(client);
		return;
	}
	auto *subscription = new TimingSubscription();
	subscription->slot = std::move(slot);
	subscription->resource = sub;
	subscription->version = wl_resource_get_version(sub);
	subscription->timing = timing;
	if (SurfaceState *target = timing->plugin()->surface_state(wlr_surface_from_resource(surface_resource))) {
		subscription->surface = target->ref();
	}
	wl_resource_set_implementation(sub, &kSubscriptionImpl, subscription, subscription_resource_destroy);
	timing->subscription_created(subscription);
	if (SurfaceState *target = subscription->surface.get()) {
		SurfaceTiming &st = timing_of(target);
		st.subscribers.push_back(subscription);
		if (subscription->version >= PP_SURFACE_TIMING_V1_REPORTS_SINCE_VERSION) {
			st.batched_subscribers++;
			// Records finished from now on (the batch may hold earlier ones for others).
			subscription->next_record = st.batch_first + st.batch.size() / kReportStride;
		} else {
			st.unbatched_subscribers++;
		}
	}
}

const struct pp_timing_manager_v1_interface kManagerImpl = {
	.destroy = manager_destroy,
	.subscribe = manager_subscribe,
};

void bind_manager(wl_client *client, void *data, uint32_t version, uint32_t id) {
	wl_resource *resource = static_cast<Timing *>(data)->plugin()->bind_resource(
		client, &pp_timing_manager_v1_interface, version, id);
	if (resource == nullptr) return;
	wl_resource_set_implementation(resource, &kManagerImpl, data, nullptr);
}

bool on_output(wlr_surface *surface, wlr_output *output) {
	wlr_surface_output *so;
	wl_list_for_each(so, &surface->current_outputs, link) {
		if (so->output == output) return true;
	}
	return false;
}

} // namespace

// Timing::surface_destroyed() left no subscriber; this keeps them sound if it did not run.
SurfaceTiming::~SurfaceTiming() {
	subscribers.for_each([this](TimingSubscription *sub) {
		sub->surface = {};
		subscribers.remove(sub);
	});
}

std::unique_ptr<Timing> Timing::create(pixelport_plugin *plugin, const char *log_path, const char *trace_path) {
	std::unique_ptr<Timing> t(new Timing());
	t->plugin_ = plugin;
	t->batch_timer_ =
		wl_event_loop_add_timer(wl_display_get_event_loop(plugin->display), batch_timer_fired, t.get());
	if (t->batch_timer_ == nullptr) return nullptr;
	t->gone_timer_ = wl_event_loop_add_timer(wl_display_get_event_loop(plugin->display), gone_timer_fired, t.get());
	if (t->gone_timer_ == nullptr) return nullptr;
	bool has_log = log_path != nullptr && *log_path != '\0';
	bool has_trace = trace_path != nullptr && *trace_path != '\0';
	if (has_log || has_trace) {
		t->summary_ = std::make_unique<timing::Summary>();
		timing::LogWriter::Options options;
		options.jsonl_path = has_log ? log_path : "";
		options.trace_path = has_trace ? trace_path : "";
		options.summary = t->summary_.get();
		try {
			t->log_ = std::make_unique<timing::LogWriter>(options);
		} catch (const std::exception &e) {
			wlr_log(WLR_ERROR, "pixelport: timing log: %s", e.what());
			return nullptr;
		}
		wlr_log(WLR_INFO, "pixelport: timing log %s, trace %s", has_log ? log_path : "-",
			has_trace ? trace_path : "-");
	}
	return t;
}

timing::CommitSample &RecordFifo::emplace_back() {
	if (size_ == slots_.size()) {
		// Full: the same records in order in twice the slots (rare: cached commits pile up).
		std::vector<timing::CommitSample> grown(std::max<size_t>(4, slots_.size() * 2));
		for (size_t i = 0; i < size_; i++) grown[i] = slots_[(head_ + i) % slots_.size()];
		slots_ = std::move(grown);
		head_ = 0;
	}
	size_t at = head_ + size_ < slots_.size() ? head_ + size_ : head_ + size_ - slots_.size();
	size_++;
	// Cleared in place (assigning a cleared temporary would clear and copy).
	return *std::construct_at(&slots_[at]);
}

Timing::~Timing() {
	subscriptions_.for_each([this](TimingSubscription *sub) {
		sub->timing = nullptr;
		subscriptions_.remove(sub);
	});
	waiting_.for_each([this](SurfaceTiming *st) { waiting_.remove(st); });
	batching_.for_each([this](SurfaceTiming *st) { batching_.remove(st); });
	if (batch_timer_ != nullptr) wl_event_source_remove(batch_timer_);
	if (gone_timer_ != nullptr) wl_event_source_remove(gone_timer_);
	if (log_ != nullptr) log_->close();
}

bool Timing::active(const SurfaceState *surface) const {
	return log_ != nullptr || (surface->timing != nullptr && !surface->timing->subscribers.empty());
}

wl_global *Timing::create_global(uint32_t version) {
	return wl_global_create(
		plugin_->display, &pp_timing_manager_v1_interface, static_cast<int>(version), this, bind_manager);
}

void Timing::client_commit(SurfaceState *s, TimedBuffer *timed) {
	wlr_surface *surface = s->surface;
	if (!(surface->pending.committed & WLR_SURFACE_STATE_BUFFER) || surface->pending.buffer == nullptr) return;
	// Filled in place: the record is copied only when it moves on (applied, finished).
	SurfaceTiming &st = timing_of(s);
	timing::CommitSample &r = st.unapplied.emplace_back();
	r.t_commit = monotonic_ns();
	r.surface_id = s->id;
	r.seq = s->commits;
	if (log_ != nullptr) {
		st.in_log = true;
		log_labels(s, st);
	}
	r.width = surface->pending.buffer->width;
	r.height = surface->pending.buffer->height;
	if (timed != nullptr) timed->describe(&r);
	// Damaged bytes: the damaged share of the buffer's bytes.
	int n = 0;
	const pixman_box32_t *boxes = pixman_region32_rectangles(&surface->pending.buffer_damage, &n);
	uint64_t area = 0;
	for (int i = 0; i < n; i++) {
		area += static_cast<uint64_t>(boxes[i].x2 - boxes[i].x1) *
			static_cast<uint64_t>(boxes[i].y2 - boxes[i].y1);
	}
	uint64_t pixels = static_cast<uint64_t>(r.width) * static_cast<uint64_t>(r.height);
	r.damage_bytes = area >= pixels ? r.bytes : area * r.bytes / pixels; // a whole buffer divides by nothing
}

void Timing::push_labels_gone() {
	while (!labels_gone_.empty()) {
		if (!log_->push(timing::SurfaceLabels{.surface_id = labels_gone_.back(), .gone = true})) {
			// The ring is full: again soon, even if no record comes to take them.
			wl_event_source_timer_update(gone_timer_, kBatchMs);
			return;
		}
		labels_gone_.pop_back();
	}
	if (labels_gone_.capacity() > 64) labels_gone_.shrink_to_fit(); // a burst does not stay
}

int Timing::gone_timer_fired(void *data) {
	auto *t = static_cast<Timing *>(data);
	if (t->log_ != nullptr) t->push_labels_gone();
	return 0;
}

// The log gets a surface's labels before its first record and again after they change;
// records carry none (the writer joins them). Changes are learnt from the toplevel's events,
// so an unchanged surface costs a flag test per commit.
void Timing::log_labels(SurfaceState *s, SurfaceTiming &st) {
	if (st.label_source == SurfaceTiming::LabelSource::Unknown) watch_labels(s, st);
	if (st.labels_logged && !st.labels_changed) return;
	if (st.labels.pid < 0) {
		pid_t pid = 0;
		wl_client_get_credentials(wl_resource_get_client(s->surface->resource), &pid, nullptr, nullptr);
		st.labels.pid = pid;
	}
	st.labels.surface_id = s->id;
	wlr_xdg_toplevel *toplevel = st.toplevel;
	st.labels.app_id = toplevel != nullptr && toplevel->app_id != nullptr ? toplevel->app_id : "";
	st.labels.title = toplevel != nullptr && toplevel->title != nullptr ? toplevel->title : "";
	st.labels_logged = log_->push(st.labels); // a full ring: pushed again with the next record
	st.labels_changed = !st.labels_logged;
}

// A wl_surface's role never changes once set: a surface that is not an xdg_surface, or is a
// popup, has no labels to watch; an xdg_surface without a role yet is looked at again.
void Timing::watch_labels(SurfaceState *s, SurfaceTiming &st) {
	if (s->surface->role == nullptr) return;
	wlr_xdg_surface *xdg = wlr_xdg_surface_try_from_wlr_surface(s->surface);
	if (xdg == nullptr || xdg->role == WLR_XDG_SURFACE_ROLE_POPUP) {
		st.label_source = SurfaceTiming::LabelSource::None;
		return;
	}
	if (xdg->role != WLR_XDG_SURFACE_ROLE_TOPLEVEL || xdg->toplevel == nullptr) return;
	st.label_source = SurfaceTiming::LabelSource::Toplevel;
	st.toplevel = xdg->toplevel;
	st.labels_changed = true;
	SurfaceTiming *stp = &st;
	st.toplevel_title.connect(&st.toplevel->events.set_title, [stp](void *) { stp->labels_changed = true; });
	st.toplevel_app_id.connect(&st.toplevel->events.set_app_id, [stp](void *) { stp->labels_changed = true; });
	st.toplevel_destroy.connect(&st.toplevel->events.destroy, [stp](void *) {
		stp->toplevel_title.disconnect();
		stp->toplevel_app_id.disconnect();
		stp->toplevel_destroy.disconnect();
		stp->toplevel = nullptr;
		stp->label_source = SurfaceTiming::LabelSource::Unknown; // a new toplevel may come
		stp->labels_changed = true;
	});
}

timing::CommitSample *Timing::applying(SurfaceState *s) {
	if (s->timing == nullptr || s->timing->unapplied.empty()) return nullptr;
	return &s->timing->unapplied.front();
}

timing::CommitSample *Timing::upload_started(SurfaceState *s) {
	timing::CommitSample *r = applying(s);
	if (r == nullptr || r->t_upload_start != 0) return nullptr;
	r->t_upload_start = monotonic_ns();
	return r;
}

timing::CommitSample *Timing::converting(SurfaceState *s) {
	if (s->timing == nullptr || s->timing->shown.empty()) return nullptr;
	timing::CommitSample &r = s->timing->shown.back().record;
	return r.t_convert_start == 0 ? &r : nullptr;
}

void Timing::applied(SurfaceState *s, TimedBuffer *buffer) {
	if (s->timing == nullptr || s->timing->unapplied.empty()) return;
	SurfaceTiming &st = *s->timing;
	timing::CommitSample &r = st.unapplied.front();
	// A commit without a buffer (no record) applied before the next one with a record (held
	// commits make that order visible: a fifo client's empty wait_barrier commits).
	if (r.seq > s->applied_commit()) return;
	if (buffer != nullptr) buffer->applied(&r);
	// A record no output has shown yet is replaced by this one: discarded.
	for (SurfaceTiming::Shown &shown : st.shown) {
		if (shown.output != nullptr || shown.done) continue;
		shown.record.discarded = true;
		shown.done = true;
	}
	st.shown.emplace_back().record = r;
	st.unapplied.pop_front(); // r is gone from here on
	waiting_.push_back(&st);
	finish_done(s, st);
}

void Timing::finish_done(SurfaceState *s, SurfaceTiming &st) {
	while (!st.shown.empty() && st.shown.front().done) {
		finish(s, st.shown.front().record);
		st.shown.pop_front();
	}
	if (st.shown.empty()) waiting_.remove(&st);
}

void Timing::surface_destroyed(SurfaceState *s) {
	if (s->timing == nullptr) return;
	SurfaceTiming &st = *s->timing;
	waiting_.remove(&st);
	for (auto &shown : st.shown) {
		shown.record.discarded = true;
		finish(s, shown.record);
	}
	st.shown.clear();
	send_batch(st, false); // the surface's last reports, then quiet
	st.subscribers.for_each([&](TimingSubscription *sub) {
		sub->surface = {};
		st.subscribers.remove(sub);
	});
	st.batched_subscribers = st.unbatched_subscribers = 0;
	if (log_ != nullptr && st.in_log) {
		// The writer forgets the surface (labels, summary, trace track); a full ring takes the
		// news with a later record or the gone timer.
		labels_gone_.push_back(s->id);
		push_labels_gone();
	}
}

void Timing::finish(SurfaceState *s, timing::CommitSample &r) {
	SurfaceTiming &st = *s->timing;
	if (st.unbatched_subscribers > 0) {
		uint64_t values[kReportValues];
		fill_values(r, values);
		st.subscribers.for_each([&](TimingSubscription *sub) {
			if (sub->version >= PP_SURFACE_TIMING_V1_REPORTS_SINCE_VERSION) return;
			if (sub->version >= PP_SURFACE_TIMING_V1_REPORT_SINCE_VERSION) {
				send_report(sub->resource, r, values);
			} else {
				send_v1(sub->resource, r);
			}
		});
	}
	// After the others' events: a batch that fills leaves now.
	if (st.batched_subscribers > 0) queue_report(st, r);
	if (log_ != nullptr) {
		log_->push(r);
		if (!labels_gone_.empty()) push_labels_gone();
	}
}

// Version 3: the record joins the surface's batch, once for all its version 3 subscriptions; a
// full batch leaves at once, others with the batch timer (or a client's flush).
void Timing::queue_report(SurfaceTiming &st, const timing::CommitSample &r) {
	uint64_t output_id = 0;
	if (!r.discarded && !r.output.empty()) {
		std::string_view name(r.output.data);
		auto it = std::find(st.outputs.begin(), st.outputs.end(), name);
		if (it == st.outputs.end()) {
			st.outputs.emplace_back(name);
			it = st.outputs.end() - 1;
		}
		output_id = static_cast<uint64_t>(it - st.outputs.begin()) + 1;
	}
	constexpr size_t kPerEvent = kReportsPerEvent * kReportStride;
	size_t at = st.batch.size();
	if (at == 0) {
		if (!batch_timer_armed_) {
			wl_event_source_timer_update(batch_timer_, kBatchMs);
			batch_timer_armed_ = true;
		}
		batching_.push_back(&st);
		st.batch.reserve(kPerEvent); // once per surface while it commits fast (see send_batch)
	}
	st.batch.resize(at + kReportStride);
	uint64_t *record = st.batch.data() + at;
	record[PP_SURFACE_TIMING_V1_RECORD_SEQ] = r.seq;
	record[PP_SURFACE_TIMING_V1_RECORD_FLAGS] = r.discarded ? 0 : PP_SURFACE_TIMING_V1_FLAGS_PRESENTED;
	record[PP_SURFACE_TIMING_V1_RECORD_OUTPUT] = output_id;
	fill_values(r, record + PP_SURFACE_TIMING_V1_RECORD_VALUE_TRANSPORT);
	if (st.batch.size() == kPerEvent) send_batch(st, true);
}

void Timing::send_batch(SurfaceTiming &st, bool keep_buffer) {
	if (st.batch.empty()) return;
	st.subscribers.for_each([&](TimingSubscription *sub) {
		if (sub->version >= PP_SURFACE_TIMING_V1_REPORTS_SINCE_VERSION) send_records(sub, st);
	});
	st.batch_first += st.batch.size() / kReportStride;
	st.batch.clear();
	// A surface whose batch filled commits fast: its buffer stays. Sent by the timer (slow
	// commits) or at the end, it goes: an idle surface holds none.
	if (!keep_buffer) std::vector<uint64_t>().swap(st.batch);
	batching_.remove(&st);
}

// The records of the surface's batch that `sub` was not sent yet, in one reports event. The
// output ids are the surface's; a subscription made after some were numbered has its own
// (from 1), so its records are rewritten in a copy.
void Timing::send_records(TimingSubscription *sub, SurfaceTiming &st) {
	size_t records = st.batch.size() / kReportStride;
	uint64_t end = st.batch_first + records;
	uint64_t from = std::max(sub->next_record, st.batch_first);
	sub->next_record = end;
	if (from >= end) return;
	const uint64_t *data = st.batch.data() + (from - st.batch_first) * kReportStride;
	size_t values = (end - from) * kReportStride;
	bool own_ids = false;
	for (size_t i = PP_SURFACE_TIMING_V1_RECORD_OUTPUT; i < values; i += kReportStride) {
		uint64_t id = data[i];
		if (id == 0) continue;
		if (sub->output_ids.size() < id) sub->output_ids.resize(id, 0);
		uint32_t &mine = sub->output_ids[id - 1];
		if (mine == 0) {
			mine = ++sub->outputs_announced;
			pp_surface_timing_v1_send_output_name(sub->resource, mine, st.outputs[id - 1].c_str());
		}
		own_ids = own_ids || mine != id;
	}
	if (own_ids) {
		scratch_.assign(data, data + values);
		for (size_t i = PP_SURFACE_TIMING_V1_RECORD_OUTPUT; i < values; i += kReportStride) {
			if (scratch_[i] != 0) scratch_[i] = sub->output_ids[scratch_[i] - 1];
		}
		data = scratch_.data();
	}
	// libwayland copies the array while marshalling; it is not written through.
	wl_array array = {.size = values * sizeof(uint64_t), .alloc = 0, .data = const_cast<uint64_t *>(data)};
	pp_surface_timing_v1_send_reports(sub->resource, kReportStride, &array);
}

void Timing::send_queued(TimingSubscription *sub) {
	SurfaceState *surface = sub->surface.get();
	if (surface == nullptr || surface->timing == nullptr) return;
	send_records(sub, *surface->timing);
}

void Timing::subscription_destroyed(TimingSubscription *sub) { subscriptions_.remove(sub); }

int Timing::batch_timer_fired(void *data) {
	auto *t = static_cast<Timing *>(data);
	t->batch_timer_armed_ = false;
	// send_batch() takes each off batching_; nothing is queued while this runs.
	while (!t->batching_.empty()) t->send_batch(*t->batching_.front(), false);
	return 0;
}

std::unique_ptr<Timing::OutputTiming> Timing::attach_output(wlr_output *output) {
	auto state = std::make_unique<OutputTiming>();
	OutputTiming *o = state.get();
	o->timing = this;
	o->output = output;
	// Attach before the host's own frame listener, so this runs first: render start.
	o->frame_event.connect(&output->events.frame, [o](void *) { o->frame.t_render_start = monotonic_ns(); });
	o->precommit.connect(&output->events.precommit, [o](void *data) {
		auto *event = static_cast<wlr_output_event_precommit *>(data);
		if (event->state->committed & WLR_OUTPUT_STATE_BUFFER) o->frame.t_render_end = monotonic_ns();
	});
	o->commit.connect(&output->events.commit, [o](void *data) {
		auto *event = static_cast<wlr_output_event_commit *>(data);
		if (event->state->committed & WLR_OUTPUT_STATE_BUFFER) o->timing->output_committed(o);
	});
	o->present.connect(&output->events.present,
		[o](void *data) { o->timing->output_presented(o, static_cast<wlr_output_event_present *>(data)); });
	return state;
}

void Timing::detach_output(OutputTiming &o) {
	waiting_.for_each([&o](SurfaceTiming *st) {
		for (auto &shown : st->shown) {
			if (shown.output == o.output) shown.output = nullptr; // will end as discarded
		}
	});
}

// A frame with these surfaces' applied records was committed: they present with it.
void Timing::output_committed(OutputTiming *o) {
	waiting_.for_each([o](SurfaceTiming *st) {
		if (!on_output(st->state->surface, o->output)) return;
		for (auto &shown : st->shown) {
			if (shown.output == nullptr) {
				shown.output = o->output;
				shown.output_commit_seq = o->output->commit_seq;
			}
		}
	});
}

void Timing::output_presented(OutputTiming *o, const wlr_output_event_present *event) {
	const timespec *shown_at = wlr_compat::present_when(event);
	uint64_t when = event->presented && shown_at != nullptr ? ns_of(shown_at) : 0;
	waiting_.for_each([&](SurfaceTiming *st) {
		SurfaceState *s = st->state;
		for (SurfaceTiming::Shown &shown : st->shown) {
			if (shown.done || shown.output != o->output || shown.output_commit_seq > event->commit_seq)
				continue;
			if (event->presented) {
				shown.record.t_present = when;
				shown.record.output = o->output->name;
			} else {
				shown.record.discarded = true;
			}
			shown.done = true;
		}
		finish_done(s, *st);
	});
	if (log_ != nullptr) {
		timing::FrameRecord &f = o->frame;
		f.output = o->output->name;
		f.seq = event->commit_seq;
		f.t_present = when;
		f.refresh_ns = event->refresh > 0 ? static_cast<uint64_t>(event->refresh) : 0;
		f.missed = !event->presented || (o->last_vblank != 0 && event->seq > o->last_vblank + 1);
		o->last_vblank = event->seq;
		log_->push(f);
		f = {};
	}
}

std::string Timing::summary() const {
	return summary_ != nullptr ? summary_->format_summary() : std::string("no timing recorded (no log)\n");
}

} // namespace pixelport
