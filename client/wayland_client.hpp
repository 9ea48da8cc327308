// Client-side Wayland plumbing shared by our clients: globals, an xdg toplevel, shm pools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include <wayland-client.h>

#include "color-representation-v1-client-protocol.h"
#include "commit-timing-v1-client-protocol.h"
#include "fifo-v1-client-protocol.h"
#include "pixelport-stream-v1-client-protocol.h"
#include "presentation-time-client-protocol.h"
#include "viewporter-client-protocol.h"
#include "xdg-shell-client-protocol.h"

namespace pixelport::client {

/** The globals our clients use, bound at connect(). */
struct Connection {
	wl_display *display = nullptr;
	wl_registry *registry = nullptr;
	wl_compositor *compositor = nullptr;
	wl_subcompositor *subcompositor = nullptr;
	wl_shm *shm = nullptr;
	xdg_wm_base *wm_base = nullptr;
	wp_presentation *presentation = nullptr;
	/** wp_presentation's clock (Weston's is CLOCK_MONOTONIC_RAW); CommitWaiter converts to ours. */
	clockid_t presentation_clock = CLOCK_MONOTONIC;
	/** wp_viewporter, when the compositor has it. */
	wp_viewporter *viewporter = nullptr;
	/** wl_shm formats the compositor advertised (DRM fourcc, with 0 and 1 for ARGB/XRGB8888). */
	std::vector<uint32_t> shm_formats;
	/** pixelport-stream-v1, when the compositor has the plugin; its formats are DRM fourcc. */
	pp_stream_manager_v1 *stream_manager = nullptr;
	std::vector<uint32_t> stream_formats;
	uint32_t stream_size_hint = 0;
	uint32_t stream_max_buffer_bytes = 0, stream_max_buffers = 0, stream_max_inflight_bytes = 0;
	/** wp_color_representation_v1, when the compositor has it, and what it supports. */
	wp_color_representation_manager_v1 *color_representation = nullptr;
	std::vector<std::pair<uint32_t, uint32_t>> color_coefficients_and_ranges;
	std::vector<uint32_t> color_alpha_modes;
	/** wp_fifo_v1 and wp_commit_timing_v1 (frame pacing), when the compositor has them. */
	wp_fifo_manager_v1 *fifo_manager = nullptr;
	wp_commit_timing_manager_v1 *commit_timing = nullptr;

	/** Connects to $WAYLAND_DISPLAY and binds globals; false with `error` set on failure. */
	bool connect(std::string *error);
	void disconnect();
	~Connection() { disconnect(); }
	bool has_shm_format(uint32_t format) const;
	/**
	 * One roundtrip, at most 10 s; false if the connection died (protocol error: see
	 * error_text()) or the compositor did not answer.
	 */
	bool roundtrip();
	/** Dispatches with a timeout in ms; false on error or timeout. */
	bool dispatch_timeout(int timeout_ms);
	std::string error_text() const;
};

/** An xdg_toplevel ready for buffers once configured() is true. */
struct Window {
	Connection *conn = nullptr;
	wl_surface *surface = nullptr;
	xdg_surface *xsurface = nullptr;
	xdg_toplevel *toplevel = nullptr;
	bool configured = false;
	wp_color_representation_surface_v1 *color = nullptr;

	bool create(Connection *conn, const char *title, std::string *error);
	/**
	 * Says how the surface's YCbCr pixels are to be read (wp_color_representation_v1 values;
	 * chroma_location 0: unset) and commits that state at once: the stream converts rows as they
	 * arrive, with what the client committed last. False (nothing sent) when the compositor
	 * lacks the protocol; it then reads them its own way (pixelport: docs/design.md, "Colour").
	 */
	bool declare_color(uint32_t coefficients, uint32_t range, uint32_t chroma_location = 0);
	/**
	 * Sets the surface's alpha mode (wp_color_representation_surface_v1.alpha_mode) for the next
	 * commit, which the caller makes. False (nothing sent) when the compositor lacks the
	 * protocol or does not advertise `mode`.
	 */
	bool set_alpha_mode(uint32_t mode);
	void destroy();
	~Window() { destroy(); }
};

/** A memfd-backed wl_shm_pool, mapped in this process. */
struct ShmPool {
	int fd = -1;
	void *data = nullptr;
	size_t size = 0;
	wl_shm_pool *pool = nullptr;

	bool create(Connection *conn, size_t size, std::string *error);
	void destroy();
	~ShmPool() { destroy(); }
};

/**
 * What happened to one commit: arm() before wl_surface_commit, then wait(). Uses
 * wp_presentation feedback when the compositor has it, else a frame callback.
 */
struct CommitWaiter {
	wl_callback *frame = nullptr;
	struct wp_presentation_feedback *feedback = nullptr;
	bool done = false;
	bool presented = false;
	/** CLOCK_MONOTONIC ns of presentation (from wp_presentation, converted from its clock), 0 if unknown. */
	uint64_t present_ns = 0;
	/** CLOCK_MONOTONIC ns when the client read the frame callback's done, 0 before it. */
	uint64_t frame_ns = 0;
	Connection *conn = nullptr;

	/** `with_frame`: a frame callback too when wp_presentation is used, for frame_ns. */
	void arm(Connection *c, wl_surface *surface, bool with_frame = false);
	/**
	 * true once presented (or discarded); false on timeout or connection error. Armed with a
	 * frame callback, also waits for its done, at most 100 ms past the presentation (a
	 * compositor may send it with the next frame, or never for a discarded commit).
	 */
	bool wait(Connection *conn, int timeout_ms);
	void reset();
	~CommitWaiter() { reset(); }
};

/** CLOCK_MONOTONIC in ns: timing::monotonic_ns(), the clock of pixelport-timing-v1 reports. */
uint64_t now_ns();

/** wl_shm format code <-> DRM fourcc (they differ only for ARGB8888 and XRGB8888). */
uint32_t shm_to_drm(uint32_t shm_format);
uint32_t drm_to_shm(uint32_t drm_format);

/** Name of a wl_shm / DRM format for messages ("XRGB8888"), or the hex code. */
std::string format_name(uint32_t format);
/** Parses a DRM format name ("ARGB8888", case-insensitive) to its wl_shm code; false if unknown. */
bool parse_format(const std::string &name, uint32_t *format);

} // namespace pixelport::client
