#include "pixelport/timing/summary.hpp"

#include <algorithm>

namespace pixelport::timing {

Summary::Summary(std::size_t max_samples) : max_samples_(std::max<std::size_t>(max_samples, 1)) {}

void Summary::add_value(Series &s, std::uint64_t value) {
	if (s.values.size() < max_samples_) {
		s.values.push_back(value);
	} else { // window full: overwrite the oldest
		s.values[s.next] = value;
		if (++s.next == max_samples_) s.next = 0; // no division per value
	}
}

void Summary::add_values(Target &t, const PhaseDurations &d) {
	for (std::size_t i = 0; i < kPhaseCount; ++i) {
		if (d[i]) add_value(t.series[i], *d[i]);
	}
}

void Summary::add(const CommitRecord &r) { add(r, r.app_id.view()); }

void Summary::add(const CommitSample &s, std::string_view app_id) {
	const PhaseDurations d = derive_phases(s);
	std::lock_guard lock(mu_);
	// The writer adds a batch of mostly one surface: the last one's node (std::map nodes stay put).
	if (last_ == nullptr || last_id_ != s.surface_id) {
		last_ = &surfaces_[s.surface_id];
		last_id_ = s.surface_id;
	}
	Target &t = *last_;
	// The label follows the latest non-empty app_id; rebuilt only when that changes (the
	// writer thread adds every record, and a string per record is most of its cost).
	if (t.label.empty() || (!app_id.empty() && t.app_id.view() != app_id)) {
		t.app_id = app_id;
		t.label = "surface " + std::to_string(s.surface_id);
		if (!app_id.empty()) t.label += " (" + std::string(app_id) + ")";
	}
	add_values(t, d);
}

void Summary::surface_gone(std::uint64_t surface_id) {
	std::lock_guard lock(mu_);
	auto it = surfaces_.find(surface_id);
	if (it == surfaces_.end()) return;
	ended_.push_back(surface_id);
	if (ended_.size() <= kEndedKept) return;
	auto oldest = surfaces_.find(ended_.front());
	ended_.pop_front();
	// Each value moves once into the merged target: constant work per value recorded.
	for (std::size_t i = 0; i < kPhaseCount; ++i) {
		for (std::uint64_t v : oldest->second.series[i].values) add_value(ended_earlier_.series[i], v);
	}
	ended_earlier_count_++;
	ended_earlier_.label = "surfaces ended earlier (" + std::to_string(ended_earlier_count_) + ")";
	if (last_ == &oldest->second) last_ = nullptr;
	surfaces_.erase(oldest);
}

void Summary::add(const FrameRecord &r) {
	const PhaseDurations d = derive_phases(r);
	std::lock_guard lock(mu_);
	// Heterogeneous lookup: no string built for an output already known.
	auto it = outputs_.find(r.output.view());
	if (it == outputs_.end()) it = outputs_.emplace(std::string(r.output.view()), Target{}).first;
	Target &t = it->second;
	if (t.label.empty()) t.label = "output " + std::string(r.output.view());
	add_values(t, d);
}

std::vector<Summary::Row> Summary::rows() const {
	std::vector<Row> out;
	std::lock_guard lock(mu_);
	auto emit = [&](const Target &t) {
		for (Phase p : kAllPhases) {
			std::vector<std::uint64_t> v = t.series[static_cast<std::size_t>(p)].values;
			if (!v.empty()) out.push_back({t.label, p, percentiles(v)});
		}
	};
	for (const auto &[id, t] : surfaces_) emit(t);
	emit(ended_earlier_);
	for (const auto &[name, t] : outputs_) emit(t);
	return out;
}

std::string Summary::format_summary() const {
	const std::vector<Row> rows = this->rows();
	if (rows.empty()) return "pixelport timing: no records\n";
	std::size_t width = 6;
	for (const Row &r : rows) width = std::max(width, r.target.size());
	std::string out = "pixelport timing (nearest-rank percentiles)\n";
	// pad() counts columns, not bytes: "µs" would throw printf-style widths off by one.
	auto row = [&](std::string_view target, std::string_view phase, std::string_view count, std::string_view p50,
			   std::string_view p95, std::string_view p99) {
		out += pad(target, width, false) + "  " + pad(phase, 8, false) + pad(count, 8, true) +
			pad(p50, 11, true) + pad(p95, 11, true) + pad(p99, 11, true) + "\n";
	};
	row("target", "phase", "count", "p50", "p95", "p99");
	auto dur = [](std::uint64_t ns) { return format_duration_ns(static_cast<double>(ns)); };
	for (const Row &r : rows) {
		row(r.target, phase_name(r.phase), std::to_string(r.stats.count), dur(r.stats.p50), dur(r.stats.p95),
			dur(r.stats.p99));
	}
	return out;
}

void Summary::clear() {
	std::lock_guard lock(mu_);
	surfaces_.clear();
	ended_.clear();
	ended_earlier_ = Target{};
	ended_earlier_count_ = 0;
	last_ = nullptr;
	outputs_.clear();
}

} // namespace pixelport::timing
