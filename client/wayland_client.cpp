#include "wayland_client.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

#include "pixelport/core/format.hpp"
#include "pixelport/timing/records.hpp"

namespace pixelport::client {

static void registry_global(void *data, wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
	auto *c = static_cast<Connection *>(data);
	if (strcmp(interface, wl_compositor_interface.name) == 0) {
		c->compositor = static_cast<wl_compositor *>(
			wl_registry_bind(registry, name, &wl_compositor_interface, std::min(version, 4u)));
	} else if (strcmp(interface, wl_subcompositor_interface.name) == 0) {
		c->subcompositor = static_cast<wl_subcompositor *>(
			wl_registry_bind(registry, name, &wl_subcompositor_interface, 1));
	} else if (strcmp(interface, wl_shm_interface.name) == 0) {
		c->shm = static_cast<wl_shm *>(wl_registry_bind(registry, name, &wl_shm_interface, 1));
		static const wl_shm_listener shm_listener = {
			.format =
				[](void *data, wl_shm *, uint32_t format) {
					static_cast<Connection *>(data)->shm_formats.push_back(format);
				},
		};
		wl_shm_add_listener(c->shm, &shm_listener, c);
	} else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
		c->wm_base = static_cast<xdg_wm_base *>(wl_registry_bind(registry, name, &xdg_wm_base_interface, 1));
		static const xdg_wm_base_listener wm_listener = {
			.ping = [](void *, xdg_wm_base *base, uint32_t serial) { xdg_wm_base_pong(base, serial); },
		};
		xdg_wm_base_add_listener(c->wm_base, &wm_listener, c);
	} else if (strcmp(interface, pp_stream_manager_v1_interface.name) == 0) {
		c->stream_manager = static_cast<pp_stream_manager_v1 *>(
			wl_registry_bind(registry, name, &pp_stream_manager_v1_interface, 1));
		static const pp_stream_manager_v1_listener listener = {
			.format =
				[](void *data, pp_stream_manager_v1 *, uint32_t format) {
					static_cast<Connection *>(data)->stream_formats.push_back(format);
				},
			.size_hint =
				[](void *data, pp_stream_manager_v1 *, uint32_t bytes) {
					static_cast<Connection *>(data)->stream_size_hint = bytes;
				},
			.limits =
				[](void *data, pp_stream_manager_v1 *, uint32_t max_buffer, uint32_t max_buffers,
					uint32_t max_inflight) {
					auto *conn = static_cast<Connection *>(data);
					conn->stream_max_buffer_bytes = max_buffer;
					conn->stream_max_buffers = max_buffers;
					conn->stream_max_inflight_bytes = max_inflight;
				},
		};
		pp_stream_manager_v1_add_listener(c->stream_manager, &listener, c);
	} else if (strcmp(interface, wp_color_representation_manager_v1_interface.name) == 0) {
		c->color_representation = static_cast<wp_color_representation_manager_v1 *>(
			wl_registry_bind(registry, name, &wp_color_representation_manager_v1_interface, 1));
		static const wp_color_representation_manager_v1_listener listener = {
			.supported_alpha_mode =
				[](void *data, wp_color_representation_manager_v1 *, uint32_t mode) {
					static_cast<Connection *>(data)->color_alpha_modes.push_back(mode);
				},
			.supported_coefficients_and_ranges =
				[](void *data, wp_color_representation_manager_v1 *, uint32_t coefficients,
					uint32_t range) {
					static_cast<Connection *>(data)->color_coefficients_and_ranges.push_back(
						{coefficients, range});
				},
			.done = [](void *, wp_color_representation_manager_v1 *) {},
		};
		wp_color_representation_manager_v1_add_listener(c->color_representation, &listener, c);
	} else if (strcmp(interface, wp_fifo_manager_v1_interface.name) == 0) {
		c->fifo_manager = static_cast<wp_fifo_manager_v1 *>(
			wl_registry_bind(registry, name, &wp_fifo_manager_v1_interface, 1));
	} else if (strcmp(interface, wp_commit_timing_manager_v1_interface.name) == 0) {
		c->commit_timing = static_cast<wp_commit_timing_manager_v1 *>(
			wl_registry_bind(registry, name, &wp_commit_timing_manager_v1_interface, 1));
	} else if (strcmp(interface, wp_presentation_interface.name) == 0) {
		c->presentation =
			static_cast<wp_presentation *>(wl_registry_bind(registry, name, &wp_presentation_interface, 1));
		static const wp_presentation_listener listener = {
			.clock_id =
				[](void *data, wp_presentation *, uint32_t clk) {
					static_cast<Connection *>(data)->presentation_clock =
						static_cast<clockid_t>(clk);
				},
		};
		wp_presentation_add_listener(c->presentation, &listener, c);
	} else if (strcmp(interface, wp_viewporter_interface.name) == 0) {
		c->viewporter =
			static_cast<wp_viewporter *>(wl_registry_bind(registry, name, &wp_viewporter_interface, 1));
	}
}

