// wp_commit_timing_manager_v1 and wp_commit_timer_v1 (wayland-protocols staging, version 1):
// set_timestamp gives the surface's pending PacingRequest a target time; pacing.cpp holds the
// commit until the next frame would show it at or after that time.
#include <limits>
#include <new>

#include "commit-timing-v1-protocol.h"
#include "pacing.hpp"
#include "plugin.hpp"
#include "surface_state.hpp"

namespace pixelport {

namespace {

constexpr uint64_t kNsPerSecond = 1000000000u;

// A wp_commit_timer_v1's user data, as a wp_fifo_v1's (fifo.cpp): its surface's SurfacePacing,
// null once the surface is gone, kUntracked for a surface the plugin does not follow.
char untracked_marker;
void *const kUntracked = &untracked_marker;

void timer_set_timestamp(wl_client *, wl_resource *resource, uint32_t sec_hi, uint32_t sec_lo, uint32_t nsec) {
	void *data = wl_resource_get_user_data(resource);
	if (data == nullptr) {
		wl_resource_post_error(
			resource, WP_COMMIT_TIMER_V1_ERROR_SURFACE_DESTROYED, "the wl_surface was destroyed");
		return;
	}
	if (nsec >= kNsPerSecond) {
		wl_resource_post_error(resource, WP_COMMIT_TIMER_V1_ERROR_INVALID_TIMESTAMP,
			"tv_nsec %u is not below one second", nsec);
		return;
	}
	if (data == kUntracked) return;
	auto *p = static_cast<SurfacePacing *>(data);
	if (p->pending_request.has_target) {
		wl_resource_post_error(resource, WP_COMMIT_TIMER_V1_ERROR_TIMESTAMP_EXISTS,
			"the pending commit has a timestamp already");
		return;
	}
	// In 64 bits of ns: a time beyond (about 584 years of the clock) is as far as it gets.
	const uint64_t sec = static_cast<uint64_t>(sec_hi) << 32 | sec_lo;
	constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
	p->pending_request.target_ns = sec > (kMax - nsec) / kNsPerSecond ? kMax : sec * kNsPerSecond + nsec;
	p->pending_request.has_target = true;
}

void timer_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

const struct wp_commit_timer_v1_interface kTimerImpl = {
	.set_timestamp = timer_set_timestamp,
	.destroy = timer_destroy,
};

// Existing timing constraints are not affected by the destruction (the protocol).
void timer_resource_destroy(wl_resource *resource) {
	void *data = wl_resource_get_user_data(resource);
	if (data != nullptr && data != kUntracked) static_cast<SurfacePacing *>(data)->timer = nullptr;
}

void manager_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void manager_get_timer(wl_client *client, wl_resource *resource, uint32_t id, wl_resource *surface_resource) {
	auto *pacing = static_cast<Pacing *>(wl_resource_get_user_data(resource));
	SurfaceState *surface = pacing->plugin()->surface_state(wlr_surface_from_resource(surface_resource));
	if (surface != nullptr && surface->pacing != nullptr && surface->pacing->timer != nullptr) {
		wl_resource_post_error(resource, WP_COMMIT_TIMING_MANAGER_V1_ERROR_COMMIT_TIMER_EXISTS,
			"the wl_surface already has a wp_commit_timer_v1");
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
	wl_resource *timer =
		wl_resource_create(client, &wp_commit_timer_v1_interface, wl_resource_get_version(resource), id);
	if (timer == nullptr) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(timer, &kTimerImpl, data, timer_resource_destroy);
	if (data != kUntracked) static_cast<SurfacePacing *>(data)->timer = timer;
}

const struct wp_commit_timing_manager_v1_interface kManagerImpl = {
	.destroy = manager_destroy,
	.get_timer = manager_get_timer,
};

void bind_manager(wl_client *client, void *data, uint32_t version, uint32_t id) {
	auto *pacing = static_cast<Pacing *>(data);
	wl_resource *resource =
		pacing->plugin()->bind_resource(client, &wp_commit_timing_manager_v1_interface, version, id);
	if (resource == nullptr) return;
	wl_resource_set_implementation(resource, &kManagerImpl, pacing, nullptr);
}

} // namespace

wl_global *Pacing::create_commit_timing_global(uint32_t version) {
	return wl_global_create(plugin_->display, &wp_commit_timing_manager_v1_interface, static_cast<int>(version),
		this, bind_manager);
}

} // namespace pixelport
