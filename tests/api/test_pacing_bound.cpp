// The bound a timed commit's release is computed from (presentation_delay.hpp):
// released at target minus the bound, a commit is shown before its target only when the next
// frame presents faster than the bound says.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>

#include "presentation_delay.hpp"

namespace {

using pixelport::kPresentationDelayWindow;
using pixelport::presentation_delay_bound;

TEST(PresentationDelayBound, IsTheLeastLessTheSpread) {
	EXPECT_EQ(presentation_delay_bound(nullptr, 0), 0u);
	const uint64_t one[] = {60'000};
	EXPECT_EQ(presentation_delay_bound(one, 1), 60'000u);
	// An output presenting at vblank: frame to presentation a refresh, give or take microseconds.
	const uint64_t vblank[] = {16'660'000, 16'667'000, 16'663'000, 16'670'000};
	EXPECT_EQ(presentation_delay_bound(vblank, 4), 16'660'000u - 10'000u);
	// sway headless with vkcube's 256x256 frames, as measured.
	const uint64_t headless[] = {56'000, 49'000, 54'000, 62'000, 64'000, 61'000, 74'000, 59'000};
	EXPECT_EQ(presentation_delay_bound(headless, 8), 49'000u - 25'000u);
	// One slow frame in the window: released at the target itself until it leaves.
	const uint64_t slow[] = {56'000, 49'000, 2'427'000, 62'000};
	EXPECT_EQ(presentation_delay_bound(slow, 4), 0u);
}

// With a window of delays drawn from one distribution, the next delay falls under the least of
// the window one time in 17; under the bound it must be rare (about 1 in 10^4; the least of 8
// less their spread: 1 in 400). Normal jitter around the sway headless figures (60 us, sd 6 us),
// 200000 windows from a fixed seed.
TEST(PresentationDelayBound, TheNextFrameRarelyBeatsIt) {
	std::mt19937_64 rng(20261206);
	std::normal_distribution<double> delay(60'000, 6'000);
	const int windows = 200'000;
	int under_least = 0, under_bound = 0;
	for (int i = 0; i < windows; i++) {
		uint64_t w[kPresentationDelayWindow];
		for (uint64_t &d : w) d = static_cast<uint64_t>(std::max(0.0, delay(rng)));
		const auto next = static_cast<uint64_t>(std::max(0.0, delay(rng)));
		under_least += next < *std::min_element(std::begin(w), std::end(w));
		under_bound += next < presentation_delay_bound(w, kPresentationDelayWindow);
	}
	EXPECT_NEAR(under_least / double(windows), 1.0 / (kPresentationDelayWindow + 1), 0.01) << "the baseline";
	EXPECT_LT(under_bound, windows / 2'000) << under_bound << " of " << windows << " under the bound";
}

} // namespace
