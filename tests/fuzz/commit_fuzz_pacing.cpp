// pixelport-commit-fuzz: frame pacing requests (wp_fifo_v1, wp_commit_timer_v1) on the commits
// the fuzzer makes. They change when a commit shows, never what the screen shows at a quiescent
// point, so the model needs nothing new. A compositor without the protocols (stock wlroots) gets
// the same commits without them: the random choices are drawn either way, so a seed commits the
// same content on both sides.
#include <cinttypes>
#include <map>

#include "commit_fuzz.hpp"

namespace pixelport::commit_fuzz {

// The protocol objects of each surface, by the fuzzer's surface id (never reused): those of a
// destroyed surface are only destroyed at the end (a request on them would be an error).
struct PacingObjects {
	std::map<int, wp_fifo_v1 *> fifo;
	std::map<int, wp_commit_timer_v1 *> timer;
	~PacingObjects() {
		for (auto &[id, f] : fifo) wp_fifo_v1_destroy(f);
		for (auto &[id, t] : timer) wp_commit_timer_v1_destroy(t);
	}
};

void Fuzzer::pace(Surf &s) {
	// One draw per commit, whatever the compositor serves.
	const uint64_t r = rng();
	const unsigned what = static_cast<unsigned>(r % 100), when = static_cast<unsigned>((r >> 8) % 46);
	const bool fifo = conn.fifo_manager != nullptr, timing = conn.commit_timing != nullptr;
	if (!fifo && !timing) return;
	if (!pacing) pacing = std::make_shared<PacingObjects>();
	auto fifo_of = [&]() {
		wp_fifo_v1 *&f = pacing->fifo[s.id];
		if (f == nullptr) f = wp_fifo_manager_v1_get_fifo(conn.fifo_manager, s.surface);
		return f;
	};
	auto timer_of = [&]() {
		wp_commit_timer_v1 *&t = pacing->timer[s.id];
		if (t == nullptr) t = wp_commit_timing_manager_v1_get_timer(conn.commit_timing, s.surface);
		return t;
	};
	if (fifo && what < 30) { // as Mesa's FIFO present
		wp_fifo_v1_set_barrier(fifo_of());
		wp_fifo_v1_wait_barrier(fifo_of());
	} else if (fifo && what < 38) {
		wp_fifo_v1_set_barrier(fifo_of());
	} else if (fifo && what < 45) {
		wp_fifo_v1_wait_barrier(fifo_of());
	} else if (fifo && what < 48 && pacing->fifo.count(s.id)) { // what it set stays set
		wp_fifo_v1_destroy(pacing->fifo[s.id]);
		pacing->fifo.erase(s.id);
	}
	if (timing && what >= 80 && what < 95) {
		// From 5 ms ago (applies at once) to 40 ms ahead.
		const uint64_t target = now_ns() - 5000000 + static_cast<uint64_t>(when) * 1000000;
		const uint64_t sec = target / 1000000000u;
		wp_commit_timer_v1_set_timestamp(timer_of(), static_cast<uint32_t>(sec >> 32),
			static_cast<uint32_t>(sec), static_cast<uint32_t>(target % 1000000000u));
	} else if (timing && what >= 95 && what < 97 && pacing->timer.count(s.id)) {
		wp_commit_timer_v1_destroy(pacing->timer[s.id]);
		pacing->timer.erase(s.id);
	}
	if (o.verbose && what < 48) log("pacing %d: %u", s.id, what);
}

} // namespace pixelport::commit_fuzz
