// Per-surface and per-output phase statistics for the exit / SIGUSR1 summary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "pixelport/timing/phases.hpp"
#include "pixelport/timing/records.hpp"
#include "pixelport/timing/stats.hpp"

namespace pixelport::timing {

// Thread-safe (one internal mutex): LogWriter's thread may add() while the host formats.
// Memory is bounded: each (target, phase) series keeps its most recent `max_samples` values,
// so percentiles describe that recent window on long sessions; a surface that went keeps its
// own rows only among the last kEndedKept to go, older ones are merged into one target
// ("surfaces ended earlier"), so memory does not grow with the number of surfaces ever seen.
class Summary {
public:
	explicit Summary(std::size_t max_samples = 1 << 16);

	void add(const CommitRecord &r);
	// The same for a commit whose labels are kept apart (LogWriter): only app_id names it.
	void add(const CommitSample &s, std::string_view app_id);
	void add(const FrameRecord &r);
	// The surface is destroyed: its rows stay among the recently ended ones, then merge.
	void surface_gone(std::uint64_t surface_id);
	static constexpr std::size_t kEndedKept = 8;

	struct Row {
		std::string target; // "surface 12 (foot)" or "output HEADLESS-1"
		Phase phase;
		Percentiles stats; // ns, nearest rank
	};
	// Surfaces (by id) then outputs (by name), phases in Phase order; series without values
	// are left out.
	std::vector<Row> rows() const;
	// The rows as an aligned text table in human units, ending in '\n'; a single line saying
	// so when nothing was recorded.
	std::string format_summary() const;
	void clear();

private:
	struct Series {
		std::vector<std::uint64_t> values;
		std::size_t next = 0; // ring position once values.size() == max_samples
	};
	struct Target {
		std::string label;
		FixedString<64> app_id; // surfaces: the app_id the label was made from
		std::array<Series, kPhaseCount> series;
	};
	void add_value(Series &s, std::uint64_t value);
	void add_values(Target &t, const PhaseDurations &d);

	std::size_t max_samples_;
	mutable std::mutex mu_;
	std::map<std::uint64_t, Target> surfaces_; // live, and the last kEndedKept that went
	std::deque<std::uint64_t> ended_; // ids in surfaces_ that went, oldest first
	Target ended_earlier_; // every surface that went before those
	std::uint64_t ended_earlier_count_ = 0;
	Target *last_ = nullptr; // under mu_: surfaces_[last_id_], the last one added to
	std::uint64_t last_id_ = 0;
	std::map<std::string, Target, std::less<>> outputs_;
};

} // namespace pixelport::timing
