// wp_fifo_manager_v1 and wp_fifo_v1 (wayland-protocols staging, version 1): each request sets
// the surface's pending PacingRequest; pacing.cpp decides when the commits apply.
#include <new>

#include "fifo-v1-protocol.h"
#include "pacing.hpp"
#include "plugin.hpp"
#include "surface_state.hpp"

namespace pixelport {

namespace {

// A wp_fifo_v1's user data: its surface's SurfacePacing while the surface lives, null after
// (surface_destroyed), or kUntracked for a surface the plugin does not follow (no compositor
// attached: the object accepts requests and changes nothing).
char untracked_marker;
void *const kUntracked = &untracked_marker;

// The request's surface state, or null: after posting surface_destroyed, or for an untracked one.
SurfacePacing *live_pacing(wl_resource *resource) {
	void *data = wl_resource_get_user_data(resource);
	if (data == kUntracked) return nullptr;
	if (data == nullptr) {
		wl_resource_post_error(resource, WP_FIFO_V1_ERROR_SURFACE_DESTROYED, "the wl_surface was destroyed");
		return nullptr;
	}
	return static_cast<SurfacePacing *>(data);
}

void fifo_set_barrier(wl_client *, wl_resource *resource) {
	if (SurfacePacing *p = live_pacing(resource)) p->pending_request.set_barrier = true;
}

void fifo_wait_barrier(wl_client *, wl_resource *resource) {
	if (SurfacePacing *p = live_pacing(resource)) p->pending_request.wait_barrier = true;
}

void fifo_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

const struct wp_fifo_v1_interface kFifoImpl = {
	.set_barrier = fifo_set_barrier,
	.wait_barrier = fifo_wait_barrier,
	.destroy = fifo_destroy,
};

// What the object set stays set ("Surface state changes previously made by this protocol are
// unaffected by this object's destruction"); the surface may have another one.
void fifo_resource_destroy(wl_resource *resource) {
	void *data = wl_resource_get_user_data(resource);
	if (data != nullptr && data != kUntracked) static_cast<SurfacePacing *>(data)->fifo = nullptr;
}

void manager_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void manager_get_fifo(wl_client *client, wl_resource *resource, uint32_t id, wl_resource *surface_resource) {
	auto *pacing = static_cast<Pacing *>(wl_resource_get_user_data(resource));
	SurfaceState *surface = pacing->plugin()->surface_state(wlr_surface_from_resource(surface_resource));
	if (surface != nullptr && surface->pacing != nullptr && surface->pacing->fifo != nullptr) {
		wl_resource_post_error(
			resource, WP_FIFO_MANAGER_V1_ERROR_ALREADY_EXISTS, "the wl_surface already has a wp_fifo_v1");
		return;
	}
	void *data = kUntracked;
	if (surface != nullptr) {
		data = pacing->pacing_of(surface);
		if (data == nullptr) {
			wl_client_post_no_memory(client);
			return;
		}
	}
	wl_resource *fifo = wl_resource_create(client, &wp_fifo_v1_interface, wl_resource_get_version(resource), id);
	if (fifo == nullptr) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(fifo, &kFifoImpl, data, fifo_resource_destroy);
	if (data != kUntracked) static_cast<SurfacePacing *>(data)->fifo = fifo;
}

const struct wp_fifo_manager_v1_interface kManagerImpl = {
	.destroy = manager_destroy,
	.get_fifo = manager_get_fifo,
};

void bind_manager(wl_client *client, void *data, uint32_t version, uint32_t id) {
	auto *pacing = static_cast<Pacing *>(data);
	wl_resource *resource = pacing->plugin()->bind_resource(client, &wp_fifo_manager_v1_interface, version, id);
	if (resource == nullptr) return;
	wl_resource_set_implementation(resource, &kManagerImpl, pacing, nullptr);
}

} // namespace

wl_global *Pacing::create_fifo_global(uint32_t version) {
	return wl_global_create(
		plugin_->display, &wp_fifo_manager_v1_interface, static_cast<int>(version), this, bind_manager);
}

} // namespace pixelport
