// PNG plot of a Report through gnuplot (run as a subprocess; no plotting of our own).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "compare.hpp"

namespace pixelport::compare {

// Thrown with a one-line reason: gnuplot missing from PATH, failing, or nothing to plot.
struct PlotError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// Median per (group, phase) for both runs as bars, with error bars up to p95; log y axes in µs;
// the legend names the runs. The present phase (milliseconds: it waits for the output's refresh)
// gets a panel and axis of its own below the others. Writes `png_path`, and with more than 12 bar
// pairs further pages FILE-2.png, FILE-3.png, ... (each at most 1,600 px wide). Script and data go
// to a temporary directory removed afterwards.
void plot_png(const Report &r, const std::string &png_path, const std::string &base_name, const std::string &cand_name);

// One page of the plot: its PNG, its two data files (bars of the other phases, of present),
// which of them has bars, and the runs' names.
struct PlotPage {
	std::string path, others_file, present_file, base_name, cand_name;
	bool has_others = false, has_present = false;
	std::size_t width = 800, page = 1, pages = 1;
};
// The gnuplot script of one page (two panels when it has both kinds of bars).
std::string plot_script(const PlotPage &page);

// gnuplot single-quoted string literal of `s` ('' stands for one quote).
std::string gnuplot_quoted(const std::string &s);
// Runs `gnuplot SCRIPT` (which must write `png_path`); throws PlotError with gnuplot's first
// error line, or when gnuplot is missing or wrote no file. Shared with pixelport-sweep.
void run_gnuplot(const std::string &script, const std::string &png_path);

} // namespace pixelport::compare
