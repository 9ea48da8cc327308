// pixelport-commit-fuzz's model: the client's surfaces, buffers and roles, and what each screen
// slot may show (tests/fuzz/README.md, "The commit fuzzer"). The program is split by concern:
// commit_fuzz_colours.cpp (solid colours and their expected reading), commit_fuzz_model.cpp
// (surfaces, roles, buffers, commits), commit_fuzz_checks.cpp (screenshots and quiescent
// points), commit_fuzz_ops.cpp (the random operations), commit_fuzz_pacing.cpp (frame pacing
// requests on the commits), commit_fuzz_client.cpp (main).
#pragma once

#include <drm_fourcc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pixelport-timing-v1-client-protocol.h"
#include "wayland_client.hpp"

namespace pixelport::commit_fuzz {

using namespace client; // Connection, now_ns, drm_to_shm

constexpr int kSide = 24, kPitch = 32; // a surface's block on screen, and the slot grid
constexpr int kOutputW = 256, kOutputH = 128; // the test starts the compositor so
constexpr int kCols = kOutputW / kPitch, kSlots = kCols * (kOutputH / kPitch);
constexpr size_t kMaxSurfaces = 10;
constexpr uint32_t kBlack = 0;

struct Options {
	uint64_t seed = 1;
	double seconds = 10;
	std::string format_name = "NV12";
	uint32_t format = DRM_FORMAT_NV12; // DRM fourcc
	uint64_t max_ops = UINT64_MAX;
	bool verbose = false;
	int desync_under_sync = 0; // > 0: only the scenario below, buffers of this side
	int size_bursts = 0; // > 0: only this many bursts of new sizes on one toplevel (size_bursts())
};

// ---- solid colours (commit_fuzz_colours.cpp) -------------------------------------------------

// Bytes of one row of a w-pixel buffer in `format` (DRM fourcc; NV12: of the luma plane), and
// of a whole w x h buffer.
size_t min_stride(uint32_t format, int w);
size_t buffer_bytes(uint32_t format, int w, int h);
// Writes a w x h buffer of `rgb` at `base` (min stride; NV12: luma plane, then the UV plane).
void fill(uint32_t format, int w, int h, uint32_t rgb, uint8_t *base);
// What a correct compositor shows for `rgb` written into a w x h buffer (0xRRGGBB).
uint32_t expected(uint32_t format, uint32_t rgb, int h);
// Each channel of a and b (0xRRGGBB) within `tol` of the other's.
bool close_to(uint32_t a, uint32_t b, int tol);

// ---- the client's model ----------------------------------------------------------------------

struct Fuzzer;

// A wl_buffer in a pool of its own. The pool is rewritten only when no commit of it can still
// be read: its buffer was released, or it was never committed; a pool whose buffer was destroyed
// while busy is dropped (the compositor may still read it).
struct Buf {
	int fd = -1;
	uint8_t *data = nullptr;
	size_t size = 0;
	wl_shm_pool *pool = nullptr;
	wl_buffer *buffer = nullptr;
	int w = 0, h = 0;
	bool busy = false;
	// Committed again while busy: a release that comes later may be for the earlier commit
	// (wl_buffer.release does not say which), so the pool is never written again.
	bool recommitted_busy = false;
	uint32_t shows = 0; // expected() of its bytes

	void drop_pool() {
		if (pool) wl_shm_pool_destroy(pool);
		if (data) munmap(data, size);
		if (fd >= 0) close(fd);
		pool = nullptr, data = nullptr, fd = -1, size = 0;
	}
	void destroy_buffer() {
		if (buffer) wl_buffer_destroy(buffer);
		buffer = nullptr;
		if (busy) drop_pool(); // the compositor may still read it: never write it again
		busy = false;
	}
	~Buf() {
		destroy_buffer();
		drop_pool();
	}
};

enum class Kind { none, toplevel, sub }; // the wl_surface's role (for life, once given)

struct Surf {
	Fuzzer *f = nullptr;
	int id = 0, slot = 0;
	wl_surface *surface = nullptr;
	wp_viewport *viewport = nullptr;
	pp_surface_timing_v1 *timing = nullptr;
	Kind kind = Kind::none;
	xdg_surface *xs = nullptr;
	xdg_toplevel *top = nullptr;
	uint64_t top_order = 0; // stacking of toplevels: creation order of the role object
	bool configured = false; // a configure came and was acked
	wl_subsurface *sub = nullptr;
	Surf *parent = nullptr; // while sub is live
	bool sync = true;
	bool has_buffer = false; // its last buffer state is a non-null buffer
	uint32_t colour = kBlack; // expected() of its last committed buffer
	int w = 64, h = 64; // size of its next buffers
	std::vector<std::unique_ptr<Buf>> bufs;
	int last = -1; // index in bufs of the last one attached
	uint32_t seq = 0, done_seq = 0; // commits made; the last one whose frame callback came
	// Sizes of the buffer commits whose frame callback has not come, by commit number, and the
	// size of the newest one whose callback came.
	std::map<uint32_t, std::pair<int, int>> unframed_sizes;
	std::pair<int, int> framed_size{0, 0};
	// Colours committed since a quiescent point last saw this surface shown: a surface hidden
	// then (its frames not waited for) may still convert any of them when it is revealed.
	std::set<uint32_t> unverified;
	std::set<wl_callback *> frames;
	std::set<uint32_t> unreported; // buffer commits the timing protocol has not reported
	uint32_t last_report = 0;
};

struct Frame {
	Surf *s;
	uint32_t seq;
};

struct Fuzzer {
	const Options &o;
	Connection conn;
	pp_timing_manager_v1 *timing = nullptr;
	std::mt19937_64 rng;
	std::vector<std::unique_ptr<Surf>> surfs;
	uint64_t presented = 0, discarded = 0; // timing reports
	uint64_t op = 0, checkpoints = 0, quiescent = 0, findings = 0, commits = 0, next_id = 1, next_order = 1;
	int tol = 0;
	// Per slot: colours it may show since the last quiescent point, and whether black (empty) may show.
	std::vector<std::set<uint32_t>> allowed = std::vector<std::set<uint32_t>>(kSlots);
	std::vector<bool> may_be_empty = std::vector<bool>(kSlots, true);

