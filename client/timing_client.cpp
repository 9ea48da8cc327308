#include "timing_client.hpp"

#include <algorithm>
#include <cstring>

namespace pixelport::client {

namespace {

uint64_t split_ns(uint32_t hi, uint32_t lo, uint32_t nsec) {
	return ((static_cast<uint64_t>(hi) << 32) | lo) * 1000000000ull + nsec;
}

// Entries of the value enum: sizes and formats, one time per phase, then frame pacing's.
constexpr size_t kValues = PP_SURFACE_TIMING_V1_VALUE_BARRIER_WAIT + 1;

// A commit from version 2's report array or the values of a version 3 record (kValues entries).
CommitTiming commit_from_values(uint32_t seq, uint32_t flags, const uint64_t *v, std::string output) {
	CommitTiming c;
	c.seq = seq;
	c.transport = static_cast<uint32_t>(v[PP_SURFACE_TIMING_V1_VALUE_TRANSPORT]);
	c.format = static_cast<uint32_t>(v[PP_SURFACE_TIMING_V1_VALUE_FORMAT]);
	c.width = static_cast<int>(v[PP_SURFACE_TIMING_V1_VALUE_WIDTH]);
	c.height = static_cast<int>(v[PP_SURFACE_TIMING_V1_VALUE_HEIGHT]);
	c.bytes = v[PP_SURFACE_TIMING_V1_VALUE_BYTES];
	c.damage_bytes = v[PP_SURFACE_TIMING_V1_VALUE_DAMAGE_BYTES];
	memcpy(c.t, v + PP_SURFACE_TIMING_V1_VALUE_PHASE_COMMIT, sizeof(c.t));
	c.target = v[PP_SURFACE_TIMING_V1_VALUE_TARGET];
	c.barrier_wait = v[PP_SURFACE_TIMING_V1_VALUE_BARRIER_WAIT];
	c.presented = (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED) != 0;
	c.output = std::move(output);
	return c;
}

const pp_surface_timing_v1_listener kSurfaceListener = {
	.info =
		[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t transport, uint32_t format, int32_t width,
			int32_t height, uint32_t bytes_hi, uint32_t bytes_lo, uint32_t damage_hi, uint32_t damage_lo) {
			auto *tc = static_cast<TimingClient *>(data);
			CommitTiming &c = tc->pending_[seq];
			c.seq = seq;
			c.transport = transport;
			c.format = format;
			c.width = width;
			c.height = height;
			c.bytes = (static_cast<uint64_t>(bytes_hi) << 32) | bytes_lo;
			c.damage_bytes = (static_cast<uint64_t>(damage_hi) << 32) | damage_lo;
		},
	.timestamp =
		[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t phase, uint32_t hi, uint32_t lo,
			uint32_t nsec) {
			auto *tc = static_cast<TimingClient *>(data);
			if (phase < 7) tc->pending_[seq].t[phase] = split_ns(hi, lo, nsec);
		},
	.done =
		[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, const char *output) {
			auto *tc = static_cast<TimingClient *>(data);
			auto it = tc->pending_.find(seq);
			CommitTiming c = it != tc->pending_.end() ? it->second : CommitTiming{};
			if (it != tc->pending_.end()) tc->pending_.erase(it);
			c.seq = seq;
			c.presented = (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED) != 0;
			c.output = output ? output : "";
			tc->finish(std::move(c));
		},
	// Version 2: the whole commit in one event.
	.report =
		[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *values,
			const char *output) {
			auto *tc = static_cast<TimingClient *>(data);
			uint64_t v[kValues] = {}; // later values ignored
			memcpy(v, values->data, std::min(sizeof(v), values->size));
			tc->finish(commit_from_values(seq, flags, v, output ? output : ""));
		},
	// Version 3: output ids, then batches of records.
	.output_name =
		[](void *data, pp_surface_timing_v1 *, uint32_t id, const char *name) {
			auto *tc = static_cast<TimingClient *>(data);
			if (id == 0 || id > 4096) return; // ids count up from 1 per subscription
			if (tc->output_names_.size() < id) tc->output_names_.resize(id);
			tc->output_names_[id - 1] = name;
		},
	.reports =
		[](void *data, pp_surface_timing_v1 *, uint32_t stride, wl_array *records) {
			auto *tc = static_cast<TimingClient *>(data);
			constexpr size_t kRecord = PP_SURFACE_TIMING_V1_RECORD_VALUE_TRANSPORT + kValues;
			if (stride == 0) return;
			size_t n = records->size / (stride * sizeof(uint64_t));
			const auto *base = static_cast<const uint8_t *>(records->data);
			for (size_t i = 0; i < n; i++) {
				uint64_t r[kRecord] = {}; // values past the stride stay 0, later ones are ignored
				memcpy(r, base + i * stride * sizeof(uint64_t),
					std::min<size_t>(stride, kRecord) * sizeof(uint64_t));
				uint64_t id = r[PP_SURFACE_TIMING_V1_RECORD_OUTPUT];
				tc->finish(commit_from_values(static_cast<uint32_t>(r[PP_SURFACE_TIMING_V1_RECORD_SEQ]),
					static_cast<uint32_t>(r[PP_SURFACE_TIMING_V1_RECORD_FLAGS]),
					r + PP_SURFACE_TIMING_V1_RECORD_VALUE_TRANSPORT,
					id != 0 && id <= tc->output_names_.size() ? tc->output_names_[id - 1]
										  : std::string()));
			}
			tc->reports_events_++;
		},
};

void registry_global(void *data, wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
	auto *tc = static_cast<TimingClient *>(data);
	if (strcmp(interface, pp_timing_manager_v1_interface.name) == 0 && tc->manager_ == nullptr) {
		// Version 3 and 4 batch reports (asked for), 2 sends one per commit, 1 (older plugins)
		// info/timestamp/done.
		tc->manager_ = static_cast<pp_timing_manager_v1 *>(wl_registry_bind(
			registry, name, &pp_timing_manager_v1_interface, std::min(version, tc->batched_ ? 4u : 2u)));
	}
}

const wl_registry_listener kRegistryListener = {registry_global, [](void *, wl_registry *, uint32_t) {}};

timing::Transport core_transport(uint32_t t) {
	switch (t) {
	case PP_SURFACE_TIMING_V1_TRANSPORT_SHM: return timing::Transport::ShmReused;
	case PP_SURFACE_TIMING_V1_TRANSPORT_SHM_NEW_POOL: return timing::Transport::ShmNewPool;
	case PP_SURFACE_TIMING_V1_TRANSPORT_STREAM: return timing::Transport::Stream;
	default: return timing::Transport::Unknown;
	}
}

} // namespace

uint64_t CommitTiming::ready() const {
	return std::max(t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END], t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_END]);
}

