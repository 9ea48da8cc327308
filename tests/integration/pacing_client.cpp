// pixelport-pacing-client: drives wp_fifo_v1 and wp_commit_timing_v1 and prints what
// wp_presentation says of each commit, one line each, for tests/integration/test_pacing.cpp and
// the real-compositor suite to judge. Usage: pixelport-pacing-client MODE [ARG...]
//
//   fifo FORMAT TRANSPORT FRAMES WxH HZ [nofifo|auto]
//       FRAMES frames, each committed with set_barrier + wait_barrier (not with nofifo), at HZ
//       (0: as fast as the transport's buffers come back); "frame I presented NS REFRESH" or
//       "frame I discarded" per frame, in commit order. auto: where the compositor lacks
//       wp_fifo_v1, each frame waits for the last one's frame callback instead, as Mesa's FIFO
//       present mode does ("pacing fifo" or "pacing frame-callbacks" first)
//   fifo-held [nofifo]
//       a 1920x1080 NV12 frame (converted on a worker, its commit held) with set_barrier, then
//       at once a 64x48 NV12 frame with wait_barrier: both lines as in fifo
//   fifo-behind plain|set
//       a 1920x1080 NV12 frame with set_barrier (converted on a worker, its commit held), then at
//       once a 64x48 frame (it waits behind that conversion), a commit without a buffer (with
//       set, it sets the barrier), and a 64x48 frame with set_barrier + wait_barrier, which
//       replaces the waiting one: "frame I ..." for the large one, the replaced one and the last
//       (the commit between lies in the ledger between a replaced commit and a fifo wait)
//   sync-subsurface K
//       a synchronized subsurface commits K frames, each with set_barrier + wait_barrier, then
//       its parent commits: "child I ..." and "parent presented NS"
//   hidden FRAMES
//       a window, then a larger opaque one over it; the first commits FRAMES frames with
//       set_barrier + wait_barrier: "hidden FRAMES frames in US us"
//   timed FRAMES
//       FRAMES frames, each with a target time 2 to 4 refreshes after the last presentation plus
//       a fraction of one: "timed I target NS present NS refresh NS"
//   far-target
//       a commit with a target 60 s ahead; another window presents meanwhile ("other presented"),
//       the first's commit does not ("held"), and 5 more commits let it go ("released ...")
//   error-already-exists | error-commit-timer-exists | error-invalid-timestamp |
//   error-timestamp-exists | error-fifo-surface-destroyed | error-timer-surface-destroyed
//       the misuse, then "error CODE INTERFACE" (or "ok")
//
// Exit status 0 when the mode ran, 3 when the compositor lacks what it needs ("no fifo").
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <drm_fourcc.h>

#include "client_modes.hpp"
#include "client_verdict.hpp"
#include "pattern.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;
using pixelport::test::ModeArgs;
using pixelport::test::ModeTable;

