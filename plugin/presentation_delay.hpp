// The bound on a frame's frame-event-to-presentation delay that pacing.cpp releases timed
// commits by: pure arithmetic, tested on its own (tests/api/test_pacing_bound.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace pixelport {

/** How many recent frame-to-presentation delays an output keeps for the bound. */
inline constexpr size_t kPresentationDelayWindow = 16;

/**
 * What presenting a frame takes at least after its frame event, ns, from `n` recent
 * frame-to-presentation delays (ns): their least less their spread, 0 for none or when the spread
 * is the larger. The least alone is no bound: the next frame may render faster (sway headless,
 * a 256x256 vkcube: 49 to 74 us, one frame 10 us under the least of the 8 before it, shown before
 * its target). Beating the least of 16 by their spread again is a tail event (normal jitter: 1 in
 * 10^4 frames, against 1 in 17 for the least alone), and one slow frame in the window makes the
 * bound 0 (a timed commit released at its target itself) until it leaves.
 */
inline uint64_t presentation_delay_bound(const uint64_t *delays, size_t n) {
	if (n == 0) return 0;
	const auto [least, most] = std::minmax_element(delays, delays + n);
	const uint64_t spread = *most - *least;
	return *least > spread ? *least - spread : 0;
}

} // namespace pixelport
