// Each wl_surface's state (SurfaceState) and its commit hooks: at the client's commit they hand
// the attached buffer to timing, the colour representation, the stream and the conversion, in
// that order; after the apply, to timing and the conversion. Commits held for stream bytes or a
// worker are released before a role object's destroy request.
#include <algorithm>
#include <cstring>

#include "buffer.hpp"
#include "color-representation-v1-protocol.h"
#include "color_representation.hpp"
#include "conversion.hpp"
#include "format_policy.hpp"
#include "plugin.hpp"
#include "stream.hpp"
#include "timing.hpp"

using namespace pixelport;

SurfaceState::SurfaceState() = default;
SurfaceState::~SurfaceState() = default;

void pixelport_plugin::track_surface(wlr_surface *surface) {
	auto state = std::make_unique<SurfaceState>();
	SurfaceState *s = state.get();
	s->plugin = this;
	s->surface = surface;
	s->id = next_surface_id++;
	// Before wlroots caches or applies the state: mark our buffer busy, hold the commit while
	// stream bytes are owed, and put a converted-format buffer behind a view of this commit.
	s->client_commit.connect(&surface->events.client_commit, [s](void *) {
		s->commits++;
		s->plugin->conversions->limit_held(s);
		if (s->plugin->timing->active(s)) {
			s->plugin->timing->client_commit(s, pixel_buffer_from_wlr(s->surface->pending.buffer));
		}
		// The commit's colour representation, checked against the buffer it shows.
		PixelBuffer *attached = (s->surface->pending.committed & WLR_SURFACE_STATE_BUFFER)
			? pixel_buffer_from_wlr(s->surface->pending.buffer)
			: nullptr;
		if (attached != nullptr) s->last_client_format = attached->client_format;
		s->plugin->colors->client_commit(s, s->last_client_format);
		if (attached != nullptr && !(s->buffer_color == s->color)) {
			// Read otherwise than the last buffer: the whole buffer changes on screen (a GLES2
			// texture would otherwise take only the client's damage in the new reading).
			pixman_region32_union_rect(&s->surface->pending.buffer_damage,
				&s->surface->pending.buffer_damage, 0, 0, static_cast<unsigned>(attached->width()),
				static_cast<unsigned>(attached->height()));
			s->buffer_color = s->color;
		}
		s->plugin->streams->note_color(wl_resource_get_client(s->surface->resource), s->color);
		if (!(s->surface->pending.committed & WLR_SURFACE_STATE_BUFFER)) {
			return;
		}
		if (s->surface->pending.buffer == nullptr && !wl_list_empty(&s->surface->cached)) {
			// A null attach unmaps, and a role checks the commits after it against that (an
			// xdg_surface must be configured again): held behind our commits, the role would
			// see the next ones as before the unmap and abort at the next unmap
			// (xdg_surface_role_commit: !initial_commit). Ours apply now, then this one.
			s->plugin->release_holds(s);
		}
		PixelBuffer *converted = nullptr;
		uint32_t renderer_format = 0;
		if (PixelBuffer *buffer = attached) {
			buffer->color = s->color;
			pixel_buffer_committed(buffer, s->surface);
			s->plugin->streams->handle_client_commit(s, buffer);
			renderer_format = buffer->renderer_format;
			// Straight colour in pixels the renderer would read as they are (wl_shm, or stream
			// rows stored as sent): a view premultiplies them, native formats included. Without
			// a kernel for it the client got pixel_format above.
			if (s->color.alpha_mode == WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT &&
				core::needs_conversion_for_alpha(buffer->stored_format) &&
				buffer->client_format == buffer->stored_format) {
				if (uint32_t straight =
						s->plugin->formats->straight_target_for(buffer->stored_format)) {
					renderer_format = straight;
					converted = buffer;
				}
			}
			if (!buffer->native()) converted = buffer;
		}
		s->plugin->conversions->surface_client_commit(s, converted, renderer_format);
		if (s->surface->pending.cached_state_locks > 0) {
			s->plugin->note_holding(s);
		}
	});
	// After the state is applied.
	s->commit.connect(&surface->events.commit, [s](void *) {
		if (s->redrawing) return;
		s->plugin->timing->applied(s, pixel_buffer_from_wlr(s->surface->current.buffer));
		s->plugin->conversions->surface_committed(s);
	});
	s->destroy.connect(&surface->events.destroy, [this, surface](void *) { forget_surface(surface); });
	surfaces[surface] = std::move(state);
}

