// pixelport-conversion-attack: what a hostile client can make the compositor convert and keep
// (converted images that multiply memory, and a conversion storm that would freeze everyone).
// Reports like the other test clients ("ok", "error CODE INTERFACE"), then holds.
// Usage: pixelport-conversion-attack MODE N WIDTH HEIGHT
//   share-burst       one NV12 buffer attached to N subsurfaces in one burst; reports once the
//                     last one is shown
//   share-sequential  the same, waiting for the buffer's release between surfaces
//   storm             N full-damage commits of one NV12 buffer in one burst, the last one with
//                     presentation feedback: prints "presented" once it is shown (30 s at most)
//   wide-stride       an NV12 buffer whose rows are 64 KiB apart in a sparse pool (never
//                     written: all zero), committed N+1 times, each once the last was shown,
//                     its pages punched out of the pool in between (every row a fresh page to
//                     fault in); prints "presented K" (commits shown)
//   sync-wide-stride  wide-stride's buffer (rows 4 KiB apart) on a synchronized subsurface:
//                     each commit of it applies with its parent's next commit, which follows;
//                     "presented K" counts the subsurface's commits shown
//   viewport-damage   an NV12 buffer shown through a 64x64 wp_viewport destination, committed
//                     once in full, then N times with the whole 64x64 *surface* damaged (the
//                     whole buffer, once through the viewport), each once the last was shown;
//                     prints "presented K"
//   sync-children     one toplevel (a 64x64 XRGB8888 buffer) with N synchronized subsurfaces,
//                     each with two buffers: WIDTHxHEIGHT of bytes 0x60 and 8 px smaller of 0xa0,
//                     8 rounds: every child commits its buffer of the round (the large one in
//                     even rounds), then the parent commits, and the next round starts once
//                     the last (topmost) child's commit is shown; prints "presented K" (rounds
//                     shown)
//   sync-children-exit the same rounds without waiting, then exits at once
//   nested-children   sync-children with the N children in groups of 4 under N/4 synchronized
//                     middle subsurfaces (64x64 XRGB8888), themselves on the toplevel
//   flood             two NV12 buffers committed on a toplevel in turn, each as soon as it is
//                     released (converted), N commits; prints "flooding" once the first
//                     was converted and the next ones are under way
//   small-frames      N NV12 commits on a toplevel, each once the last was presented, sizes
//                     alternating (WIDTHxHEIGHT, 8 px smaller: each a worker's job); prints
//                     "presented K p50_us=N worst_us=N" (commit to presentation) and exits
//   same-frames       small-frames with both buffers WIDTHxHEIGHT
//   beside-video      a WIDTHxHEIGHT video on a toplevel (two NV12 buffers, each committed again
//                     as soon as it is released) and, on a second toplevel of the same client,
//                     N 256x256 frames, each once the last was presented: prints the small
//                     window's "presented K p50_us=N worst_us=N" and exits
//   resize-frames     N NV12 commits on a toplevel, each 8 px smaller than the last (an
//                     interactive resize: every frame a new size), each once the last was
//                     presented; prints "presented K" and exits
//   desync-children   N desynchronized subsurfaces, all committing in one batch per round, the
//                     next round once the last child's commit is shown; same buffers and
//                     rounds as sync-children
//   storm-one         one NV12 buffer committed N times as fast as possible (no wait for its
//                     release or a frame), a flush and a roundtrip every 256 commits
//   storm-two         two NV12 buffers in turn, N commits as fast as possible: each committed
//                     again only once released; when neither is, the last one again
//   storm-sizes       64 NV12 buffers in one pool, WIDTHxHEIGHT, each 8 px smaller than the
//                     last, N commits of them in turn as fast as possible (never written again)
//   storm-behind      storm-two with 1920x1080 buffers and a roundtrip every 16 commits, while
//                     a second toplevel (below it) commits a WIDTHxHEIGHT NV12 frame whenever
//                     its last one is released
//   The storm-* modes end with a last commit (of each toplevel) with presentation feedback,
//   print "presented" once it is shown (60 s at most), then the verdict ("ok"), and exit.
// Children sit at (i % 8, i / 8) (nested: at 0,0, as the middles, each covering its own).
// Without NV12 (stock wlroots) the children's buffers are XRGB8888 of the same sizes: the same
// attack as far as the compositor allows.
#include <drm_fourcc.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client_verdict.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;

