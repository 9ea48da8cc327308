// Where a converted commit is (CommitState), and the one table of the moves between states
// that the commit path may make. Conversions::Impl::move() (conversion.cpp) is the only code
// that changes a commit's state, and it checks each move against this table; docs/design.md
// ("The commit path") prints the same table, and a test compares the two.
#pragma once

#include <cstdint>
#include <span>

namespace pixelport {

enum class CommitState : uint8_t {
	/** Made at the client's commit, its state not chosen yet. */
	New,
	/** Converted on the main thread when it applies (a small update, or what cannot wait). */
	Due,
	/** Behind the surface's running job: no image yet. */
	Waiting,
	/** Its job runs on the workers, writing its image, which nothing shows until it ends. */
	Converting,
	/** Its image holds its complete conversion: what it shows. */
	Ready,
	/**
	 * Not to be converted: a newer commit replaced it (it keeps the client's buffer until it
	 * goes, in case it shows after all), or its pixels could not be read, no image could be had,
	 * or its surface went (no buffer then). No image.
	 */
	Superseded,
};

/** One legal move, and when the commit path makes it (the text docs/design.md prints). */
struct CommitEdge {
	CommitState from;
	CommitState to;
	const char *when;
};

/** Every legal move, in the order docs/design.md lists them. */
std::span<const CommitEdge> commit_edges();
/** Whether the table has the move `from` -> `to`. */
bool commit_edge_allowed(CommitState from, CommitState to);
/** The state's name as the table and the logs spell it ("Due", ...). */
const char *commit_state_name(CommitState state);

} // namespace pixelport
