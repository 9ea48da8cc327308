// pixelport-sweep: how long each transport takes to put a frame on a surface, over frame
// sizes and pixel formats, on this machine. Every option: man/pixelport-sweep.1.scd.
//
// Per point (format, size, transport): a fresh window, warm-up frames, then measured frames,
// each waiting for presentation and for the compositor's pixelport-timing-v1 report before
// the next one. Results: a table, crossovers, CSV, JSON and a gnuplot PNG in --output.
// Pressure mode (--instances N) runs N concurrent clients putting one huge image each.
//
// The jobs live in files of their own: options, plan (sizes), source (content), procfs,
// progress, measure (one point), points (the sweep), confirm (the verdict's rounds),
// pressure, waypipe (--peer) and results.
#include <signal.h>

#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "confirm.hpp"
#include "options.hpp"
#include "plan.hpp"
#include "points.hpp"
#include "pressure.hpp"
#include "procfs.hpp"
#include "results.hpp"
#include "source.hpp"
#include "timing_client.hpp"
#include "waypipe.hpp"

using namespace pixelport::client;
using namespace pixelport::sweep;

int main(int argc, char *argv[]) {
	Options o;
	CLI::App app{"pixelport-sweep: time every transport over frame sizes and formats on this machine"};
	CLI::Option *sizes_opt = add_options(app, &o);
	if (int rc = pixelport::cli::parse(app, argc, argv, "pixelport-sweep"); rc >= 0) return rc;
	signal(SIGPIPE, SIG_IGN);

	// Every input is checked before anything is measured.
	const Plan plan = plan_sweep(o, sizes_opt->count() > 0);
	const Source src = load_source(o);
	const std::filesystem::path out = output_folder(o);
	if (o.instances > 0) return run_pressure(o, src.path, src.note, out);

	// ---- the compositor ----
	SweepResult r;
	r.content_note = src.note;
	Connection conn;
	std::string error;
	if (!conn.connect(&error)) die(1, error);
	auto timing = std::make_unique<TimingClient>(&conn);
	r.have_timing = timing->available();
	r.cpid = o.compositor_pid ? o.compositor_pid : peer_pid(conn);
	proc_rss(r.cpid, &r.hwm_before, &r.rss_before);
	if (!o.peer_child) {
		fprintf(stderr, "pixelport-sweep: compositor %s (pid %d)%s%s; content: %s\n",
			r.cpid ? proc_comm(r.cpid).c_str() : "?", r.cpid,
			conn.stream_manager ? ", pixelport stream" : ", no pixelport stream (no plugin?)",
			r.have_timing ? ", pixelport timing" : ", no timing protocol: compositor phases '-'",
			src.note.c_str());
	}
	if (!r.have_timing)
		r.notes.push_back("compositor phases unavailable (no pp_timing_manager_v1): cost = client submit time");

	r.alive = measure_points(conn, *timing, o, plan, src, &r.points);
	proc_rss(r.cpid, &r.hwm_after, &r.rss_after);

	// ---- the verdict: repeat both sides near each candidate crossover, alternating ----
	if (!o.peer_child) {
		r.comparisons = plan_comparisons(r.points);
		confirm_crossovers(conn, *timing, o, src, &r.comparisons, &r.confirm_runs, &r.confirm_apart, &r.alive);
	}
	timing.reset(); // its destroy requests need the connection
	conn.disconnect();
	if (!r.alive) r.notes.push_back("the sweep stopped early: the connection to the compositor was lost");

	r.series = plan.transport_names;
	if (!o.peer.empty() && !o.peer_child) {
		std::vector<std::string> shm;
		for (const auto &n : plan.transport_names) {
			if (n == "shm" || n == "shm-new") shm.push_back(n);
		}
		run_peer(o, plan.size_args, shm, out, &r.points, &r.series, &r.notes);
	}
	return write_results(o, plan, out, r);
}
