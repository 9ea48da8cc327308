// pixelport-conversion-attack: synchronized and desynchronized children converting under their parent (sync-children, sync-children-exit, nested-children, desync-children).
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

} // namespace pixelport::conversion_attack
