// The plugin object: the public C API (pixelport.h), which creates the wl_shm, stream and
// timing globals (shm.cpp, stream.cpp, timing.cpp), and each surface's state and commit hooks.
#include "pixelport/pixelport.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "buffer.hpp"
#include "color-representation-v1-protocol.h"
#include "color_representation.hpp"
#include "conversion.hpp"
#include "format_policy.hpp"
#include "plugin.hpp"
#include "shm.hpp"
#include "stream.hpp"
#include "timing.hpp"
#include "unmap.hpp"

extern "C" PIXELPORT_API const uint32_t pixelport_abi_version = PIXELPORT_ABI_VERSION;

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
		if (s->plugin->timing->active(s)) {
			s->plugin->timing->client_commit(s, pixel_buffer_from_wlr(s->surface->pending.buffer));
		}
		// The commit's colour representation, checked against the buffer it shows.
		PixelBuffer *attached = (s->surface->pending.committed & WLR_SURFACE_STATE_BUFFER)
			? pixel_buffer_from_wlr(s->surface->pending.buffer)
			: nullptr;
		if (attached != nullptr) s->last_fourcc = attached->client_fourcc();
		s->plugin->colors->client_commit(s, s->last_fourcc);
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
		uint32_t target = 0;
		if (PixelBuffer *buffer = attached) {
			buffer->color = s->color;
			pixel_buffer_committed(buffer, s->surface);
			s->plugin->streams->handle_client_commit(s, buffer);
			target = buffer->target;
			// Straight colour in pixels the renderer would read as they are (wl_shm, or stream
			// rows stored as sent): a view premultiplies them, native formats included. Without
			// a kernel for it the client got pixel_format above.
			if (s->color.alpha_mode == WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT &&
				core::needs_conversion_for_alpha(buffer->fourcc) &&
				buffer->client_fourcc() == buffer->fourcc) {
				if (uint32_t straight = s->plugin->formats->straight_target_for(buffer->fourcc)) {
					target = straight;
					converted = buffer;
				}
			}
			if (!buffer->native()) converted = buffer;
		}
		s->plugin->conversions->surface_client_commit(s, converted, target);
		if (s->surface->pending.cached_state_locks > 0) {
			s->plugin->note_holding(s);
		}
	});
	// After the state is applied.
	s->commit.connect(&surface->events.commit, [s](void *) {
		s->plugin->timing->applied(s, pixel_buffer_from_wlr(s->surface->current.buffer));
		s->plugin->conversions->surface_committed(s);
	});
	s->destroy.connect(&surface->events.destroy, [this, s, surface](void *) {
		timing->surface_destroyed(s);
		conversions->surface_destroyed(s);
		surfaces.erase(surface);
	});
	surfaces[surface] = std::move(state);
}

void pixelport_plugin::note_holding(SurfaceState *s) {
	// Once per surface; those gone or with nothing cached any more leave.
	std::erase_if(holding, [this](const auto &h) {
		return surface_state(h.first, h.second) == nullptr || wl_list_empty(&h.first->cached);
	});
	if (std::find(holding.begin(), holding.end(), std::pair{s->surface, s->id}) == holding.end()) {
		holding.push_back({s->surface, s->id});
	}
}

void pixelport_plugin::release_holds(SurfaceState *s) {
	std::pair<wlr_surface *, uint64_t> key{s->surface, s->id};
	streams->release_held(s);
	conversions->release_held(s);
	std::erase(holding, key);
}

namespace {

// Before each request is dispatched: a request destroying the role object of a surface with
// held commits (xdg_toplevel, xdg_popup, xdg_surface, wl_subsurface, ... all "destroy") first
// applies them, as stock wlroots did long before. Applied after it, they would count as the
// first commit of a role object made meanwhile (mapping it unconfigured, or aborting wlroots
// at the next unmap), and a new xdg_surface would not see that the surface has a buffer.
void role_destroy_logger(void *data, wl_protocol_logger_type type, const wl_protocol_logger_message *message) {
	auto *pp = static_cast<pixelport_plugin *>(data);
	if (type != WL_PROTOCOL_LOGGER_REQUEST || pp->holding.empty() ||
		strcmp(message->message->name, "destroy") != 0) {
		return;
	}
	for (const auto &[surface, id] : std::vector(pp->holding)) {
		SurfaceState *s = pp->surface_state(surface, id);
		if (s == nullptr || wl_list_empty(&surface->cached)) {
			std::erase(pp->holding, std::pair{surface, id});
			continue;
		}
		wlr_xdg_surface *xdg = wlr_xdg_surface_try_from_wlr_surface(surface);
		if (message->resource == surface->role_resource ||
			(xdg != nullptr && message->resource == xdg->role_resource)) {
			pp->release_holds(s);
		}
	}
}

} // namespace

