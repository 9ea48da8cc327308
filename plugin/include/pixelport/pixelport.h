/**
 * pixelport: a plugin for wlroots compositors (0.18, 0.19 and 0.20) that serves wl_shm, the
 * pixelport stream and timing protocols (pixelport-stream-v1, pixelport-timing-v1),
 * wp_color_representation_v1, wp_fifo_v1 and wp_commit_timing_v1, and moves client pixels into
 * the renderer.
 *
 * In the wlroots shape: the plugin (its per-surface state, conversion workers, budgets,
 * counters) and one constructor per global, so a host takes the globals it wants and may keep
 * its own of an interface (wlroots 0.20's colour-representation manager, say):
 *
 *     struct pixelport_options options = {.struct_size = sizeof options};
 *     struct pixelport_plugin *pp = pixelport_create(display, renderer, &options);
 *     // instead of wlr_renderer_init_wl_shm() / wlr_shm_create_with_renderer()
 *     pixelport_shm_create(pp, 2);
 *     pixelport_stream_manager_create(pp, 1);
 *     pixelport_timing_manager_create(pp, 4);
 *     pixelport_color_representation_manager_create(pp, 1);
 *     pixelport_fifo_manager_create(pp, 1);
 *     pixelport_commit_timing_manager_create(pp, 1);
 *     // or all of them at once: pixelport_create_globals(pp)
 *     struct wlr_compositor *compositor = wlr_compositor_create(display, 6, renderer);
 *     pixelport_attach_compositor(pp, compositor);
 *
 * Lifetime, as wlroots' globals: everything is destroyed with the display (wl_display_destroy)
 * unless the host destroys it first. pixelport_destroy() may be called at any time, clients
 * still connected included: the globals go at once, and what clients still hold keeps working
 * until they disconnect, when the rest is freed. A host that wants to know when an object goes
 * adds a listener to it (the *_add_destroy_listener functions, libwayland's idiom for opaque
 * objects); once it fired, the object must not be used.
 *
 * A host that dlopen()s the library must read the exported `pixelport_abi_version`
 * first and refuse the library if it differs from the PIXELPORT_ABI_VERSION the host
 * was compiled with. Within one version the structs below grow only at their end, and each
 * carries its size (struct_size): hosts built against older or newer headers of it work.
 *
 * All functions must be called from the thread that runs the wl_display's event loop.
 */
#ifndef PIXELPORT_PIXELPORT_H
#define PIXELPORT_PIXELPORT_H

#include <stdbool.h>
#include <stddef.h>
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
struct wl_listener;
struct wlr_renderer;
struct wlr_compositor;
struct wlr_output;
struct pixelport_plugin;
struct pixelport_shm;
struct pixelport_stream_manager;
struct pixelport_timing_manager;
struct pixelport_color_representation_manager;
struct pixelport_fifo_manager;
struct pixelport_commit_timing_manager;

/**
 * Bumped when a function's signature, or a field's place or meaning, changes. Fields added at
 * the end of pixelport_options or pixelport_stats do not bump it: each carries its size
 * (struct_size, as Weston's versioned structs), so a host and a plugin built against
 * different headers of one ABI version work together, each using the fields both know.
 */
#define PIXELPORT_ABI_VERSION 6u

/**
 * Options for pixelport_create(). Zero-initialise and set struct_size: zero means "default"
 * everywhere else.
 */
