// Every difference between the wlroots releases pixelport builds against, in one place.
//
// Keyed on WLR_VERSION_MINOR from <wlr/version.h>, so the release is the one whose headers the
// build found (meson -Dwlroots=auto|0.18|0.19|0.20 picks it; see meson.build). Tested: 0.18.2,
// 0.19.3 and 0.20.2.
//
// What differs, and where the code handles it:
//   soname            libwlroots-0.MINOR.so: the preload module checks it (PIXELPORT_WLR_SONAME).
//   present event     wlr_output_event_present.when: `struct timespec *` in 0.18, a value from 0.19
//                     (present_when()).
//   presentation      wlr_presentation_create() takes the wp_presentation version from 0.19
//                     (presentation_create()).
//   buffer destroy    0.18 emits wlr_buffer.events.destroy and finishes the addons itself before
//                     calling impl->destroy; from 0.19 impl->destroy must call wlr_buffer_finish()
//                     (buffer_finish()), or listeners such as wlr_client_buffer's are left on
//                     freed memory.
//   window geometry   wlr_xdg_surface_get_geometry() in 0.18, the wlr_xdg_surface.geometry
//                     field from 0.19 (xdg_geometry()).
//   pkg-config        wlroots-0.MINOR, range >=0.MINOR.0 <0.(MINOR+1).0: meson.build only.
//   colour global     0.20 serves wp_color_representation_manager_v1 itself when the compositor
//                     asks (wlr_color_representation_manager_v1_create, sway and labwc do); the
//                     plugin serves its own, so the preload module hides wlroots' global
//                     (PIXELPORT_WLR_COLOR_REPRESENTATION).
//   redraw            no release (0.18 to 0.20) has a call that tells the scene a surface's
//                     buffer content changed without a client commit; surface_redraw() does
//                     what an apply does for it, the same way in each (see there).
// Differences in behaviour, no code here:
//   0.19              wlr_client_buffer forwards get_shm and begin/end_data_ptr_access to the
//                     source buffer, so the renderer (and screencopy) read the plugin's buffers
//                     outside a commit too; plugin/buffer.cpp converts those reads into a
//                     private image (never a surface's).
//   0.20              the pixman renderer gains ABGR16161616 as a CPU format: the plugin serves
//                     it natively (it takes its native set from the renderer at run time).
#pragma once

#ifndef WLR_USE_UNSTABLE
#define WLR_USE_UNSTABLE
#endif

#include <time.h>

#include <wayland-server-core.h>

extern "C" {
#define static // C-only `[static N]` parameters (0.20's wlr/render/color.h), as in wlr.hpp
#include <wlr/interfaces/wlr_buffer.h>
#include <wlr/render/wlr_texture.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_presentation_time.h>
#include <wlr/version.h>
#undef static
}

#if WLR_VERSION_MAJOR != 0 || WLR_VERSION_MINOR < 18 || WLR_VERSION_MINOR > 20
#error "pixelport builds against wlroots 0.18, 0.19 or 0.20"
#endif

/** 1 where wlroots has its own wp_color_representation_manager_v1 (0.20 on). */
#define PIXELPORT_WLR_COLOR_REPRESENTATION (WLR_VERSION_MINOR >= 20)

#define PIXELPORT_WLR_STR2(x) #x
#define PIXELPORT_WLR_STR(x) PIXELPORT_WLR_STR2(x)

/** The shared library name of the wlroots release built against, e.g. "libwlroots-0.18.so". */
#define PIXELPORT_WLR_SONAME "libwlroots-0." PIXELPORT_WLR_STR(WLR_VERSION_MINOR) ".so"
/** "0.18", "0.19", ...: for log lines. */
#define PIXELPORT_WLR_SERIES "0." PIXELPORT_WLR_STR(WLR_VERSION_MINOR)

namespace pixelport::wlr_compat {

/** When the frame turned into light; null when wlroots gave no time (0.18 only). Borrowed. */
inline const timespec *present_when(const wlr_output_event_present *event) {
#if WLR_VERSION_MINOR >= 19
	return &event->when;
#else
	return event->when;
#endif
}

/** The wp_presentation global, at the newest version wlroots serves (2 from 0.19 on). */
inline wlr_presentation *presentation_create(wl_display *display, wlr_backend *backend) {
#if WLR_VERSION_MINOR >= 19
	return wlr_presentation_create(display, backend, 2);
#else
	return wlr_presentation_create(display, backend);
#endif
}

/**
 * Emits the buffer's destroy event and finishes its addons, where wlroots leaves that to the
 * buffer's impl->destroy (0.19 on); a no-op on 0.18, which did it before calling impl->destroy.
 * Call first thing in every wlr_buffer_impl.destroy.
 */
inline void buffer_finish(wlr_buffer *buffer) {
#if WLR_VERSION_MINOR >= 19
	wlr_buffer_finish(buffer);
#else
	(void)buffer;
#endif
}

/**
 * Shows `surface`'s new pixels when they changed outside a commit (a conversion that ended after
 * its commit applied): no wlroots release offers a call for it, so this does what
 * surface_commit_state() does when a state applies, with the surface's state unchanged. Two
 * public fields are written: `surface->buffer_damage` gets the whole buffer (what the scene and
 * the texture upload read as changed), and with `upload` (a renderer that copies at upload) the
 * texture of `surface->buffer` takes `buffer`'s pixels (wlr_texture_update_from_buffer). Then
 * the surface's commit signal is emitted, as at an apply: the scene redraws the surface from it
 * and schedules a frame. `buffer` null (a native buffer): only the signal. The caller's own
 * commit listeners must skip this emission.
 */
inline void surface_redraw(wlr_surface *surface, wlr_buffer *buffer, bool upload) {
	if (buffer != nullptr) {
		pixman_region32_union_rect(&surface->buffer_damage, &surface->buffer_damage, 0, 0,
			static_cast<unsigned>(buffer->width), static_cast<unsigned>(buffer->height));
		if (upload && surface->buffer != nullptr && surface->buffer->texture != nullptr) {
			wlr_texture_update_from_buffer(surface->buffer->texture, buffer, &surface->buffer_damage);
		}
	}
	wl_signal_emit_mutable(&surface->events.commit, surface);
}

/**
 * From inside the apply of one of `surface`'s states: whether wlroots applies, right after this
 * one and in the same call, another of its cached states that attaches a buffer, so that nothing
 * shows this one's. Reads the public `surface->cached` list and each state's
 * `cached_state_locks` and `committed` (the same in 0.18 to 0.20): wlr_surface_unlock_cached()
 * applies the front of that list while it is still there, then each next one that holds no lock.
 */
inline bool another_state_applies_next(wlr_surface *surface) {
	if (wl_list_empty(&surface->cached)) return false;
	for (wl_list *link = surface->cached.next->next; link != &surface->cached; link = link->next) {
		wlr_surface_state *next = wl_container_of(link, next, cached_state_link);
		if (next->cached_state_locks != 0) return false;
		if (next->committed & WLR_SURFACE_STATE_BUFFER) return true;
	}
	return false;
}

/**
 * The xdg_surface's window geometry, as the client set it or defaulted to its bounds. A
 * template so that only code with wlr_xdg_shell.h included instantiates it.
 */
template <typename XdgSurface>
wlr_box xdg_geometry(XdgSurface *surface) {
#if WLR_VERSION_MINOR >= 19
	return surface->geometry;
#else
	wlr_box box{};
	wlr_xdg_surface_get_geometry(surface, &box);
	return box;
#endif
}

} // namespace pixelport::wlr_compat