static void registry_global_remove(void *, wl_registry *, uint32_t) {}

bool Connection::connect(std::string *error) {
	display = wl_display_connect(nullptr);
	if (display == nullptr) {
		*error = std::string("cannot connect to the Wayland display (WAYLAND_DISPLAY=") +
			(getenv("WAYLAND_DISPLAY") ? getenv("WAYLAND_DISPLAY") : "unset") + "): " + strerror(errno);
		return false;
	}
	registry = wl_display_get_registry(display);
	static const wl_registry_listener listener = {registry_global, registry_global_remove};
	wl_registry_add_listener(registry, &listener, this);
	// Two roundtrips: globals, then the events of what we bound (wl_shm formats).
	if (!roundtrip() || !roundtrip()) {
		*error = "roundtrip failed: " + error_text();
		return false;
	}
	if (compositor == nullptr || shm == nullptr) {
		*error = "the compositor lacks wl_compositor or wl_shm";
		return false;
	}
	return true;
}

void Connection::disconnect() {
	if (display == nullptr) {
		return;
	}
	if (presentation) wp_presentation_destroy(presentation);
	if (viewporter) wp_viewporter_destroy(viewporter);
	if (color_representation) wp_color_representation_manager_v1_destroy(color_representation);
	if (fifo_manager) wp_fifo_manager_v1_destroy(fifo_manager);
	if (commit_timing) wp_commit_timing_manager_v1_destroy(commit_timing);
	if (stream_manager) pp_stream_manager_v1_destroy(stream_manager);
	if (wm_base) xdg_wm_base_destroy(wm_base);
	if (shm) wl_shm_destroy(shm);
	if (subcompositor) wl_subcompositor_destroy(subcompositor);
	if (compositor) wl_compositor_destroy(compositor);
	if (registry) wl_registry_destroy(registry);
	wl_display_disconnect(display);
	*this = Connection{};
}

bool Connection::has_shm_format(uint32_t format) const {
	return std::find(shm_formats.begin(), shm_formats.end(), format) != shm_formats.end();
}

// A roundtrip that gives up after 10 s: a compositor that stopped answering must not hang us.
bool Connection::roundtrip() {
	bool done = false;
	wl_callback *callback = wl_display_sync(display);
	static const wl_callback_listener listener = {
		.done = [](void *data, wl_callback *, uint32_t) { *static_cast<bool *>(data) = true; },
	};
	wl_callback_add_listener(callback, &listener, &done);
	uint64_t deadline = now_ns() + 10000000000ull;
	while (!done && now_ns() < deadline) {
		if (!dispatch_timeout(100) && wl_display_get_error(display) != 0) break;
	}
	wl_callback_destroy(callback);
	return done;
}

bool Connection::dispatch_timeout(int timeout_ms) {
	while (wl_display_prepare_read(display) != 0) {
		if (wl_display_dispatch_pending(display) < 0) {
			return false;
		}
	}
	// EPIPE: the compositor has gone. libwayland keeps the display usable so that what it sent
	// last can be read; reading then meets the hangup and sets the display's error. Returning
	// here instead would leave the error unset, and a caller waiting for it would spin.
	if (wl_display_flush(display) < 0 && errno != EAGAIN && errno != EPIPE) {
		wl_display_cancel_read(display);
		return false;
	}
	pollfd pfd = {wl_display_get_fd(display), POLLIN, 0};
	int n = poll(&pfd, 1, timeout_ms);
	if (n <= 0) {
		wl_display_cancel_read(display);
		return false;
	}
	if (wl_display_read_events(display) < 0) {
		return false;
	}
	return wl_display_dispatch_pending(display) >= 0;
}