extern "C" void __lsan_disable(void) __attribute__((weak));

namespace {

Connection conn;
bool released = false;

constexpr int kRounds = 8;

// A buffer of one uniform byte `value` in a pool of its own (NV12, or XRGB8888 without it).
wl_buffer *uniform_buffer(ShmPool *pool, int w, int h, uint32_t format, uint8_t value, std::string *error) {
	const bool nv12 = format == DRM_FORMAT_NV12;
	const int32_t stride = nv12 ? w : w * 4;
	const size_t size = static_cast<size_t>(stride) * h * (nv12 ? 3 : 2) / 2;
	if (!pool->create(&conn, size, error)) return nullptr;
	memset(pool->data, value, size);
	return wl_shm_pool_create_buffer(
		pool->pool, 0, w, h, stride, nv12 ? DRM_FORMAT_NV12 : static_cast<uint32_t>(WL_SHM_FORMAT_XRGB8888));
}

// sync-children, sync-children-exit, nested-children, desync-children (see the top).
int children_attack(const std::string &mode, int n, int w, int h) {
	const bool sync = mode != "desync-children", nested = mode == "nested-children";
	const bool wait = mode != "sync-children-exit";
	const uint32_t format = conn.has_shm_format(DRM_FORMAT_NV12) ? static_cast<uint32_t>(DRM_FORMAT_NV12)
								     : static_cast<uint32_t>(WL_SHM_FORMAT_XRGB8888);
	std::string error;
	Window window;
	if (conn.subcompositor == nullptr || !window.create(&conn, "attack", &error)) {
		fprintf(stderr, "no window: %s\n", error.c_str());
		return 1;
	}
	std::vector<ShmPool> small_pools(nested ? n / 4 + 1 : 1);
	wl_buffer *small = uniform_buffer(&small_pools[0], 64, 64, WL_SHM_FORMAT_XRGB8888, 0xff, &error);
	if (small == nullptr) {
		fprintf(stderr, "%s\n", error.c_str());
		return 1;
	}
	wl_surface_attach(window.surface, small, 0, 0);
	wl_surface_damage_buffer(window.surface, 0, 0, 64, 64);
	std::vector<wl_surface *> middles;
	for (int m = 0; nested && m < n / 4; m++) {
		wl_buffer *b = uniform_buffer(&small_pools[m + 1], 64, 64, WL_SHM_FORMAT_XRGB8888, 0xff, &error);
		if (b == nullptr) {
			fprintf(stderr, "%s\n", error.c_str());
			return 1;
		}
		wl_surface *middle = wl_compositor_create_surface(conn.compositor);
		wl_subcompositor_get_subsurface(conn.subcompositor, middle, window.surface); // synchronized
		wl_surface_attach(middle, b, 0, 0);
		wl_surface_damage_buffer(middle, 0, 0, 64, 64);
		wl_surface_commit(middle);
		middles.push_back(middle);
	}
	struct Child {
		wl_surface *surface;
		wl_buffer *buffers[2];
	};
	std::vector<ShmPool> pools(2 * static_cast<size_t>(n));
	std::vector<Child> children;
	for (int i = 0; i < n; i++) {
		Child c{};
		c.surface = wl_compositor_create_surface(conn.compositor);
		wl_surface *parent = nested ? middles[static_cast<size_t>(i / 4) % middles.size()] : window.surface;
		wl_subsurface *sub = wl_subcompositor_get_subsurface(conn.subcompositor, c.surface, parent);
		if (!sync) wl_subsurface_set_desync(sub);
		if (!nested) wl_subsurface_set_position(sub, i % 8, i / 8); // nested: each middle covered
		for (int k = 0; k < 2; k++) {
			c.buffers[k] = uniform_buffer(&pools[2 * static_cast<size_t>(i) + k], w - 8 * k, h - 8 * k,
				format, k == 0 ? 0x60 : 0xa0, &error);
			if (c.buffers[k] == nullptr) {
				fprintf(stderr, "%s\n", error.c_str());
				return 1;
			}
		}
		children.push_back(c);
	}
	for (wl_surface *middle : middles) wl_surface_commit(middle); // the children's positions
	wl_surface_commit(window.surface);
	if (!conn.roundtrip()) {
		fprintf(stderr, "set-up failed: %s\n", conn.error_text().c_str());
		return 1;
	}
	int presented = 0;
	for (int r = 0; r < kRounds && wl_display_get_error(conn.display) == 0; r++) {
		CommitWaiter shown;
		for (size_t i = 0; i < children.size(); i++) {
			wl_surface *s = children[i].surface;
			wl_surface_attach(s, children[i].buffers[r % 2], 0, 0);
			wl_surface_damage_buffer(s, 0, 0, w, h);
			if (i + 1 == children.size() && wait) shown.arm(&conn, s); // the topmost child
			wl_surface_commit(s);
		}
		for (wl_surface *middle : middles) wl_surface_commit(middle);
		wl_surface_commit(window.surface);
		if (!wait) {
			wl_display_flush(conn.display);
		} else if (shown.wait(&conn, 60000) && shown.presented) {
			presented++;
		}
	}
	if (!wait) {
		wl_display_flush(conn.display);
		printf("committed\n");
		fflush(stdout);
		_exit(0); // gone with everything in flight
	}
	printf("presented %d\n", presented);
	fflush(stdout);
	test::report(conn);
	test::hold(conn);
	return 0;
}

// resize-frames (see the top): an interactive resize, one new size per frame.
int resize_attack(int n, int w, int h) {
	std::string error;
	Window window;
	ShmPool pool;
	const size_t size = static_cast<size_t>(w) * h * 3 / 2;
	if (!window.create(&conn, "attack", &error) || !pool.create(&conn, size, &error)) {
		fprintf(stderr, "%s\n", error.c_str());
		return 1;
	}
	int presented = 0;
	for (int i = 0; i < n; i++) {
		const int d = 8 * (i % (std::min(w, h) / 16)); // 8 px smaller each frame, then again
		const int fw = w - d, fh = h - d;
		// NV12 at the smaller size, in place: luma rows fw apart, then the chroma rows.
		memset(pool.data, i % 2 ? 0x60 : 0xa0, size);
		wl_buffer *buffer = wl_shm_pool_create_buffer(pool.pool, 0, fw, fh, fw, DRM_FORMAT_NV12);
		CommitWaiter shown;
		wl_surface_attach(window.surface, buffer, 0, 0);
		wl_surface_damage_buffer(window.surface, 0, 0, fw, fh);
		shown.arm(&conn, window.surface);
		wl_surface_commit(window.surface);
		if (!shown.wait(&conn, 30000) || !shown.presented) break;
		wl_buffer_destroy(buffer);
		presented++;
	}
	printf("presented %d\n", presented);
	fflush(stdout);
	return 0;
}

// N commits on `surface`, buffers[i % 2] each once released and once the last commit was
// presented: prints "presented K p50_us=N worst_us=N" (commit to presentation).
int present_frames(wl_surface *surface, wl_buffer *const buffers[2], bool busy[2], int w, int h, int n) {
	std::vector<uint64_t> latencies;
	for (int i = 0; i < n; i++) {
		const int k = i % 2;
		while (busy[k]) {
			if (wl_display_dispatch(conn.display) < 0) return 1;
		}
		CommitWaiter shown;
		busy[k] = true;
		wl_surface_attach(surface, buffers[k], 0, 0);
		wl_surface_damage_buffer(surface, 0, 0, w, h);
		shown.arm(&conn, surface);
		const uint64_t start = now_ns();
		wl_surface_commit(surface);
		if (!shown.wait(&conn, 30000) || !shown.presented) break;
		latencies.push_back(now_ns() - start);
	}
	std::sort(latencies.begin(), latencies.end());
	const uint64_t p50 = latencies.empty() ? 0 : latencies[latencies.size() / 2];
	const uint64_t worst = latencies.empty() ? 0 : latencies.back();
	printf("presented %zu p50_us=%llu worst_us=%llu\n", latencies.size(),
		static_cast<unsigned long long>(p50 / 1000), static_cast<unsigned long long>(worst / 1000));
	fflush(stdout);
	return 0;
}

// flood, small-frames (see the top).
int frames_attack(const std::string &mode, int n, int w, int h) {
	std::string error;
	Window window;
	if (!window.create(&conn, "attack", &error)) {
		fprintf(stderr, "no window: %s\n", error.c_str());
		return 1;
	}
	const bool flood = mode == "flood";
	ShmPool pools[2];
	wl_buffer *buffers[2];
	bool busy[2] = {false, false};
	static const wl_buffer_listener listener = {
		.release = [](void *data, wl_buffer *) { *static_cast<bool *>(data) = false; },
	};
	for (int k = 0; k < 2; k++) {
		// small-frames: every commit a new size, a worker's job; same-frames: one size.
		const int d = mode == "small-frames" ? 8 * k : 0;
		buffers[k] = uniform_buffer(&pools[k], w - d, h - d, DRM_FORMAT_NV12, k == 0 ? 0x60 : 0xa0, &error);
		if (buffers[k] == nullptr) {
			fprintf(stderr, "%s\n", error.c_str());
			return 1;
		}
		wl_buffer_add_listener(buffers[k], &listener, &busy[k]);
	}
	auto commit = [&](int k) {
		busy[k] = true;
		wl_surface_attach(window.surface, buffers[k], 0, 0);
		wl_surface_damage_buffer(window.surface, 0, 0, w, h);
	};
	if (flood) {
		// Each buffer again as soon as it is released (converted): as fast as conversion goes.
		commit(0);
		wl_surface_commit(window.surface);
		for (int i = 1; i < n; i++) {
			const int k = i % 2;
			while (busy[k]) {
				if (wl_display_dispatch(conn.display) < 0) return 1;
			}
			commit(k);
			wl_surface_commit(window.surface);
			wl_display_flush(conn.display);
			if (i == 2) { // the first released: converted, and the next two committed
				printf("flooding\n");
				fflush(stdout);
			}
		}
		test::report(conn);
		test::hold(conn);
		return 0;
	}
	return present_frames(window.surface, buffers, busy, w, h, n);
}

// beside-video (see the top).
int beside_video_attack(int n, int w, int h) {
	std::string error;
	Window video, small;
	if (!video.create(&conn, "video", &error) || !small.create(&conn, "small", &error)) {
		fprintf(stderr, "no window: %s\n", error.c_str());
		return 1;
	}
	const uint32_t format = conn.has_shm_format(DRM_FORMAT_NV12) ? static_cast<uint32_t>(DRM_FORMAT_NV12)
								     : static_cast<uint32_t>(WL_SHM_FORMAT_XRGB8888);
	// The video: each buffer committed again from its release, inside the dispatch that reads it.
	struct Frame {
		wl_surface *surface;
		wl_buffer *buffer;
		int w, h;
	};
	static const wl_buffer_listener again = {
		.release =
			[](void *data, wl_buffer *) {
				auto *f = static_cast<Frame *>(data);
				wl_surface_attach(f->surface, f->buffer, 0, 0);
				wl_surface_damage_buffer(f->surface, 0, 0, f->w, f->h);
				wl_surface_commit(f->surface);
			},
	};
	ShmPool video_pools[2], small_pools[2];
	Frame frames[2];
	for (int k = 0; k < 2; k++) {
		wl_buffer *b = uniform_buffer(&video_pools[k], w, h, format, k == 0 ? 0x50 : 0xb0, &error);
		if (b == nullptr) {
			fprintf(stderr, "%s\n", error.c_str());
			return 1;
		}
		frames[k] = {video.surface, b, w, h};
		wl_buffer_add_listener(b, &again, &frames[k]);
		again.release(&frames[k], b);
	}
	wl_buffer *smalls[2];
	bool busy[2] = {false, false};
	static const wl_buffer_listener released = {
		.release = [](void *data, wl_buffer *) { *static_cast<bool *>(data) = false; },
	};
	for (int k = 0; k < 2; k++) {
		smalls[k] = uniform_buffer(&small_pools[k], 256, 256, format, k == 0 ? 0x40 : 0xc0, &error);
		if (smalls[k] == nullptr) {
			fprintf(stderr, "%s\n", error.c_str());
			return 1;
		}
		wl_buffer_add_listener(smalls[k], &released, &busy[k]);
	}
	return present_frames(small.surface, smalls, busy, 256, 256, n);
}

// storm-one, storm-two, storm-sizes, storm-behind (see the top).
int storm_attack(const std::string &mode, int n, int w, int h) {
	std::string error;
	// The window behind first: the storm's window goes on top of it (the test's output is larger
	// than the storm's frames, so both are shown).
	Window window, behind_window;
	if ((mode == "storm-behind" && !behind_window.create(&conn, "behind", &error)) ||
		!window.create(&conn, "storm", &error)) {
		fprintf(stderr, "no window: %s\n", error.c_str());
		return 1;
	}
	struct Buffer {
		wl_buffer *buffer = nullptr;
		int w = 0, h = 0;
		bool busy = false;
	};
	static const wl_buffer_listener listener = {
		.release = [](void *data, wl_buffer *) { static_cast<Buffer *>(data)->busy = false; },
	};
	const bool behind = mode == "storm-behind";
	const int bw = behind ? 1920 : w, bh = behind ? 1080 : h;
	// Stock wlroots has no NV12: the same storm in XRGB8888 (bench/commit_storm.py compares).
	const bool nv12 = conn.has_shm_format(DRM_FORMAT_NV12);
	const uint32_t format =
		nv12 ? static_cast<uint32_t>(DRM_FORMAT_NV12) : static_cast<uint32_t>(WL_SHM_FORMAT_XRGB8888);
	auto bytes = [&](int bw_, int bh_) { return static_cast<size_t>(bw_) * bh_ * (nv12 ? 3 : 8) / 2; };
	auto stride = [&](int bw_) { return nv12 ? bw_ : bw_ * 4; };
	const int count = mode == "storm-one" ? 1 : mode == "storm-sizes" ? 64 : 2;
	const int roundtrip_every = behind ? 16 : 256;
	std::vector<ShmPool> pools(mode == "storm-sizes" ? 1 : count);
	std::vector<Buffer> buffers(count);
	for (int k = 0; k < count; k++) {
		Buffer &b = buffers[k];
		b.w = mode == "storm-sizes" ? bw - 8 * k : bw, b.h = mode == "storm-sizes" ? bh - 8 * k : bh;
		ShmPool &pool = pools[mode == "storm-sizes" ? 0 : k];
		if (pool.pool == nullptr) {
			const size_t size = bytes(bw, bh);
			if (!pool.create(&conn, size, &error)) {
				fprintf(stderr, "%s\n", error.c_str());
				return 1;
			}
			memset(pool.data, k % 2 ? 0x60 : 0xa0, size);
		}
		b.buffer = wl_shm_pool_create_buffer(pool.pool, 0, b.w, b.h, stride(b.w), format);
		wl_buffer_add_listener(b.buffer, &listener, &b);
	}
	// The frame behind: one 8K NV12 buffer, committed again whenever released.
	ShmPool big_pool;
	Buffer big;
	if (behind) {
		if (!big_pool.create(&conn, bytes(w, h), &error)) {
			fprintf(stderr, "%s\n", error.c_str());
			return 1;
		}
		memset(big_pool.data, 0x80, big_pool.size);
		big.w = w, big.h = h;
		big.buffer = wl_shm_pool_create_buffer(big_pool.pool, 0, w, h, stride(w), format);
		wl_buffer_add_listener(big.buffer, &listener, &big);
	}
	auto commit = [](wl_surface *surface, Buffer &b) {
		b.busy = true;
		wl_surface_attach(surface, b.buffer, 0, 0);
		wl_surface_damage_buffer(surface, 0, 0, b.w, b.h);
	};
	// Reads what has come without waiting: buffer releases.
	auto poll_events = [] {
		wl_display_flush(conn.display);
		while (wl_display_prepare_read(conn.display) != 0) wl_display_dispatch_pending(conn.display);
		pollfd pfd = {wl_display_get_fd(conn.display), POLLIN, 0};
		if (poll(&pfd, 1, 0) == 1) {
			wl_display_read_events(conn.display);
		} else {
			wl_display_cancel_read(conn.display);
		}
		wl_display_dispatch_pending(conn.display);
	};
	int last = 0;
	for (int i = 0; i < n && wl_display_get_error(conn.display) == 0; i++) {
		if (behind && !big.busy) {
			commit(behind_window.surface, big);
			wl_surface_commit(behind_window.surface);
		}
		int k = (last + 1) % count;
		if (mode == "storm-two" || behind) {
			if (buffers[k].busy) k = last; // neither released: the last one again
		}
		commit(window.surface, buffers[k]);
		wl_surface_commit(window.surface);
		last = k;
		if (mode != "storm-one")
			poll_events(); // releases (and what a client that never reads would be disconnected for)
		if ((i + 1) % roundtrip_every == 0) {
			wl_display_flush(conn.display);
			conn.roundtrip();
		}
	}
	CommitWaiter shown, shown_behind;
	commit(window.surface, buffers[(last + 1) % count]);
	shown.arm(&conn, window.surface);
	wl_surface_commit(window.surface);
	if (behind) {
		commit(behind_window.surface, big);
		shown_behind.arm(&conn, behind_window.surface);
		wl_surface_commit(behind_window.surface);
	}
	const bool storm_shown = shown.wait(&conn, 60000) && shown.presented;
	const bool behind_shown = !behind || (shown_behind.wait(&conn, 60000) && shown_behind.presented);
	if (storm_shown && behind_shown) {
		printf("presented\n");
	} else {
		printf("not presented (last storm commit: %s%s)\n",
			!shown.done               ? "no feedback"
				: shown.presented ? "presented"
						  : "discarded",
			!behind                          ? ""
				: !shown_behind.done     ? ", behind: no feedback"
				: shown_behind.presented ? ", behind: presented"
							 : ", behind: discarded");
	}
	fflush(stdout);
	test::report(conn);
	return 0;
}

} // namespace

