// The public C API (pixelport.h): the plugin, its globals (made by shm.cpp, stream.cpp, timing.cpp,
// color_representation.cpp, fifo.cpp and commit_timing.cpp, owned here) and their lifetimes. Each surface's state and commit
// hooks are in surface.cpp.
#include "pixelport/pixelport.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "client_account.hpp"
#include "color_representation.hpp"
#include "conversion.hpp"
#include "format_policy.hpp"
#include "pacing.hpp"
#include "plugin.hpp"
#include "shm.hpp"
#include "stream.hpp"
#include "timing.hpp"
#include "unmap.hpp"

extern "C" PIXELPORT_API const uint32_t pixelport_abi_version = PIXELPORT_ABI_VERSION;

using namespace pixelport;

namespace pixelport {

/**
 * A global a host made (pixelport_shm_create, ...). The host's handle is this object; it
 * stays allocated after the host destroyed it, until the plugin goes, because libwayland may
 * still call the removed global's bind for a client that saw it before the removal.
 */
struct PluginGlobal {
	virtual ~PluginGlobal() = default; // owned through this base, made as the public types below
	wl_global *global = nullptr;
	wl_signal destroy;
	/** The host destroyed it: removed from clients' view, its listeners called. */
	bool removed = false;
	const char *interface = "";
};

} // namespace pixelport

// The public handles: one type per global, as the header declares them.
struct pixelport_shm : PluginGlobal {};
struct pixelport_stream_manager : PluginGlobal {};
struct pixelport_timing_manager : PluginGlobal {};
struct pixelport_color_representation_manager : PluginGlobal {};
struct pixelport_fifo_manager : PluginGlobal {};
struct pixelport_commit_timing_manager : PluginGlobal {};

pixelport_plugin::pixelport_plugin() { wl_signal_init(&destroy_signal); }
pixelport_plugin::~pixelport_plugin() = default;

namespace {

// A global the host has not destroyed yet: its destroy listeners run and, with `remove`, it
// leaves clients' view (the plugin lives on for clients that hold objects); without it (the
// display is going and destroys it) only the listeners run. Once per global.
void end_global(PluginGlobal *global, bool remove) {
	if (global == nullptr || global->removed) return;
	global->removed = true;
	wl_signal_emit_mutable(&global->destroy, global);
	if (remove) wl_global_remove(global->global);
}

// Every global of the plugin's, in the order made.
void end_globals(pixelport_plugin *pp, bool remove) {
	for (auto &g : pp->globals) end_global(g.get(), remove);
}

// Every surface's state goes, as each would with its surface.
void forget_surfaces(pixelport_plugin *pp) {
	while (!pp->surface_list.empty()) pp->forget_surface(pp->surface_list.front());
}

// Detaches and frees the plugin: its surfaces' state, listeners, globals and modules.
void plugin_free(pixelport_plugin *pp) {
	// Surfaces first: their timing records end (as discarded) while Timing still exists.
	forget_surfaces(pp);
	if (pp->retire_idle != nullptr) wl_event_source_remove(pp->retire_idle);
	for (auto &g : pp->globals) wl_global_destroy(g->global);
	for (wl_client *client : pp->bound_clients) client_account_unbind(client, pp);
	// Listeners disconnect in their destructors.
	delete pp;
}

// From the client's record, when a client that bound a global of the plugin's goes.
void bound_client_gone(void *owner, wl_client *client) {
	auto *pp = static_cast<pixelport_plugin *>(owner);
	pp->bound_clients.erase(client);
	if (pp->retiring && pp->bound_clients.empty() && pp->retire_idle == nullptr) {
		// The client's resources are destroyed after its destroy listeners ran: free the plugin
		// once they are.
		pp->retire_idle = wl_event_loop_add_idle(
			wl_display_get_event_loop(pp->display),
			[](void *data) {
				auto *plugin = static_cast<pixelport_plugin *>(data);
				plugin->retire_idle = nullptr;
				// A client that saw a global before its removal may have bound it meanwhile:
				// then the plugin waits for that one too.
				if (plugin->bound_clients.empty()) plugin_free(plugin);
			},
			pp);
	}
}

template <typename Global>
Global *global_create(pixelport_plugin *pp, const char *interface, uint32_t version, uint32_t max_version,
	wl_global *(*make)(pixelport_plugin *, uint32_t)) {
	if (pp == nullptr || pp->retiring) {
		wlr_log(WLR_ERROR, "pixelport: %s needs a plugin", interface);
		return nullptr;
	}
	if (version < 1 || version > max_version) {
		wlr_log(WLR_ERROR, "pixelport: %s version %u not supported (1 to %u)", interface, version, max_version);
		return nullptr;
	}
	for (auto &g : pp->globals) {
		if (!g->removed && strcmp(g->interface, interface) == 0) {
			wlr_log(WLR_ERROR, "pixelport: the plugin already has a %s global", interface);
			return nullptr;
		}
	}
	auto made = std::make_unique<Global>();
	made->interface = interface;
	wl_signal_init(&made->destroy);
	made->global = make(pp, version);
	if (made->global == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: failed to create the %s global", interface);
		return nullptr;
	}
	Global *global = made.get();
	pp->globals.push_back(std::move(made));
	return global;
}

void global_destroy(PluginGlobal *global) { end_global(global, true); }

void global_add_destroy_listener(PluginGlobal *global, wl_listener *listener) {
	if (global != nullptr && listener != nullptr) wl_signal_add(&global->destroy, listener);
}

} // namespace

