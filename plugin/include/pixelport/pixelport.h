/**
 * pixelport: a plugin for wlroots 0.18 compositors that serves wl_shm (and later the
 * pixelport stream and timing protocols) and moves client pixels into the renderer.
 *
 * Lifetime, in the wlroots style:
 *
 *     struct pixelport_plugin *pp = pixelport_create(display, renderer, &options);
 *     // instead of wlr_renderer_init_wl_shm() / wlr_shm_create_with_renderer()
 *     struct wlr_compositor *compositor = wlr_compositor_create(display, 6, renderer);
 *     pixelport_attach_compositor(pp, compositor);
 *     ...
 *     wl_display_destroy_clients(display);
 *     pixelport_destroy(pp);
 *
 * A host that dlopen()s the library must read the exported `pixelport_abi_version`
 * first and refuse the library if it differs from the PIXELPORT_ABI_VERSION the host
 * was compiled with: struct layouts and signatures are only stable within one version.
 *
 * All functions must be called from the thread that runs the wl_display's event loop.
 */
#ifndef PIXELPORT_PIXELPORT_H
#define PIXELPORT_PIXELPORT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PIXELPORT_BUILDING_PLUGIN)
#define PIXELPORT_API __attribute__((visibility("default")))
#else
#define PIXELPORT_API
#endif

struct wl_display;
struct wlr_renderer;
struct wlr_compositor;
struct wlr_shm;
struct pixelport_plugin;

/** Bumped whenever a struct below or a function signature changes. */
#define PIXELPORT_ABI_VERSION 1u

/** Options for pixelport_create(). Zero-initialise: zero means "default" everywhere. */
struct pixelport_options {
	/** wl_shm global version to advertise, 1 or 2; 0 means 2. */
	uint32_t shm_version;
};

/** The ABI version the library was built with (equal to its PIXELPORT_ABI_VERSION). */
PIXELPORT_API extern const uint32_t pixelport_abi_version;

/**
 * Creates the plugin and its wl_shm global on `display`.
 *
 * The wl_shm global advertises the formats `renderer` takes from CPU memory
 * (wlr_renderer_get_texture_formats(renderer, WLR_BUFFER_CAP_DATA_PTR)); ARGB8888 and
 * XRGB8888 are always among them. The host must not create its own wl_shm.
 *
 * `display` and `renderer` are borrowed and must outlive the plugin. `options` is copied;
 * NULL means all defaults. Returns NULL (after logging why through wlr_log) on failure.
 */
PIXELPORT_API struct pixelport_plugin *pixelport_create(struct wl_display *display,
	struct wlr_renderer *renderer, const struct pixelport_options *options);

/**
 * Lets the plugin follow the surfaces of `compositor` (per-surface state, held commits,
 * timing). Call once, right after wlr_compositor_create(). `compositor` is borrowed; the
 * plugin forgets it when it is destroyed. Returns false if a compositor is already attached.
 */
PIXELPORT_API bool pixelport_attach_compositor(struct pixelport_plugin *pp,
	struct wlr_compositor *compositor);

/** The wl_shm the plugin serves (owned by the plugin), for hosts that need it. */
PIXELPORT_API struct wlr_shm *pixelport_get_shm(struct pixelport_plugin *pp);

/**
 * Destroys the plugin: removes its globals and every listener. NULL is a no-op.
 * Call after wl_display_destroy_clients() and before wl_display_destroy().
 */
PIXELPORT_API void pixelport_destroy(struct pixelport_plugin *pp);

#ifdef __cplusplus
}
#endif

#endif