	explicit Fuzzer(const Options &opts) : o(opts), rng(opts.seed) {}

	uint64_t pick(uint64_t n) { return n <= 1 ? 0 : rng() % n; }
	bool chance(int percent) { return static_cast<int>(rng() % 100) < percent; }
	bool alive() const { return wl_display_get_error(conn.display) == 0; }
	static int slot_x(int slot) { return (slot % kCols) * kPitch; }
	static int slot_y(int slot) { return (slot / kCols) * kPitch; }
	int screen_slot(const Surf &s) const { return s.kind == Kind::toplevel ? 0 : s.slot; }
	void unsettle(const Surf &s) { may_be_empty[screen_slot(s)] = true; }
	bool effectively_sync(const Surf &s) const { return s.sub && (s.sync || effectively_sync(*s.parent)); }
	bool can_draw(const Surf &s) const { return s.kind != Kind::toplevel || (s.top && s.configured); }
	int depth(const Surf &s) const { return s.parent ? 1 + depth(*s.parent) : 0; }

	// ---- surfaces, roles, buffers, commits (commit_fuzz_model.cpp) ----
	void finding(const char *kind, const std::string &what);
	void unsettle_tree(const Surf &s);
	int free_slot() const;
	static void on_report(
		void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *, const char *);
	Surf *new_surface();
	bool in_subtree(const Surf &root, const Surf *s) const;
	// Shown: mapped with a buffer, every ancestor too (a toplevel configured).
	bool shown(const Surf &s) const;
	// Where a child of `p` must sit for its own slot: toplevels at the origin, others at their slot.
	void place(Surf &child);
	// A commit; a frame callback with each, to know when it was applied and drawn.
	void commit(Surf &s);
	void forget_frames(Surf &s);
	// A buffer of s's current size that the client may write: released, or new.
	Buf *writable(Surf &s, uint64_t choice, int count);
	uint32_t new_colour(uint32_t not_like);
	// Attaches b to s (writing a new colour first unless `rewrite` is false) and commits.
	void commit_buffer(Surf &s, int index, bool rewrite);
	void unmap(Surf &s);
	// An xdg toplevel role object for s (no buffer attached now), its initial commit, the
	// configure acked.
	bool make_toplevel(Surf &s);
	bool wait_configured(Surf &s);
	void destroy_role(Surf &s);
	// A subsurface role under p (a surface not in s's subtree), positioned at s's slot; p
	// commits so that the new subsurface is added.
	void make_sub(Surf &s, Surf &p, bool sync);
	void destroy_surface(Surf &s);
	void log(const char *fmt, ...) __attribute__((format(printf, 2, 3)));

	// ---- checks (commit_fuzz_checks.cpp) ----
	bool screenshot(std::vector<uint8_t> *rgb);
	// Every slot: all its sample points within tolerance of one colour of cands(slot).
	void check_screen(const char *what, const std::function<std::vector<uint32_t>(int)> &cands);
	void checkpoint();
	// What each slot shows once everything is applied: the newest shown toplevel at slot 0,
	// each shown subsurface at its own.
	std::vector<uint32_t> settled_screen(std::vector<Surf *> *visible) const;
	void quiesce();

	// ---- ops (commit_fuzz_ops.cpp) ----
	Surf *any(const std::function<bool(const Surf &)> &fit);
	void resize(Surf &s);
	// Commits 1 to 200 buffers on s without waiting: one buffer (committed unchanged again), or
	// 2-3 buffers in turn, each rewritten only once released (none released: the last again).
	void burst(Surf &s, int n, int count);
	void step();
	// A video window being resized: a toplevel shown, then bursts of 3 to 6 commits of buffers
	// in new sizes (each over the main thread's 64 Ki pixels, up to 3840x2160), made back to
	// back; screenshots from the burst until its last colour shows. The toplevel's slot must
	// show one colour committed (the one before the burst, or one of the burst) in every one:
	// never nothing (black), never part of an image.
	void size_bursts();

	// ---- frame pacing requests on commits (commit_fuzz_pacing.cpp) ----
	std::shared_ptr<struct PacingObjects> pacing;
	// Before a commit of s: maybe set_barrier / wait_barrier, a target time, an object destroyed.
	void pace(Surf &s);

	// ---- the run (commit_fuzz_client.cpp) ----
	int run();
};

} // namespace pixelport::commit_fuzz