wl_resource *pixelport_plugin::bind_resource(
	wl_client *client, const wl_interface *interface, uint32_t version, uint32_t id) {
	// The plugin is not freed before the client is gone (its resources' user data point into
	// the plugin): its record tells the plugin when it goes.
	if (!bound_clients.contains(client)) {
		if (!client_account_bind(client, {this, bound_client_gone})) return nullptr;
		bound_clients.insert(client);
	}
	wl_resource *resource = wl_resource_create(client, interface, static_cast<int>(version), id);
	if (resource == nullptr) wl_client_post_no_memory(client);
	return resource;
}

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

	pp->holds = HoldLedger::create(display, &pp->stats, SurfaceState::find, pp);
	if (pp->holds == nullptr) {
		delete pp;
		return nullptr;
	}
	pp->conversions = Conversions::create(pp);
	pp->shm = Shm::create(pp);
	if (pp->shm == nullptr) {
		delete pp;
		return nullptr;
	}
	pp->streams = StreamManager::create(pp);
	const char *log = o.timing_log_path != nullptr ? o.timing_log_path : getenv("PIXELPORT_TIMING_LOG");
	const char *trace = o.timing_trace_path != nullptr ? o.timing_trace_path : getenv("PIXELPORT_TIMING_TRACE");
	pp->timing = Timing::create(pp, log, trace);
	if (pp->timing == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: failed to set up timing");
		delete pp;
		return nullptr;
	}
	pp->colors = ColorRepresentation::create(pp);
	pp->pacing = Pacing::create(pp);
	if (pp->pacing == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: failed to set up frame pacing (no timer)");
		delete pp;
		return nullptr;
	}
	// Destroyed with the display, as wlroots' globals are; the display is still whole here.
	pp->display_destroy.connect_display_destroy(display, [pp](void *) {
		if (!pp->retiring) {
			wl_signal_emit_mutable(&pp->destroy_signal, pp);
			end_globals(pp, false);
		}
		plugin_free(pp);
	});
	wlr_log(WLR_INFO, "pixelport: %zu wl_shm formats (%zu native) (ABI %u)", pp->shm->formats().size(),
		pp->formats->native_count(), PIXELPORT_ABI_VERSION);
	return pp;
}

PIXELPORT_API struct pixelport_shm *pixelport_shm_create(struct pixelport_plugin *pp, uint32_t version) {
	return global_create<pixelport_shm>(
		pp, "wl_shm", version, 2, [](pixelport_plugin *p, uint32_t v) { return p->shm->create_global(v); });
}

PIXELPORT_API void pixelport_shm_destroy(struct pixelport_shm *shm) { global_destroy(shm); }

PIXELPORT_API void pixelport_shm_add_destroy_listener(struct pixelport_shm *shm, struct wl_listener *listener) {
	global_add_destroy_listener(shm, listener);
}

PIXELPORT_API struct pixelport_stream_manager *pixelport_stream_manager_create(
	struct pixelport_plugin *pp, uint32_t version) {
	return global_create<pixelport_stream_manager>(pp, "pp_stream_manager_v1", version, 1,
		[](pixelport_plugin *p, uint32_t v) { return p->streams->create_global(v); });
}

