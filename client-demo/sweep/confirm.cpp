#include "confirm.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "measure.hpp"
#include "progress.hpp"

using namespace pixelport::client;

namespace pixelport::sweep {

void confirm_crossovers(Connection &conn, TimingClient &timing, const Options &o, const Source &src,
	std::vector<Comparison> *comparisons_io, int *confirm_runs_io, bool *alive_io) {
	std::vector<Comparison> &comparisons = *comparisons_io;
	int &confirm_runs = *confirm_runs_io;
	bool &alive = *alive_io;
	Options co = o;
	co.warmup = 1;
	co.min_frames = std::min(o.min_frames, 3);
	co.frames = std::max(co.min_frames, std::min(o.frames, 15));
	co.point_seconds = o.confirm_seconds;
	// A pass confirms what the calls so far suggest; what it finds may move the crossover
	// to sizes not yet repeated, which the next pass takes (at most three).
	for (int pass = 0; pass < 3 && alive && o.confirm_rounds > 0; pass++) {
		// What to measure: each side at each size to confirm, once per round.
		struct Need {
			Side side;
			int width, height;
			bool operator<(const Need &n) const {
				return std::tie(side.format, width, height, side.transport) <
					std::tie(n.side.format, n.width, n.height, n.side.transport);
			}
		};
		std::map<Need, int> need_index;
		std::vector<std::pair<Comparison *, size_t>> targets;
		for (Comparison &c : comparisons) {
			for (size_t i : confirm_indices(c)) {
				targets.push_back({&c, i});
				need_index[{c.a, c.sizes[i].width, c.sizes[i].height}] = 0;
				need_index[{c.b, c.sizes[i].width, c.sizes[i].height}] = 0;
			}
		}
		if (targets.empty()) break;
		std::vector<Need> needs;
		for (auto &[n, idx] : need_index) {
			idx = static_cast<int>(needs.size());
			needs.push_back(n);
		}
		if (pass == 0 && isatty(STDERR_FILENO) == 0) {
			fprintf(stderr,
				"pixelport-sweep: confirming %zu candidate crossover sizes: %d rounds of %zu points\n",
				targets.size(), o.confirm_rounds, needs.size());
		}
		Progress cp;
		cp.total = o.confirm_rounds * static_cast<int>(needs.size());
		for (int round = 0; round < o.confirm_rounds && alive; round++) {
			// Alternate the order every round: A then B, then B then A.
			std::vector<size_t> order(needs.size());
			for (size_t i = 0; i < order.size(); i++) order[i] = round % 2 ? order.size() - 1 - i : i;
			std::vector<double> cost(needs.size(), 0);
			Content c;
			for (size_t k : order) {
				const Need &n = needs[k];
				uint32_t code = 0;
				parse_format(n.side.format, &code);
				uint32_t f = shm_to_drm(code);
				if (c.drm != f || c.width != n.width || c.height != n.height) {
					c = Content();
					c.drm = f;
					c.width = n.width;
					c.height = n.height;
					make_frame(src.path.empty() ? nullptr : &src.img, f, n.width, n.height, o.seed,
						&c.bytes, &c.stride, &c.pattern);
				}
				Transport t;
				parse_transport(n.side.transport, &t);
				Point p;
				p.format = n.side.format;
				p.transport = n.side.transport;
				p.width = n.width;
				p.height = n.height;
				p.bytes = c.bytes.size();
				// Titled apart: scripts/demo compares the sweep's own points only.
				alive = run_point(conn, timing, co, c, t, &p, false, " confirm");
				if (p.stats(kCost).count) cost[k] = static_cast<double>(p.stats(kCost).p50);
				cp.step("confirming round " + std::to_string(round + 1) + ": " + p.format + " " +
						p.transport + " " + human_bytes(static_cast<double>(p.bytes)),
					p.measured() ? "median cost " + timing::format_duration_ns(cost[k])
						     : "failed: " + p.note);
				if (!alive) break;
			}
			for (auto &[cmp, i] : targets) {
				double ca = cost[static_cast<size_t>(
					need_index[{cmp->a, cmp->sizes[i].width, cmp->sizes[i].height}])];
				double cb = cost[static_cast<size_t>(
					need_index[{cmp->b, cmp->sizes[i].width, cmp->sizes[i].height}])];
				if (ca > 0 && cb > 0) cmp->sizes[i].ratios.push_back(ca / cb);
			}
			confirm_runs++;
		}
	}
	for (Comparison &c : comparisons) conclude(&c);
}

} // namespace pixelport::sweep
