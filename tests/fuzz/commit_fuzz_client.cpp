// pixelport-commit-fuzz: random sequences of requests a client may legally send, and what the
// screen shows for them (tests/fuzz/README.md, "The commit fuzzer").
//
// Surfaces are xdg toplevels, wl_subsurfaces (sync and desync) or roleless; each shows its
// buffer through a wp_viewport as a kSide x kSide block: toplevels at the output's origin (slot
// 0, the newest mapped one on top), every other surface in a slot of its own (its subsurface
// position is chosen so), so whatever the buffer sizes (16x16 to 1600x1200), one slot shows at
// most one surface. Every commit of a buffer writes a new solid colour (or re-commits a released
// buffer unchanged). Checks: a screenshot at random points (each slot shows, at every sample
// point, one colour committed to that slot since the last quiescent point, or black where the
// slot may be empty); at quiescent points (every sync subsurface's parent committed, then each
// visible surface's frame callback of its last commit, then a roundtrip) exactly each slot's last
// committed colour; the connection never ends; pp_timing_manager_v1 reports (version 2) come in
// strictly increasing seq, one for each buffer commit, none skipped.
//
// Output: "finding KIND seed S op N: ..." lines and "commit-fuzz ops=N ... findings=N".
// Exit status 0 when there is no finding, 1 with findings, 2 on bad arguments.
#include <drm_fourcc.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "pixelport-timing-v1-client-protocol.h"
#include "reference.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;

extern "C" void __lsan_disable(void) __attribute__((weak));

namespace {

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

// ---- solid colours ---------------------------------------------------------------------------

uint8_t clamp8(double v) { return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v + 0.5); }

// One pixel (two for NV12's chroma) of `rgb` in `format`: what every row of the buffer repeats.
// NV12: BT.601 limited range; the reference reads it back the way the compositor does.
size_t min_stride(uint32_t format, int w) {
	switch (format) {
	case DRM_FORMAT_RGB888: return (static_cast<size_t>(w) * 3 + 3) & ~size_t{3};
	case DRM_FORMAT_XRGB4444: return static_cast<size_t>(w) * 2;
	case DRM_FORMAT_NV12: return static_cast<size_t>(w);
	default: return static_cast<size_t>(w) * 4;
	}
}
size_t buffer_bytes(uint32_t format, int w, int h) {
	size_t s = min_stride(format, w) * static_cast<size_t>(h);
	return format == DRM_FORMAT_NV12 ? s + min_stride(format, w) * static_cast<size_t>(h / 2) : s;
}

// Writes a w x h buffer of `rgb` at `base` (min stride; NV12: luma plane, then the UV plane).
void fill(uint32_t format, int w, int h, uint32_t rgb, uint8_t *base) {
	const uint8_t r = rgb >> 16, g = rgb >> 8, b = rgb;
	const size_t stride = min_stride(format, w);
	std::vector<uint8_t> row(stride, 0);
	if (format == DRM_FORMAT_NV12) {
		double yy = 0.299 * r + 0.587 * g + 0.114 * b;
		memset(base, clamp8(16 + yy * 219 / 255), stride * h);
		uint8_t u = clamp8(128 + (b - yy) / 1.772 * 224 / 255), v = clamp8(128 + (r - yy) / 1.402 * 224 / 255);
		for (size_t x = 0; x < stride; x += 2) row[x] = u, row[x + 1] = v;
		for (int y = 0; y < h / 2; y++) memcpy(base + stride * (h + y), row.data(), stride);
		return;
	}
	for (int x = 0; x < w; x++) {
		if (format == DRM_FORMAT_RGB888) {
			row[3 * x] = b, row[3 * x + 1] = g, row[3 * x + 2] = r;
		} else if (format == DRM_FORMAT_XRGB4444) {
			row[2 * x] = static_cast<uint8_t>((g & 0xf0) | b >> 4), row[2 * x + 1] = 0xf0 | r >> 4;
		} else {
			row[4 * x] = b, row[4 * x + 1] = g, row[4 * x + 2] = r, row[4 * x + 3] = 0xff;
		}
	}
	for (int y = 0; y < h; y++) memcpy(base + stride * y, row.data(), stride);
}

// What a correct compositor shows for `rgb` written into a w x h buffer: the independent
// reference decoder's reading of those bytes (YUV's default matrix depends on the height).
uint32_t expected(uint32_t format, uint32_t rgb, int h) {
	constexpr int k = 8;
	std::vector<uint8_t> bytes(buffer_bytes(format, k, k));
	fill(format, k, k, rgb, bytes.data());
	std::vector<uint32_t> px;
	const test::YuvColour colour = test::YuvColour::default_for(h);
	test::reference_rgb(format, k, k, min_stride(format, k), bytes.data(), &px, &colour);
	return px.empty() ? 0xdeadbe : px[k * k / 2 + k / 2];
}