int main(int argc, char *argv[]) {
	if (__lsan_disable != nullptr) __lsan_disable();
	if (argc < 5) {
		fprintf(stderr,
			"usage: %s share-burst|share-sequential|storm|wide-stride|sync-wide-stride|viewport-damage|"
			"sync-children|sync-children-exit|nested-children|desync-children|flood|small-frames|beside-"
			"video|storm-one|"
			"storm-two|"
			"storm-sizes|storm-behind N WIDTH "
			"HEIGHT\n",
			argv[0]);
		return 2;
	}
	std::string mode = argv[1];
	int n = atoi(argv[2]), w = atoi(argv[3]), h = atoi(argv[4]);
	std::string error;
	if (n <= 0 || w <= 0 || h <= 0 || w % 2 || h % 2 || !conn.connect(&error)) {
		fprintf(stderr, "bad arguments or no compositor: %s\n", error.c_str());
		return 2;
	}
	if (mode.ends_with("-children") || mode == "sync-children-exit") return children_attack(mode, n, w, h);
	if (mode == "flood" || mode == "small-frames" || mode == "same-frames") return frames_attack(mode, n, w, h);
	if (mode == "beside-video") return beside_video_attack(n, w, h);
	if (mode == "resize-frames") return resize_attack(n, w, h);
	if (mode.starts_with("storm-")) return storm_attack(mode, n, w, h);
	wl_subcompositor *subcompositor = conn.subcompositor;
	Window window;
	if (subcompositor == nullptr || !window.create(&conn, "attack", &error)) {
		fprintf(stderr, "no window: %s\n", error.c_str());
		return 1;
	}
	// wide-stride and sync-wide-stride: rows a page apart at least, never written (a sparse
	// pool of zeros).
	const bool sync = mode == "sync-wide-stride";
	const bool sparse = mode == "wide-stride" || sync;
	const int32_t stride = sync ? std::max(w, 4096) : sparse ? std::max(w, 65536) : w;
	size_t size = static_cast<size_t>(stride) * h * 3 / 2;
	ShmPool pool;
	if (!pool.create(&conn, size, &error)) {
		fprintf(stderr, "%s\n", error.c_str());
		return 1;
	}
	if (!sparse) memset(pool.data, 0x80, size);
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool.pool, 0, w, h, stride, DRM_FORMAT_NV12);
	static const wl_buffer_listener listener = {.release = [](void *, wl_buffer *) { released = true; }};
	wl_buffer_add_listener(buffer, &listener, nullptr);

	if (mode == "storm") {
		CommitWaiter last;
		for (int i = 0; i < n; i++) {
			wl_surface_attach(window.surface, buffer, 0, 0);
			wl_surface_damage_buffer(window.surface, 0, 0, w, h);
			if (i == n - 1) last.arm(&conn, window.surface);
			wl_surface_commit(window.surface);
		}
		printf("%s\n", last.wait(&conn, 30000) && last.presented ? "presented" : "not presented");
	} else if (mode == "share-burst" || mode == "share-sequential") {
		CommitWaiter last;
		wl_surface_attach(window.surface, buffer, 0, 0);
		wl_surface_damage_buffer(window.surface, 0, 0, w, h);
		wl_surface_commit(window.surface);
		for (int i = 0; i < n; i++) {
			if (mode == "share-sequential") {
				// Wait until the client may write the buffer again: its next commit is new content.
				for (int t = 0; t < 500 && !released && wl_display_get_error(conn.display) == 0; t++) {
					conn.dispatch_timeout(10);
				}
				released = false;
			}
			wl_surface *surface = wl_compositor_create_surface(conn.compositor);
			wl_subsurface *sub = wl_subcompositor_get_subsurface(subcompositor, surface, window.surface);
			wl_subsurface_set_desync(sub);
			wl_subsurface_set_position(sub, i % 8, i / 8);
			wl_surface_attach(surface, buffer, 0, 0);
			wl_surface_damage_buffer(surface, 0, 0, w, h);
			if (i == n - 1 && mode == "share-burst") last.arm(&conn, surface);
			wl_surface_commit(surface);
			if (mode == "share-sequential") wl_display_flush(conn.display);
		}
		wl_surface_commit(window.surface); // subsurface positions
		// Large commits apply once converted: the verdict comes when the last one is shown.
		if (mode == "share-burst") last.wait(&conn, 30000);
	} else if (mode == "wide-stride" || mode == "sync-wide-stride" || mode == "viewport-damage") {
		wl_surface *target = window.surface;
		ShmPool parent_pool;
		if (sync) {
			// The parent shows a 64x64 buffer under its synchronized child (at 0,0).
			if (!parent_pool.create(&conn, 64 * 64 * 4, &error)) {
				fprintf(stderr, "%s\n", error.c_str());
				return 1;
			}
			memset(parent_pool.data, 0xff, 64 * 64 * 4); // white: the screen shows which is on top
			wl_buffer *parent_buffer =
				wl_shm_pool_create_buffer(parent_pool.pool, 0, 64, 64, 256, WL_SHM_FORMAT_XRGB8888);
			target = wl_compositor_create_surface(conn.compositor);
			wl_subcompositor_get_subsurface(subcompositor, target, window.surface); // synchronized
			wl_surface_attach(window.surface, parent_buffer, 0, 0);
			wl_surface_damage_buffer(window.surface, 0, 0, 64, 64);
		}
		wp_viewport *viewport = nullptr;
		if (mode == "viewport-damage") {
			if (conn.viewporter == nullptr) {
				fprintf(stderr, "no wp_viewporter\n");
				return 1;
			}
			viewport = wp_viewporter_get_viewport(conn.viewporter, window.surface);
			wp_viewport_set_destination(viewport, 64, 64);
		}
		int presented = 0;
		for (int i = 0; i <= n && wl_display_get_error(conn.display) == 0; i++) {
			wl_surface_attach(target, buffer, 0, 0);
			if (i == 0) {
				wl_surface_damage_buffer(target, 0, 0, w, h);
			} else if (viewport != nullptr) {
				wl_surface_damage(target, 0, 0, 64, 64);
			} else {
				// The last commit was shown (converted): its pages go back to the kernel, so each
				// row of this one is a page to allocate and zero when the compositor reads it.
				if (fallocate(pool.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
					    static_cast<off_t>(size)) != 0) {
					perror("fallocate");
					return 1;
				}
				wl_surface_damage_buffer(target, 0, 0, w, h);
			}
			CommitWaiter shown;
			shown.arm(&conn, target);
			if (target != window.surface) wl_surface_commit(target); // cached until the parent's commit
			wl_surface_commit(window.surface);
			if (shown.wait(&conn, 30000) && shown.presented) presented++;
		}
		printf("presented %d\n", presented);
		fflush(stdout);
		// Everything stays as it is while the client holds: the test takes a screenshot.
	} else {
		fprintf(stderr, "unknown mode %s\n", mode.c_str());
		return 2;
	}
	test::report(conn);
	test::hold(conn);
	return 0;
}
