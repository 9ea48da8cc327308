// pixelport-sweep's verdict: the two questions the sweep exists for, answered in one sentence
// per format, with how sure each answer is. No Wayland here (unit-tested in tests/timing/).
//
//  1. At which frame size does shared memory beat the socket (reused pool: `shm`; a new memfd
//     per frame: `shm-new`)?
//  2. Does conversion during streaming pay off: is streaming FORMAT (fewer bytes, converted by
//     the compositor as rows land) cheaper than streaming the same picture as XRGB8888, from
//     which size, over which fd kind (socket, pipe)?
//
// Each answer compares the median cost of two sides at the sizes the sweep measured. The sweep
// is one run; near each candidate crossover the sweep repeats both sides in alternating rounds
// (confirm_indices()), each on a new connection, so each confirmed size carries one cost ratio
// per run. A side wins a size only when its lead is larger than the whole spread of those runs:
// separate demo runs differ by more than rounds within one run do, and half the spread called
// differences "sure" that the next run did not see.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model.hpp"

namespace pixelport::sweep {

/** What one side of a comparison measures: a format over a transport. */
struct Side {
	std::string format, transport;
	bool operator==(const Side &) const = default;
};

struct VerdictSize {
	int width = 0, height = 0;
	uint64_t bytes = 0; // pixel bytes of the comparison's format at width x height
	std::vector<double> ratios; // median cost(a) / median cost(b) per run; [0] = the sweep
	bool confirmed() const { return ratios.size() > 1; }
};

/** The call at one size: which side is faster, by how much, how sure. */
struct SizeCall {
	char winner = '='; // 'a', 'b', or '=' (no clear winner)
	double ratio = 1; // geometric mean of the runs' cost(a)/cost(b)
	double factor = 1; // how many times faster the winner (or the faster side) is: >= 1
	double spread = 0; // run-to-run spread: max/min of the ratios - 1 (0 with one run)
	double within = 0; // largest distance of a run from a tie: max(r, 1/r) - 1
	double band = 0; // the lead a winner must exceed, as factor - 1: the spread, at least kTieFloor
	int runs = 0;
};

struct Comparison {
	int question = 1; // 1: shared memory vs socket; 2: conversion during streaming
	std::string variant; // question 1: "shm" / "shm-new"; question 2: "socket" / "pipe"
	std::string format; // the format the sentence is about
	Side a, b;
	std::string a_name, b_name; // short names for sentences ("shm", "socket", "NV12", "XRGB8888")
	std::vector<VerdictSize> sizes; // ascending by bytes
	// Filled by conclude():
	std::vector<SizeCall> calls;
	bool crossover = false;
	double at_bytes = 0;
	std::string winner; // a_name or b_name: faster at the large end; empty: no clear winner
	std::string text; // the sentence
};

/** A difference under this (2%) is never a winner, however tight the runs. */
inline constexpr double kTieFloor = 0.02;

/**
 * Calls one size. A side wins when every run puts it ahead by more than kTieFloor and the
 * geometric mean of the runs' ratios is further from 1 than the runs' whole spread (hi/lo); a
 * size measured once uses `noise` (a spread seen at repeated sizes, as ln(hi/lo)) instead.
 */
SizeCall judge(const VerdictSize &s, double noise = 0);

/**
 * The spread (ln(hi/lo)) a size measured once is judged with: the median spread of every size of
 * `cs` repeated in rounds (0 when none was). Over all comparisons: one comparison has too few
 * repeated sizes for a stable median.
 */
double typical_noise(const std::vector<Comparison> &cs);

/**
 * The comparisons the sweep's points allow: question 1 for each format with shm / shm-new and
 * socket measured, question 2 for each format other than XRGB8888 with the stream over socket /
 * pipe (XRGB8888's cost at the same pixel count interpolated log-log from its own points).
 * Points marked invalid (wrong pixels) are left out.
 */
std::vector<Comparison> plan_comparisons(const std::vector<Point> &points);

/**
 * Size indices that should be repeated: those around the crossover the current calls suggest
 * (the last size the small-end side wins and the next one the other side wins, and any tie in
 * between), or, without a crossover, the size closest to a tie and every tie. Only
 * indices not yet confirmed.
 */
std::vector<size_t> confirm_indices(const Comparison &c);

/** Calls every size (a size measured once with `noise`: typical_noise()), finds the crossover and writes the sentence. */
void conclude(Comparison *c, double noise = 0);

/** conclude() for each, with typical_noise() of them all. */
void conclude_all(std::vector<Comparison> *cs);

/** The verdict block (text, a few lines per question) and its JSON. */
std::string verdict_text(const std::vector<Comparison> &cs, const std::string &header);
nlohmann::json verdict_json(const std::vector<Comparison> &cs);

} // namespace pixelport::sweep
