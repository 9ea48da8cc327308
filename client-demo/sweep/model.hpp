// pixelport-sweep's results: per-frame samples, per-point statistics, crossovers, and their
// renderings (table, CSV, JSON, gnuplot PNG). No Wayland here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pixelport/timing/stats.hpp"

namespace pixelport::sweep {

/**
 * What a frame's time went into, ns. Client: fill, submit, latency, and the three after cost:
 * frame (commit to the frame callback's done, as the client read it), frame_interval (from the
 * previous measured frame's done to this one's), release (commit to its buffer's
 * wl_buffer.release; reused buffers only). Compositor: the rest.
 */
enum Phase {
	kFill,
	kSubmit,
	kTransfer,
	kConvert,
	kUpload,
	kPresent,
	kLatency,
	kCost,
	kFrame,
	kFrameInterval,
	kRelease,
	kPhaseCount
};
const char *phase_name(int phase);
/** Phases that come from the compositor's timing protocol ("-" without it). */
bool phase_from_compositor(int phase);

/** One measured frame; -1 = not available. */
using Sample = std::array<int64_t, kPhaseCount>;

struct Point {
	std::string format, transport; // "XRGB8888", "shm" / "socket" / "shm@waypipe-lz4"
	int width = 0, height = 0;
	uint64_t bytes = 0; // pixel bytes of one frame (whole buffer in wl_shm layout)
	std::string content; // "image" or "pattern"
	std::vector<Sample> samples;
	std::string note; // why it was skipped or cut short; empty when fine
	bool compositor_timing = false;
	// The pixel check after the last frame (verify.hpp): "ok", "wrong" (then `pixels_note` says
	// what), "unverified" (`pixels_note` says why it could not be checked), "" = not run.
	std::string pixels, pixels_note;

	bool measured() const { return !samples.empty(); }
	/** False when the compositor showed other pixels than were sent: no throughput, no crossover. */
	bool valid() const { return pixels != "wrong"; }
	/** Percentiles of one phase over the samples that have it (count 0: none). */
	timing::Percentiles stats(int phase) const;
	std::vector<uint64_t> values(int phase) const;
	/** bytes / median cost in MB/s (10^6 bytes per second); nullopt without a cost or when invalid. */
	std::optional<double> throughput_mbs() const;
};

struct Crossover {
	std::string format, a, b; // transports; a is faster at the small end
	bool found = false;
	double at_bytes = 0; // estimated crossing (log-linear interpolation of the median ratio)
	uint64_t below = 0, above = 0; // the measured sizes it lies between
	int crossings = 0; // sign changes of the median ratio over the range
	std::string winner; // faster above the crossover (or throughout when !found)
	std::string confidence; // "high", "medium", "low" (see crossover_text)
	double ratio_low = 0, ratio_high = 0; // 95% interval of cost(winner)/cost(other) just above
	std::string text; // one line for people
};

/** Crossovers of every pair of `transports` for each format, on median cost. */
std::vector<Crossover> find_crossovers(const std::vector<Point> &points, const std::vector<std::string> &transports);

std::string human_bytes(double bytes);
std::string format_table(const std::vector<Point> &points);
std::string format_csv(const std::vector<Point> &points);
std::string format_frames_csv(const std::vector<Point> &points);
nlohmann::json to_json(const std::vector<Point> &points, const std::vector<Crossover> &crossovers);
/** Reads the points of a JSON written by to_json() (peer runs); throws on malformed input. */
std::vector<Point> points_from_json(const nlohmann::json &j);

/** A crossover to mark on the plot: a dashed line at `bytes` in `format`'s panels. */
struct PlotMark {
	std::string format, label;
	double bytes = 0;
};

/**
 * PNG of small multiples through gnuplot: one column per format, median cost (top) and
 * throughput (bottom) against frame size on log axes with KiB/MiB, µs/ms/s and MB/s ticks, one
 * line per transport in colour-blind-safe colours (Okabe-Ito), crossovers as dashed lines.
 * Invalid points are left out. Throws compare::PlotError with one line on failure.
 */
void plot_png(const std::vector<Point> &points, const std::string &png_path, const std::vector<PlotMark> &marks = {});

} // namespace pixelport::sweep
