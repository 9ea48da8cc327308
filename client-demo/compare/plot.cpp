#include "plot.h"

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

extern char** environ;

namespace pixelport::compare {

std::string gnuplot_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string& s) { return gnuplot_quoted(s); }

struct TempDir {
  fs::path path;
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/pixelport-compare-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw PlotError("cannot create a temporary directory: " + std::string(std::strerror(errno)));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) return line;
  }
  return "no message";
}

}  // namespace

void plot_png(const Report& r, const std::string& png_path) {
  std::ostringstream data;
  std::size_t points = 0;
  for (const Row& row : r.rows) {
    if (!row.base.count || !row.cand.count) continue;
    auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
    // Columns: label, base median, base median (low), base p95 (high), same for candidate.
    std::string label = row.group + " " + std::string(timing::phase_name(row.phase));
    std::replace(label.begin(), label.end(), '"', '\'');  // the data file quotes labels with "
    data << '"' << label << "\"\t" << us(row.base.p50)
         << '\t' << us(row.base.p50) << '\t' << us(row.base.p95) << '\t' << us(row.cand.p50) << '\t'
         << us(row.cand.p50) << '\t' << us(row.cand.p95) << '\n';
    ++points;
  }
  if (points == 0) throw PlotError("nothing to plot: no phase has values in both runs");

  TempDir dir;
  const fs::path data_file = dir.path / "data.tsv", script = dir.path / "plot.gp";
  std::ofstream(data_file) << data.str();
  std::ofstream(script)
      << "set terminal pngcairo size " << std::max<std::size_t>(800, 120 * points) << ",700 noenhanced\n"
      << "set output " << quoted(png_path) << "\n"
      << "set title 'pixelport-compare: median per phase (error bar to p95)'\n"
      << "set datafile separator '\\t'\n"
      << "set style data histograms\n"
      << "set style histogram errorbars gap 2 lw 1\n"
      << "set style fill solid 0.6 border -1\n"
      << "set logscale y\n"
      << "set ylabel 'µs'\n"
      << "set xtics rotate by -30 scale 0\n"
      << "set key top left\n"
      << "set rmargin 12\n"  // room for the last rotated label
      << "plot " << quoted(data_file.string()) << " using 2:3:4:xtic(1) title 'base', '' using 5:6:7 title 'candidate'\n";

  run_gnuplot(script.string(), png_path);
}

void run_gnuplot(const std::string& script, const std::string& png_path) {
  TempDir dir;
  const fs::path errors = dir.path / "gnuplot.err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string arg0 = "gnuplot", arg1 = script;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
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

}  // namespace pixelport::compare
