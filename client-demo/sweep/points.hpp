// The sweep itself: every format x size x transport of the plan, one point each, with progress.
#pragma once

#include <vector>

#include "model.hpp"
#include "options.hpp"
#include "plan.hpp"
#include "source.hpp"
#include "timing_client.hpp"
#include "wayland_client.hpp"

namespace pixelport::sweep {

/** Appends a point per format, size and transport to *points; false if the connection was lost. */
bool measure_points(client::Connection &conn, client::TimingClient &timing, const Options &o, const Plan &plan,
	const Source &src, std::vector<Point> *points_out);

} // namespace pixelport::sweep
