// pixelport-conversion-attack: frames presented one after another: a resize, a flood of the workers, small frames beside them, a video beside a small window.
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
	// Stock wlroots has no NV12: the same frames in XRGB8888.
	const uint32_t format = conn.has_shm_format(DRM_FORMAT_NV12) ? static_cast<uint32_t>(DRM_FORMAT_NV12)
								     : static_cast<uint32_t>(WL_SHM_FORMAT_XRGB8888);
	for (int k = 0; k < 2; k++) {
		// small-frames: every commit a new size, a worker's job; same-frames: one size.
		const int d = mode == "small-frames" ? 8 * k : 0;
		buffers[k] = uniform_buffer(&pools[k], w - d, h - d, format, k == 0 ? 0x60 : 0xa0, &error);
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

} // namespace pixelport::conversion_attack
