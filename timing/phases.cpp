#include "pixelport/timing/phases.hpp"

#include <algorithm>

namespace pixelport::timing {
namespace {

std::optional<std::uint64_t> span(std::uint64_t start, std::uint64_t end) {
	// 0 means "not recorded"; an end before its start is a glue bug, not a duration.
	if (start == 0 || end == 0 || end < start) return std::nullopt;
	return end - start;
}

std::size_t idx(Phase p) { return static_cast<std::size_t>(p); }

} // namespace

std::string_view phase_name(Phase p) {
	switch (p) {
	case Phase::Transfer: return "transfer";
	case Phase::Convert: return "convert";
	case Phase::Upload: return "upload";
	case Phase::Present: return "present";
	case Phase::Render: return "render";
	}
	return "?";
}

PhaseDurations derive_phases(const CommitSample &r) {
	PhaseDurations d;
	d[idx(Phase::Transfer)] = span(r.t_commit, r.t_data_complete);
	d[idx(Phase::Convert)] = span(r.t_convert_start, r.t_convert_end);
	d[idx(Phase::Upload)] = span(r.t_upload_start, r.t_upload_end);
	d[idx(Phase::Present)] = span(r.t_commit, r.t_present);
	return d;
}

PhaseDurations disjoint_phases(const CommitSample &r, bool *nested) {
	PhaseDurations d = derive_phases(r);
	auto &up = d[idx(Phase::Upload)];
	const auto &conv = d[idx(Phase::Convert)];
	if (up && conv && r.t_convert_start >= r.t_upload_start && r.t_convert_end <= r.t_upload_end) {
		*up -= std::min(*up, *conv);
		if (nested != nullptr) *nested = true;
	}
	return d;
}

PhaseDurations derive_phases(const FrameRecord &r) {
	PhaseDurations d;
	d[idx(Phase::Render)] = span(r.t_render_start, r.t_render_end);
	return d;
}

} // namespace pixelport::timing
