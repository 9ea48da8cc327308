// The plugin object: owns the wl_shm global and follows surfaces of the host's compositor.
#include "pixelport/pixelport.h"

#include <memory>
#include <new>
#include <unordered_map>

#include "listener.hpp"
#include "wlr.hpp"

extern "C" PIXELPORT_API const uint32_t pixelport_abi_version = PIXELPORT_ABI_VERSION;

namespace {

// Per-surface state lives exactly as long as the wlr_surface: erased on its destroy.
struct SurfaceState {
	wlr_surface *surface = nullptr;
	uint64_t commits = 0;
	pixelport::Listener client_commit;
	pixelport::Listener destroy;
};

} // namespace

struct pixelport_plugin {
	wl_display *display = nullptr;
	wlr_renderer *renderer = nullptr;
	pixelport_options options{};
	wlr_shm *shm = nullptr;
	wlr_compositor *compositor = nullptr;

	std::unordered_map<wlr_surface *, std::unique_ptr<SurfaceState>> surfaces;

	pixelport::Listener display_destroy;
	pixelport::Listener new_surface;
	pixelport::Listener compositor_destroy;

	void track_surface(wlr_surface *surface) {
		auto state = std::make_unique<SurfaceState>();
		state->surface = surface;
		state->client_commit.connect(&surface->events.client_commit, [s = state.get()](void *) {
			s->commits++;
		});
		state->destroy.connect(&surface->events.destroy,
			[this, surface](void *) { surfaces.erase(surface); });
		surfaces[surface] = std::move(state);
	}
};

extern "C" {

PIXELPORT_API struct pixelport_plugin *pixelport_create(struct wl_display *display,
		struct wlr_renderer *renderer, const struct pixelport_options *options) {
	if (display == nullptr || renderer == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: pixelport_create needs a display and a renderer");
		return nullptr;
	}
	auto *pp = new (std::nothrow) pixelport_plugin();
	if (pp == nullptr) {
		return nullptr;
	}
	pp->display = display;
	pp->renderer = renderer;
	if (options != nullptr) {
		pp->options = *options;
	}
	uint32_t version = pp->options.shm_version == 0 ? 2 : pp->options.shm_version;
	if (version > 2) {
		wlr_log(WLR_ERROR, "pixelport: wl_shm version %u not supported (max 2)", version);
		delete pp;
		return nullptr;
	}
	pp->shm = wlr_shm_create_with_renderer(display, version, renderer);
	if (pp->shm == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: failed to create wl_shm");
		delete pp;
		return nullptr;
	}
	// wlr_shm frees itself with the display; forget it then so destroy stays safe.
	pp->display_destroy.connect_display_destroy(display, [pp](void *) { pp->shm = nullptr; });
	wlr_log(WLR_INFO, "pixelport: serving wl_shm v%u (ABI %u)", version, PIXELPORT_ABI_VERSION);
	return pp;
}

PIXELPORT_API bool pixelport_attach_compositor(struct pixelport_plugin *pp,
		struct wlr_compositor *compositor) {
	if (pp == nullptr || compositor == nullptr || pp->compositor != nullptr) {
		return false;
	}
	pp->compositor = compositor;
	pp->new_surface.connect(&compositor->events.new_surface, [pp](void *data) {
		pp->track_surface(static_cast<wlr_surface *>(data));
	});
	pp->compositor_destroy.connect(&compositor->events.destroy, [pp](void *) {
		pp->surfaces.clear();
		pp->new_surface.disconnect();
		pp->compositor_destroy.disconnect();
		pp->compositor = nullptr;
	});
	return true;
}

PIXELPORT_API struct wlr_shm *pixelport_get_shm(struct pixelport_plugin *pp) {
	return pp != nullptr ? pp->shm : nullptr;
}

PIXELPORT_API void pixelport_destroy(struct pixelport_plugin *pp) {
	// Listeners disconnect in their destructors; wl_shm goes with the display.
	delete pp;
}

} // extern "C"