PIXELPORT_API void pixelport_stream_manager_destroy(struct pixelport_stream_manager *manager) {
	global_destroy(manager);
}

PIXELPORT_API void pixelport_stream_manager_add_destroy_listener(
	struct pixelport_stream_manager *manager, struct wl_listener *listener) {
	global_add_destroy_listener(manager, listener);
}

PIXELPORT_API struct pixelport_timing_manager *pixelport_timing_manager_create(
	struct pixelport_plugin *pp, uint32_t version) {
	return global_create<pixelport_timing_manager>(pp, "pp_timing_manager_v1", version, 4,
		[](pixelport_plugin *p, uint32_t v) { return p->timing->create_global(v); });
}

PIXELPORT_API void pixelport_timing_manager_destroy(struct pixelport_timing_manager *manager) {
	global_destroy(manager);
}

PIXELPORT_API void pixelport_timing_manager_add_destroy_listener(
	struct pixelport_timing_manager *manager, struct wl_listener *listener) {
	global_add_destroy_listener(manager, listener);
}

PIXELPORT_API struct pixelport_color_representation_manager *pixelport_color_representation_manager_create(
	struct pixelport_plugin *pp, uint32_t version) {
	return global_create<pixelport_color_representation_manager>(pp, "wp_color_representation_manager_v1", version,
		1, [](pixelport_plugin *p, uint32_t v) { return p->colors->create_global(v); });
}

PIXELPORT_API void pixelport_color_representation_manager_destroy(
	struct pixelport_color_representation_manager *manager) {
	global_destroy(manager);
}

PIXELPORT_API void pixelport_color_representation_manager_add_destroy_listener(
	struct pixelport_color_representation_manager *manager, struct wl_listener *listener) {
	global_add_destroy_listener(manager, listener);
}

PIXELPORT_API struct pixelport_fifo_manager *pixelport_fifo_manager_create(
	struct pixelport_plugin *pp, uint32_t version) {
	return global_create<pixelport_fifo_manager>(pp, "wp_fifo_manager_v1", version, 1,
		[](pixelport_plugin *p, uint32_t v) { return p->pacing->create_fifo_global(v); });
}

PIXELPORT_API void pixelport_fifo_manager_destroy(struct pixelport_fifo_manager *manager) { global_destroy(manager); }

PIXELPORT_API void pixelport_fifo_manager_add_destroy_listener(
	struct pixelport_fifo_manager *manager, struct wl_listener *listener) {
	global_add_destroy_listener(manager, listener);
}

PIXELPORT_API struct pixelport_commit_timing_manager *pixelport_commit_timing_manager_create(
	struct pixelport_plugin *pp, uint32_t version) {
	return global_create<pixelport_commit_timing_manager>(pp, "wp_commit_timing_manager_v1", version, 1,
		[](pixelport_plugin *p, uint32_t v) { return p->pacing->create_commit_timing_global(v); });
}

PIXELPORT_API void pixelport_commit_timing_manager_destroy(struct pixelport_commit_timing_manager *manager) {
	global_destroy(manager);
}

PIXELPORT_API void pixelport_commit_timing_manager_add_destroy_listener(
	struct pixelport_commit_timing_manager *manager, struct wl_listener *listener) {
	global_add_destroy_listener(manager, listener);
}

