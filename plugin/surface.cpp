// Each wl_surface's state (SurfaceState), attached to the wlr_surface as a wlr_addon, and its
// commit hooks: at the client's commit they hand the commit to the hold ledger, the frame
// pacing, timing, the colour representation, the conversion and the stream, in that order;
// after the apply, to the pacing, timing and the conversion.
#include "surface_state.hpp"

#include <type_traits>

#include "buffer.hpp"
#include "color-representation-v1-protocol.h"
#include "color_representation.hpp"
#include "conversion.hpp"
#include "format_policy.hpp"
#include "hold.hpp"
#include "pacing.hpp"
#include "plugin.hpp"
#include "stream.hpp"
#include "timing.hpp"

namespace pixelport {

namespace {

// The addon's destroy: wlroots finishes the surface's addons right after its destroy signal.
void surface_addon_destroy(wlr_addon *addon);

const wlr_addon_interface kSurfaceAddon = {
	.name = "pixelport_surface",
	.destroy = surface_addon_destroy,
};

} // namespace

// Private parts the addon's destroy needs.
struct SurfaceStateAccess {
	static SurfaceState *from_addon(wlr_addon *addon) {
		static_assert(std::is_standard_layout_v<SurfaceState::AddonLink>);
		return reinterpret_cast<SurfaceState::AddonLink *>(addon)->state;
	}
	/** The commit being made carries its number through wlroots' cache. */
	static void stamp(SurfaceState *s) { s->stamp_pending_.commit = s->commits; }
};

namespace {

void surface_addon_destroy(wlr_addon *addon) {
	SurfaceState *s = SurfaceStateAccess::from_addon(addon);
	s->plugin->forget_surface(s);
}

// The commit number travels with its state through wlroots' cache (plain values: memcpy moves).
const wlr_surface_synced_impl kStampImpl = {
	.state_size = sizeof(uint64_t),
	.init_state = nullptr,
	.finish_state = nullptr,
	.move_state = nullptr,
};

} // namespace

SurfaceState::SurfaceState(pixelport_plugin *plugin, wlr_surface *surface, uint64_t id) :
	plugin(plugin), surface(surface), id(id), anchor_(std::make_shared<SurfaceRef::Anchor>()) {
	static_assert(sizeof(Stamp) == sizeof(uint64_t));
	anchor_->state = this;
	addon_.state = this;
	wlr_addon_init(&addon_.addon, &surface->addons, plugin, &kSurfaceAddon);
	wlr_surface_synced_init(&synced_, surface, &kStampImpl, &stamp_pending_, &stamp_current_);
}

SurfaceState::~SurfaceState() {
	anchor_->state = nullptr; // every SurfaceRef to it reads null from now on
	wlr_surface_synced_finish(&synced_);
	wlr_addon_finish(&addon_.addon);
}

SurfaceState *SurfaceState::find(const void *owner, wlr_surface *surface) {
	wlr_addon *addon = wlr_addon_find(&surface->addons, owner, &kSurfaceAddon);
	return addon != nullptr ? SurfaceStateAccess::from_addon(addon) : nullptr;
}

uint64_t SurfaceState::applied_commit() const { return stamp_current_.commit; }

} // namespace pixelport

using namespace pixelport;

namespace {

// Before wlroots caches or applies the state: mark our buffer busy, hold the commit while
// stream bytes are owed, and put a converted-format buffer behind a view of this commit.
void handle_client_commit(SurfaceState *s) {
	pixelport_plugin *pp = s->plugin;
	wlr_surface *surface = s->surface;
	s->commits++;
	SurfaceStateAccess::stamp(s);
	pp->holds->client_commit(s);
	pp->pacing->client_commit(s);
	if (pp->timing->active(s)) {
		pp->timing->client_commit(s, pixel_buffer_from_wlr(surface->pending.buffer));
	}
	// The commit's colour representation, checked against the buffer it shows.
	PixelBuffer *attached = (surface->pending.committed & WLR_SURFACE_STATE_BUFFER)
		? pixel_buffer_from_wlr(surface->pending.buffer)
		: nullptr;
	if (attached != nullptr) s->last_client_format = attached->client_format;
	pp->colors->client_commit(s, s->last_client_format);
	if (attached != nullptr && !(s->buffer_color == s->color)) {
		// Read otherwise than the last buffer: the whole buffer changes on screen (a GLES2
		// texture would otherwise take only the client's damage in the new reading).
		pixman_region32_union_rect(&surface->pending.buffer_damage, &surface->pending.buffer_damage, 0, 0,
			static_cast<unsigned>(attached->width()), static_cast<unsigned>(attached->height()));
		s->buffer_color = s->color;
	}
	pp->streams->note_color(wl_resource_get_client(surface->resource), s->color);
	if (!(surface->pending.committed & WLR_SURFACE_STATE_BUFFER)) {
		return;
	}
	PixelBuffer *converted = nullptr;
	uint32_t renderer_format = 0;
	if (PixelBuffer *buffer = attached) {
		buffer->color = s->color;
		pixel_buffer_committed(buffer, s);
		renderer_format = buffer->renderer_format;
		// Straight colour in pixels the renderer would read as they are (wl_shm, or stream
		// rows stored as sent): a view premultiplies them, native formats included. Without
		// a kernel for it the client got pixel_format above.
		if (s->color.alpha_mode == WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT &&
			core::needs_conversion_for_alpha(buffer->stored_format) &&
			buffer->client_format == buffer->stored_format) {
			if (uint32_t straight = pp->formats->straight_target_for(buffer->stored_format)) {
				renderer_format = straight;
				converted = buffer;
			}
		}
		if (!buffer->native()) converted = buffer;
	}
	// Converted views: a buffer the plugin holds nothing for (a native one, a null attach)
	// supersedes the held ones, which go with the rest below.
	pp->conversions->surface_client_commit(s, converted, renderer_format);
	if (surface->pending.buffer == nullptr) {
		// A null attach unmaps, and a role checks the commits after it against that (an
		// xdg_surface must be configured again): held behind our commits, the role would
		// see the next ones as before the unmap and abort at the next unmap
		// (xdg_surface_role_commit: !initial_commit). Ours apply now, then this one.
		pp->holds->let_go(s, LetGo::Replaced, Release::Now);
		return;
	}
	if (attached != nullptr) pp->streams->handle_client_commit(s, attached);
}

} // namespace

void pixelport_plugin::track_surface(wlr_surface *surface) {
	auto *s = new SurfaceState(this, surface, next_surface_id++);
	s->link = surface_list.insert(surface_list.end(), s);
	s->client_commit.connect(&surface->events.client_commit, [s](void *) {
		handle_client_commit(s);
		s->plugin->holds->client_commit_done(s);
	});
	// After the state is applied.
	s->commit.connect(&surface->events.commit, [s](void *) {
		if (s->redrawing) return;
		s->plugin->pacing->applied(s);
		s->plugin->timing->applied(s, pixel_buffer_from_wlr(s->surface->current.buffer));
		s->plugin->conversions->surface_committed(s);
	});
}

void pixelport_plugin::forget_surface(SurfaceState *s) {
	holds->surface_destroyed(s);
	pacing->surface_destroyed(s);
	timing->surface_destroyed(s);
	conversions->surface_destroyed(s);
	surface_list.erase(s->link);
	delete s;
}