namespace {

Connection conn;

// What wp_presentation said of one commit.
struct Shown {
	struct wp_presentation_feedback *feedback = nullptr;
	bool done = false, presented = false;
	uint64_t ns = 0; // CLOCK_MONOTONIC (the presentation clock of every wlroots compositor)
	uint32_t refresh = 0;
};

const wp_presentation_feedback_listener kFeedback = {
	.sync_output = [](void *, struct wp_presentation_feedback *, wl_output *) {},
	.presented =
		[](void *data, struct wp_presentation_feedback *f, uint32_t sec_hi, uint32_t sec_lo, uint32_t nsec,
			uint32_t refresh, uint32_t, uint32_t, uint32_t) {
			auto *s = static_cast<Shown *>(data);
			s->done = s->presented = true;
			s->ns = ((static_cast<uint64_t>(sec_hi) << 32 | sec_lo) * 1000000000u) + nsec;
			s->refresh = refresh;
			wp_presentation_feedback_destroy(f);
			s->feedback = nullptr;
		},
	.discarded =
		[](void *data, struct wp_presentation_feedback *f) {
			auto *s = static_cast<Shown *>(data);
			s->done = true;
			wp_presentation_feedback_destroy(f);
			s->feedback = nullptr;
		},
};

// Feedback for the next commit of `surface`.
void watch(wl_surface *surface, Shown *shown) {
	shown->feedback = wp_presentation_feedback(conn.presentation, surface);
	wp_presentation_feedback_add_listener(shown->feedback, &kFeedback, shown);
}

// Dispatches until every one is done; false after `timeout_ms` or a connection error.
bool wait_all(const std::deque<Shown> &shown, int timeout_ms) {
	const uint64_t end = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	while (!std::all_of(shown.begin(), shown.end(), [](const Shown &s) { return s.done; })) {
		if (now_ns() > end || !conn.dispatch_timeout(100)) {
			if (wl_display_get_error(conn.display) != 0) return false;
			if (now_ns() > end) return false;
		}
	}
	return true;
}

// Dispatches for `ms` (events that come meanwhile are handled).
void linger(int ms) {
	const uint64_t end = now_ns() + static_cast<uint64_t>(ms) * 1000000u;
	while (now_ns() < end) conn.dispatch_timeout(static_cast<int>((end - now_ns()) / 1000000u) + 1);
}

// A frame of the test pattern in `drm_format`, laid out as wl_shm wants it.
struct Frame {
	std::vector<uint8_t> bytes;
	Pixels pixels;
};

Frame frame(uint32_t drm_format, int w, int h, uint32_t seed) {
	Frame f;
	const size_t stride = shm_min_stride(drm_format, w);
	ShmLayout layout{};
	if (stride == 0 || !shm_layout(drm_format, w, h, stride, &layout)) return f;
	f.bytes.resize(layout.size);
	encode_pattern(drm_format, w, h, stride, f.bytes.data(), seed, 0, 0, w, h);
	f.pixels = {.format = drm_format,
		.width = w,
		.height = h,
		.stride = stride,
		.data = f.bytes.data(),
		.size = f.bytes.size()};
	return f;
}

void print_shown(const char *what, size_t i, const Shown &s) {
	if (s.presented) {
		printf("%s %zu presented %llu %u\n", what, i, static_cast<unsigned long long>(s.ns), s.refresh);
	} else {
		printf("%s %zu %s\n", what, i, s.done ? "discarded" : "pending");
	}
}

// Waits (10 s at most) for what wp_presentation says of each frame, then prints a line for each
// and "done" (or "timeout").
void report_frames(const std::deque<Shown> &shown) {
	const bool all = wait_all(shown, 10000);
	for (size_t i = 0; i < shown.size(); i++) print_shown("frame", i, shown[i]);
	printf("%s\n", all ? "done" : "timeout");
}

bool need(bool fifo, bool timing) {
	if ((fifo && conn.fifo_manager == nullptr) || (timing && conn.commit_timing == nullptr) ||
		conn.presentation == nullptr) {
		printf("no %s\n", fifo && conn.fifo_manager == nullptr ? "fifo" : "commit-timing");
		return false;
	}
	return true;
}

int fail(const std::string &what) {
	fprintf(stderr, "%s: %s\n", what.c_str(), conn.error_text().c_str());
	return 1;
}

// ---- modes ------------------------------------------------------------------------------------

int mode_fifo(const ModeArgs &args) {
	uint32_t shm_format = 0;
	TransportChoice transport{};
	int w = 0, h = 0;
	if (!parse_format(args.at(0), &shm_format) || !parse_transport(args.at(1), &transport) ||
		sscanf(args.at(3), "%dx%d", &w, &h) != 2) {
		fprintf(stderr, "fifo FORMAT TRANSPORT FRAMES WxH HZ [nofifo]\n");
		return 2;
	}
	const long frames = args.number(2), hz = args.number(4);
	const bool fifo = !args.is(5, "nofifo") && !(args.is(5, "auto") && conn.fifo_manager == nullptr);
	const bool callbacks = args.is(5, "auto") && !fifo;
	if (!need(fifo, false)) return 3;
	if (args.is(5, "auto")) printf("pacing %s\n", fifo ? "fifo" : "frame-callbacks");
	Window window;
	std::string error;
	if (!window.create(&conn, "pacing fifo", &error)) return fail(error);
	wp_fifo_v1 *f = fifo ? wp_fifo_manager_v1_get_fifo(conn.fifo_manager, window.surface) : nullptr;
	SurfaceWriter writer(&conn, window.surface, transport);
	const uint32_t drm = shm_to_drm(shm_format);
	std::vector<Frame> content;
	for (uint32_t seed = 1; seed <= 2; seed++) content.push_back(frame(drm, w, h, seed));
	// A first frame shown before the count starts: a compositor may show nothing of a new window
	// until its own transaction settles (sway waits for the window's configure).
	for (int tries = 0; tries < 20; tries++) {
		std::deque<Shown> first(1);
		watch(window.surface, &first[0]);
		if (!writer.put(content[static_cast<size_t>(tries) % 2].pixels, nullptr, &error) ||
			!wait_all(first, 5000)) {
			return fail("first frame");
		}
		if (first[0].presented) break;
	}
	std::deque<Shown> shown(static_cast<size_t>(frames));
	const uint64_t period = hz > 0 ? 1000000000u / static_cast<uint64_t>(hz) : 0;
	uint64_t next = now_ns();
	std::deque<bool> framed_flags(static_cast<size_t>(frames)); // outlive a callback that comes late
	for (long i = 0; i < frames; i++) {
		if (period > 0) {
			// Our own clock, as a player's: the compositor paces what gets ahead of it.
			while (now_ns() < next)
				conn.dispatch_timeout(static_cast<int>((next - now_ns()) / 1000000u) + 1);
			next += period;
		}
		if (f != nullptr) {
			wp_fifo_v1_set_barrier(f);
			wp_fifo_v1_wait_barrier(f);
		}
		watch(window.surface, &shown[static_cast<size_t>(i)]);
		bool &framed = framed_flags[static_cast<size_t>(i)];
		if (callbacks) {
			static const wl_callback_listener kDone = {
				.done =
					[](void *data, wl_callback *cb, uint32_t) {
						*static_cast<bool *>(data) = true;
						wl_callback_destroy(cb);
					},
			};
			wl_callback_add_listener(wl_surface_frame(window.surface), &kDone, &framed);
		}
		if (!writer.put(content[static_cast<size_t>(i) % 2].pixels, nullptr, &error)) return fail(error);
		// Without the protocol: the next frame once this one's callback came (at most a second).
		for (uint64_t end = now_ns() + 1000000000u; callbacks && !framed && now_ns() < end;) {
			if (!conn.dispatch_timeout(100) && wl_display_get_error(conn.display) != 0)
				return fail("dispatch");
		}
	}
	report_frames(shown);
	if (f != nullptr) wp_fifo_v1_destroy(f);
	return 0;
}

int mode_fifo_held(const ModeArgs &args) {
	const bool fifo = !args.is(0, "nofifo");
	if (!need(fifo, false) || !conn.has_shm_format(DRM_FORMAT_NV12)) return 3;
	Window window;
	std::string error;
	if (!window.create(&conn, "pacing fifo-held", &error)) return fail(error);
	wp_fifo_v1 *f = fifo ? wp_fifo_manager_v1_get_fifo(conn.fifo_manager, window.surface) : nullptr;
	SurfaceWriter writer(&conn, window.surface, TransportChoice::ShmReused);
	// Something on screen first, so that neither frame below is the surface's first.
	Frame small = frame(DRM_FORMAT_NV12, 64, 48, 1), large = frame(DRM_FORMAT_NV12, 1920, 1080, 2),
	      small2 = frame(DRM_FORMAT_NV12, 64, 48, 3);
	std::deque<Shown> first(1);
	watch(window.surface, &first[0]);
	if (!writer.put(small.pixels, nullptr, &error) || !wait_all(first, 10000)) return fail("first frame");
	std::deque<Shown> shown(2);
	// The large one converts on a worker (its commit held); the small one comes right behind.
	if (f != nullptr) wp_fifo_v1_set_barrier(f);
	watch(window.surface, &shown[0]);
	if (!writer.put(large.pixels, nullptr, &error)) return fail(error);
	if (f != nullptr) {
		wp_fifo_v1_set_barrier(f);
		wp_fifo_v1_wait_barrier(f);
	}
	watch(window.surface, &shown[1]);
	if (!writer.put(small2.pixels, nullptr, &error)) return fail(error);
	report_frames(shown);
	return 0;
}

int mode_fifo_behind(const ModeArgs &args) {
	const bool set_between = args.is(0, "set");
	if (!need(true, false) || !conn.has_shm_format(DRM_FORMAT_NV12)) return 3;
	Window window;
	std::string error;
	if (!window.create(&conn, "pacing fifo-behind", &error)) return fail(error);
	wp_fifo_v1 *f = wp_fifo_manager_v1_get_fifo(conn.fifo_manager, window.surface);
	// Three buffers busy at once: the large one's, and two small ones (a writer has two).
	SurfaceWriter big(&conn, window.surface, TransportChoice::ShmReused);
	SurfaceWriter writer(&conn, window.surface, TransportChoice::ShmReused);
	Frame small = frame(DRM_FORMAT_NV12, 64, 48, 1), large = frame(DRM_FORMAT_NV12, 1920, 1080, 2),
	      replaced = frame(DRM_FORMAT_NV12, 64, 48, 3), last = frame(DRM_FORMAT_NV12, 64, 48, 4);
	std::deque<Shown> first(1);
	watch(window.surface, &first[0]);
	if (!writer.put(small.pixels, nullptr, &error) || !wait_all(first, 10000)) return fail("first frame");
	if (!writer.wait_shm_released(10000)) return fail("the first frame's buffer was not released");
	std::deque<Shown> shown(3);
	wp_fifo_v1_set_barrier(f);
	watch(window.surface, &shown[0]);
	if (!big.put(large.pixels, nullptr, &error)) return fail(error);
	watch(window.surface, &shown[1]);
	if (!writer.put(replaced.pixels, nullptr, &error)) return fail(error);
	if (set_between) wp_fifo_v1_set_barrier(f);
	wl_surface_commit(window.surface);
	wp_fifo_v1_set_barrier(f);
	wp_fifo_v1_wait_barrier(f);
	watch(window.surface, &shown[2]);
	if (!writer.put(last.pixels, nullptr, &error)) return fail(error);
	report_frames(shown);
	wp_fifo_v1_destroy(f);
	return 0;
}

int mode_sync_subsurface(const ModeArgs &args) {
	const long k = std::max(2L, args.number(0));
	if (!need(true, false) || conn.subcompositor == nullptr) return 3;
	Window window;
	std::string error;
	if (!window.create(&conn, "pacing sync-subsurface", &error)) return fail(error);
	SurfaceWriter parent(&conn, window.surface, TransportChoice::ShmReused);
	Frame p1 = frame(DRM_FORMAT_XRGB8888, 128, 96, 1), p2 = frame(DRM_FORMAT_XRGB8888, 128, 96, 2);
	std::deque<Shown> first(1);
	watch(window.surface, &first[0]);
	if (!parent.put(p1.pixels, nullptr, &error) || !wait_all(first, 10000)) return fail("parent frame");
	wl_surface *child = wl_compositor_create_surface(conn.compositor);
	wl_subsurface *sub = wl_subcompositor_get_subsurface(conn.subcompositor, child, window.surface);
	wl_subsurface_set_position(sub, 16, 16); // synchronized: the default
	wp_fifo_v1 *f = wp_fifo_manager_v1_get_fifo(conn.fifo_manager, child);
	// Each commit needs a buffer of its own (a cached state keeps its buffer): K buffers.
	std::vector<std::unique_ptr<SurfaceWriter>> writers;
	std::vector<Frame> frames;
	for (long i = 0; i < k; i++)
		frames.push_back(frame(DRM_FORMAT_XRGB8888, 32, 32, static_cast<uint32_t>(10 + i)));
	std::deque<Shown> children(static_cast<size_t>(k));
	for (long i = 0; i < k; i++) {
		writers.push_back(std::make_unique<SurfaceWriter>(&conn, child, TransportChoice::ShmReused));
		wp_fifo_v1_set_barrier(f);
		wp_fifo_v1_wait_barrier(f);
		watch(child, &children[static_cast<size_t>(i)]);
		if (!writers.back()->put(frames[static_cast<size_t>(i)].pixels, nullptr, &error)) return fail(error);
	}
	if (!conn.roundtrip()) return fail("roundtrip");
	std::deque<Shown> parents(1);
	watch(window.surface, &parents[0]);
	if (!parent.put(p2.pixels, nullptr, &error)) return fail(error);
	bool all = wait_all(children, 10000) && wait_all(parents, 10000);
	for (size_t i = 0; i < children.size(); i++) print_shown("child", i, children[i]);
	print_shown("parent", 0, parents[0]);
	printf("%s\n", all ? "done" : "timeout");
	return 0;
}

int mode_hidden(const ModeArgs &args) {
	const long frames = args.number(0);
	if (!need(true, false)) return 3;
	// wl_surface.enter and leave name outputs the client bound: bind them all.
	static const wl_registry_listener kBindOutputs = {
		.global =
			[](void *, wl_registry *registry, uint32_t name, const char *interface, uint32_t) {
				if (strcmp(interface, wl_output_interface.name) == 0) {
					wl_registry_bind(registry, name, &wl_output_interface, 1);
				}
			},
		.global_remove = [](void *, wl_registry *, uint32_t) {},
	};
	wl_registry_add_listener(wl_display_get_registry(conn.display), &kBindOutputs, nullptr);
	if (!conn.roundtrip()) return fail("roundtrip");
	Window below, above;
	std::string error;
	if (!below.create(&conn, "pacing hidden", &error)) return fail(error);
	wp_fifo_v1 *f = wp_fifo_manager_v1_get_fifo(conn.fifo_manager, below.surface);
	SurfaceWriter writer(&conn, below.surface, TransportChoice::ShmReused);
	Frame a = frame(DRM_FORMAT_XRGB8888, 64, 48, 1), b = frame(DRM_FORMAT_XRGB8888, 64, 48, 2);
	// The outputs the compositor says the window is on (wl_surface.enter and leave).
	static int outputs = 0;
	static const wl_surface_listener kOutputs = {
		.enter = [](void *, wl_surface *, wl_output *) { outputs++; },
		.leave = [](void *, wl_surface *, wl_output *) { outputs--; },
		.preferred_buffer_scale = nullptr,
		.preferred_buffer_transform = nullptr,
	};
	wl_surface_add_listener(below.surface, &kOutputs, nullptr);
	std::deque<Shown> first(1);
	wp_fifo_v1_set_barrier(f);
	watch(below.surface, &first[0]);
	if (!writer.put(a.pixels, nullptr, &error) || !wait_all(first, 10000)) return fail("first frame");
	// An opaque window over the whole of it: the compositor's scene stops showing it.
	if (!above.create(&conn, "pacing cover", &error)) return fail(error);
	SurfaceWriter cover(&conn, above.surface, TransportChoice::ShmReused);
	Frame big = frame(DRM_FORMAT_XRGB8888, 512, 384, 3);
	std::deque<Shown> covered(1);
	watch(above.surface, &covered[0]);
	if (!cover.put(big.pixels, nullptr, &error) || !wait_all(covered, 10000)) return fail("cover");
	linger(100); // the scene's leave events, a frame or two
	printf("covered: on %d output(s)\n", outputs);
	const uint64_t start = now_ns();
	for (long i = 0; i < frames; i++) {
		wp_fifo_v1_set_barrier(f);
		wp_fifo_v1_wait_barrier(f);
		if (!writer.put((i % 2 ? a : b).pixels, nullptr, &error)) return fail(error);
	}
	// Each put() waited for a buffer an applied commit let go: all but the last two applied.
	if (!conn.roundtrip()) return fail("roundtrip");
	printf("hidden %ld frames in %llu us\n", frames, static_cast<unsigned long long>((now_ns() - start) / 1000));
	return 0;
}

int mode_timed(const ModeArgs &args) {
	const long frames = args.number(0);
	if (!need(false, true)) return 3;
	Window window;
	std::string error;
	if (!window.create(&conn, "pacing timed", &error)) return fail(error);
	wp_commit_timer_v1 *timer = wp_commit_timing_manager_v1_get_timer(conn.commit_timing, window.surface);
	SurfaceWriter writer(&conn, window.surface, TransportChoice::ShmReused);
	Frame a = frame(DRM_FORMAT_XRGB8888, 64, 48, 1), b = frame(DRM_FORMAT_XRGB8888, 64, 48, 2);
	// The refresh: as the compositor reports it, else the least of a few intervals between
	// frames made as fast as they show.
	uint64_t refresh = 0, last = 0, least = UINT64_MAX;
	for (int i = 0; i < 6; i++) {
		std::deque<Shown> s(1);
		watch(window.surface, &s[0]);
		if (!writer.put((i % 2 ? a : b).pixels, nullptr, &error) || !wait_all(s, 10000)) return fail("warm-up");
		if (last != 0 && s[0].ns > last) least = std::min(least, s[0].ns - last);
		last = s[0].ns;
		refresh = s[0].refresh;
	}
	if (refresh == 0) refresh = least;
	printf("refresh %llu%s\n", static_cast<unsigned long long>(refresh), refresh == least ? " measured" : "");
	for (long i = 0; i < frames; i++) {
		const uint64_t offset = refresh * static_cast<uint64_t>((i * 37) % 100) / 100;
		const uint64_t target = last + static_cast<uint64_t>(2 + i % 3) * refresh + offset;
		const uint64_t sec = target / 1000000000u;
		wp_commit_timer_v1_set_timestamp(timer, static_cast<uint32_t>(sec >> 32), static_cast<uint32_t>(sec),
			static_cast<uint32_t>(target % 1000000000u));
		std::deque<Shown> s(1);
		watch(window.surface, &s[0]);
		if (!writer.put((i % 2 ? a : b).pixels, nullptr, &error) || !wait_all(s, 10000))
			return fail("timed frame");
		printf("timed %ld target %llu present %llu refresh %llu\n", i, static_cast<unsigned long long>(target),
			static_cast<unsigned long long>(s[0].ns), static_cast<unsigned long long>(refresh));
		if (s[0].presented) last = s[0].ns;
	}
	printf("done\n");
	return 0;
}

int mode_far_target(const ModeArgs &) {
	if (!need(false, true)) return 3;
	Window window, other;
	std::string error;
	if (!window.create(&conn, "pacing far", &error) || !other.create(&conn, "pacing other", &error)) {
		return fail(error);
	}
	wp_commit_timer_v1 *timer = wp_commit_timing_manager_v1_get_timer(conn.commit_timing, window.surface);
	SurfaceWriter writer(&conn, window.surface, TransportChoice::ShmReused);
	SurfaceWriter other_writer(&conn, other.surface, TransportChoice::ShmReused);
	Frame a = frame(DRM_FORMAT_XRGB8888, 64, 48, 1), b = frame(DRM_FORMAT_XRGB8888, 64, 48, 2);
	std::deque<Shown> first(1);
	watch(window.surface, &first[0]);
	if (!writer.put(a.pixels, nullptr, &error) || !wait_all(first, 10000)) return fail("first frame");
	const uint64_t target = now_ns() + 60 * 1000000000ull;
	const uint64_t sec = target / 1000000000u;
	wp_commit_timer_v1_set_timestamp(timer, static_cast<uint32_t>(sec >> 32), static_cast<uint32_t>(sec),
		static_cast<uint32_t>(target % 1000000000u));
	std::deque<Shown> far(1);
	watch(window.surface, &far[0]);
	if (!writer.put(b.pixels, nullptr, &error)) return fail(error);
	// Another surface of the same client is not held behind it (smaller: both stay visible
	// where windows are stacked at one place).
	Frame c = frame(DRM_FORMAT_XRGB8888, 32, 24, 3), d = frame(DRM_FORMAT_XRGB8888, 32, 24, 4);
	std::deque<Shown> others(3);
	for (size_t i = 0; i < others.size(); i++) {
		std::deque<Shown> one(1);
		watch(other.surface, &one[0]);
		if (!other_writer.put((i % 2 ? c : d).pixels, nullptr, &error) || !wait_all(one, 10000)) {
			return fail("other window");
		}
		others[i] = one[0];
	}
	bool all_others = std::all_of(others.begin(), others.end(), [](const Shown &s) { return s.presented; });
	printf("other %s\n", all_others ? "presented" : "not presented");
	linger(50);
	printf("%s\n", far[0].done ? "not held" : "held");
	// More commits than the ledger lets wait behind a held one: it goes.
	std::vector<std::unique_ptr<SurfaceWriter>> more;
	std::deque<Shown> after(6);
	for (size_t i = 0; i < after.size(); i++) {
		more.push_back(std::make_unique<SurfaceWriter>(&conn, window.surface, TransportChoice::ShmReused));
		watch(window.surface, &after[i]);
		if (!more.back()->put((i % 2 ? a : b).pixels, nullptr, &error)) return fail(error);
	}
	const uint64_t start = now_ns();
	bool done = wait_all(after, 10000) && wait_all(far, 1000);
	printf("released %s in %llu ms, last %s\n", done ? "all" : "not all",
		static_cast<unsigned long long>((now_ns() - start) / 1000000u),
		after.back().presented ? "presented" : "not presented");
	return 0;
}

// ---- protocol errors --------------------------------------------------------------------------

int report() { return test::report(conn); }

void timestamp(wp_commit_timer_v1 *timer, uint64_t sec, uint32_t nsec) {
	wp_commit_timer_v1_set_timestamp(timer, static_cast<uint32_t>(sec >> 32), static_cast<uint32_t>(sec), nsec);
}

int mode_error_already_exists(const ModeArgs &) {
	if (!need(true, false)) return 3;
	wl_surface *surface = wl_compositor_create_surface(conn.compositor);
	wp_fifo_manager_v1_get_fifo(conn.fifo_manager, surface);
	wp_fifo_manager_v1_get_fifo(conn.fifo_manager, surface);
	return report();
}

int mode_error_commit_timer_exists(const ModeArgs &) {
	if (!need(false, true)) return 3;
	wl_surface *surface = wl_compositor_create_surface(conn.compositor);
	wp_commit_timing_manager_v1_get_timer(conn.commit_timing, surface);
	wp_commit_timing_manager_v1_get_timer(conn.commit_timing, surface);
	return report();
}

int mode_error_invalid_timestamp(const ModeArgs &) {
	if (!need(false, true)) return 3;
	wl_surface *surface = wl_compositor_create_surface(conn.compositor);
	timestamp(wp_commit_timing_manager_v1_get_timer(conn.commit_timing, surface), 1, 1000000000u);
	return report();
}

int mode_error_timestamp_exists(const ModeArgs &) {
	if (!need(false, true)) return 3;
	wl_surface *surface = wl_compositor_create_surface(conn.compositor);
	wp_commit_timer_v1 *timer = wp_commit_timing_manager_v1_get_timer(conn.commit_timing, surface);
	timestamp(timer, 1, 0);
	wl_surface_commit(surface); // a commit takes it: another for the next one is fine
	timestamp(timer, 2, 0);
	if (!conn.roundtrip()) return report();
	timestamp(timer, 3, 0);
	return report();
}

int mode_error_fifo_surface_destroyed(const ModeArgs &) {
	if (!need(true, false)) return 3;
	wl_surface *surface = wl_compositor_create_surface(conn.compositor);
	wp_fifo_v1 *f = wp_fifo_manager_v1_get_fifo(conn.fifo_manager, surface);
	wp_fifo_v1_set_barrier(f);
	wl_surface_destroy(surface);
	if (!conn.roundtrip()) return report();
	wp_fifo_v1_wait_barrier(f);
	return report();
}

int mode_error_timer_surface_destroyed(const ModeArgs &) {
	if (!need(false, true)) return 3;
	wl_surface *surface = wl_compositor_create_surface(conn.compositor);
	wp_commit_timer_v1 *timer = wp_commit_timing_manager_v1_get_timer(conn.commit_timing, surface);
	wl_surface_destroy(surface);
	if (!conn.roundtrip()) return report();
	wp_commit_timer_v1_destroy(timer); // a destroy is fine; a timestamp is not (a new object)
	wl_surface *again = wl_compositor_create_surface(conn.compositor);
	timer = wp_commit_timing_manager_v1_get_timer(conn.commit_timing, again);
	wl_surface_destroy(again);
	if (!conn.roundtrip()) return report();
	timestamp(timer, 1, 0);
	return report();
}

const ModeTable kModes = {
	{"fifo", mode_fifo},
	{"fifo-held", mode_fifo_held},
	{"fifo-behind", mode_fifo_behind},
	{"sync-subsurface", mode_sync_subsurface},
	{"hidden", mode_hidden},
	{"timed", mode_timed},
	{"far-target", mode_far_target},
	{"error-already-exists", mode_error_already_exists},
	{"error-commit-timer-exists", mode_error_commit_timer_exists},
	{"error-invalid-timestamp", mode_error_invalid_timestamp},
	{"error-timestamp-exists", mode_error_timestamp_exists},
	{"error-fifo-surface-destroyed", mode_error_fifo_surface_destroyed},
	{"error-timer-surface-destroyed", mode_error_timer_surface_destroyed},
};

bool connect(const std::string &, const ModeArgs &, std::string *error) { return conn.connect(error); }

} // namespace

int main(int argc, char *argv[]) {
	setvbuf(stdout, nullptr, _IOLBF, 0);
	return test::run_mode(argc, argv, kModes, connect);
}