timing::CommitRecord CommitTiming::record() const {
	timing::CommitRecord r;
	r.seq = seq;
	r.transport = core_transport(transport);
	r.format = format;
	r.width = width;
	r.height = height;
	r.bytes = bytes;
	r.damage_bytes = damage_bytes;
	r.t_commit = t[PP_SURFACE_TIMING_V1_PHASE_COMMIT];
	r.t_data_complete = t[PP_SURFACE_TIMING_V1_PHASE_DATA_COMPLETE];
	r.t_convert_start = t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_START];
	r.t_convert_end = t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_END];
	r.t_upload_start = t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_START];
	r.t_upload_end = t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END];
	r.t_present = t[PP_SURFACE_TIMING_V1_PHASE_PRESENT];
	r.t_target = target;
	r.barrier_wait = barrier_wait;
	r.output = output;
	r.discarded = !presented;
	return r;
}

timing::PhaseDurations CommitTiming::phases() const { return timing::disjoint_phases(record()); }

TimingClient::TimingClient(Connection *conn, size_t keep, bool batched) :
	batched_(batched), conn_(conn), keep_(std::max<size_t>(keep, 1)) {
	registry_ = wl_display_get_registry(conn->display);
	wl_registry_add_listener(registry_, &kRegistryListener, this);
	conn->roundtrip();
}

TimingClient::~TimingClient() {
	unsubscribe();
	if (manager_) pp_timing_manager_v1_destroy(manager_);
	if (registry_) wl_registry_destroy(registry_);
}

bool TimingClient::subscribe(wl_surface *surface) {
	unsubscribe();
	if (manager_ == nullptr) return false;
	sub_ = pp_timing_manager_v1_subscribe(manager_, surface);
	pp_surface_timing_v1_add_listener(sub_, &kSurfaceListener, this);
	return true;
}

void TimingClient::unsubscribe() {
	if (sub_) pp_surface_timing_v1_destroy(sub_);
	sub_ = nullptr;
	pending_.clear();
	output_names_.clear();
	commits.clear();
}

bool TimingClient::batching() const {
	return sub_ != nullptr && pp_surface_timing_v1_get_version(sub_) >= PP_SURFACE_TIMING_V1_FLUSH_SINCE_VERSION;
}

void TimingClient::flush() {
	if (batching()) pp_surface_timing_v1_flush(sub_);
}

void TimingClient::finish(CommitTiming c) {
	finished_++;
	commits.push_back(std::move(c));
	if (commits.size() > keep_) commits.pop_front();
}

bool TimingClient::wait_commit(uint64_t since_ns, int timeout_ms, CommitTiming *out) {
	if (sub_ == nullptr) return false;
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	for (;;) {
		auto hit = std::find_if(commits.begin(), commits.end(), [&](const CommitTiming &c) {
			return c.transport != PP_SURFACE_TIMING_V1_TRANSPORT_NONE &&
				c.t[PP_SURFACE_TIMING_V1_PHASE_COMMIT] >= since_ns;
		});
		if (hit != commits.end()) {
			*out = std::move(*hit);
			commits.erase(commits.begin(), hit + 1);
			return true;
		}
		commits.clear();
		uint64_t now = now_ns();
		if (now >= deadline) return false;
		flush(); // batched: what is queued comes now, later reports within the batch time
		if (!conn_->dispatch_timeout(static_cast<int>((deadline - now) / 1000000u) + 1) &&
			wl_display_get_error(conn_->display) != 0) {
			return false;
		}
	}
}

bool TimingClient::wait_for(size_t count, int timeout_ms) {
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	while (commits.size() < count) {
		uint64_t now = now_ns();
		if (now >= deadline) return false;
		flush();
		conn_->dispatch_timeout(static_cast<int>((deadline - now) / 1000000u) + 1);
		if (wl_display_get_error(conn_->display) != 0) return false;
	}
	return true;
}

std::vector<const CommitTiming *> match_commits(
	const std::deque<CommitTiming> &commits, const std::vector<uint64_t> &starts) {
	std::vector<const CommitTiming *> out(starts.size(), nullptr);
	size_t r = 0;
	for (size_t i = 0; i < starts.size(); i++) {
		uint64_t end = i + 1 < starts.size() ? starts[i + 1] : UINT64_MAX;
		while (r < commits.size() && commits[r].t[PP_SURFACE_TIMING_V1_PHASE_COMMIT] < starts[i]) r++;
		if (r < commits.size() && commits[r].t[PP_SURFACE_TIMING_V1_PHASE_COMMIT] < end) out[i] = &commits[r];
	}
	return out;
}

} // namespace pixelport::client