PIXELPORT_API bool pixelport_create_globals(struct pixelport_plugin *pp) {
	if (pp == nullptr) return false;
	uint32_t shm_version = pp->options.shm_version == 0 ? 2 : pp->options.shm_version;
	pixelport_shm *shm = pixelport_shm_create(pp, shm_version);
	pixelport_stream_manager *streams = shm != nullptr ? pixelport_stream_manager_create(pp, 1) : nullptr;
	pixelport_timing_manager *timing = streams != nullptr ? pixelport_timing_manager_create(pp, 4) : nullptr;
	pixelport_color_representation_manager *colors =
		timing != nullptr ? pixelport_color_representation_manager_create(pp, 1) : nullptr;
	// The pacing globals unless the options leave them out.
	const bool want_fifo = pp->options.fifo_off == 0, want_timing = pp->options.commit_timing_off == 0;
	pixelport_fifo_manager *fifo = colors != nullptr && want_fifo ? pixelport_fifo_manager_create(pp, 1) : nullptr;
	pixelport_commit_timing_manager *timer = colors != nullptr && (fifo != nullptr || !want_fifo) && want_timing
		? pixelport_commit_timing_manager_create(pp, 1)
		: nullptr;
	if (colors == nullptr || (want_fifo && fifo == nullptr) || (want_timing && timer == nullptr)) {
		pixelport_fifo_manager_destroy(fifo);
		pixelport_color_representation_manager_destroy(colors);
		pixelport_timing_manager_destroy(timing);
		pixelport_stream_manager_destroy(streams);
		pixelport_shm_destroy(shm);
		return false;
	}
	wlr_log(WLR_INFO,
		"pixelport: serving wl_shm v%u, pp_stream_manager_v1, pp_timing_manager_v1, "
		"wp_color_representation_manager_v1%s%s",
		shm_version, fifo != nullptr ? ", wp_fifo_manager_v1" : "",
		timer != nullptr ? ", wp_commit_timing_manager_v1" : "");
	return true;
}

PIXELPORT_API void pixelport_add_destroy_listener(struct pixelport_plugin *pp, struct wl_listener *listener) {
	if (pp != nullptr && listener != nullptr) wl_signal_add(&pp->destroy_signal, listener);
}

PIXELPORT_API bool pixelport_attach_compositor(struct pixelport_plugin *pp, struct wlr_compositor *compositor) {
	if (pp == nullptr || compositor == nullptr || pp->compositor != nullptr) {
		return false;
	}
	pp->compositor = compositor;
	pp->new_surface.connect(&compositor->events.new_surface,
		[pp](void *data) { pp->track_surface(static_cast<wlr_surface *>(data)); });
	pp->compositor_destroy.connect(&compositor->events.destroy, [pp](void *) {
		forget_surfaces(pp);
		pp->new_surface.disconnect();
		pp->compositor_destroy.disconnect();
		pp->compositor = nullptr;
	});
	return true;
}

PIXELPORT_API void pixelport_attach_output(struct pixelport_plugin *pp, struct wlr_output *output) {
	if (pp != nullptr && output != nullptr) {
		auto o = std::make_unique<pixelport_plugin::Output>();
		pixelport_plugin::Output *raw = o.get();
		raw->output = output;
		// Pacing first: its present listener fills a missing refresh for those after it.
		raw->pacing = pp->pacing->attach_output(output);
		raw->timing = pp->timing->attach_output(output);
		raw->destroy.connect(&output->events.destroy, [pp, raw](void *) {
			pp->timing->detach_output(*raw->timing);
			pp->pacing->detach_output(*raw->pacing);
			std::erase_if(pp->outputs, [raw](const auto &p) { return p.get() == raw; });
		});
		pp->outputs.push_back(std::move(o));
	}
}

uint64_t pixelport_plugin::largest_output_pixels() const {
	uint64_t largest = 0;
	for (const auto &o : outputs) {
		largest = std::max(
			largest, static_cast<uint64_t>(o->output->width) * static_cast<uint64_t>(o->output->height));
	}
	return largest;
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
	pixelport_stats mine{};
	if (pp != nullptr) {
		pp->stats.fill(&mine);
		mine.image_bytes = pp->conversions->total_bytes();
	}
	// Everything after struct_size, as far as both know.
	constexpr size_t first = sizeof(pixelport_stats::struct_size);
	const size_t end = std::min(stats->struct_size, sizeof mine);
	if (end > first) {
		memcpy(reinterpret_cast<char *>(stats) + first, reinterpret_cast<const char *>(&mine) + first,
			end - first);
	}
}

PIXELPORT_API void pixelport_destroy(struct pixelport_plugin *pp) {
	if (pp == nullptr || pp->retiring) return;
	wl_signal_emit_mutable(&pp->destroy_signal, pp);
	end_globals(pp, true);
	if (pp->bound_clients.empty()) {
		plugin_free(pp);
		return;
	}
	// Clients still hold objects whose user data point into the plugin: it serves them until
	// the last disconnects (bound_client_destroyed) or the display goes.
	pp->retiring = true;
	wlr_log(WLR_DEBUG, "pixelport: destroyed with %zu clients connected: freed when they are gone",
		pp->bound_clients.size());
}

} // extern "C"
