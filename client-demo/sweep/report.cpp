#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "compare.h"
#include "model.hpp"
#include "plot.h"

namespace pixelport::sweep {

namespace {
constexpr const char *kPhaseNames[kPhaseCount] = {"fill", "submit", "transfer", "convert", "upload", "present",
	"latency", "cost"};

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
					const Point *w = pairs[k].first->transport == c.winner ? pairs[k].first : pairs[k].second;
					const Point *o = w == pairs[k].first ? pairs[k].second : pairs[k].first;
					std::vector<uint64_t> wv = w->values(kCost), ov = o->values(kCost);
					return compare::bootstrap_median_ratio(ov, wv, opts, k + 1);
				};
				if (last == SIZE_MAX) {
					c.found = false;
					c.text = f + ": " + transports[i] + " vs " + transports[j] + ": none in range (" + c.winner +
						" faster at every size from " + human_bytes(static_cast<double>(pairs.front().first->bytes)) +
						" to " + human_bytes(static_cast<double>(end.first->bytes)) + ")";
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
				c.winner = r1 <= 0 ? pairs[last + 1].first->transport : pairs[last + 1].second->transport;
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
				t << f << ": " << c.winner << " beats " << loser << " from ~" << human_bytes(c.at_bytes) << " (between "
				  << human_bytes(static_cast<double>(c.below)) << " and " << human_bytes(static_cast<double>(c.above))
				  << "; confidence " << c.confidence;
				if (above) {
					t << ", cost ratio " << c.winner << "/" << loser << " at " << human_bytes(static_cast<double>(c.above))
					  << " in [" << fixed(above->low, 2) << ", " << fixed(above->high, 2) << "]";
				}
				if (c.crossings > 1) t << "; the lines cross " << c.crossings << " times, this is the last";
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
	for (int ph = 0; ph < kPhaseCount; ph++) o << "," << phase_name(ph) << "_median_ns," << phase_name(ph) << "_p95_ns";
	o << ",throughput_mbs,pixels,note\n";
	for (const Point &p : points) {
		o << p.format << "," << p.transport << "," << p.width << "," << p.height << "," << p.bytes << "," << p.content
		  << "," << p.samples.size() << "," << (p.compositor_timing ? 1 : 0);
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
			phases[phase_name(ph)] = s.count ? json{{"count", s.count}, {"median_ns", s.p50}, {"p95_ns", s.p95}} : json(nullptr);
		}
		json samples = json::array();
		for (const Sample &s : p.samples) {
			json one = json::array();
			for (int64_t v : s) one.push_back(v < 0 ? json(nullptr) : json(v));
			samples.push_back(one);
		}
		auto mbs = p.throughput_mbs();
		jp.push_back({{"format", p.format}, {"transport", p.transport}, {"width", p.width}, {"height", p.height},
			{"bytes", p.bytes}, {"content", p.content}, {"frames", p.samples.size()},
			{"compositor_timing", p.compositor_timing}, {"phases", phases},
			{"throughput_mbs", mbs ? json(*mbs) : json(nullptr)}, {"note", p.note.empty() ? json(nullptr) : json(p.note)},
			{"pixels", p.pixels.empty() ? json(nullptr) : json{{"status", p.pixels}, {"note", p.pixels_note}}},
			{"valid", p.valid()},
			{"samples", samples}});
	}
	json jc = json::array();
	for (const Crossover &c : crossovers) {
		jc.push_back({{"format", c.format}, {"a", c.a}, {"b", c.b}, {"found", c.found},
			{"at_bytes", c.found ? json(c.at_bytes) : json(nullptr)}, {"between_bytes", c.found ? json{c.below, c.above} : json(nullptr)},
			{"crossings", c.crossings}, {"winner", c.winner}, {"confidence", c.found ? json(c.confidence) : json(nullptr)},
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

void plot_png(const std::vector<Point> &points, const std::string &png_path) {
	namespace fs = std::filesystem;
	// One data block per (format, transport), separated by two blank lines (gnuplot "index").
	std::vector<std::pair<std::string, std::string>> series;
	for (const Point &p : points) {
		if (p.stats(kCost).count == 0 || !p.valid()) continue;
		auto key = std::make_pair(p.format, p.transport);
		if (std::find(series.begin(), series.end(), key) == series.end()) series.push_back(key);
	}
	if (series.empty()) throw compare::PlotError("nothing to plot: no point was measured");
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
	std::ofstream data(dir / "data.tsv");
	for (const auto &[format, transport] : series) {
		data << "# " << format << " " << transport << "\n";
		for (const Point &p : points) {
			if (p.format != format || p.transport != transport || p.stats(kCost).count == 0 || !p.valid()) continue;
			timing::Percentiles c = p.stats(kCost);
			data << p.bytes << "\t" << static_cast<double>(c.p50) / 1000.0 << "\t" << static_cast<double>(c.p95) / 1000.0
			     << "\t" << p.throughput_mbs().value_or(0) << "\n";
		}
		data << "\n\n";
	}
	data.close();
	const char *dashes[] = {"1", "2", "3", "4"};
	std::vector<std::string> transports;
	for (const auto &s : series) {
		if (std::find(transports.begin(), transports.end(), s.second) == transports.end()) transports.push_back(s.second);
	}
	std::vector<std::string> formats;
	for (const auto &s : series) {
		if (std::find(formats.begin(), formats.end(), s.first) == formats.end()) formats.push_back(s.first);
	}
	std::string datafile = compare::gnuplot_quoted((dir / "data.tsv").string());
	auto plot_cmd = [&](int column) {
		std::ostringstream o;
		o << "plot ";
		for (size_t i = 0; i < series.size(); i++) {
			size_t ti = static_cast<size_t>(std::find(transports.begin(), transports.end(), series[i].second) - transports.begin());
			size_t fi = static_cast<size_t>(std::find(formats.begin(), formats.end(), series[i].first) - formats.begin());
			o << (i ? ", " : "") << datafile << " index " << i << " using 1:" << column << " with linespoints lc "
			  << (ti + 1) << " dt " << dashes[fi % 4] << " pt " << (fi + 5) << " lw 1.5 title "
			  << compare::gnuplot_quoted(series[i].second + " " + series[i].first);
		}
		return o.str() + "\n";
	};
	std::ofstream script(dir / "plot.gp");
	script << "set terminal pngcairo size 1400,1000 noenhanced\n"
	       << "set output " << compare::gnuplot_quoted(png_path) << "\n"
	       << "set datafile separator '\\t'\n"
	       << "set multiplot layout 2,1 title 'pixelport-sweep: per-frame cost (client submit until the compositor holds the texture)'\n"
	       << "set logscale xy 2\n"
	       << "set format x '%.0b %B'\n"
	       << "set xlabel 'frame size (bytes of pixel data)'\n"
	       << "set grid\n"
	       << "set key outside right top\n"
	       << "set ylabel 'median cost (µs)'\n"
	       << "set logscale y 10\n"
	       << plot_cmd(2)
	       << "set ylabel 'throughput (MB/s)'\n"
	       << plot_cmd(4)
	       << "unset multiplot\n";
	script.close();
	compare::run_gnuplot((dir / "plot.gp").string(), png_path);
}

} // namespace pixelport::sweep
