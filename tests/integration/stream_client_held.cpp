// pixelport-stream-client's modes: commits held for their bytes while the surface's role or mapping, or
// their stream, changes behind them.
#include <drm_fourcc.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "client_verdict.hpp"
#include "pattern.hpp"
#include "stream_client.hpp"
#include "wait_until.hpp"

namespace pixelport::stream_client {

using test::xrgb_frame;

int mode_role_after_held_commit(const ModeArgs &args) {
	int p[2];
	if (pipe(p) < 0) return 3;
	pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, p[0]);
	close(p[0]);
	wl_buffer *b;
	ShmPool pool;
	std::string e;
	if (args.is(0, "shm")) {
		if (!pool.create(&conn, 1024, &e)) return 3;
		b = wl_shm_pool_create_buffer(pool.pool, 0, 16, 16, 64, WL_SHM_FORMAT_XRGB8888);
	} else {
		b = pp_stream_v1_create_buffer(s, 16, 16, DRM_FORMAT_XRGB8888);
		pp_stream_v1_write(s, b, 0, 0, 16, 16, 1024); // no byte sent yet
	}
	wl_surface *surface = wl_compositor_create_surface(conn.compositor);
	wl_surface_attach(surface, b, 0, 0);
	wl_surface_commit(surface);
	wl_surface_attach(surface, b, 0, 0);
	wl_buffer_destroy(b); // the pending buffer is gone again
	if (!conn.roundtrip()) return report();
	// The role now: its initial commit carries no buffer, as xdg-shell requires.
	Window w;
	w.conn = &conn;
	w.surface = surface;
	w.xsurface = xdg_wm_base_get_xdg_surface(conn.wm_base, surface);
	static const xdg_surface_listener listener = {
		.configure =
			[](void *data, xdg_surface *xs, uint32_t serial) {
				xdg_surface_ack_configure(xs, serial);
				static_cast<Window *>(data)->configured = true;
			},
	};
	xdg_surface_add_listener(w.xsurface, &listener, &w);
	w.toplevel = xdg_surface_get_toplevel(w.xsurface);
	wl_surface_commit(surface);
	if (!conn.roundtrip()) return report();
	if (!args.is(0, "shm")) {
		std::vector<uint8_t> zeros(1024);
		send_bytes(p[1], zeros.data(), zeros.size());
	}
	if (!conn.roundtrip() || !w.configured) return report();
	auto px = xrgb_frame(32, 32, 7);
	wl_buffer *b2 = pp_stream_v1_create_buffer(s, 32, 32, DRM_FORMAT_XRGB8888);
	pp_stream_v1_write(s, b2, 0, 0, 32, 32, static_cast<uint32_t>(px.size()));
	wl_display_flush(conn.display);
	send_bytes(p[1], px.data(), px.size());
	if (!show(w, b2, 32, 32)) return report();
	report();
	hold();
	return 0;
}

int mode_unmap_behind_held_commit(const ModeArgs &args) {
	// A configured toplevel; a commit the plugin holds (stream bytes not sent, or a
	// converted NV12 buffer over the hold threshold), then without waiting: a null
	// attach (unmaps, so the next buffer needs a new configure), a buffer, a null attach.
	Window w;
	std::string e;
	if (!w.create(&conn, "unmap-behind-held-commit", &e)) return 3;
	HeldCommit held;
	if (!held.commit(w.surface, args.at(0), &e)) return 3;
	wl_buffer *small = wl_shm_pool_create_buffer(held.pool.pool, 0, 16, 16, 64, WL_SHM_FORMAT_XRGB8888);
	wl_surface_attach(w.surface, nullptr, 0, 0);
	wl_surface_commit(w.surface);
	wl_surface_attach(w.surface, small, 0, 0);
	wl_surface_commit(w.surface); // stock wlroots: xdg_surface error 3, not configured
	wl_surface_attach(w.surface, nullptr, 0, 0);
	wl_surface_commit(w.surface);
	if (!conn.roundtrip()) return report();
	held.send_announced();
	return report();
}

int mode_role_destroyed_behind_held_commit(const ModeArgs &args) {
	// A configured toplevel; a commit the plugin holds, as in unmap-behind-held-commit;
	// then the role object goes and a new one comes: "toplevel" makes a new toplevel
	// of the same xdg_surface and commits it (a null attach), "xdg-surface" destroys
	// the xdg_surface too and makes a new one (the surface had a buffer: stock wlroots
	// answers xdg_wm_base error 3).
	bool whole = args.is(1, "xdg-surface");
	Window w;
	std::string e;
	if (!w.create(&conn, "role-destroyed-behind-held-commit", &e)) return 3;
	HeldCommit held;
	if (!held.commit(w.surface, args.at(0), &e)) return 3;
	xdg_toplevel_destroy(w.toplevel);
	w.toplevel = nullptr;
	if (whole) {
		xdg_surface_destroy(w.xsurface);
		w.xsurface = xdg_wm_base_get_xdg_surface(conn.wm_base, w.surface);
	}
	w.toplevel = xdg_surface_get_toplevel(w.xsurface);
	w.configured = false;
	wl_surface_attach(w.surface, nullptr, 0, 0);
	wl_surface_commit(w.surface); // a new role's initial commit
	if (!conn.roundtrip()) return report();
	held.send_announced();
	// The new toplevel's initial commit asks for its first configure.
	while (!whole && !w.configured && conn.dispatch_timeout(2000)) {
	}
	if (w.configured) printf("configured\n");
	return report();
}

int mode_orphan_behind_held_commit(const ModeArgs &args) {
	// A configured toplevel; a 16x16 stream commit whose 1024 bytes are not sent; the stream
	// destroyed, then SENT of the bytes (of seed 5's frame) and our end of the pipe closed:
	// the commit waits no more and applies with what arrived. Then a 32x32 wl_shm frame
	// (seed 7) must show too.
	const auto sent = static_cast<size_t>(args.number(0));
	Window w;
	std::string e;
	if (!w.create(&conn, "orphan-behind-held-commit", &e)) return 3;
	HeldCommit commit;
	CommitWaiter held;
	if (!commit.commit(w.surface, "stream", &e, &held)) return 3;
	pp_stream_v1_destroy(commit.stream);
	if (!conn.roundtrip()) return report();
	printf("%s\n", held.done ? "applied before its bytes" : "held");
	auto px = xrgb_frame(16, 16, 5);
	send_bytes(commit.pipe_write, px.data(), std::min(sent, px.size()));
	close(commit.pipe_write);
	printf("held commit %s\n", held.wait(&conn, 10000) && held.presented ? "presented" : "not presented");
	ShmPool pool;
	if (!pool.create(&conn, 32 * 32 * 4, &e)) return 3;
	auto next = xrgb_frame(32, 32, 7);
	memcpy(pool.data, next.data(), next.size());
	wl_buffer *b2 = wl_shm_pool_create_buffer(pool.pool, 0, 32, 32, 128, WL_SHM_FORMAT_XRGB8888);
	printf("next %s\n", show(w, b2, 32, 32) ? "presented" : "not presented");
	report();
	hold();
	return 0;
}

} // namespace pixelport::stream_client