std::string Connection::error_text() const {
	int err = wl_display_get_error(display);
	if (err == 0) {
		return "no error";
	}
	if (err == EPROTO) {
		const wl_interface *interface = nullptr;
		uint32_t id = 0;
		uint32_t code = wl_display_get_protocol_error(display, &interface, &id);
		return std::string("protocol error ") + std::to_string(code) + " on " +
			(interface ? interface->name : "unknown") + "@" + std::to_string(id);
	}
	return strerror(err);
}

bool Window::create(Connection *c, const char *title, std::string *error) {
	conn = c;
	if (c->wm_base == nullptr) {
		*error = "the compositor lacks xdg_wm_base";
		return false;
	}
	surface = wl_compositor_create_surface(c->compositor);
	xsurface = xdg_wm_base_get_xdg_surface(c->wm_base, surface);
	static const xdg_surface_listener xs_listener = {
		.configure =
			[](void *data, xdg_surface *xs, uint32_t serial) {
				xdg_surface_ack_configure(xs, serial);
				static_cast<Window *>(data)->configured = true;
			},
	};
	xdg_surface_add_listener(xsurface, &xs_listener, this);
	toplevel = xdg_surface_get_toplevel(xsurface);
	static const xdg_toplevel_listener tl_listener = {
		.configure = [](void *, xdg_toplevel *, int32_t, int32_t, wl_array *) {},
		.close = [](void *, xdg_toplevel *) {},
		.configure_bounds = nullptr,
		.wm_capabilities = nullptr,
	};
	xdg_toplevel_add_listener(toplevel, &tl_listener, this);
	xdg_toplevel_set_title(toplevel, title);
	xdg_toplevel_set_app_id(toplevel, "pixelport");
	wl_surface_commit(surface);
	while (!configured) {
		if (!c->dispatch_timeout(5000)) {
			*error = "no xdg_surface.configure from the compositor: " + c->error_text();
			return false;
		}
	}
	return true;
}

bool Window::declare_color(uint32_t coefficients, uint32_t range, uint32_t chroma_location) {
	if (conn == nullptr || conn->color_representation == nullptr || surface == nullptr) return false;
	if (color == nullptr) {
		color = wp_color_representation_manager_v1_get_surface(conn->color_representation, surface);
	}
	wp_color_representation_surface_v1_set_coefficients_and_range(color, coefficients, range);
	if (chroma_location != 0) wp_color_representation_surface_v1_set_chroma_location(color, chroma_location);
	wl_surface_commit(surface);
	return true;
}

bool Window::set_alpha_mode(uint32_t mode) {
	if (conn == nullptr || conn->color_representation == nullptr || surface == nullptr) return false;
	const std::vector<uint32_t> &modes = conn->color_alpha_modes;
	if (std::find(modes.begin(), modes.end(), mode) == modes.end()) return false;
	if (color == nullptr) {
		color = wp_color_representation_manager_v1_get_surface(conn->color_representation, surface);
	}
	wp_color_representation_surface_v1_set_alpha_mode(color, mode);
	return true;
}

void Window::destroy() {
	if (color) wp_color_representation_surface_v1_destroy(color);
	color = nullptr;
	if (toplevel) xdg_toplevel_destroy(toplevel);
	if (xsurface) xdg_surface_destroy(xsurface);
	if (surface) wl_surface_destroy(surface);
	toplevel = nullptr;
	xsurface = nullptr;
	surface = nullptr;
	configured = false;
}

bool ShmPool::create(Connection *c, size_t bytes, std::string *error) {
	fd = memfd_create("pixelport-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) < 0) {
		*error = std::string("memfd: ") + strerror(errno);
		destroy();
		return false;
	}
	data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (data == MAP_FAILED) {
		data = nullptr;
		*error = std::string("mmap: ") + strerror(errno);
		destroy();
		return false;
	}
	size = bytes;
	pool = wl_shm_create_pool(c->shm, fd, static_cast<int32_t>(bytes));
	return true;
}

