// Internal state of the plugin, shared by its modules (shm.cpp, buffer.cpp, ...).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "color_representation.hpp"
#include "conversion.hpp"
#include "hold.hpp"
#include "listener.hpp"
#include "pacing.hpp"
#include "pixelport/core/convert.hpp"
#include "pixelport/pixelport.h"
#include "stats.hpp"
#include "surface_state.hpp"
#include "timing.hpp"
#include "wlr.hpp"

namespace pixelport {

class FormatPolicy;
struct PluginGlobal;
class Shm;
class StreamManager;
class Timing;

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
	/** Every commit the plugin holds from applying, and why (hold.hpp); outlives the modules. */
	std::unique_ptr<pixelport::HoldLedger> holds;
	std::unique_ptr<pixelport::Shm> shm;
	std::unique_ptr<pixelport::StreamManager> streams;
	std::unique_ptr<pixelport::Timing> timing;
	std::unique_ptr<pixelport::Conversions> conversions;
	std::unique_ptr<pixelport::ColorRepresentation> colors;
	/** wp_fifo_v1 and wp_commit_timing_v1 (pacing.hpp). */
	std::unique_ptr<pixelport::Pacing> pacing;
	uint64_t next_surface_id = 1;
	wlr_compositor *compositor = nullptr;
	pixelport::Stats stats;

	/** Every SurfaceState of the plugin's (SurfaceState::link), for the plugin's own teardown. */
	std::list<pixelport::SurfaceState *> surface_list;
	/**
	 * The host's outputs (pixelport_attach_output), each until it is destroyed: the one list of
	 * them, with what each module follows of the output.
	 */
	struct Output {
		wlr_output *output;
		std::unique_ptr<pixelport::Timing::OutputTiming> timing;
		std::unique_ptr<pixelport::Pacing::OutputPacing> pacing;
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
	/**
	 * Clients that bound a global of the plugin's and are still connected: their record
	 * (client_account.hpp) tells the plugin when each goes (pixelport.cpp).
	 */
	std::unordered_set<wl_client *> bound_clients;
	/**
	 * A client binds one of the plugin's globals: its resource, the client counted until it
	 * disconnects. Null (no_memory posted) when out of memory.
	 */
	wl_resource *bind_resource(wl_client *client, const wl_interface *interface, uint32_t version, uint32_t id);
	/** pixelport_destroy ran while clients held objects: the plugin goes when the last does. */
	bool retiring = false;
	wl_event_source *retire_idle = nullptr;

	/** The surface's state, if the plugin follows it. */
	pixelport::SurfaceState *surface_state(wlr_surface *surface) {
		return pixelport::SurfaceState::find(this, surface);
	}
	/**
	 * The surface goes (its destroy, the compositor's, or the plugin's): its timing records end,
	 * its conversions are dropped, its holds dropped, and its state freed. The one teardown of
	 * a surface (surface.cpp).
	 */
	void forget_surface(pixelport::SurfaceState *surface);
	/** Follows a new surface of the compositor: its SurfaceState and commit hooks (surface.cpp). */
	void track_surface(wlr_surface *surface);
};
