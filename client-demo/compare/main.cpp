// pixelport-compare BASE.jsonl CANDIDATE.jsonl: compares two pixelport timing logs.
// Exit status: 0 on success, 1 for unreadable input or a failed plot/CSV, CLI11's codes for
// usage errors. Every error is one line on stderr.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "compare.h"
#include "plot.h"

namespace {

int fail(const std::string& why) {
  std::cerr << "pixelport-compare: error: " << why << '\n';
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compare two pixelport timing logs (JSON Lines schema 1) phase by phase"};
  std::string base_path, cand_path, csv_path, plot_path;
  pixelport::compare::Options opts;
  app.add_option("BASE", base_path, "baseline run (.jsonl)")->required();
  app.add_option("CANDIDATE", cand_path, "candidate run (.jsonl)")->required();
  app.add_option("--csv", csv_path, "also write the table as CSV to FILE");
  app.add_option("--plot", plot_path, "also write a PNG plot to FILE (needs gnuplot)");
  app.add_option("--resamples", opts.resamples, "bootstrap resamples")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}));
  app.add_option("--seed", opts.seed, "bootstrap random seed")->capture_default_str();
  app.add_option("--alpha", opts.alpha, "two-sided significance level of the interval")
      ->capture_default_str()
      ->check(CLI::Range(0.0001, 0.5));
  app.add_option("--base-name", opts.base_name, "name of the base run in group labels (e.g. shm)");
  app.add_option("--cand-name", opts.cand_name, "name of the candidate run in group labels (e.g. socket)");
  app.set_version_flag("--version", std::string("pixelport-compare ") + PIXELPORT_VERSION);
  CLI11_PARSE(app, argc, argv);

  pixelport::compare::Report report;
  try {
    const auto base = pixelport::timing::read_log(base_path);
    const auto cand = pixelport::timing::read_log(cand_path);
    report = pixelport::compare::compare(base, cand, opts);
  } catch (const pixelport::timing::LogError& e) {
    return fail(e.what());
  } catch (const std::exception& e) {
    return fail(std::string("reading input: ") + e.what());
  }
  std::cout << pixelport::compare::format_table(report) << std::flush;

  if (!csv_path.empty()) {
    std::ofstream csv(csv_path);
    csv << pixelport::compare::format_csv(report);
    if (!csv.flush()) return fail("cannot write " + csv_path);
  }
  if (!plot_path.empty()) {
    try {
      pixelport::compare::plot_png(report, plot_path);
    } catch (const std::exception& e) {
      return fail(e.what());
    }
  }
  return 0;
}