void ShmPool::destroy() {
	if (pool) wl_shm_pool_destroy(pool);
	if (data) munmap(data, size);
	if (fd >= 0) close(fd);
	pool = nullptr;
	data = nullptr;
	size = 0;
	fd = -1;
}

// The timing core's clock: the compositor's reports and ours must be comparable.
uint64_t now_ns() { return timing::monotonic_ns(); }

// A time on `clock` as CLOCK_MONOTONIC: the two clocks read back to back give the offset (both
// advance at about the same rate; over one frame the drift is far below a microsecond).
static uint64_t to_monotonic(clockid_t clock, uint64_t t) {
	if (clock == CLOCK_MONOTONIC) return t;
	timespec a{}, b{};
	if (clock_gettime(clock, &a) != 0) return 0;
	clock_gettime(CLOCK_MONOTONIC, &b);
	const int64_t offset = (static_cast<int64_t>(b.tv_sec) - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec);
	return static_cast<uint64_t>(static_cast<int64_t>(t) + offset);
}

void CommitWaiter::arm(Connection *c, wl_surface *surface, bool with_frame) {
	reset();
	conn = c;
	if (conn->presentation == nullptr || with_frame) {
		frame = wl_surface_frame(surface);
		static const wl_callback_listener listener = {
			.done =
				[](void *data, wl_callback *, uint32_t) {
					auto *w = static_cast<CommitWaiter *>(data);
					w->frame_ns = now_ns();
					if (w->feedback == nullptr) w->presented = w->done = true;
				},
		};
		wl_callback_add_listener(frame, &listener, this);
	}
	if (conn->presentation != nullptr) {
		feedback = wp_presentation_feedback(conn->presentation, surface);
		static const wp_presentation_feedback_listener listener = {
			.sync_output = [](void *, struct wp_presentation_feedback *, wl_output *) {},
			.presented =
				[](void *data, struct wp_presentation_feedback *, uint32_t sec_hi, uint32_t sec_lo,
					uint32_t nsec, uint32_t, uint32_t, uint32_t, uint32_t) {
					auto *w = static_cast<CommitWaiter *>(data);
					uint64_t sec = (static_cast<uint64_t>(sec_hi) << 32) | sec_lo;
					w->present_ns =
						to_monotonic(w->conn->presentation_clock, sec * 1000000000u + nsec);
					w->presented = true;
					w->done = true;
				},
			.discarded =
				[](void *data, struct wp_presentation_feedback *) {
					static_cast<CommitWaiter *>(data)->done = true;
				},
		};
		wp_presentation_feedback_add_listener(feedback, &listener, this);
	}
}

bool CommitWaiter::wait(Connection *conn, int timeout_ms) {
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	while (!done) {
		uint64_t now = now_ns();
		if (now >= deadline || !conn->dispatch_timeout(static_cast<int>((deadline - now) / 1000000u) + 1)) {
			return done;
		}
	}
	if (frame != nullptr && feedback != nullptr) {
		deadline = std::min(deadline, now_ns() + 100000000u);
		while (frame_ns == 0) {
			uint64_t now = now_ns();
			if (now >= deadline ||
				!conn->dispatch_timeout(static_cast<int>((deadline - now) / 1000000u) + 1)) {
				break;
			}
		}
	}
	return true;
}

void CommitWaiter::reset() {
	if (frame) wl_callback_destroy(frame);
	if (feedback) wp_presentation_feedback_destroy(feedback);
	frame = nullptr;
	feedback = nullptr;
	done = presented = false;
	present_ns = frame_ns = 0;
}

uint32_t shm_to_drm(uint32_t shm_format) { return core::fourcc_from_shm_format(shm_format); }

uint32_t drm_to_shm(uint32_t drm_format) { return core::shm_format_from_fourcc(drm_format); }

std::string format_name(uint32_t format) {
	if (const core::FormatInfo *info = core::format_info(shm_to_drm(format))) return info->name;
	char buf[16];
	snprintf(buf, sizeof(buf), "0x%08x", format);
	return buf;
}

bool parse_format(const std::string &name, uint32_t *format) {
	const core::FormatInfo *info = core::format_by_name(name);
	if (info == nullptr) return false;
	*format = drm_to_shm(info->fourcc);
	return true;
}

} // namespace pixelport::client
