// SurfaceRef: the one weak reference to a surface's plugin state, for everything that may
// outlive the surface (views, jobs, held commits' roots, stream waiters, a buffer's recent
// surfaces, colour-representation objects).
#pragma once

#include <memory>
#include <utility>

namespace pixelport {

struct SurfaceState;

/**
 * A weak reference to a SurfaceState: get() is the state while its surface lives, null once it
 * is gone, and never a later surface made at the same address (each SurfaceState has an anchor
 * of its own, cleared when it goes). Copies share the anchor; two references are equal when
 * they name the same surface. Main thread only (the anchor's state pointer is not atomic).
 */
class SurfaceRef {
public:
	/** What a SurfaceState makes at birth and clears when it goes. */
	struct Anchor {
		SurfaceState *state = nullptr;
	};

	SurfaceRef() = default;
	explicit SurfaceRef(std::shared_ptr<Anchor> anchor) : anchor_(std::move(anchor)) {}

	/** The surface's state, or null once the surface is gone (or for an empty reference). */
	SurfaceState *get() const { return anchor_ != nullptr ? anchor_->state : nullptr; }
	bool operator==(const SurfaceRef &other) const { return anchor_ == other.anchor_; }

private:
	std::shared_ptr<Anchor> anchor_;
};

} // namespace pixelport