struct pixelport_options {
	/**
	 * sizeof(struct pixelport_options) as the host was built. The plugin reads only that many
	 * bytes; fields past it keep their defaults. 0 is refused (pixelport_create returns NULL).
	 */
	size_t struct_size;
	/** wl_shm global version pixelport_create_globals() advertises, 1 or 2; 0 means 2. */
	uint32_t shm_version;
	/**
	 * Worker threads that convert commits off the event loop's thread (docs/design.md,
	 * "Other formats: converted"), at most 64; 0 means half the hardware threads, 1 to 8.
	 */
	uint32_t convert_threads;
	/**
	 * pixelport-stream-v1: the size_hint event, in bytes (below it streaming is expected to
	 * beat a new wl_shm buffer); 0 means 1 MiB.
	 */
	uint32_t stream_size_hint;
	/**
	 * Stream budgets, per client (docs/design.md, "Limits and fairness"); exceeding one is the
	 * limit_exceeded protocol error. Largest stream buffer, in bytes of the renderer's format;
	 * 0 means 4 x the largest output (width x height x 4), at least 256 MiB (8192 x 8192 x 4).
	 */
	uint64_t stream_max_buffer_bytes;
	/** Stream buffers (wl_buffers) alive per client; 0 means 64. */
	uint32_t stream_max_buffers;
	/** Announced stream bytes not yet read, per client; 0 means 512 MiB. */
	uint64_t stream_max_inflight_bytes;
	/**
	 * Timing logs (schema in docs/timing.md): JSON Lines and Chrome trace-event JSON (opens in
	 * the Perfetto UI). NULL: the environment variables PIXELPORT_TIMING_LOG and
	 * PIXELPORT_TIMING_TRACE, else none. Written off the event loop by a thread; records are
	 * dropped (and counted in the log), never the compositor stalled, when the disk lags.
	 */
	const char *timing_log_path;
	const char *timing_trace_path;
	/**
	 * Bytes of converted images (formats the renderer lacks, in its format, page-rounded) one
	 * client may hold; 0 means the larger of 512 MiB and 8 x the bytes of every attached
	 * output at 4 bytes per pixel. Exceeding it is a wl_display.no_memory error.
	 */
	uint64_t image_budget_client_bytes;
	/** The same for all clients together; 0 means the larger of 2 GiB and 4 x the client budget. */
	uint64_t image_budget_total_bytes;
	/**
	 * Streams alive per client, a stream the client destroyed while bytes were still owed
	 * included (each holds an fd and up to 1 MiB of receive window); 0 means 16.
	 */
	uint32_t stream_max_streams;
	/**
	 * Bytes of storage of a client's stream buffers, counted from create_buffer until the
	 * storage is freed; 0 means 16 x the largest output (width x height x 4), at least 1 GiB.
	 */
	uint64_t stream_max_client_bytes;
	/**
	 * Objects one client may hold at once (docs/design.md, "Limits and fairness"); 0 means the
	 * default. Exceeding one is wl_display.error no_memory (wl_shm, wp_color_representation)
	 * or pp_timing_manager_v1.limit_exceeded, for that client only.
	 */
	uint32_t client_max_pools; /* wl_shm_pool objects (each holds an fd); 0 means 1024 */
	/** mmaps of wl_shm pools: each pool's current one and older ones still read; 0 means 2048 */
	uint32_t client_max_mappings;
	uint32_t client_max_shm_buffers; /* wl_buffer objects made from wl_shm pools; 0 means 65536 */
	uint32_t client_max_subscriptions; /* pp_surface_timing_v1 objects; 0 means 1024 */
	uint32_t client_max_color_surfaces; /* wp_color_representation_surface_v1 objects; 0 means 4096 */
	/** Converted images (each an anonymous mapping; their bytes have budgets of their own); 0 means 4096 */
	uint32_t client_max_images;
	/**
	 * wl_shm formats left out of the format list of a client whose process maps GStreamer's
	 * Wayland library (docs/design.md, "Formats withheld from a client"): comma-separated DRM
	 * format names (RGB888), "-NAME" to take one out again, "auto" for the rule by that
	 * library's version (RGB888 and BGR888 before 1.26, which mislabels them; NV12, NV21,
	 * YUV420, YVU420 and P010, which its waylandsink cannot lay out at odd sizes), "none". NULL: the
	 * environment variable PIXELPORT_GSTREAMER_WITHHOLD (a bad value there is ignored, logged),
	 * else "auto". Read by pixelport_create() only; an unknown name here makes it fail (logged).
	 */
	const char *gstreamer_withhold;
	/**
	 * Non-zero: pixelport_create_globals() (and the preload module) leave out
	 * wp_fifo_manager_v1, resp. wp_commit_timing_manager_v1. 0 means each is served.
	 */
	uint32_t fifo_off;
	uint32_t commit_timing_off;
};

/** Counters since pixelport_create(), for tests and hosts that want them. */
struct pixelport_stats {
	/**
	 * Set by the caller to sizeof(struct pixelport_stats) as it was built:
	 * pixelport_get_stats() writes only the counters that fit, and never this field.
	 */
	size_t struct_size;
	/** Textures made from client memory in place (native formats): no byte copied by us. */
	uint64_t native_uploads;
	/** Uploads of formats the renderer lacks, each converting the commit's damage. */
	uint64_t converted_uploads;
	/** Pixels converted (damaged area, before expansion to the chroma grid). */
	uint64_t converted_pixels;
	/** wl_shm buffers created. */
	uint64_t shm_buffers;
	/** Pools whose file a client shrank while mapped (read back as zeroes). */
	uint64_t sigbus_faults;
	/** Bytes read from stream data fds, and stream writes completed. */
	uint64_t stream_bytes;
	uint64_t stream_writes;
	/** Commits held until their stream bytes arrived or their large conversion was done. */
	uint64_t held_commits;
	/** Converted-format commits replaced before anything showed them: never converted. */
	uint64_t skipped_conversions;
	/** Converted images refused for exceeding a budget (the client got no_memory). */
	uint64_t budget_refusals;
	/** Bytes of converted images alive now. */
	uint64_t image_bytes;
	/**
	 * Held commits applied before their conversion was done, because their client committed
	 * more than a few times behind them (they showed what the surface showed until then).
	 */
	uint64_t early_releases;
	/** Surfaces redrawn when a conversion ended after its commit applied. */
	uint64_t redraws;
	/**
	 * Commits applied before their conversion ended, in a size the surface had no complete
	 * image of, completed on the compositor's main thread before anything read them (never a
	 * blank nor a partial image shown instead).
	 */
	uint64_t main_thread_completions;
	/**
	 * Commits held for a wp_fifo_v1 barrier or a wp_commit_timer_v1 target time (those that
	 * could apply when they arrived are not).
	 */
	uint64_t paced_commits;
	/** Fifo barriers cleared by their timeout, no output frame having cleared them (100 ms). */
	uint64_t barrier_timeouts;
};

