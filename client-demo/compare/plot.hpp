// PNG plot of a Report through gnuplot (run as a subprocess; no plotting of our own).
#pragma once

#include <stdexcept>
#include <string>

#include "compare.hpp"

namespace pixelport::compare {

// Thrown with a one-line reason: gnuplot missing from PATH, failing, or nothing to plot.
struct PlotError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// Median per (group, phase) for both runs as bars, with error bars up to p95; log y axis in µs.
// Writes `png_path`, and with more than 12 bar pairs further pages FILE-2.png, FILE-3.png, ...
// (each at most 1,600 px wide). Script and data go to a temporary directory removed afterwards.
void plot_png(const Report &r, const std::string &png_path);

// gnuplot single-quoted string literal of `s` ('' stands for one quote).
std::string gnuplot_quoted(const std::string &s);
// Runs `gnuplot SCRIPT` (which must write `png_path`); throws PlotError with gnuplot's first
// error line, or when gnuplot is missing or wrote no file. Shared with pixelport-sweep.
void run_gnuplot(const std::string &script, const std::string &png_path);

} // namespace pixelport::compare
