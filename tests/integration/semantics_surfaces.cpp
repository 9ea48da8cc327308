// pixelport-semantics-client: buffers on wl_shm or a stream, surfaces and subsurfaces, and waiting for their frames.
#include <drm_fourcc.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "reference.hpp"
#include "wayland_client.hpp"

#include "semantics_client.hpp"

namespace pixelport::semantics {

Connection conn;

bool Buffer::create(bool on_shm, uint32_t fmt, int width, int height, uint32_t rgb) {
	shm = on_shm, format = fmt, w = width, h = height;
	std::vector<uint8_t> bytes;
	if (!solid(format, w, h, rgb, &bytes, &stride)) return false;
	static const wl_buffer_listener listener = {
		.release = [](void *data, wl_buffer *) { static_cast<Buffer *>(data)->released = true; },
	};
	std::string error;
	if (shm) {
		if (!pool.create(&conn, bytes.size(), &error)) return false;
		memcpy(pool.data, bytes.data(), bytes.size());
		buffer =
			wl_shm_pool_create_buffer(pool.pool, 0, w, h, static_cast<int32_t>(stride), drm_to_shm(format));
	} else {
		int fds[2];
		if (conn.stream_manager == nullptr || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
			return false;
		stream = pp_stream_manager_v1_create_stream(conn.stream_manager, fds[0]);
		close(fds[0]);
		data_fd = fds[1];
		buffer = pp_stream_v1_create_buffer(stream, w, h, format);
		if (!fill(rgb)) return false;
	}
	wl_buffer_add_listener(buffer, &listener, this);
	return buffer != nullptr;
}
bool Buffer::fill(uint32_t rgb) {
	std::vector<uint8_t> bytes;
	size_t s = 0;
	solid(format, w, h, rgb, &bytes, &s);
	if (shm) {
		memcpy(pool.data, bytes.data(), bytes.size());
		return true;
	}
	std::vector<uint8_t> packed = stream_packing(format, w, h, bytes, s);
	pp_stream_v1_write(stream, buffer, 0, 0, w, h, static_cast<uint32_t>(packed.size()));
	wl_display_flush(conn.display);
	const uint8_t *p = packed.data();
	size_t n = packed.size();
	while (n > 0) {
		ssize_t k = write(data_fd, p, n);
		if (k <= 0) return false;
		p += k, n -= static_cast<size_t>(k);
	}
	return true;
}
void Buffer::destroy() {
	if (buffer) wl_buffer_destroy(buffer);
	buffer = nullptr;
}
Buffer::~Buffer() {
	destroy();
	if (stream) pp_stream_v1_destroy(stream);
	if (data_fd >= 0) close(data_fd);
}

void attach(Surface &s, Buffer &b) {
	wl_surface_attach(s.surface, b.buffer, 0, 0);
	wl_surface_damage_buffer(s.surface, 0, 0, b.w, b.h);
	b.released = false;
}

// Frame callbacks of the commits since the last settle(): the plugin holds a commit until its
// pixels are converted (on a worker), and its frame callback comes once it is drawn.
std::set<wl_callback *> frames_pending;

void ask_frame(Surface &s) {
	static const wl_callback_listener listener = {
		.done =
			[](void *, wl_callback *cb, uint32_t) {
				frames_pending.erase(cb);
				wl_callback_destroy(cb);
			},
	};
	wl_callback *cb = wl_surface_frame(s.surface);
	wl_callback_add_listener(cb, &listener, nullptr);
	frames_pending.insert(cb);
}

void commit(Surface &s) {
	ask_frame(s);
	wl_surface_commit(s.surface);
}

// A commit that changes nothing but asks for its area to be drawn again.
void damage_only(Surface &s) {
	wl_surface_damage_buffer(s.surface, 0, 0, kBlock, kBlock);
	commit(s);
}

Surface child(Surface &parent, int index, bool sync) {
	Surface c;
	c.surface = wl_compositor_create_surface(conn.compositor);
	c.sub = wl_subcompositor_get_subsurface(conn.subcompositor, c.surface, parent.surface);
	wl_subsurface_set_position(c.sub, index * kBlock, 0);
	if (!sync) wl_subsurface_set_desync(c.sub);
	return c;
}

bool settle() {
	// Two roundtrips: requests applied, and any idle work after that dispatch done. Then the
	// frames of the commits since the last settle, for at most 500 ms: a cached commit of a
	// synchronized child, or one never shown, has none until its parent commits.
	if (!conn.roundtrip() || !conn.roundtrip()) return false;
	for (int i = 0; i < 50 && !frames_pending.empty(); i++) conn.dispatch_timeout(10);
	for (wl_callback *cb : frames_pending) wl_callback_destroy(cb);
	frames_pending.clear();
	return wl_display_get_error(conn.display) == 0;
}

} // namespace pixelport::semantics