/** The ABI version the library was built with (equal to its PIXELPORT_ABI_VERSION). */
PIXELPORT_API extern const uint32_t pixelport_abi_version;

/**
 * Creates the plugin on `display`: its per-surface state, conversion workers and counters,
 * and no global yet (the constructors below make them).
 *
 * `display` and `renderer` are borrowed; the plugin is destroyed with the display, and
 * `renderer` must outlive it. `options` is copied; NULL means all defaults. Returns NULL
 * (after logging why through wlr_log) on failure: no display or renderer, options with a
 * struct_size of 0, or a renderer that cannot show ARGB8888 and XRGB8888 from CPU memory.
 */
PIXELPORT_API struct pixelport_plugin *pixelport_create(
	struct wl_display *display, struct wlr_renderer *renderer, const struct pixelport_options *options);

/**
 * The wl_shm global, `version` 1 or 2. It advertises the formats the renderer takes from CPU
 * memory (wlr_renderer_get_texture_formats(renderer, WLR_BUFFER_CAP_DATA_PTR)), used in
 * place, plus every format the conversion core can turn into one of them (RGB888, RGB565,
 * NV12, YUYV, ...), converted during upload. ARGB8888 and XRGB8888 are always among them.
 * The host must not create another wl_shm (wlroots' wlr_shm_create*).
 *
 * Each of these constructors returns NULL (after logging why) when `pp` is NULL, `version` is
 * not one the plugin speaks, the plugin already has that global, or the global cannot be
 * made. The global is owned by the plugin; destroy it earlier with its _destroy function
 * (NULL is a no-op), which removes it from clients' view (objects they made from it keep
 * working) and emits its destroy listeners.
 */
PIXELPORT_API struct pixelport_shm *pixelport_shm_create(struct pixelport_plugin *pp, uint32_t version);
PIXELPORT_API void pixelport_shm_destroy(struct pixelport_shm *shm);
PIXELPORT_API void pixelport_shm_add_destroy_listener(struct pixelport_shm *shm, struct wl_listener *listener);

/** pp_stream_manager_v1 (protocols/pixelport-stream-v1.xml), `version` 1. */
PIXELPORT_API struct pixelport_stream_manager *pixelport_stream_manager_create(
	struct pixelport_plugin *pp, uint32_t version);
PIXELPORT_API void pixelport_stream_manager_destroy(struct pixelport_stream_manager *manager);
PIXELPORT_API void pixelport_stream_manager_add_destroy_listener(
	struct pixelport_stream_manager *manager, struct wl_listener *listener);

/**
 * pp_timing_manager_v1 (protocols/pixelport-timing-v1.xml), `version` 1 to 4. The timing logs
 * (pixelport_options.timing_log_path) do not need it.
 */
PIXELPORT_API struct pixelport_timing_manager *pixelport_timing_manager_create(
	struct pixelport_plugin *pp, uint32_t version);
PIXELPORT_API void pixelport_timing_manager_destroy(struct pixelport_timing_manager *manager);
PIXELPORT_API void pixelport_timing_manager_add_destroy_listener(
	struct pixelport_timing_manager *manager, struct wl_listener *listener);

/**
 * wp_color_representation_manager_v1 (staging), `version` 1: the coefficients, range, chroma
 * location and alpha mode a client declares for a surface steer the conversion of its
 * buffers. Without it, YUV buffers take the default rule (docs/design.md, "Colour").
 */
PIXELPORT_API struct pixelport_color_representation_manager *pixelport_color_representation_manager_create(
	struct pixelport_plugin *pp, uint32_t version);
PIXELPORT_API void pixelport_color_representation_manager_destroy(
	struct pixelport_color_representation_manager *manager);
