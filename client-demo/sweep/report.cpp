#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "compare.hpp"
#include "model.hpp"
#include "plot.hpp"

namespace pixelport::sweep {

namespace {
constexpr const char *kPhaseNames[kPhaseCount] = {"fill", "submit", "transfer", "convert", "upload", "present",
	"latency", "cost", "frame", "frame_interval", "release"};

std::string dur(int64_t ns) { return ns < 0 ? "-" : timing::format_duration_ns(static_cast<double>(ns)); }

std::string fixed(double v, int digits) {
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*f", digits, v);
	return buf;
}
} // namespace

const char *phase_name(int phase) { return phase >= 0 && phase < kPhaseCount ? kPhaseNames[phase] : "?"; }

bool phase_from_compositor(int phase) {
	return phase == kTransfer || phase == kConvert || phase == kUpload || phase == kPresent;
}

std::vector<uint64_t> Point::values(int phase) const {
	std::vector<uint64_t> v;
	for (const Sample &s : samples) {
		if (s[phase] >= 0) v.push_back(static_cast<uint64_t>(s[phase]));
	}
	return v;
}

timing::Percentiles Point::stats(int phase) const {
	std::vector<uint64_t> v = values(phase);
	if (v.empty()) return {};
	return timing::percentiles(v);
}

std::optional<double> Point::throughput_mbs() const {
	if (!valid()) return std::nullopt;
	timing::Percentiles c = stats(kCost);
	if (c.count == 0 || c.p50 == 0) return std::nullopt;
	return static_cast<double>(bytes) / (static_cast<double>(c.p50) / 1e9) / 1e6;
}

std::string human_bytes(double b) {
	const char *units[] = {"B", "KiB", "MiB", "GiB"};
	int u = 0;
	while (b >= 1024 && u < 3) {
		b /= 1024;
		u++;
	}
	char buf[32];
	snprintf(buf, sizeof(buf), b >= 100 || u == 0 ? "%.0f %s" : b >= 10 ? "%.1f %s" : "%.2f %s", b, units[u]);
	return buf;
}

std::vector<Crossover> find_crossovers(const std::vector<Point> &points, const std::vector<std::string> &transports) {
	std::vector<Crossover> out;
	std::vector<std::string> formats;
	for (const Point &p : points) {
		if (std::find(formats.begin(), formats.end(), p.format) == formats.end()) formats.push_back(p.format);
	}
	compare::Options opts;
	opts.resamples = 1000;
	for (const std::string &f : formats) {
		for (size_t i = 0; i < transports.size(); i++) {
			for (size_t j = i + 1; j < transports.size(); j++) {
				// The sizes both transports measured, ascending.
				std::map<uint64_t, std::pair<const Point *, const Point *>> by_size;
				for (const Point &p : points) {
					if (p.format != f || p.stats(kCost).count == 0 || !p.valid()) continue;
					if (p.transport == transports[i]) by_size[p.bytes].first = &p;
					if (p.transport == transports[j]) by_size[p.bytes].second = &p;
				}
				std::vector<std::pair<const Point *, const Point *>> pairs;
				for (auto &[size, pr] : by_size) {
					if (pr.first && pr.second) pairs.push_back(pr);
				}
				if (pairs.empty()) continue;
				Crossover c;
				c.format = f;
				auto lr = [](const std::pair<const Point *, const Point *> &pr) {
					return std::log(static_cast<double>(pr.first->stats(kCost).p50) /
						static_cast<double>(pr.second->stats(kCost).p50));
				};
				// a: faster at the small end.
				bool first_faster = lr(pairs.front()) <= 0;
				c.a = first_faster ? transports[i] : transports[j];
				c.b = first_faster ? transports[j] : transports[i];
				size_t last = SIZE_MAX;
				for (size_t k = 0; k + 1 < pairs.size(); k++) {
					double r0 = lr(pairs[k]), r1 = lr(pairs[k + 1]);
					if ((r0 <= 0) != (r1 <= 0)) {
						c.crossings++;
						last = k;
					}
				}
				const auto &end = pairs.back();
				c.winner = lr(end) <= 0 ? end.first->transport : end.second->transport;
				auto ratio_at = [&](size_t k) {
					// cost(winner) / cost(other): an interval below 1 means the winner is faster.
					const Point *w = pairs[k].first->transport == c.winner ? pairs[k].first
											       : pairs[k].second;
					const Point *o = w == pairs[k].first ? pairs[k].second : pairs[k].first;
					std::vector<uint64_t> wv = w->values(kCost), ov = o->values(kCost);
					return compare::bootstrap_median_ratio(ov, wv, opts, k + 1);
				};
				if (last == SIZE_MAX) {
					c.found = false;
					c.text = f + ": " + transports[i] + " vs " + transports[j] +
						": none in range (" + c.winner + " faster at every size from " +
						human_bytes(static_cast<double>(pairs.front().first->bytes)) + " to " +
						human_bytes(static_cast<double>(end.first->bytes)) + ")";
					out.push_back(c);
					continue;
				}
				c.found = true;
				double r0 = lr(pairs[last]), r1 = lr(pairs[last + 1]);
				double s0 = std::log(static_cast<double>(pairs[last].first->bytes));
				double s1 = std::log(static_cast<double>(pairs[last + 1].first->bytes));
				c.at_bytes = std::exp(s0 + (s1 - s0) * r0 / (r0 - r1));
				c.below = pairs[last].first->bytes;
				c.above = pairs[last + 1].first->bytes;
				// The winner above the crossing: the one faster at last + 1.
				c.winner =
					r1 <= 0 ? pairs[last + 1].first->transport : pairs[last + 1].second->transport;
				std::string loser = c.winner == transports[i] ? transports[j] : transports[i];
				// Confidence: do the 95% bootstrap intervals of the median ratio exclude a tie on
				// both sides of the crossing (high), on one side (medium), or on neither (low)?
				auto below = ratio_at(last), above = ratio_at(last + 1);
				int sure = 0;
				if (below && (below->low > 1 || below->high < 1)) sure++;
				if (above && (above->low > 1 || above->high < 1)) sure++;
				c.confidence = sure == 2 ? "high" : sure == 1 ? "medium" : "low";
				if (above) {
					c.ratio_low = above->low;
					c.ratio_high = above->high;
				}
				std::ostringstream t;
				t << f << ": " << c.winner << " beats " << loser << " from ~" << human_bytes(c.at_bytes)
				  << " (between " << human_bytes(static_cast<double>(c.below)) << " and "
				  << human_bytes(static_cast<double>(c.above)) << "; confidence " << c.confidence;
				if (above) {
					t << ", cost ratio " << c.winner << "/" << loser << " at "
					  << human_bytes(static_cast<double>(c.above)) << " in ["
					  << fixed(above->low, 2) << ", " << fixed(above->high, 2) << "]";
				}
				if (c.crossings > 1)
					t << "; the lines cross " << c.crossings << " times, this is the last";
				t << ")";
				c.text = t.str();
				out.push_back(c);
			}
		}
	}
	return out;
}

std::string format_table(const std::vector<Point> &points) {
	std::ostringstream o;
	const std::vector<std::pair<const char *, size_t>> cols = {{"format", 9}, {"transport", 16}, {"size", 10},
		{"WxH", 11}, {"n", 4}, {"fill", 9}, {"submit", 9}, {"transfer", 9}, {"convert", 9}, {"upload", 9},
		{"present", 9}, {"cost", 9}, {"cost p95", 9}, {"MB/s", 8}};
	for (size_t i = 0; i < cols.size(); i++) {
		o << timing::pad(cols[i].first, cols[i].second, i >= 4) << (i + 1 < cols.size() ? " " : "\n");
	}
	for (const Point &p : points) {
		std::vector<std::string> v = {p.format, p.transport, human_bytes(static_cast<double>(p.bytes)),
			std::to_string(p.width) + "x" + std::to_string(p.height), std::to_string(p.samples.size())};
		if (!p.measured()) {
			for (size_t i = 0; i < v.size(); i++) o << timing::pad(v[i], cols[i].second, i >= 4) << " ";
			o << "skipped: " << p.note << "\n";
			continue;
		}
		for (int ph : {kFill, kSubmit, kTransfer, kConvert, kUpload, kPresent, kCost}) {
			timing::Percentiles s = p.stats(ph);
			v.push_back(s.count ? dur(static_cast<int64_t>(s.p50)) : "-");
		}
		timing::Percentiles c = p.stats(kCost);
		v.push_back(c.count ? dur(static_cast<int64_t>(c.p95)) : "-");
		auto mbs = p.throughput_mbs();
		v.push_back(mbs ? fixed(*mbs, *mbs < 10 ? 2 : 0) : "-");
		for (size_t i = 0; i < v.size(); i++) {
			o << timing::pad(v[i], cols[i].second, i >= 4) << (i + 1 < v.size() ? " " : "");
		}
		if (!p.note.empty()) o << "  (" << p.note << ")";
		if (!p.valid()) o << "  INVALID, wrong pixels: " << p.pixels_note;
		o << "\n";
	}
	return o.str();
}

std::string format_csv(const std::vector<Point> &points) {
	std::ostringstream o;
	o << "format,transport,width,height,bytes,content,frames,compositor_timing";
	for (int ph = 0; ph < kPhaseCount; ph++)
		o << "," << phase_name(ph) << "_median_ns," << phase_name(ph) << "_p95_ns";
	o << ",throughput_mbs,pixels,note\n";
	for (const Point &p : points) {
		o << p.format << "," << p.transport << "," << p.width << "," << p.height << "," << p.bytes << ","
		  << p.content << "," << p.samples.size() << "," << (p.compositor_timing ? 1 : 0);
		for (int ph = 0; ph < kPhaseCount; ph++) {
			timing::Percentiles s = p.stats(ph);
			if (s.count) {
				o << "," << s.p50 << "," << s.p95;
			} else {
				o << ",,";
			}
		}
		auto mbs = p.throughput_mbs();
		std::string note = p.note;
		std::replace(note.begin(), note.end(), '"', '\'');
		std::string pixels = p.pixels + (p.pixels_note.empty() ? "" : ": " + p.pixels_note);
		std::replace(pixels.begin(), pixels.end(), '"', '\'');
		o << "," << (mbs ? fixed(*mbs, 3) : "") << ",\"" << pixels << "\",\"" << note << "\"\n";
	}
	return o.str();
}

std::string format_frames_csv(const std::vector<Point> &points) {
	std::ostringstream o;
	o << "format,transport,bytes,frame";
	for (int ph = 0; ph < kPhaseCount; ph++) o << "," << phase_name(ph) << "_ns";
	o << "\n";
	for (const Point &p : points) {
		for (size_t i = 0; i < p.samples.size(); i++) {
			o << p.format << "," << p.transport << "," << p.bytes << "," << i;
			for (int ph = 0; ph < kPhaseCount; ph++) {
				o << ",";
				if (p.samples[i][ph] >= 0) o << p.samples[i][ph];
			}
			o << "\n";
		}
	}
	return o.str();
}

nlohmann::json to_json(const std::vector<Point> &points, const std::vector<Crossover> &crossovers) {
	using nlohmann::json;
	json jp = json::array();
	for (const Point &p : points) {
		json phases = json::object();
		for (int ph = 0; ph < kPhaseCount; ph++) {
			timing::Percentiles s = p.stats(ph);
			phases[phase_name(ph)] = s.count
				? json{{"count", s.count}, {"median_ns", s.p50}, {"p95_ns", s.p95}}
				: json(nullptr);
		}
		json samples = json::array();
		for (const Sample &s : p.samples) {
			json one = json::array();
			for (int64_t v : s) one.push_back(v < 0 ? json(nullptr) : json(v));
			samples.push_back(one);
		}
		auto mbs = p.throughput_mbs();
		jp.push_back({{"format", p.format}, {"transport", p.transport}, {"width", p.width},
			{"height", p.height}, {"bytes", p.bytes}, {"content", p.content}, {"frames", p.samples.size()},
			{"compositor_timing", p.compositor_timing}, {"phases", phases},
			{"throughput_mbs", mbs ? json(*mbs) : json(nullptr)},
			{"note", p.note.empty() ? json(nullptr) : json(p.note)},
			{"pixels",
				p.pixels.empty() ? json(nullptr) : json{{"status", p.pixels}, {"note", p.pixels_note}}},
			{"valid", p.valid()}, {"samples", samples}});
	}
	json jc = json::array();
	for (const Crossover &c : crossovers) {
		jc.push_back({{"format", c.format}, {"a", c.a}, {"b", c.b}, {"found", c.found},
			{"at_bytes", c.found ? json(c.at_bytes) : json(nullptr)},
			{"between_bytes", c.found ? json{c.below, c.above} : json(nullptr)}, {"crossings", c.crossings},
			{"winner", c.winner}, {"confidence", c.found ? json(c.confidence) : json(nullptr)},
			{"text", c.text}});
	}
	json phase_list = json::array();
	for (int ph = 0; ph < kPhaseCount; ph++) phase_list.push_back(phase_name(ph));
	return {{"points", jp}, {"crossovers", jc}, {"sample_phases", phase_list}};
}

std::vector<Point> points_from_json(const nlohmann::json &j) {
	std::vector<Point> out;
	for (const auto &jp : j.at("points")) {
		Point p;
		p.format = jp.at("format").get<std::string>();
		p.transport = jp.at("transport").get<std::string>();
		p.width = jp.at("width").get<int>();
		p.height = jp.at("height").get<int>();
		p.bytes = jp.at("bytes").get<uint64_t>();
		p.content = jp.at("content").get<std::string>();
		p.compositor_timing = jp.at("compositor_timing").get<bool>();
		if (!jp.at("note").is_null()) p.note = jp.at("note").get<std::string>();
		if (jp.contains("pixels") && jp["pixels"].is_object()) {
			p.pixels = jp["pixels"].at("status").get<std::string>();
			p.pixels_note = jp["pixels"].at("note").get<std::string>();
		}
		for (const auto &js : jp.at("samples")) {
			Sample s;
			s.fill(-1);
			for (size_t i = 0; i < s.size() && i < js.size(); i++) {
				if (!js[i].is_null()) s[i] = js[i].get<int64_t>();
			}
			p.samples.push_back(s);
		}
		out.push_back(std::move(p));
	}
	return out;
}

void plot_png(const std::vector<Point> &points, const std::string &png_path, const std::vector<PlotMark> &marks) {
	namespace fs = std::filesystem;
	std::vector<std::string> formats, transports;
	double lo = 0, hi = 0, cost_lo = 0, cost_hi = 0, mbs_lo = 0, mbs_hi = 0;
	for (const Point &p : points) {
		if (p.stats(kCost).count == 0 || !p.valid()) continue;
		if (std::find(formats.begin(), formats.end(), p.format) == formats.end()) formats.push_back(p.format);
		if (std::find(transports.begin(), transports.end(), p.transport) == transports.end())
			transports.push_back(p.transport);
		double b = static_cast<double>(p.bytes), c = static_cast<double>(p.stats(kCost).p50) / 1000.0;
		double m = p.throughput_mbs().value_or(0);
		lo = lo == 0 ? b : std::min(lo, b);
		hi = std::max(hi, b);
		cost_lo = cost_lo == 0 ? c : std::min(cost_lo, c);
		cost_hi = std::max(cost_hi, c);
		if (m > 0) mbs_lo = mbs_lo == 0 ? m : std::min(mbs_lo, m);
		mbs_hi = std::max(mbs_hi, m);
	}
	if (formats.empty()) throw compare::PlotError("nothing to plot: no point was measured");
	char tmpl[] = "/tmp/pixelport-sweep-plot-XXXXXX";
	if (mkdtemp(tmpl) == nullptr) throw compare::PlotError("cannot create a temporary directory");
	fs::path dir = tmpl;
	struct Cleanup {
		fs::path d;
		~Cleanup() {
			std::error_code ec;
			fs::remove_all(d, ec);
		}
	} cleanup{dir};
	// One data block per (format, transport), in file order: index = fi * T + ti.
	std::ofstream data(dir / "data.tsv");
	for (const std::string &f : formats) {
		for (const std::string &t : transports) {
			data << "# " << f << " " << t << "\n";
			bool any = false;
			for (const Point &p : points) {
				if (p.format != f || p.transport != t || p.stats(kCost).count == 0 || !p.valid())
					continue;
				timing::Percentiles c = p.stats(kCost);
				data << p.bytes << "\t" << static_cast<double>(c.p50) / 1000.0 << "\t"
				     << p.throughput_mbs().value_or(0) << "\n";
				any = true;
			}
			if (!any) data << "NaN\tNaN\tNaN\n"; // keeps the block numbering
			data << "\n\n";
		}
	}
	data.close();
	// Okabe-Ito: distinct for colour-blind readers, none too light on white (no yellow).
	const char *colours[] = {
		"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999"};
	const int dashes[] = {1, 1, 1, 1, 2, 2, 2, 2};
	auto bytes_label = [](double b) {
		const char *u[] = {"B", "KiB", "MiB", "GiB"};
		int k = 0;
		while (b >= 1024 && k < 3) {
			b /= 1024;
			k++;
		}
		char buf[32];
		snprintf(buf, sizeof(buf), "%.0f %s", b, u[k]);
		return std::string(buf);
	};
	auto tics = [](double from, double to, double step, auto label) {
		std::ostringstream o;
		o << "(";
		bool first = true;
		for (double v = from; v <= to * 1.0001; v *= step) {
			o << (first ? "" : ", ") << "\"" << label(v) << "\" " << v;
			first = false;
		}
		return o.str() + ")";
	};
	auto floor_pow = [](double v, double base) {
		return std::pow(base, std::floor(std::log(v) / std::log(base) + 1e-9));
	};
	auto ceil_pow = [](double v, double base) {
		return std::pow(base, std::ceil(std::log(v) / std::log(base) - 1e-9));
	};
	// A little room either side of the measured sizes; ticks at the powers of 4 (16 for wide
	// ranges) inside.
	double x0 = lo / 1.4, x1 = hi * 1.4;
	double xstep = std::log(x1 / x0) / std::log(4) > 9 ? 16 : 4;
	std::string xtics = tics(ceil_pow(x0, xstep), x1, xstep, bytes_label);
	auto time_label = [](double us) {
		char buf[32];
		if (us < 1000)
			snprintf(buf, sizeof(buf), "%.0f µs", us);
		else if (us < 1e6)
			snprintf(buf, sizeof(buf), "%.0f ms", us / 1000);
		else
			snprintf(buf, sizeof(buf), "%.0f s", us / 1e6);
		return std::string(buf);
	};
	double y0 = floor_pow(cost_lo, 10), y1 = ceil_pow(cost_hi, 10);
	std::string ytics_cost = tics(y0, y1, 10, time_label);
	auto mbs_label = [](double v) {
		char buf[32];
		if (v < 1000)
			snprintf(buf, sizeof(buf), "%.0f MB/s", v);
		else
			snprintf(buf, sizeof(buf), "%.0f GB/s", v / 1000);
		return std::string(buf);
	};
	double m0 = floor_pow(std::max(mbs_lo, 0.01), 10), m1 = ceil_pow(std::max(mbs_hi, 0.02), 10);
	std::string ytics_mbs = tics(m0, m1, 10, mbs_label);

	std::string datafile = compare::gnuplot_quoted((dir / "data.tsv").string());
	const size_t F = formats.size(), T = transports.size();
	const int width = static_cast<int>(std::min<size_t>(1600, 140 + 480 * F));
	std::ofstream script(dir / "plot.gp");
	script << "set terminal pngcairo size " << width << ",900 noenhanced font ',10'\n"
	       << "set output " << compare::gnuplot_quoted(png_path) << "\n"
	       << "set datafile separator '\\t'\n"
	       << "set multiplot layout 2," << F
	       << " title 'pixelport-sweep: per-frame cost (client submit until the compositor holds the frame) and "
		  "throughput; "
		  "dashed: crossovers'\n"
	       << "set logscale xy\n"
	       << "set xrange [" << x0 << ":" << x1 << "]\n"
	       << "set xtics " << xtics << " rotate by -35\n"
	       << "set grid\n";
	for (int row = 0; row < 2; row++) {
		for (size_t fi = 0; fi < F; fi++) {
			script << "unset arrow\nunset label\n";
			script << "set title " << compare::gnuplot_quoted(formats[fi]) << "\n";
			// A hair wider than the outer ticks, so that both end labels show.
			script << (row == 0 ? "set yrange [" + std::to_string(y0 / 1.05) + ":" +
						std::to_string(y1 * 1.05) + "]\nset ytics " + ytics_cost + "\n"
					    : "set yrange [" + std::to_string(m0 / 1.05) + ":" +
						std::to_string(m1 * 1.05) + "]\nset ytics " + ytics_mbs + "\n");
			script << "set ylabel "
			       << (fi == 0 ? (row == 0 ? "'median cost per frame'" : "'throughput'") : "''") << "\n";
			script << "set xlabel " << (row == 1 ? "'frame size (pixel data)'" : "''") << "\n";
			if (row == 0 && fi == 0) {
				script << "set key top left box opaque\n";
			} else {
				script << "unset key\n";
			}
			int n = 0;
			for (const PlotMark &m : marks) {
				if (m.format != formats[fi] || m.bytes <= 0) continue;
				n++;
				script << "set arrow from " << m.bytes << ", graph 0 to " << m.bytes
				       << ", graph 1 nohead dt 2 lc rgb '#444444'\n";
				if (row == 0) {
					script << "set label " << compare::gnuplot_quoted(m.label) << " at " << m.bytes
					       << ", graph " << (0.97 - 0.06 * (n - 1))
					       << " right offset -0.5,0 font ',9'\n";
				}
			}
			script << "plot ";
			for (size_t ti = 0; ti < T; ti++) {
				size_t index = fi * T + ti;
				script << (ti ? ", " : "") << datafile << " index " << index
				       << " using 1:" << (row == 0 ? 2 : 3) << " with linespoints lc rgb '"
				       << colours[ti % 8] << "' dt " << dashes[ti % 8] << " pt " << (ti % 6 + 5)
				       << " ps 0.8 lw 2 title " << compare::gnuplot_quoted(transports[ti]);
			}
			script << "\n";
		}
	}
	script << "unset multiplot\n";
	script.close();
	compare::run_gnuplot((dir / "plot.gp").string(), png_path);
}

} // namespace pixelport::sweep
