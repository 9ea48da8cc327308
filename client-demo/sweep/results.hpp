// The sweep's output folder and what goes in it: sweep.json, sweep.csv, frames.csv, table.txt,
// crossovers.txt, verdict.{txt,json}, sweep.png; and the summary on stdout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model.hpp"
#include "options.hpp"
#include "plan.hpp"
#include "verdict.hpp"

namespace pixelport::sweep {

/** --output, or pixelport-sweep-DATE-TIME here; created, and die()s if it cannot be written. */
std::filesystem::path output_folder(const Options &o);

/** Everything one sweep found, for the report. */
struct SweepResult {
	std::vector<Point> points;
	std::vector<Comparison> comparisons;
	int confirm_runs = 0;
	int confirm_apart = 0; // of those, rounds run in a compositor of their own
	std::vector<std::string> series; // transports as plotted, peer runs included
	std::vector<std::string> notes;
	std::string content_note;
	int cpid = 0; // the compositor, 0 if unknown
	uint64_t hwm_before = 0, rss_before = 0, hwm_after = 0, rss_after = 0; // bytes
	bool have_timing = false;
	bool alive = true;
};

/** Writes the files to `out` and (not in a peer child) the summary to stdout; the exit status. */
int write_results(const Options &o, const Plan &plan, const std::filesystem::path &out, SweepResult &r);

} // namespace pixelport::sweep
