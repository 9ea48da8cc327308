// pixelport-conversion-attack: one buffer committed the mode's way: shared by many surfaces, stormed, rows a page apart, damaged through a viewport.
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

namespace {

bool released = false; // the buffer's wl_buffer.release came

} // namespace

// share-burst, share-sequential, storm, wide-stride, sync-wide-stride, viewport-damage (see
// the top): one NV12 buffer, committed in the mode's way.
int single_buffer_attack(const std::string &mode, int n, int w, int h) {
	std::string error;
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

} // namespace pixelport::conversion_attack
