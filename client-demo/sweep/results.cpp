#include "results.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "plot.hpp"
#include "procfs.hpp"

namespace fs = std::filesystem;

namespace pixelport::sweep {

fs::path output_folder(const Options &o) {
	fs::path out = o.output;
	if (out.empty()) {
		char stamp[64];
		time_t now = time(nullptr);
		strftime(stamp, sizeof(stamp), "pixelport-sweep-%Y%m%d-%H%M%S", localtime(&now));
		out = stamp;
	}
	{
		std::error_code ec;
		fs::create_directories(out, ec);
		std::ofstream probe(out / ".write-test");
		if (ec || !probe)
			die(2, "cannot write to output folder " + out.string() + (ec ? ": " + ec.message() : ""));
		probe.close();
		fs::remove(out / ".write-test", ec);
	}
	return out;
}

int write_results(const Options &o, const Plan &plan, const fs::path &out, SweepResult &r) {
	const auto &[transport_names, transports, format_names, formats, sizes, size_args] = plan;
	auto &[points, comparisons, confirm_runs, confirm_apart, series, notes, content_note, cpid, hwm_before,
		rss_before, hwm_after, rss_after, have_timing, alive] = r;
	std::vector<Crossover> crossovers = find_crossovers(points, transport_names);
	size_t measured = static_cast<size_t>(
		std::count_if(points.begin(), points.end(), [](const Point &p) { return p.measured(); }));

	nlohmann::json j = to_json(points, crossovers);
	j["meta"] = {{"tool", "pixelport-sweep"}, {"content", content_note}, {"compositor_pid", cpid},
		{"compositor", cpid ? proc_comm(cpid) : ""}, {"compositor_timing", have_timing},
		{"compositor_memory",
			{{"vmhwm_before", hwm_before}, {"vmhwm_after", hwm_after}, {"rss_before", rss_before},
				{"rss_after", rss_after}}},
		{"transports", series}, {"formats", format_names}, {"notes", notes},
		{"definitions",
			{{"cost",
				 "put() start until the last of: the client's send end, the compositor's "
				 "data_complete, convert_end and upload_end (pixelport-timing-v1); the client's submit "
				 "time when the "
				 "compositor has no timing protocol"},
				{"throughput_mbs", "bytes / median cost, 10^6 bytes per second"}}}};
	std::string verdict;
	if (!o.peer_child) {
		std::ostringstream h;
		size_t invalid = static_cast<size_t>(
			std::count_if(points.begin(), points.end(), [](const Point &p) { return !p.valid(); }));
		h << "verdict (this machine; " << format_names.size() << " format(s), " << sizes.size() << " sizes";
		if (!sizes.empty()) {
			h << " from " << (sizes.front().label) << " to " << sizes.back().label;
		}
		h << "; "
		  << (have_timing ? "cost = hand-over until the compositor holds the frame"
				  : "cost = client submit time (no timing protocol)")
		  << ")\n";
		h << "   how sure: near each crossover both sides were measured in " << o.confirm_rounds
		  << " more alternating rounds, each "
		  << (confirm_runs > 0 && confirm_apart == confirm_runs ? "in a compositor of its own"
									: "on a new connection")
		  << ";\n   a side wins a size only when every run puts it ahead by more than "
		  << static_cast<int>(kTieFloor * 100)
		  << "% and its mean lead is larger than\n"
		     "   the whole spread between the runs (a size measured once: the median spread of the\n"
		     "   repeated sizes); \"sure\": the sizes on both sides of a crossover were repeated and won\n"
		     "   so; \"no clear winner (within N%)\": the mean lead, widened by the spread, is at most N%";
		if (invalid)
			h << "\n   " << invalid << " point(s) showed wrong pixels and are left out (see the table)";
		verdict = verdict_text(comparisons, h.str());
		j["verdict"] = {{"text", verdict}, {"comparisons", verdict_json(comparisons)},
			{"confirm_rounds", o.confirm_rounds}, {"confirm_seconds", o.confirm_seconds},
			{"rounds_run", confirm_runs}, {"rounds_in_own_compositor", confirm_apart},
			{"tie_floor", kTieFloor}};
	}
	std::string table = format_table(points);
	std::ostringstream cross;
	for (const Crossover &c : crossovers) cross << "  " << c.text << "\n";
	{
		std::ofstream(out / "sweep.json") << j.dump(1) << "\n";
		std::ofstream(out / "sweep.csv") << format_csv(points);
		std::ofstream(out / "frames.csv") << format_frames_csv(points);
		std::ofstream(out / "table.txt") << table << "\ncrossovers (median cost):\n" << cross.str();
		std::ofstream(out / "crossovers.txt") << cross.str();
		if (!verdict.empty()) {
			std::ofstream(out / "verdict.txt") << verdict;
			std::ofstream(out / "verdict.json") << j["verdict"].dump(1) << "\n";
		}
	}
	if (!o.no_plot && measured > 0) {
		try {
			std::vector<PlotMark> marks;
			for (const Comparison &c : comparisons) {
				if (c.question == 1 && c.crossover)
					marks.push_back({c.format, c.a.transport + "/" + c.b.transport, c.at_bytes});
			}
			sweep::plot_png(points, (out / "sweep.png").string(), marks);
		} catch (const std::exception &e) {
			notes.push_back(std::string("no plot: ") + e.what());
		}
	}
	if (!o.peer_child) {
		std::cout << "\n"
			  << table << "\ncrossovers (median cost; the compositor phases are pixelport-timing-v1's):\n"
			  << (crossovers.empty() ? "  none: fewer than two transports measured\n" : cross.str());
		for (const std::string &n : notes) std::cout << "note: " << n << "\n";
		std::cout << "compositor memory (pid " << cpid << "): peak RSS "
			  << human_bytes(static_cast<double>(hwm_before)) << " before, "
			  << human_bytes(static_cast<double>(hwm_after)) << " after\n";
		std::cout << "files: " << out.string()
			  << "/{sweep.csv,sweep.json,frames.csv,table.txt,verdict.txt,verdict.json"
			  << (fs::exists(out / "sweep.png") ? ",sweep.png" : "") << "}\n";
		std::cout << "\n" << verdict << std::flush;
	}
	if (measured == 0) {
		fprintf(stderr, "pixelport-sweep: error: nothing could be measured%s\n",
			points.empty() || points.front().note.empty() ? ""
								      : (" (" + points.front().note + ")").c_str());
		return 1;
	}
	return alive ? 0 : 1;
}

} // namespace pixelport::sweep
