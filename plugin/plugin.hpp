// Internal state of the plugin, shared by its modules (shm.cpp, buffer.cpp, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "color_representation.hpp"
#include "conversion.hpp"
#include "listener.hpp"
#include "pixelport/core/convert.hpp"
#include "pixelport/pixelport.h"
#include "pixelport/timing/log_writer.hpp"
#include "pixelport/timing/records.hpp"
#include "pixelport/timing/summary.hpp"
#include "timing.hpp"
#include "wlr.hpp"

namespace pixelport {

class FormatPolicy;
struct PluginGlobal;
struct SurfaceTiming;
class Shm;
class StreamManager;
class Timing;

/**
 * A weak reference to a surface: the wlr_surface and the plugin's id for it, which tells it from
 * a later surface at the same address. pixelport_plugin::surface_state() resolves it (null once
 * the surface is gone). What outlives a surface (held commits, jobs, roots, stream waiters)
 * names it only so.
 */
struct SurfaceRef {
	wlr_surface *surface = nullptr;
	uint64_t id = 0;
	bool operator==(const SurfaceRef &) const = default;
};

/** Per wlr_surface: lives exactly as long as the surface (erased on its destroy). */
struct SurfaceState {
	pixelport_plugin *plugin = nullptr;
	wlr_surface *surface = nullptr;
	/** Unique for the plugin's life: tells a surface from a later one at the same address. */
	uint64_t id = 0;
	/** Client commits so far: a commit's number orders it among the surface's others. */
	uint64_t commits = 0;
	/** A synthetic commit signal is being emitted (conversion.cpp): our own listeners skip it. */
	bool redrawing = false;
	/** Converted-format commits: the image the surface shows (conversion.hpp). */
	SurfaceConversion conversion;
	Listener client_commit;
	Listener commit;
	Listener destroy;

	/** Colour representation (color_representation.hpp): set by requests, and of the last commit. */
	ColorState color_pending;
	ColorState color;
	ColorState buffer_color; // of the last commit that attached one of our buffers
	ColorRepresentation::Object *color_object = nullptr;
	/** Client format of the last buffer of ours committed (0: none): what the colour state must suit. */
	uint32_t last_client_format = 0;

	/** Its role objects' resources in pixelport_plugin::holding (null where none). */
	wl_resource *held_roles[2] = {nullptr, nullptr};

	/** Timing's own state of this surface (timing.hpp), made when first needed. */
	std::unique_ptr<SurfaceTiming> timing;

	SurfaceRef ref() const { return {surface, id}; }

	SurfaceState();
	~SurfaceState();
};

} // namespace pixelport

struct pixelport_plugin {
	pixelport_plugin();
	~pixelport_plugin();

	wl_display *display = nullptr;
	wlr_renderer *renderer = nullptr;
	pixelport_options options{};
	/** What is served and as what, for wl_shm and the stream (format_policy.hpp). */
	std::unique_ptr<pixelport::FormatPolicy> formats;
	pixelport::core::ConvertOptions convert_options;
	std::unique_ptr<pixelport::Shm> shm;
	std::unique_ptr<pixelport::StreamManager> streams;
	std::unique_ptr<pixelport::Timing> timing;
	std::unique_ptr<pixelport::Conversions> conversions;
	std::unique_ptr<pixelport::ColorRepresentation> colors;
	uint64_t next_surface_id = 1;
	wlr_compositor *compositor = nullptr;
	pixelport_stats stats{};

	std::unordered_map<wlr_surface *, std::unique_ptr<pixelport::SurfaceState>> surfaces;
	/**
	 * The host's outputs (pixelport_attach_output), each until it is destroyed: the one list of
	 * them, with what each module follows of the output.
	 */
	struct Output {
		wlr_output *output;
		std::unique_ptr<pixelport::Timing::OutputTiming> timing;
		pixelport::Listener destroy;
	};
	std::vector<std::unique_ptr<Output>> outputs;
	/** Width x height of the largest output, in pixels; 0 before any (the stream's limits). */
	uint64_t largest_output_pixels() const;

	pixelport::Listener new_surface;
	pixelport::Listener compositor_destroy;
	pixelport::Listener display_destroy;

	/** The host's listeners (pixelport_add_destroy_listener). */
	wl_signal destroy_signal;
	/** Globals the host made (pixelport_shm_create, ...), live or removed: destroyed with the plugin. */
	std::vector<std::unique_ptr<pixelport::PluginGlobal>> globals;
	/** Clients that bound a global of the plugin's and are still connected (pixelport.cpp). */
	struct BoundClient;
	std::unordered_map<wl_client *, std::unique_ptr<BoundClient>> bound_clients;
	/**
	 * A client binds one of the plugin's globals: its resource, the client counted until it
	 * disconnects. Null (no_memory posted) when out of memory.
	 */
	wl_resource *bind_resource(wl_client *client, const wl_interface *interface, uint32_t version, uint32_t id);
	/** pixelport_destroy ran while clients held objects: the plugin goes when the last does. */
	bool retiring = false;
	wl_event_source *retire_idle = nullptr;

	pixelport::SurfaceState *surface_state(wlr_surface *surface) {
		auto it = surfaces.find(surface);
		return it == surfaces.end() ? nullptr : it->second.get();
	}
	/** The surface with this id, if it still exists. */
	pixelport::SurfaceState *surface_state(wlr_surface *surface, uint64_t id) {
		pixelport::SurfaceState *state = surface_state(surface);
		return state != nullptr && state->id == id ? state : nullptr;
	}
	pixelport::SurfaceState *surface_state(const pixelport::SurfaceRef &ref) {
		return surface_state(ref.surface, ref.id);
	}
	/**
	 * The surface goes (its destroy, the compositor's, or the plugin's): its timing records end,
	 * its conversions are dropped, its holds released, and its state freed. The one teardown
	 * of a surface (surface.cpp).
	 */
	void forget_surface(wlr_surface *surface);
	/** Follows a new surface of the compositor: its SurfaceState and commit hooks (surface.cpp). */
	void track_surface(wlr_surface *surface);

	/**
	 * Role objects (wl_resource of an xdg_surface, xdg_toplevel, wl_subsurface, ...) of surfaces
	 * that had a commit held (stream bytes, a conversion): their destroy request applies the
	 * surface's held commits first. Keyed by resource: a request looks up its own in O(1).
	 */
	std::unordered_map<wl_resource *, pixelport::SurfaceRef> holding;
	/** Applies role object destroy requests to `holding` (surface.cpp). */
	wl_protocol_logger *role_logger = nullptr;
	void watch_role_destroys();
	/** From client_commit, when the commit was held: its role objects join `holding`. */
	void note_holding(pixelport::SurfaceState *surface);
	/** Unlocks the surface's held commits now, in order (they apply, with what has arrived). */
	void release_holds(pixelport::SurfaceState *surface);
};
