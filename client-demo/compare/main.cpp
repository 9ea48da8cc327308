// pixelport-compare BASE.jsonl CANDIDATE.jsonl: compares two pixelport timing logs.
// Exit status: 0 on success, 1 for unreadable input (missing, not a regular file, over
// kMaxLogBytes, not a timing log) or a failed plot/CSV, 2 for usage errors. Every error is one
// line on stderr.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include "compare.hpp"
#include "plot.hpp"

namespace {

namespace cli = pixelport::cli;

// Largest log read (the whole file is held while it is parsed): hours of commits at 60 Hz.
constexpr std::uint64_t kMaxLogBytes = std::uint64_t{1} << 30;

pixelport::timing::Log read_checked(const std::string &path) {
	std::string text, error;
	if (!cli::read_file(path, kMaxLogBytes, &text, &error)) throw pixelport::timing::LogError(path, 0, error);
	std::istringstream in(std::move(text));
	return pixelport::timing::read_log(in, path);
}

int fail(const std::string &why) {
	std::cerr << "pixelport-compare: error: " << why << '\n';
	return 1;
}

} // namespace

int main(int argc, char **argv) {
	CLI::App app{"Compare two pixelport timing logs (JSON Lines schema 1) phase by phase"};
	std::string base_path, cand_path, csv_path, plot_path;
	pixelport::compare::Options opts;
	app.add_option("BASE", base_path, "baseline run (.jsonl, a regular file of at most 1 GiB)")->required();
	app.add_option("CANDIDATE", cand_path, "candidate run (.jsonl, the same)")->required();
	app.add_option("--csv", csv_path, "also write the table as CSV to FILE");
	app.add_option("--plot", plot_path, "also write a PNG plot to FILE (needs gnuplot)");
	app.add_option("--resamples", opts.resamples, "bootstrap resamples")
		->capture_default_str()
		->transform(cli::Range(std::size_t{1}, std::size_t{1'000'000}));
	app.add_option("--seed", opts.seed, "bootstrap random seed")
		->capture_default_str()
		->transform(cli::Range(std::uint64_t{0}, UINT64_MAX));
	app.add_option("--alpha", opts.alpha, "two-sided significance level of the interval")
		->capture_default_str()
		->transform(cli::Range(0.0001, 0.5));
	app.add_option("--base-name", opts.base_name, "name of the base run in group labels (e.g. shm)");
	app.add_option("--cand-name", opts.cand_name, "name of the candidate run in group labels (e.g. socket)");
	app.set_version_flag("--version", std::string("pixelport-compare ") + PIXELPORT_VERSION);
	if (int rc = cli::parse(app, argc, argv, "pixelport-compare"); rc >= 0) return rc;

	pixelport::compare::Report report;
	try {
		const auto base = read_checked(base_path);
		const auto cand = read_checked(cand_path);
		report = pixelport::compare::compare(base, cand, opts);
	} catch (const pixelport::timing::LogError &e) {
		return fail(e.what());
	} catch (const std::exception &e) {
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
			// The legend names the runs: as given, else by their files.
			auto name = [](const std::string &given, const std::string &path) {
				return given.empty() ? std::filesystem::path(path).stem().string() : given;
			};
			std::string bn = name(opts.base_name, base_path), cn = name(opts.cand_name, cand_path);
			if (bn == cn) bn = base_path, cn = cand_path;
			pixelport::compare::plot_png(report, plot_path, bn, cn);
		} catch (const std::exception &e) {
			return fail(e.what());
		}
	}
	return 0;
}
