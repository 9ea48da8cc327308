#include "plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char **environ;

namespace pixelport::compare {

std::string gnuplot_quoted(const std::string &s) {
	std::string out = "'";
	for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
	return out + "'";
}

namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string &s) { return gnuplot_quoted(s); }

struct TempDir {
	fs::path path;
	TempDir() {
		const char *tmp = std::getenv("TMPDIR");
		std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/pixelport-compare-XXXXXX";
		if (!::mkdtemp(tmpl.data()))
			throw PlotError("cannot create a temporary directory: " + std::string(std::strerror(errno)));
		path = tmpl;
	}
	~TempDir() {
		std::error_code ec;
		fs::remove_all(path, ec);
	}
};

std::string first_line(const fs::path &file) {
	std::ifstream in(file);
	std::string line;
	while (std::getline(in, line)) {
		if (!line.empty()) return line;
	}
	return "no message";
}

} // namespace

std::string plot_script(const PlotPage &p) {
	std::ostringstream s;
	const bool both = p.has_others && p.has_present;
	s << "set terminal pngcairo size " << p.width << "," << (both ? 1100 : 700) << " noenhanced\n"
	  << "set output " << quoted(p.path) << "\n"
	  << "set datafile separator '\\t'\n"
	  << "set style data histograms\n"
	  << "set style histogram errorbars gap 2 lw 1\n"
	  << "set style fill solid 0.6 border -1\n"
	  << "set logscale y\n"
	  << "set ylabel 'median (bar), p95 (error bar)'\n"
	  << "set ytics ('10 ns' 0.01, '100 ns' 0.1, '1 µs' 1, '10 µs' 10, '100 µs' 100, '1 ms' 1000, '10 ms' 10000, "
	     "'100 ms' 100000, '1 s' 1e6, '10 s' 1e7, '100 s' 1e8)\n"
	  << "set xtics rotate by -30 scale 0\n"
	  << "set key top left\n"
	  << "set rmargin 12\n"; // room for the last rotated label
	const std::string page =
		p.pages > 1 ? ", page " + std::to_string(p.page) + " of " + std::to_string(p.pages) : "";
	const std::string title = "pixelport-compare: " + p.base_name + " vs " + p.cand_name + page;
	if (both) s << "set multiplot layout 2,1 title " << quoted(title) << "\n";
	// The present phase waits for the output's refresh (milliseconds): on its own axis, it does
	// not squash the other phases (nanoseconds to microseconds) into the bottom of the plot.
	auto panel = [&](const std::string &file, const std::string &what, bool ms) {
		s << "set title " << quoted(both ? what : title + ": " + what) << "\n"
		  << "set bmargin " << (both ? 7 : 9) << "\n";
		// Refresh-bound times sit within a factor of a few: a linear axis in ms reads best.
		if (ms)
			s << "unset logscale y\nset yrange [0:*]\nset ytics auto\nset ylabel 'ms: median (bar), p95 "
			     "(error bar)'\n";
		const std::string u = ms ? "($2/1000):($3/1000):($4/1000)" : "2:3:4",
				  v = ms ? "($5/1000):($6/1000):($7/1000)" : "5:6:7";
		s << "plot " << quoted(file) << " using " << u << ":xtic(1) title " << quoted(p.base_name)
		  << " lc rgb '#0072B2', '' using " << v << " title " << quoted(p.cand_name) << " lc rgb '#D55E00'\n";
	};
	if (p.has_others) panel(p.others_file, "median per phase (error bar to p95)", false);
	if (p.has_present)
		panel(p.present_file, "present: commit to on screen, including the wait for the output's refresh",
			true);
	if (both) s << "unset multiplot\n";
	return s.str();
}

void plot_png(
	const Report &r, const std::string &png_path, const std::string &base_name, const std::string &cand_name) {
	struct Bar {
		std::string line;
		bool present;
	};
	std::vector<Bar> bars;
	for (const Row &row : r.rows) {
		if (!row.base.count || !row.cand.count) continue;
		auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
		// Columns: label, base median, base median (low), base p95 (high), same for candidate.
		// The label is the frame size and phase; which runs are compared is in the legend.
		std::string group = row.group.substr(0, row.group.find(':'));
		std::string label = group + " " + std::string(timing::phase_name(row.phase));
		std::replace(label.begin(), label.end(), '"', '\''); // the data file quotes labels with "
		std::ostringstream data;
		data << '"' << label << "\"\t" << us(row.base.p50) << '\t' << us(row.base.p50) << '\t'
		     << us(row.base.p95) << '\t' << us(row.cand.p50) << '\t' << us(row.cand.p50) << '\t'
		     << us(row.cand.p95) << '\n';
		bars.push_back({data.str(), row.phase == timing::Phase::Present});
	}
	if (bars.empty()) throw PlotError("nothing to plot: no phase has values in both runs");

	// Pages of at most kPerPage bars pairs, each at most 1,600 px wide: FILE.png, FILE-2.png, ...
	constexpr std::size_t kPerPage = 12;
	const std::size_t pages = (bars.size() + kPerPage - 1) / kPerPage;
	const fs::path first(png_path);
	for (std::size_t page = 0; page < pages; ++page) {
		const std::size_t from = page * kPerPage, to = std::min(bars.size(), from + kPerPage);
		PlotPage p;
		p.path = png_path;
		if (page > 0) {
			p.path = (first.parent_path() /
				(first.stem().string() + "-" + std::to_string(page + 1) + first.extension().string()))
					 .string();
		}
		TempDir dir;
		p.others_file = (dir.path / "others.tsv").string();
		p.present_file = (dir.path / "present.tsv").string();
		{
			std::ofstream others(p.others_file), present(p.present_file);
			for (std::size_t k = from; k < to; ++k) {
				(bars[k].present ? present : others) << bars[k].line;
				(bars[k].present ? p.has_present : p.has_others) = true;
			}
		}
		p.width = std::min<std::size_t>(1600, std::max<std::size_t>(800, 130 * (to - from)));
		p.base_name = base_name;
		p.cand_name = cand_name;
		p.page = page + 1;
		p.pages = pages;
		const fs::path script = dir.path / "plot.gp";
		std::ofstream(script) << plot_script(p);
		run_gnuplot(script.string(), p.path);
	}
}

void run_gnuplot(const std::string &script, const std::string &png_path) {
	TempDir dir;
	const fs::path errors = dir.path / "gnuplot.err";
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	std::string arg0 = "gnuplot", arg1 = script;
	char *argv[] = {arg0.data(), arg1.data(), nullptr};
	pid_t pid = 0;
	const int err = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	if (err == ENOENT) throw PlotError("gnuplot not found on PATH (install gnuplot-nox to use --plot)");
	if (err != 0) throw PlotError("cannot run gnuplot: " + std::string(std::strerror(err)));
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		throw PlotError("gnuplot failed: " + first_line(errors));
	}
	if (!fs::exists(png_path)) throw PlotError("gnuplot wrote no " + png_path);
}

} // namespace pixelport::compare
