// The verdict's evidence: near each candidate crossover, both sides measured again in rounds
// that alternate their order, so that drift on a loaded machine hits both alike.
#pragma once

#include <vector>

#include "options.hpp"
#include "source.hpp"
#include "timing_client.hpp"
#include "verdict.hpp"
#include "wayland_client.hpp"

namespace pixelport::sweep {

/**
 * Runs the confirming rounds for *comparisons (from plan_comparisons()) and concludes each;
 * adds the rounds run to *confirm_runs and those run in a compositor of their own
 * (Options::confirm_compositor) to *apart_runs; clears *alive if the connection was lost.
 */
void confirm_crossovers(client::Connection &conn, client::TimingClient &timing, const Options &o, const Source &src,
	std::vector<Comparison> *comparisons_io, int *confirm_runs_io, int *apart_runs_io, bool *alive_io);

} // namespace pixelport::sweep