namespace {

// The surface's entries in `holding` go.
void unhold_roles(pixelport_plugin *pp, SurfaceState *s) {
	for (wl_resource *&role : s->held_roles) {
		if (role != nullptr) pp->holding.erase(std::exchange(role, nullptr));
	}
}

} // namespace

void pixelport_plugin::note_holding(SurfaceState *s) {
	// The role objects now: a role made since the last hold replaces the one noted then.
	wlr_xdg_surface *xdg = wlr_xdg_surface_try_from_wlr_surface(s->surface);
	wl_resource *roles[2] = {s->surface->role_resource, xdg != nullptr ? xdg->role_resource : nullptr};
	if (roles[0] == s->held_roles[0] && roles[1] == s->held_roles[1]) return;
	unhold_roles(this, s);
	for (int i = 0; i < 2; i++) {
		if (roles[i] == nullptr) continue;
		s->held_roles[i] = roles[i];
		holding[roles[i]] = s->ref();
	}
}

void pixelport_plugin::release_holds(SurfaceState *s) {
	streams->release_held(s);
	conversions->release_held(s);
	unhold_roles(this, s);
}

void pixelport_plugin::forget_surface(wlr_surface *surface) {
	auto it = surfaces.find(surface);
	if (it == surfaces.end()) return;
	SurfaceState *s = it->second.get();
	unhold_roles(this, s);
	timing->surface_destroyed(s);
	conversions->surface_destroyed(s);
	surfaces.erase(it);
}

namespace {

// Before each request is dispatched: a request destroying the role object of a surface with
// held commits (xdg_toplevel, xdg_popup, xdg_surface, wl_subsurface, ... all "destroy") first
// applies them, as stock wlroots did long before. Applied after it, they would count as the
// first commit of a role object made meanwhile (mapping it unconfigured, or aborting wlroots
// at the next unmap), and a new xdg_surface would not see that the surface has a buffer. One
// hash lookup per destroy request, whatever the number of surfaces holding commits.
// A wl_subsurface.set_desync: wlroots applies a desynchronized child's cached state only at
// its own commits or when its parent applies while the child is still synchronized. Behind an
// ancestor's held commit that apply would come after this request, and the child's state would
// stay cached (the client waits for its frame for ever): its ancestors' held commits, up to the
// root, apply first, as they would have with stock.
void release_ancestors(pixelport_plugin *pp, wlr_subsurface *sub) {
	for (wlr_surface *parent = sub->parent; parent != nullptr;) {
		if (SurfaceState *s = pp->surface_state(parent)) pp->release_holds(s);
		wlr_subsurface *up = wlr_subsurface_try_from_wlr_surface(parent);
		parent = up != nullptr && up->synchronized ? up->parent : nullptr;
	}
}

void role_destroy_logger(void *data, wl_protocol_logger_type type, const wl_protocol_logger_message *message) {
	auto *pp = static_cast<pixelport_plugin *>(data);
	if (type != WL_PROTOCOL_LOGGER_REQUEST || pp->holding.empty()) return;
	const char *name = message->message->name;
	if (strcmp(name, "set_desync") == 0 && strcmp(wl_resource_get_class(message->resource), "wl_subsurface") == 0) {
		// wlroots' own wl_subsurface: its user data is the wlr_subsurface (null once inert).
		if (auto *sub = static_cast<wlr_subsurface *>(wl_resource_get_user_data(message->resource))) {
			release_ancestors(pp, sub);
		}
		return;
	}
	if (strcmp(name, "destroy") != 0) return;
	auto it = pp->holding.find(message->resource);
	if (it == pp->holding.end()) return;
	SurfaceState *s = pp->surface_state(it->second);
	if (s == nullptr) {
		pp->holding.erase(it);
		return;
	}
	pp->release_holds(s);
}

} // namespace

void pixelport_plugin::watch_role_destroys() {
	role_logger = wl_display_add_protocol_logger(display, role_destroy_logger, this);
}