PIXELPORT_API void pixelport_color_representation_manager_add_destroy_listener(
	struct pixelport_color_representation_manager *manager, struct wl_listener *listener);

/**
 * wp_fifo_manager_v1 (wayland-protocols staging, fifo-v1), `version` 1: a surface's commits may
 * wait for the previous one to have been shown for a refresh (set_barrier, wait_barrier).
 * Readiness is decided when a commit would apply, through the plugin's held commits: a barrier
 * is set when the commit carrying set_barrier applies and clears when the next frame of an
 * output showing the surface is presented (docs/design.md, "Frame pacing": synchronized
 * subsurfaces, hidden surfaces). Needs pixelport_attach_output() for every output.
 */
PIXELPORT_API struct pixelport_fifo_manager *pixelport_fifo_manager_create(
	struct pixelport_plugin *pp, uint32_t version);
PIXELPORT_API void pixelport_fifo_manager_destroy(struct pixelport_fifo_manager *manager);
PIXELPORT_API void pixelport_fifo_manager_add_destroy_listener(
	struct pixelport_fifo_manager *manager, struct wl_listener *listener);

/**
 * wp_commit_timing_manager_v1 (wayland-protocols staging, commit-timing-v1), `version` 1: a
 * commit with a target time (CLOCK_MONOTONIC, the presentation clock) is held until the next
 * frame would be presented at or after it. Needs pixelport_attach_output() for every output.
 */
PIXELPORT_API struct pixelport_commit_timing_manager *pixelport_commit_timing_manager_create(
	struct pixelport_plugin *pp, uint32_t version);
PIXELPORT_API void pixelport_commit_timing_manager_destroy(struct pixelport_commit_timing_manager *manager);
PIXELPORT_API void pixelport_commit_timing_manager_add_destroy_listener(
	struct pixelport_commit_timing_manager *manager, struct wl_listener *listener);

/**
 * The globals above, each at the newest version the plugin speaks (wl_shm at
 * options.shm_version), the fifo and commit-timing managers unless options.fifo_off or
 * options.commit_timing_off. Returns false, with the globals made so far destroyed again, if
 * one fails.
 */
PIXELPORT_API bool pixelport_create_globals(struct pixelport_plugin *pp);

/**
 * Lets the plugin follow the surfaces of `compositor` (per-surface state, held commits,
 * timing). Call once, right after wlr_compositor_create(). `compositor` is borrowed; the
 * plugin forgets it when it is destroyed. Returns false if a compositor is already attached.
 */
PIXELPORT_API bool pixelport_attach_compositor(struct pixelport_plugin *pp, struct wlr_compositor *compositor);

/**
 * Lets the plugin follow `output`'s frames: commit presentation times for the timing
 * protocol and logs, and per-frame render and present records. Call it for each new output
 * before connecting your own frame listener (so the render start is measured). The plugin
 * forgets the output when it is destroyed.
 */
PIXELPORT_API void pixelport_attach_output(struct pixelport_plugin *pp, struct wlr_output *output);

/**
 * Writes the timing summary (per surface and output: count, p50/p95/p99 of each phase) into
 * `buf` (NUL-terminated, truncated to `size`). Returns the length of the whole summary.
 * Meaningful when a timing log is on; hosts print it at exit and on SIGUSR1.
 */
PIXELPORT_API size_t pixelport_timing_summary(struct pixelport_plugin *pp, char *buf, size_t size);

/**
 * Copies the plugin's counters into `stats`, as far as stats->struct_size reaches (counters
 * this plugin does not have are left as they were). Nothing happens if `stats` is NULL or its
 * struct_size is 0.
 */
PIXELPORT_API void pixelport_get_stats(struct pixelport_plugin *pp, struct pixelport_stats *stats);

/**
 * Calls `listener` when the plugin is destroyed (pixelport_destroy or the display's destroy),
 * while its counters and summary can still be read.
 */
PIXELPORT_API void pixelport_add_destroy_listener(struct pixelport_plugin *pp, struct wl_listener *listener);

/**
 * Destroys the plugin: its destroy listeners run and its globals go (theirs run too). When
 * no client holds an object of the plugin's, it detaches from the compositor's surfaces and
 * the outputs and is freed at once. Otherwise (a host that destroys the plugin before its
 * clients) what clients hold (pools, buffers, streams, subscriptions) keeps working until the
 * last of them disconnects, and the plugin is freed then or with the display, whichever comes
 * first. `pp` must not be used after this call. NULL is a no-op. Not needed when the display
 * is destroyed: that destroys the plugin.
 */
PIXELPORT_API void pixelport_destroy(struct pixelport_plugin *pp);

#ifdef __cplusplus
}
#endif

#endif