bool close_to(uint32_t a, uint32_t b, int tol) {
	for (int shift : {16, 8, 0}) {
		if (std::abs(static_cast<int>((a >> shift) & 0xff) - static_cast<int>((b >> shift) & 0xff)) > tol)
			return false;
	}
	return true;
}

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

	void finding(const char *kind, const std::string &what) {
		if (++findings > 50) return; // counted; the first ones tell
		printf("finding %s seed %" PRIu64 " op %" PRIu64 ": %s\n", kind, o.seed, op, what.c_str());
		for (auto &s : surfs) {
			if (!o.verbose) break;
			printf("  surface %d kind %d slot %d role %s parent %d %s buffer %d shown %d colour %06x seq "
			       "%u done %u\n",
				s->id, static_cast<int>(s->kind), s->slot,
				s->top           ? "top"
					: s->sub ? "sub"
						 : "-",
				s->parent ? s->parent->id : 0, s->sync ? "sync" : "desync", s->has_buffer, shown(*s),
				s->colour, s->seq, s->done_seq);
		}
		fflush(stdout);
	}
	bool alive() const { return wl_display_get_error(conn.display) == 0; }

	// ---- slots ----
	static int slot_x(int slot) { return (slot % kCols) * kPitch; }
	static int slot_y(int slot) { return (slot / kCols) * kPitch; }
	int screen_slot(const Surf &s) const { return s.kind == Kind::toplevel ? 0 : s.slot; }
	void unsettle(const Surf &s) { may_be_empty[screen_slot(s)] = true; }
	void unsettle_tree(const Surf &s) {
		unsettle(s);
		for (auto &c : surfs)
			if (c->parent == &s) unsettle_tree(*c);
	}
	int free_slot() const {
		for (int k = 1; k < kSlots; k++) {
			bool used = false;
			for (auto &s : surfs) used |= s->slot == k;
			if (!used) return k;
		}
		return -1;
	}

	// ---- timing ----
	static void on_report(
		void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *, const char *) {
		Surf *s = static_cast<Surf *>(data);
		Fuzzer *f = s->f;
		(flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED ? f->presented : f->discarded)++;
		char what[200];
		if (seq <= s->last_report) {
			snprintf(what, sizeof what, "surface %d: report of commit %u after commit %u's", s->id, seq,
				s->last_report);
			f->finding("timing-order", what);
		} else if (!s->unreported.count(seq)) {
			snprintf(what, sizeof what,
				"surface %d: report of commit %u, which attached no buffer (or none made)", s->id, seq);
			f->finding("timing-unknown", what);
		}
		s->unreported.erase(seq);
		s->last_report = std::max(s->last_report, seq);
	}

	// ---- surfaces ----
	Surf *new_surface() {
		auto s = std::make_unique<Surf>();
		s->f = this;
		s->id = static_cast<int>(next_id++);
		s->slot = free_slot();
		s->surface = wl_compositor_create_surface(conn.compositor);
		s->viewport = wp_viewporter_get_viewport(conn.viewporter, s->surface);
		wp_viewport_set_destination(s->viewport, kSide, kSide);
		if (timing) {
			static const pp_surface_timing_v1_listener listener = {
				.info = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t,
						int32_t, uint32_t, uint32_t, uint32_t, uint32_t) {},
				.timestamp = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t,
						     uint32_t) {},
				.done = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, const char *) {},
				.report = on_report,
				.output_name = [](void *, pp_surface_timing_v1 *, uint32_t, const char *) {},
				.reports = [](void *, pp_surface_timing_v1 *, uint32_t, wl_array *) {},
			};
			s->timing = pp_timing_manager_v1_subscribe(timing, s->surface);
			pp_surface_timing_v1_add_listener(s->timing, &listener, s.get());
		}
		surfs.push_back(std::move(s));
		return surfs.back().get();
	}

	bool in_subtree(const Surf &root, const Surf *s) const {
		for (; s != nullptr; s = s->parent)
			if (s == &root) return true;
		return false;
	}
	bool effectively_sync(const Surf &s) const { return s.sub && (s.sync || effectively_sync(*s.parent)); }
	// Shown: mapped with a buffer, every ancestor too (a toplevel configured).
	bool shown(const Surf &s) const {
		if (!s.has_buffer) return false;
		if (s.kind == Kind::toplevel) return s.top && s.configured;
		return s.sub && shown(*s.parent);
	}
	// Where a child of `p` must sit for its own slot: toplevels at the origin, others at their slot.
	void place(Surf &child) {
		Surf &p = *child.parent;
		int px = p.kind == Kind::toplevel ? 0 : slot_x(p.slot),
		    py = p.kind == Kind::toplevel ? 0 : slot_y(p.slot);
		wl_subsurface_set_position(child.sub, slot_x(child.slot) - px, slot_y(child.slot) - py);
	}

	// A commit; a frame callback with each, to know when it was applied and drawn.
	void commit(Surf &s) {
		static const wl_callback_listener listener = {
			.done =
				[](void *data, wl_callback *cb, uint32_t) {
					auto *fr = static_cast<Frame *>(data);
					fr->s->done_seq = std::max(fr->s->done_seq, fr->seq);
					auto &sizes = fr->s->unframed_sizes;
					for (auto it = sizes.begin(); it != sizes.end() && it->first <= fr->seq;) {
						fr->s->framed_size = it->second;
						it = sizes.erase(it);
					}
					fr->s->frames.erase(cb);
					wl_callback_destroy(cb);
					delete fr;
				},
		};
		s.seq++;
		commits++;
		wl_callback *cb = wl_surface_frame(s.surface);
		wl_callback_add_listener(cb, &listener, new Frame{&s, s.seq});
		s.frames.insert(cb);
		wl_surface_commit(s.surface);
	}
	void forget_frames(Surf &s) {
		for (wl_callback *cb : s.frames) {
			delete static_cast<Frame *>(wl_proxy_get_user_data(reinterpret_cast<wl_proxy *>(cb)));
			wl_callback_destroy(cb);
		}
		s.frames.clear();
	}

	// A buffer of s's current size that the client may write: released, or new.
	Buf *writable(Surf &s, uint64_t choice, int count) {
		while (static_cast<int>(s.bufs.size()) < count) s.bufs.push_back(std::make_unique<Buf>());
		Buf *b = s.bufs[choice % count].get();
		if (b->busy) return nullptr;
		if (b->recommitted_busy) { // the compositor may still read it: a fresh buffer and pool
			b->busy = true;
			b->destroy_buffer();
			b->recommitted_busy = false;
		}
		if (b->buffer && (b->w != s.w || b->h != s.h)) b->destroy_buffer();
		if (!b->buffer) {
			size_t need = buffer_bytes(o.format, s.w, s.h);
			if (b->pool && b->size < need) { // grow the pool
				munmap(b->data, b->size);
				if (ftruncate(b->fd, static_cast<off_t>(need)) != 0) return nullptr;
				b->data = static_cast<uint8_t *>(
					mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0));
				b->size = need;
				wl_shm_pool_resize(b->pool, static_cast<int32_t>(need));
			} else if (!b->pool) {
				b->fd = memfd_create("commit-fuzz", MFD_CLOEXEC);
				if (b->fd < 0 || ftruncate(b->fd, static_cast<off_t>(need)) != 0) return nullptr;
				b->data = static_cast<uint8_t *>(
					mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0));
				b->size = need;
				b->pool = wl_shm_create_pool(conn.shm, b->fd, static_cast<int32_t>(need));
			}
			if (b->data == MAP_FAILED) return nullptr;
			b->w = s.w, b->h = s.h;
			b->buffer = wl_shm_pool_create_buffer(b->pool, 0, s.w, s.h,
				static_cast<int32_t>(min_stride(o.format, s.w)), drm_to_shm(o.format));
			static const wl_buffer_listener listener = {
				.release = [](void *data, wl_buffer *) { static_cast<Buf *>(data)->busy = false; },
			};
			wl_buffer_add_listener(b->buffer, &listener, b);
			b->shows = kBlack;
		}
		return b;
	}

	uint32_t new_colour(uint32_t not_like) {
		for (;;) {
			uint32_t c = 0;
			for (int i = 0; i < 3; i++) c = c << 8 | static_cast<uint32_t>(0x30 + pick(0xd0));
			if (!close_to(c, not_like, 3 * tol + 8)) return c;
		}
	}

	// Attaches b to s (writing a new colour first unless `rewrite` is false) and commits.
	void commit_buffer(Surf &s, int index, bool rewrite) {
		Buf &b = *s.bufs[index];
		if (rewrite || b.shows == kBlack) {
			uint32_t rgb = new_colour(s.colour);
			fill(o.format, b.w, b.h, rgb, b.data);
			b.shows = expected(o.format, rgb, b.h);
		}
		b.recommitted_busy |= b.busy;
		b.busy = true;
		wl_surface_attach(s.surface, b.buffer, 0, 0);
		wl_surface_damage_buffer(s.surface, 0, 0, b.w, b.h);
		s.has_buffer = true;
		s.colour = b.shows;
		s.last = index;
		allowed[screen_slot(s)].insert(b.shows);
		s.unverified.insert(b.shows);
		s.unframed_sizes[s.seq + 1] = {b.w, b.h};
		commit(s);
		s.unreported.insert(s.seq);
	}
	bool can_draw(const Surf &s) const { return s.kind != Kind::toplevel || (s.top && s.configured); }

	void unmap(Surf &s) {
		const bool mapped_toplevel = s.top && s.configured && s.has_buffer;
		wl_surface_attach(s.surface, nullptr, 0, 0);
		s.has_buffer = false;
		unsettle_tree(s);
		commit(s);
		if (mapped_toplevel) s.configured = false; // reset: the next commit is an initial one again
	}

	// An xdg toplevel role object for s (no buffer attached now), its initial commit, the
	// configure acked.
	bool make_toplevel(Surf &s) {
		if (s.has_buffer) unmap(s);
		s.kind = Kind::toplevel;
		for (auto &c : surfs) { // children move with their parent: toplevels sit at the origin
			if (c->parent == &s) place(*c);
		}
		s.xs = xdg_wm_base_get_xdg_surface(conn.wm_base, s.surface);
		static const xdg_surface_listener listener = {
			.configure =
				[](void *data, xdg_surface *xs, uint32_t serial) {
					xdg_surface_ack_configure(xs, serial);
					static_cast<Surf *>(data)->configured = true;
				},
		};
		xdg_surface_add_listener(s.xs, &listener, &s);
		s.top = xdg_surface_get_toplevel(s.xs);
		s.top_order = next_order++;
		s.configured = false;
		unsettle_tree(s);
		commit(s);
		return wait_configured(s);
	}
	bool wait_configured(Surf &s) {
		for (uint64_t end = now_ns() + 10'000'000'000ull; !s.configured && alive() && now_ns() < end;)
			conn.dispatch_timeout(100);
		if (!s.configured && alive())
			finding("no-configure", "surface " + std::to_string(s.id) + " got no configure");
		return s.configured;
	}
	void destroy_role(Surf &s) {
		unsettle_tree(s);
		if (s.top) xdg_toplevel_destroy(s.top);
		if (s.xs) xdg_surface_destroy(s.xs);
		s.top = nullptr, s.xs = nullptr, s.configured = false;
		if (s.sub) wl_subsurface_destroy(s.sub);
		s.sub = nullptr, s.parent = nullptr;
	}
	// A subsurface role under p (a surface not in s's subtree), positioned at s's slot; p
	// commits so that the new subsurface is added.
	void make_sub(Surf &s, Surf &p, bool sync) {
		s.kind = Kind::sub;
		s.sub = wl_subcompositor_get_subsurface(conn.subcompositor, s.surface, p.surface);
		s.parent = &p;
		s.sync = sync;
		if (!sync) wl_subsurface_set_desync(s.sub);
		place(s);
		unsettle_tree(s);
		commit(p);
	}
	void destroy_surface(Surf &s) {
		for (auto &c : surfs) {
			if (c->parent == &s) destroy_role(*c); // a child of a gone parent: its role object is inert
		}
		destroy_role(s);
		unsettle(s);
		forget_frames(s);
		if (s.timing) pp_surface_timing_v1_destroy(s.timing);
		wp_viewport_destroy(s.viewport);
		wl_surface_destroy(s.surface);
		s.bufs.clear(); // after the surface: its buffers' pools go
		surfs.erase(std::find_if(surfs.begin(), surfs.end(), [&](auto &p) { return p.get() == &s; }));
	}

	// ---- checks ----
	bool screenshot(std::vector<uint8_t> *rgb) {
		std::string path =
			std::string(getenv("XDG_RUNTIME_DIR")) + "/commit-fuzz-" + std::to_string(getpid()) + ".ppm";
		wl_display_flush(conn.display);
		pid_t pid = fork();
		if (pid == 0) {
			execlp("grim", "grim", "-t", "ppm", path.c_str(), static_cast<char *>(nullptr));
			_exit(127);
		}
		int status = -1;
		for (int i = 0; i < 3000; i++) { // keep answering the compositor meanwhile
			if (waitpid(pid, &status, WNOHANG) == pid) break;
			conn.dispatch_timeout(10);
		}
		int w = 0, h = 0, maxval = 0;
		std::ifstream in(path, std::ios::binary);
		std::string magic;
		in >> magic >> w >> h >> maxval;
		in.get();
		rgb->resize(static_cast<size_t>(w) * h * 3);
		in.read(reinterpret_cast<char *>(rgb->data()), static_cast<std::streamsize>(rgb->size()));
		unlink(path.c_str());
		return WIFEXITED(status) && WEXITSTATUS(status) == 0 && in && magic == "P6" && w == kOutputW &&
			h == kOutputH;
	}

	// Every slot: all its sample points within tolerance of one colour of cands(slot).
	void check_screen(const char *what, const std::function<std::vector<uint32_t>(int)> &cands) {
		checkpoints++;
		std::vector<uint8_t> rgb;
		if (!screenshot(&rgb)) {
			finding("no-screenshot", std::string(what) + ": grim failed");
			return;
		}
		for (int k = 0; k < kSlots; k++) {
			std::vector<uint32_t> got;
			for (int dy : {4, 12, 20})
				for (int dx : {4, 12, 20}) {
					const uint8_t *p =
						&rgb[(static_cast<size_t>(slot_y(k) + dy) * kOutputW + slot_x(k) + dx) *
							3];
					got.push_back(static_cast<uint32_t>(p[0]) << 16 | p[1] << 8 | p[2]);
				}
			std::vector<uint32_t> want = cands(k);
			bool good = std::any_of(want.begin(), want.end(), [&](uint32_t a) {
				return std::all_of(
					got.begin(), got.end(), [&](uint32_t g) { return close_to(g, a, tol); });
			});
			if (good) continue;
			std::string seen, wanted;
			char hex[16];
			for (uint32_t c : got) snprintf(hex, sizeof hex, " %06x", c), seen += hex;
			for (size_t i = 0; i < want.size() && i < 8; i++)
				snprintf(hex, sizeof hex, " %06x", want[i]), wanted += hex;
			finding(what,
				"slot " + std::to_string(k) + " shows" + seen + "; want one of " +
					std::to_string(want.size()) + ":" + wanted + (want.size() > 8 ? " ..." : ""));
		}
	}

	void checkpoint() {
		if (!conn.roundtrip()) return;
		check_screen("wrong-colour", [this](int k) {
			std::vector<uint32_t> c(allowed[k].rbegin(), allowed[k].rend());
			if (may_be_empty[k]) c.insert(c.begin(), kBlack);
			return c;
		});
	}

	// What each slot shows once everything is applied: the newest shown toplevel at slot 0,
	// each shown subsurface at its own.
	std::vector<uint32_t> settled_screen(std::vector<Surf *> *visible) const {
		std::vector<uint32_t> want(kSlots, kBlack);
		const Surf *top = nullptr;
		for (auto &s : surfs) {
			if (!shown(*s)) continue;
			if (s->kind == Kind::toplevel) {
				if (!top || s->top_order > top->top_order) top = s.get();
			} else {
				want[s->slot] = s->colour;
				visible->push_back(s.get());
			}
		}
		if (top) want[0] = top->colour, visible->push_back(const_cast<Surf *>(top));
		return want;
	}

	int depth(const Surf &s) const { return s.parent ? 1 + depth(*s.parent) : 0; }

	void quiesce() {
		// Every cached state applied: every surface commits, children before their parents.
		// wlroots 0.18 caches the commits of a desync subsurface under a sync one too, but its
		// parent's apply does not apply them (subsurface_handle_parent_commit looks at the
		// child's own flag): such a child is made sync for these commits, then desync again.
		std::vector<Surf *> order, toggled;
		for (auto &s : surfs) {
			order.push_back(s.get());
			if (s->sub && !s->sync && effectively_sync(*s))
				wl_subsurface_set_sync(s->sub), toggled.push_back(s.get());
		}
		std::stable_sort(order.begin(), order.end(), [&](Surf *a, Surf *b) { return depth(*a) > depth(*b); });
		for (Surf *s : order) commit(*s);
		for (Surf *s : toggled) wl_subsurface_set_desync(s->sub);
		std::vector<Surf *> visible;
		std::vector<uint32_t> want = settled_screen(&visible);
		uint64_t end = now_ns() + 30'000'000'000ull;
		for (Surf *s : visible) {
			while (s->done_seq < s->seq && alive() && now_ns() < end) conn.dispatch_timeout(100);
			if (s->done_seq < s->seq && alive()) {
				finding("not-applied",
					"surface " + std::to_string(s->id) + "'s commit " + std::to_string(s->seq) +
						" got no frame callback in 30 s (last one for commit " +
						std::to_string(s->done_seq) + ")");
			}
		}
		if (!conn.roundtrip()) return;
		quiescent++;
		for (auto &s : surfs) { // reports come in commit order: none is still due before the last
			auto end = s->unreported.lower_bound(s->last_report);
			if (end == s->unreported.begin()) continue;
			finding("timing-missing",
				"surface " + std::to_string(s->id) + ": " +
					std::to_string(std::distance(s->unreported.begin(), end)) +
					" commit(s) before commit " + std::to_string(s->last_report) +
					" never reported, the first " + std::to_string(*s->unreported.begin()));
			s->unreported.erase(s->unreported.begin(), end);
		}
		check_screen("not-last-colour", [&](int k) { return std::vector<uint32_t>{want[k]}; });
		for (int k = 0; k < kSlots; k++) {
			allowed[k] = {want[k]};
			may_be_empty[k] = want[k] == kBlack;
		}
		// What an unmap, a remap or a new role may reveal without a commit: the last colour of
		// each surface with a buffer (toplevels: any of them); of one not shown now, any colour
		// since it was last seen shown (its commits may still convert).
		for (Surf *s : visible) s->unverified = {s->colour};
		for (auto &s : surfs)
			if (s->has_buffer) allowed[screen_slot(*s)].insert(s->unverified.begin(), s->unverified.end());
	}

	// ---- ops ----
	Surf *any(const std::function<bool(const Surf &)> &fit) {
		std::vector<Surf *> c;
		for (auto &s : surfs)
			if (fit(*s)) c.push_back(s.get());
		return c.empty() ? nullptr : c[pick(c.size())];
	}

	void resize(Surf &s) {
		if (chance(50)) { // under the inline limit (64 Ki pixels) or over it
			s.w = 16 + 2 * static_cast<int>(pick(120)), s.h = 16 + 2 * static_cast<int>(pick(120));
		} else {
			s.w = 256 + 2 * static_cast<int>(pick(673)), s.h = 256 + 2 * static_cast<int>(pick(473));
		}
	}

	// Commits 1 to 200 buffers on s without waiting: one buffer (committed unchanged again), or
	// 2-3 buffers in turn, each rewritten only once released (none released: the last again).
	void burst(Surf &s, int n, int count) {
		for (int i = 0; i < n && alive(); i++) {
			uint64_t choice = rng();
			Buf *b = nullptr;
			int index = -1;
			for (int k = 0; k < count && !b; k++) {
				index = static_cast<int>((choice + k) % count);
				b = writable(s, index, count);
			}
			if (count == 1 && i > 0 && s.last == 0 && s.bufs[0]->buffer) {
				commit_buffer(s, 0, false); // the same bytes again
			} else if (b) {
				commit_buffer(s, index, true);
			} else if (s.last >= 0 && s.bufs[s.last]->buffer && s.bufs[s.last]->w == s.w) {
				commit_buffer(s, s.last, false);
			}
			// Every event that came in is read: libwayland-server disconnects a client whose
			// unread events fill the socket and its buffer.
			for (bool more = true; more && alive();) {
				wl_display_flush(conn.display);
				while (wl_display_prepare_read(conn.display) != 0)
					wl_display_dispatch_pending(conn.display);
				pollfd pfd = {wl_display_get_fd(conn.display), POLLIN, 0};
				more = poll(&pfd, 1, 0) == 1;
				if (more) {
					wl_display_read_events(conn.display);
				} else {
					wl_display_cancel_read(conn.display);
				}
				wl_display_dispatch_pending(conn.display);
			}
		}
	}

	void step() {
		Surf *s = surfs.empty() ? nullptr : surfs[pick(surfs.size())].get();
		uint64_t what = pick(100);
		if (!s || (what < 6 && surfs.size() < kMaxSurfaces && free_slot() > 0)) {
			Surf *n = new_surface();
			uint64_t role = pick(3);
			Surf *p = any([&](const Surf &c) { return &c != n; });
			log("new surface %d slot %d role %" PRIu64 " parent %d", n->id, n->slot, role, p ? p->id : 0);
			if (role == 0) make_toplevel(*n);
			if (role == 1 && p) make_sub(*n, *p, chance(50));
		} else if (what < 10) { // a role late, or again after its role object went
			if (s->top || s->sub) return;
			Surf *p = any([&](const Surf &c) { return !in_subtree(*s, &c); });
			bool as_top = s->kind == Kind::toplevel || (s->kind == Kind::none && (chance(50) || !p));
			log("role for %d: %s", s->id, as_top ? "toplevel" : "sub");
			if (as_top)
				make_toplevel(*s);
			else if (p)
				make_sub(*s, *p, chance(50));
		} else if (what < 13) {
			log("destroy role object of %d", s->id);
			if (s->kind == Kind::toplevel && s->has_buffer && chance(50)) unmap(*s);
			destroy_role(*s);
		} else if (what < 16 && s->kind == Kind::sub) { // made again under another parent
			Surf *p = any([&](const Surf &c) { return !in_subtree(*s, &c); });
			if (!p) return;
			log("reparent %d under %d", s->id, p->id);
			destroy_role(*s);
			make_sub(*s, *p, chance(50));
		} else if (what < 19 && s->sub) {
			s->sync = !s->sync;
			log("%d %s", s->id, s->sync ? "sync" : "desync");
			s->sync ? wl_subsurface_set_sync(s->sub) : wl_subsurface_set_desync(s->sub);
		} else if (what < 21) {
			log("destroy surface %d", s->id);
			destroy_surface(*s);
		} else if (what < 25) {
			log("unmap %d", s->id);
			if (s->kind == Kind::toplevel && !s->top) return;
			unmap(*s);
		} else if (what < 28 && s->kind == Kind::toplevel && s->top && !s->configured) { // remap
			log("remap %d", s->id);
			commit(*s);
			wait_configured(*s);
		} else if (what < 33) {
			resize(*s);
			log("size of %d: %dx%d", s->id, s->w, s->h);
		} else if (what < 37 && !s->bufs.empty()) {
			Buf &b = *s->bufs[pick(s->bufs.size())];
			log("destroy a buffer of %d (%s)", s->id, b.busy ? "busy" : "released");
			b.destroy_buffer();
		} else if (what < 45) {
			checkpoint();
		} else if (what < 49) {
			quiesce();
		} else if (can_draw(*s)) {
			int n = chance(40) ? 1 : 2 + static_cast<int>(pick(199));
			int count = 1 + static_cast<int>(pick(3));
			log("commit %d x%d on %d buffer(s) of %d (%dx%d)", n, n, count, s->id, s->w, s->h);
			burst(*s, n, count);
		}
	}

	// A video window being resized: a toplevel shown, then bursts of 3 to 6 commits of buffers
	// in new sizes (each over the main thread's 64 Ki pixels, up to 3840x2160), made back to
	// back; screenshots from the burst until its last colour shows. The toplevel's slot must
	// show one colour committed (the one before the burst, or one of the burst) in every one:
	// never nothing (black), never part of an image.
	void size_bursts() {
		Surf &t = *new_surface();
		make_toplevel(t);
		t.w = 640, t.h = 360;
		if (writable(t, 0, 1)) commit_buffer(t, 0, true);
		quiesce();
		for (int round = 0; round < o.size_bursts && alive() && op < o.max_ops; round++) {
			op++;
			const int n = 3 + static_cast<int>(pick(4));
			log("burst of %d sizes", n);
			for (int i = 0; i < n && alive(); i++) {
				t.w = 1280 + 2 * static_cast<int>(pick(1281)),
				t.h = 720 + 2 * static_cast<int>(pick(721));
				// A buffer of its own each (each pool a new size): none is busy.
				Buf *b = nullptr;
				for (int k = 0; k < 8 && !b; k++) b = writable(t, (t.seq + k) % 8, 8);
				if (!b) break;
				const int index =
					static_cast<int>(std::find_if(t.bufs.begin(), t.bufs.end(), [&](auto &p) {
						return p.get() == b;
					}) - t.bufs.begin());
				commit_buffer(t, index, true);
			}
			wl_display_flush(conn.display);
			for (int shot = 0; shot < 40 && alive() && t.done_seq < t.seq; shot++) {
				check_screen("size-burst-blank", [&](int k) {
					// Slot 0 is the toplevel's; the others are empty.
					return k == 0 ? std::vector<uint32_t>(allowed[0].begin(), allowed[0].end())
						      : std::vector<uint32_t>{kBlack};
				});
			}
			quiesce();
		}
	}

	void log(const char *fmt, ...) __attribute__((format(printf, 2, 3))) {
		if (!o.verbose) return;
		va_list ap;
		va_start(ap, fmt);
		printf("op %" PRIu64 ": ", op);
		vprintf(fmt, ap);
		printf("\n");
		va_end(ap);
	}

	int run() {
		std::string error;
		if (!conn.connect(&error) || !conn.subcompositor || !conn.viewporter || !conn.wm_base) {
			fprintf(stderr, "cannot connect (or no wl_subcompositor/wp_viewporter/xdg_wm_base): %s\n",
				error.c_str());
			return 2;
		}
		if (!conn.has_shm_format(drm_to_shm(o.format))) {
			fprintf(stderr, "the compositor does not serve %s\n", o.format_name.c_str());
			return 2;
		}
		static const wl_registry_listener listener = {
			.global =
				[](void *data, wl_registry *r, uint32_t name, const char *interface, uint32_t version) {
					if (strcmp(interface, pp_timing_manager_v1_interface.name) == 0 &&
						version >= 2) {
						static_cast<Fuzzer *>(data)->timing =
							static_cast<pp_timing_manager_v1 *>(wl_registry_bind(
								r, name, &pp_timing_manager_v1_interface, 2));
					}
				},
			.global_remove = [](void *, wl_registry *, uint32_t) {},
		};
		wl_registry *registry = wl_display_get_registry(conn.display);
		wl_registry_add_listener(registry, &listener, this);
		conn.roundtrip();
		tol = test::reference_tolerance(o.format) + 2; // + the renderer's scaling of the viewport
		printf("commit-fuzz seed %" PRIu64 " format %s seconds %g timing %s\n", o.seed, o.format_name.c_str(),
			o.seconds, timing ? "yes" : "no");
		fflush(stdout);
		uint64_t end = now_ns() + static_cast<uint64_t>(o.seconds * 1e9);
		if (o.desync_under_sync > 0) { // toplevel, sync child, desync grandchild: one quiescent point
			Surf &t = *new_surface(), &a = *new_surface(), &b = *new_surface();
			make_toplevel(t);
			make_sub(a, t, true);
			make_sub(b, a, false);
			b.w = b.h = o.desync_under_sync;
			for (Surf *s : {&t, &a, &b}) writable(*s, 0, 1), commit_buffer(*s, 0, true);
			op++;
			quiesce();
		}
		if (o.size_bursts > 0) size_bursts();
		while (o.desync_under_sync == 0 && o.size_bursts == 0 && now_ns() < end && op < o.max_ops && alive()) {
			op++;
			step();
		}
		if (alive()) quiesce();
		while (!surfs.empty() && alive()) destroy_surface(*surfs.back());
		if (alive()) conn.roundtrip();
		if (!alive()) finding("disconnected", conn.error_text());
		printf("commit-fuzz ops=%" PRIu64 " commits=%" PRIu64 " checkpoints=%" PRIu64 " quiescent=%" PRIu64
		       " reports_presented=%" PRIu64 " reports_discarded=%" PRIu64 " findings=%" PRIu64 "\n",
			op, commits, checkpoints, quiescent, presented, discarded, findings);
		wl_registry_destroy(registry);
		if (timing) pp_timing_manager_v1_destroy(timing);
		return findings == 0 ? 0 : 1;
	}
};

} // namespace

