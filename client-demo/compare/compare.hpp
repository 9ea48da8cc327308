// pixelport-compare's engine: groups two timing logs, computes percentiles and a bootstrap
// confidence interval for the ratio of medians, and renders a text table or CSV.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pixelport/timing/jsonl.hpp"
#include "pixelport/timing/phases.hpp"
#include "pixelport/timing/stats.hpp"

namespace pixelport::compare {

struct Options {
	std::size_t resamples = 2000;
	std::uint64_t seed = 1; // fixed default: the same input always prints the same table
	double alpha = 0.05; // two-sided; the interval is the (1 - alpha) percentile interval
	// Names of the two runs in group labels ("shm", "socket"); empty: "base" / "candidate".
	std::string base_name, cand_name;
};

// Candidate median / base median with its bootstrap interval.
struct Ratio {
	double value = 0, low = 0, high = 0;
};

// Percentile bootstrap of median(cand) / median(base) (nearest-rank medians): each resample
// draws each run's values with replacement. Empty when either side is empty or a median is 0.
std::optional<Ratio> bootstrap_median_ratio(std::span<const std::uint64_t> base, std::span<const std::uint64_t> cand,
	const Options &opts, std::uint64_t stream);

struct Row {
	std::string group; // "XRGB8888 800x600 shm", "NV12 640x480: shm (shm) vs socket (stream)", "output HEADLESS-1"
	timing::Phase phase;
	timing::Percentiles base, cand; // count 0 = the run has no values for this phase
	std::optional<Ratio> ratio;
	std::string mark; // "faster" / "slower" when the interval excludes 1, else ""
};

struct Report {
	std::vector<Row> rows; // groups present in both runs
	std::vector<std::string> only_base; // group labels found only in the base run
	std::vector<std::string> only_cand;
	double alpha = 0.05;
	bool upload_minus_convert = false; // some wl_shm upload contained its conversion (subtracted)
};

// Commits group by the frame's format and pixel size, the transport and the client's app_id;
// frames by output. A group found in one run only is paired with the other run's one group of
// the same format and size when there is exactly one on each side (two runs of different
// transports). Phases are disjoint: where a wl_shm upload contains the conversion (the plugin
// converts inside the upload), the conversion is subtracted from the upload.
Report compare(const timing::Log &base, const timing::Log &cand, const Options &opts);

std::string format_table(const Report &r);
// Header line then one line per row; durations in ns, groups found in one run only as rows
// with the other side empty and mark "only-base" / "only-candidate".
std::string format_csv(const Report &r);

} // namespace pixelport::compare
