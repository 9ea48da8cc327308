#include "compare.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace pixelport::compare {
namespace {

using timing::kPhaseCount;
using timing::Phase;

using Samples = std::array<std::vector<std::uint64_t>, kPhaseCount>;

// One run's commits of one kind: sorted by format, pixel count, size, transport, app_id.
using CommitKey = std::tuple<std::string, std::int64_t, int, int, std::string, std::string>;
struct RunGroups {
	std::map<CommitKey, Samples> commits;
	std::map<CommitKey, std::size_t> counts; // commits per group
	std::map<std::string, Samples> outputs;
	std::set<std::string> apps;
	bool nested = false; // a wl_shm upload contained its conversion
};

void add(Samples &s, const timing::PhaseDurations &d) {
	for (std::size_t i = 0; i < kPhaseCount; ++i) {
		if (d[i]) s[i].push_back(*d[i]);
	}
}

RunGroups collect(const timing::Log &log) {
	RunGroups g;
	for (const timing::CommitRecord &c : log.commits) {
		const std::string format = timing::format_name(c.format);
		const CommitKey key{format, std::int64_t{c.width} * c.height, c.width, c.height,
			std::string(timing::transport_name(c.transport)), std::string(c.app_id.view())};
		// wl_shm converts inside the upload; the stream converts during the transfer. Disjoint
		// phases add up.
		add(g.commits[key], timing::disjoint_phases(c, &g.nested));
		g.counts[key]++;
		g.apps.insert(std::string(c.app_id.view()));
	}
	for (const timing::FrameRecord &f : log.frames)
		add(g.outputs[std::string(f.output.view())], timing::derive_phases(f));
	return g;
}

std::string size_text(const CommitKey &k) {
	return std::get<0>(k) + " " + std::to_string(std::get<2>(k)) + "x" + std::to_string(std::get<3>(k));
}

std::string who(const CommitKey &k, bool with_app) {
	std::string s = std::get<4>(k);
	if (with_app) s += std::get<5>(k).empty() ? " (no app_id)" : " " + std::get<5>(k);
	return s;
}

// Nearest-rank median of v, reordering it.
std::uint64_t median_inplace(std::vector<std::uint64_t> &v) {
	const auto k = static_cast<std::size_t>(std::ceil(0.5 * static_cast<double>(v.size()))) - 1;
	std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
	return v[k];
}

std::uint64_t median_of(std::span<const std::uint64_t> values) {
	std::vector<std::uint64_t> v(values.begin(), values.end());
	return median_inplace(v);
}

// FNV-1a: a stable per-row stream id, so adding a group does not change another's interval.
std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
	for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
	return h;
}

std::string csv_field(const std::string &s) {
	if (s.find_first_of(",\"\n") == std::string::npos) return s;
	std::string out = "\"";
	for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
	return out + "\"";
}

std::string fixed(double v, int decimals) {
	char buf[64];
	std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
	return buf;
}

} // namespace

std::optional<Ratio> bootstrap_median_ratio(std::span<const std::uint64_t> base, std::span<const std::uint64_t> cand,
	const Options &opts, std::uint64_t stream) {
	if (base.empty() || cand.empty()) return std::nullopt;
	Ratio r;
	const std::uint64_t mb = median_of(base), mc = median_of(cand);
	if (mb == 0) return std::nullopt;
	r.value = static_cast<double>(mc) / static_cast<double>(mb);

	// mt19937_64's output is fixed by the standard; index by multiply-shift instead of
	// uniform_int_distribution (implementation-defined) so results match across libraries.
	std::mt19937_64 rng(opts.seed ^ stream);
	auto draw = [&](std::span<const std::uint64_t> from, std::vector<std::uint64_t> &to) {
		to.resize(from.size());
		for (auto &x : to) {
			const auto i =
				static_cast<std::size_t>((static_cast<unsigned __int128>(rng()) * from.size()) >> 64);
			x = from[i];
		}
		return median_inplace(to);
	};
	std::vector<double> ratios;
	ratios.reserve(opts.resamples);
	std::vector<std::uint64_t> sb, sc;
	for (std::size_t i = 0; i < opts.resamples; ++i) {
		const std::uint64_t b = draw(base, sb), c = draw(cand, sc);
		if (b > 0) ratios.push_back(static_cast<double>(c) / static_cast<double>(b));
	}
	if (ratios.empty()) return std::nullopt;
	std::sort(ratios.begin(), ratios.end());
	const std::span<const double> sorted(ratios);
	r.low = timing::percentile_sorted(sorted, 100.0 * opts.alpha / 2);
	r.high = timing::percentile_sorted(sorted, 100.0 * (1 - opts.alpha / 2));
	return r;
}