extern "C" {

PIXELPORT_API struct pixelport_plugin *pixelport_create(
	struct wl_display *display, struct wlr_renderer *renderer, const struct pixelport_options *options) {
	if (display == nullptr || renderer == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: pixelport_create needs a display and a renderer");
		return nullptr;
	}
	if (options != nullptr && options->struct_size == 0) {
		wlr_log(WLR_ERROR,
			"pixelport: pixelport_options.struct_size is 0: set it to sizeof(struct pixelport_options)");
		return nullptr;
	}
	auto *pp = new (std::nothrow) pixelport_plugin();
	if (pp == nullptr) {
		return nullptr;
	}
	pp->display = display;
	pp->renderer = renderer;
	unmapper_start();
	if (options != nullptr) {
		// As far as the host's struct reaches: fields it does not know keep their defaults.
		memcpy(&pp->options, options, std::min(options->struct_size, sizeof pp->options));
	}
	pp->options.struct_size = sizeof pp->options;
	pp->stats.struct_size = sizeof pp->stats;
	uint32_t version = pp->options.shm_version == 0 ? 2 : pp->options.shm_version;
	if (version > 2) {
		wlr_log(WLR_ERROR, "pixelport: wl_shm version %u not supported (max 2)", version);
		delete pp;
		return nullptr;
	}
	const wlr_drm_format_set *formats = wlr_renderer_get_texture_formats(renderer, WLR_BUFFER_CAP_DATA_PTR);
	std::vector<uint32_t> renderer_formats;
	for (size_t i = 0; formats != nullptr && i < formats->len; i++) {
		renderer_formats.push_back(formats->formats[i].format);
	}
	pp->formats = std::make_unique<FormatPolicy>(renderer_formats);
	pixelport_options &o = pp->options;
	if (o.stream_size_hint == 0) o.stream_size_hint = 1u << 20;
	// The other stream_* limits stay 0 = default: stream.cpp sizes those to the outputs.
	// The main thread converts only small updates; the workers (options.convert_threads) the rest.
	pp->convert_options.threads = 1;

	pp->conversions = Conversions::create(pp);
	pp->shm = Shm::create(pp, version);
	if (pp->shm == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: failed to create wl_shm");
		delete pp;
		return nullptr;
	}
	pp->streams = StreamManager::create(pp);
	if (pp->streams == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: failed to create the stream global");
		delete pp;
		return nullptr;
	}
	const char *log = o.timing_log_path != nullptr ? o.timing_log_path : getenv("PIXELPORT_TIMING_LOG");
	const char *trace = o.timing_trace_path != nullptr ? o.timing_trace_path : getenv("PIXELPORT_TIMING_TRACE");
	pp->timing = Timing::create(pp, log, trace);
	if (pp->timing == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: failed to set up timing");
		delete pp;
		return nullptr;
	}
	pp->colors = ColorRepresentation::create(pp);
	if (pp->colors == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: failed to create the colour representation global");
		delete pp;
		return nullptr;
	}
	pp->role_logger = wl_display_add_protocol_logger(display, role_destroy_logger, pp);
	// libwayland destroys globals with the display; ours must not destroy theirs twice.
	pp->display_destroy.connect_display_destroy(display, [pp](void *) {
		if (pp->shm) pp->shm->forget_global();
		if (pp->streams) pp->streams->forget_global();
		if (pp->timing) pp->timing->forget_global();
		if (pp->colors) pp->colors->forget_global();
		if (pp->role_logger) wl_protocol_logger_destroy(pp->role_logger); // the display does not
		pp->role_logger = nullptr;
	});
	wlr_log(WLR_INFO, "pixelport: serving wl_shm v%u with %zu formats (%zu native) (ABI %u)", version,
		pp->shm->formats().size(), pp->formats->native_count(), PIXELPORT_ABI_VERSION);
	return pp;
}

PIXELPORT_API bool pixelport_attach_compositor(struct pixelport_plugin *pp, struct wlr_compositor *compositor) {
	if (pp == nullptr || compositor == nullptr || pp->compositor != nullptr) {
		return false;
	}
	pp->compositor = compositor;
	pp->new_surface.connect(&compositor->events.new_surface,
		[pp](void *data) { pp->track_surface(static_cast<wlr_surface *>(data)); });
	pp->compositor_destroy.connect(&compositor->events.destroy, [pp](void *) {
		pp->surfaces.clear();
		pp->new_surface.disconnect();
		pp->compositor_destroy.disconnect();
		pp->compositor = nullptr;
	});
	return true;
}

PIXELPORT_API void pixelport_attach_output(struct pixelport_plugin *pp, struct wlr_output *output) {
	if (pp != nullptr && output != nullptr) {
		pp->timing->attach_output(output);
		pp->conversions->attach_output(output);
	}
}

PIXELPORT_API size_t pixelport_timing_summary(struct pixelport_plugin *pp, char *buf, size_t size) {
	std::string text = pp != nullptr ? pp->timing->summary() : std::string();
	if (buf != nullptr && size > 0) {
		size_t n = std::min(size - 1, text.size());
		memcpy(buf, text.data(), n);
		buf[n] = '\0';
	}
	return text.size();
}

PIXELPORT_API void pixelport_get_stats(struct pixelport_plugin *pp, struct pixelport_stats *stats) {
	if (stats == nullptr || stats->struct_size == 0) return;
	pixelport_stats mine = pp != nullptr ? pp->stats : pixelport_stats{};
	if (pp != nullptr) mine.image_bytes = pp->conversions->total_bytes();
	// Everything after struct_size, as far as both know.
	constexpr size_t first = sizeof(pixelport_stats::struct_size);
	const size_t end = std::min(stats->struct_size, sizeof mine);
	if (end > first) {
		memcpy(reinterpret_cast<char *>(stats) + first, reinterpret_cast<const char *>(&mine) + first,
			end - first);
	}
}

PIXELPORT_API void pixelport_destroy(struct pixelport_plugin *pp) {
	if (pp == nullptr) return;
	// Surfaces first: their timing records end (as discarded) while Timing still exists.
	for (auto &[surface, state] : pp->surfaces) {
		pp->timing->surface_destroyed(state.get());
		pp->conversions->surface_destroyed(state.get());
	}
	pp->surfaces.clear();
	if (pp->role_logger != nullptr) wl_protocol_logger_destroy(pp->role_logger);
	// Listeners disconnect in their destructors.
	delete pp;
}

} // extern "C"
