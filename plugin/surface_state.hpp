// Each wl_surface's plugin state (SurfaceState): attached to its wlr_surface as a wlr_addon,
// made when the compositor makes the surface and destroyed with it (surface.cpp). Split by
// owner: the held commits (hold.hpp), the converted image and its commits (conversion.hpp),
// timing's records (timing.hpp), frame pacing (pacing.hpp) and the colour representation.
#pragma once

#include <cstdint>
#include <list>
#include <memory>

#include "color_representation.hpp"
#include "conversion.hpp"
#include "hold.hpp"
#include "listener.hpp"
#include "pacing.hpp"
#include "surface_ref.hpp"
#include "timing.hpp"
#include "wlr.hpp"

struct pixelport_plugin;

namespace pixelport {

struct SurfaceState {
	/** Attaches the state to `surface` (its addon, its synced commit stamp); see surface.cpp. */
	SurfaceState(pixelport_plugin *plugin, wlr_surface *surface, uint64_t id);
	~SurfaceState();
	SurfaceState(const SurfaceState &) = delete;
	SurfaceState &operator=(const SurfaceState &) = delete;

	/** The state of `surface` that the plugin `owner` attached, or null. */
	static SurfaceState *find(const void *owner, wlr_surface *surface);

	pixelport_plugin *const plugin;
	wlr_surface *const surface;
	/** Unique for the plugin's life: names the surface in timing logs. */
	const uint64_t id;
	/** Client commits so far: a commit's number orders it among the surface's others. */
	uint64_t commits = 0;
	/** A synthetic commit signal is being emitted (conversion.cpp): our own listeners skip it. */
	bool redrawing = false;
	/** Its commits held from applying, and why (hold.hpp). */
	SurfaceHolds holds;
	/** Converted-format commits: the image the surface shows (conversion.hpp). */
	SurfaceConversion conversion;
	Listener client_commit;
	Listener commit;

	/** Colour representation (color_representation.hpp): set by requests, and of the last commit. */
	ColorState color_pending;
	ColorState color;
	ColorState buffer_color; // of the last commit that attached one of our buffers
	ColorRepresentation::Object *color_object = nullptr;
	/** Client format of the last buffer of ours committed (0: none): what the colour state must suit. */
	uint32_t last_client_format = 0;

	/** Timing's own state of this surface (timing.hpp), made when first needed. */
	std::unique_ptr<SurfaceTiming> timing;
	/** Frame pacing (pacing.hpp): made by the surface's first wp_fifo_v1 or wp_commit_timer_v1. */
	std::unique_ptr<SurfacePacing> pacing;

	/** The commit number of the state wlroots applied last (0: none yet). */
	uint64_t applied_commit() const;

	SurfaceRef ref() const { return SurfaceRef(anchor_); }

	/** Its entry in pixelport_plugin::surface_list. */
	std::list<SurfaceState *>::iterator link;

private:
	friend struct SurfaceStateAccess;
	std::shared_ptr<SurfaceRef::Anchor> anchor_;
	/** On wlr_surface::addons (standard layout, addon first: the destroy finds the state). */
	struct AddonLink {
		wlr_addon addon;
		SurfaceState *state;
	};
	AddonLink addon_{};
	/** Each state's commit number, carried by wlroots with the state (pending, cached, current). */
	struct Stamp {
		uint64_t commit;
	};
	wlr_surface_synced synced_;
	Stamp stamp_pending_{};
	Stamp stamp_current_{};
};

} // namespace pixelport