Report compare(const timing::Log &base, const timing::Log &cand, const Options &opts) {
	const RunGroups runs[2] = {collect(base), collect(cand)};
	std::set<std::string> apps = runs[0].apps;
	apps.insert(runs[1].apps.begin(), runs[1].apps.end());
	const bool with_app = apps.size() > 1;
	const bool named = !opts.base_name.empty() || !opts.cand_name.empty();
	const std::string bn = opts.base_name.empty() ? "base" : opts.base_name;
	const std::string cn = opts.cand_name.empty() ? "candidate" : opts.cand_name;

	// Per frame size (format, pixels, app_id), each run's main transport (the most commits) pairs
	// with the other run's main one; other transports pair only with the same transport. What is
	// left (say the first frames of a reused pool, committed as a new pool) is listed per run.
	struct Pair {
		const Samples *s[2];
		std::string label;
	};
	using SizeKey = std::tuple<std::string, std::int64_t, int, int, std::string>;
	auto size_key = [](const CommitKey &k) {
		return SizeKey{std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<5>(k)};
	};
	std::map<SizeKey, std::vector<const CommitKey *>> by_size[2];
	for (int r = 0; r < 2; ++r) {
		for (const auto &[k, s] : runs[r].commits) by_size[r][size_key(k)].push_back(&k);
		for (auto &[sk, keys] : by_size[r]) {
			std::stable_sort(keys.begin(), keys.end(), [&](const CommitKey *a, const CommitKey *b) {
				return runs[r].counts.at(*a) > runs[r].counts.at(*b);
			});
		}
	}
	std::vector<std::pair<CommitKey, Pair>> pairs;
	Report report;
	report.alpha = opts.alpha;
	report.upload_minus_convert = runs[0].nested || runs[1].nested;
	auto one_run = [&](int r, const CommitKey &k) {
		const std::size_t n = runs[r].counts.at(k);
		return size_text(k) + " " + who(k, with_app) + " (" + std::to_string(n) +
			(n == 1 ? " commit)" : " commits)");
	};
	for (const auto &[sk, bkeys] : by_size[0]) {
		auto it = by_size[1].find(sk);
		if (it == by_size[1].end()) {
			for (const CommitKey *k : bkeys) report.only_base.push_back(one_run(0, *k));
			continue;
		}
		const std::vector<const CommitKey *> &ckeys = it->second;
		const CommitKey &kb = *bkeys[0];
		const CommitKey &kc = *ckeys[0];
		std::string label = size_text(kb);
		if (named || kb != kc) {
			label += ": " + bn + " (" + who(kb, with_app) + ") vs " + cn + " (" + who(kc, with_app) + ")";
		} else {
			label += " " + who(kb, with_app);
		}
		pairs.push_back({kb, {{&runs[0].commits.at(kb), &runs[1].commits.at(kc)}, label}});
		std::set<const CommitKey *> used_c = {ckeys[0]};
		for (std::size_t i = 1; i < bkeys.size(); ++i) {
			auto same = std::find_if(
				ckeys.begin() + 1, ckeys.end(), [&](const CommitKey *k) { return *k == *bkeys[i]; });
			if (same == ckeys.end()) {
				report.only_base.push_back(one_run(0, *bkeys[i]));
				continue;
			}
			used_c.insert(*same);
			std::string l = size_text(*bkeys[i]) +
				(named ? ": " + bn + " (" + who(*bkeys[i], with_app) + ") vs " + cn + " (" +
							who(**same, with_app) + ")"
				       : " " + who(*bkeys[i], with_app));
			pairs.push_back(
				{*bkeys[i], {{&runs[0].commits.at(*bkeys[i]), &runs[1].commits.at(**same)}, l}});
		}
		for (const CommitKey *k : ckeys) {
			if (!used_c.count(k)) report.only_cand.push_back(one_run(1, *k));
		}
	}
	for (const auto &[sk, ckeys] : by_size[1]) {
		if (by_size[0].count(sk)) continue;
		for (const CommitKey *k : ckeys) report.only_cand.push_back(one_run(1, *k));
	}
	std::sort(pairs.begin(), pairs.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
	std::vector<Pair> groups;
	for (auto &[k, p] : pairs) groups.push_back(p);
	for (const auto &[o, s] : runs[0].outputs) {
		auto it = runs[1].outputs.find(o);
		if (it == runs[1].outputs.end()) {
			report.only_base.push_back("output " + o);
			continue;
		}
		groups.push_back({{&s, &it->second}, "output " + o});
	}
	for (const auto &[o, s] : runs[1].outputs) {
		if (!runs[0].outputs.count(o)) report.only_cand.push_back("output " + o);
	}

	constexpr std::size_t kMinSamplesForMark = 5;
	for (const Pair &g : groups) {
		for (Phase p : timing::kAllPhases) {
			auto b = (*g.s[0])[static_cast<std::size_t>(p)];
			auto c = (*g.s[1])[static_cast<std::size_t>(p)];
			if (b.empty() && c.empty()) continue;
			Row row{g.label, p, {}, {}, {}, {}};
			row.ratio = bootstrap_median_ratio(b, c, opts, fnv1a(timing::phase_name(p), fnv1a(g.label)));
			row.base = timing::percentiles(b);
			row.cand = timing::percentiles(c);
			// A bootstrap of a handful of values has no spread to speak of: no verdict below
			// kMinSamplesForMark values in either run (the ratio and interval are still shown).
			const bool enough = b.size() >= kMinSamplesForMark && c.size() >= kMinSamplesForMark;
			if (enough && row.ratio && row.ratio->low > 1) row.mark = "slower";
			if (enough && row.ratio && row.ratio->high < 1) row.mark = "faster";
			report.rows.push_back(std::move(row));
		}
	}
	return report;
}

std::string format_table(const Report &r) {
	using timing::pad;
	auto dur = [](const timing::Percentiles &p, std::uint64_t v) {
		return p.count ? timing::format_duration_ns(static_cast<double>(v)) : std::string("-");
	};
	const std::string ci_title = fixed(100 * (1 - r.alpha), 0) + "% CI";
	std::string out;
	auto line = [&](const std::vector<std::string> &cells) {
		static constexpr std::size_t kWidths[] = {10, 7, 10, 10, 10, 7, 10, 10, 10, 8, 16, 7};
		for (std::size_t i = 0; i < cells.size(); ++i) {
			out += pad(cells[i], kWidths[i], i != 0 && i != 10 && i != 11);
			if (i + 1 < cells.size()) out += ' ';
		}
		while (!out.empty() && out.back() == ' ') out.pop_back();
		out += '\n';
	};
	if (r.upload_minus_convert) {
		out += "note: upload excludes convert (wl_shm converts inside its upload; subtracted so that "
		       "transfer,\n"
		       "      convert and upload add up; present runs from commit to on screen and contains them)\n\n";
	}
	std::string group;
	for (const Row &row : r.rows) {
		if (row.group != group) {
			group = row.group;
			out += (out.empty() ? "== " : "\n== ") + group + "\n";
			line({"phase", "base n", "median", "p95", "p99", "cand n", "median", "p95", "p99", "ratio",
				ci_title, ""});
		}
		std::string ratio = "-", ci;
		if (row.ratio) {
			ratio = fixed(row.ratio->value, 2) + "x";
			ci = "[" + fixed(row.ratio->low, 2) + ", " + fixed(row.ratio->high, 2) + "]";
		}
		line({std::string(timing::phase_name(row.phase)), std::to_string(row.base.count),
			dur(row.base, row.base.p50), dur(row.base, row.base.p95), dur(row.base, row.base.p99),
			std::to_string(row.cand.count), dur(row.cand, row.cand.p50), dur(row.cand, row.cand.p95),
			dur(row.cand, row.cand.p99), ratio, ci, row.mark});
	}
	if (r.rows.empty()) out += "no group is present in both runs\n";
	for (const auto &g : r.only_base) out += "only in base: " + g + "\n";
	for (const auto &g : r.only_cand) out += "only in candidate: " + g + "\n";
	return out;
}

std::string format_csv(const Report &r) {
	std::string out = "group,phase,base_count,base_median_ns,base_p95_ns,base_p99_ns,cand_count,cand_median_ns,"
			  "cand_p95_ns,cand_p99_ns,ratio,ci_low,ci_high,mark\n";
	auto side = [](const timing::Percentiles &p) {
		if (!p.count) return std::string("0,,,");
		return std::to_string(p.count) + "," + std::to_string(p.p50) + "," + std::to_string(p.p95) + "," +
			std::to_string(p.p99);
	};
	for (const Row &row : r.rows) {
		out += csv_field(row.group) + "," + std::string(timing::phase_name(row.phase)) + "," + side(row.base) +
			"," + side(row.cand) + ",";
		if (row.ratio) {
			out += fixed(row.ratio->value, 4) + "," + fixed(row.ratio->low, 4) + "," +
				fixed(row.ratio->high, 4);
		} else {
			out += ",,";
		}
		out += "," + row.mark + "\n";
	}
	for (const auto &g : r.only_base) out += csv_field(g) + ",,,,,,,,,,,,,only-base\n";
	for (const auto &g : r.only_cand) out += csv_field(g) + ",,,,,,,,,,,,,only-candidate\n";
	return out;
}

} // namespace pixelport::compare