int main(int argc, char *argv[]) {
	if (__lsan_disable != nullptr) __lsan_disable();
	Options o;
	CLI::App app{"random legal commit sequences, checked on screen"};
	app.add_option("--seed", o.seed, "seed: the same seed makes the same random choices");
	app.add_option("--seconds", o.seconds, "how long to send requests");
	app.add_option("--format", o.format_name, "wl_shm format of every buffer (NV12, RGB888, XRGB4444, XRGB8888)");
	app.add_option("--max-ops", o.max_ops, "stop after N operations");
	app.add_flag("--verbose", o.verbose, "print every operation");
	app.add_option("--desync-under-sync", o.desync_under_sync,
		"only this: a desync subsurface (SIDE x SIDE) under a sync one, applied at a quiescent point");
	app.add_option("--size-bursts", o.size_bursts,
		"only this: N bursts of 3 to 6 commits in new sizes on one toplevel, screenshots until each shows");
	CLI11_PARSE(app, argc, argv);
	uint32_t shm = 0;
	if (!parse_format(o.format_name, &shm)) {
		fprintf(stderr, "unknown format %s\n", o.format_name.c_str());
		return 2;
	}
	o.format = shm_to_drm(shm);
	if (o.format != DRM_FORMAT_NV12 && o.format != DRM_FORMAT_RGB888 && o.format != DRM_FORMAT_XRGB4444 &&
		o.format != DRM_FORMAT_XRGB8888 && o.format != DRM_FORMAT_ARGB8888) {
		fprintf(stderr, "--format takes NV12, RGB888, XRGB4444, XRGB8888 or ARGB8888\n");
		return 2;
	}
	Fuzzer f(o);
	return f.run();
}
