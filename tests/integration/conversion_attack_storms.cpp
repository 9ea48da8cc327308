// pixelport-conversion-attack: commits as fast as a client can send them (storm-one, storm-two, storm-sizes, storm-behind).
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

#include "conversion_attack.hpp"

namespace pixelport::conversion_attack {

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

} // namespace pixelport::conversion_attack
