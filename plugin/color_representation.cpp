#include "color_representation.hpp"

#include <new>

#include "color-representation-v1-protocol.h"
#include "format_policy.hpp"
#include "pixelport/core/format.hpp"
#include "plugin.hpp"

namespace pixelport {

namespace {

// What the core converts exactly: these coefficients, each in both ranges.
constexpr uint32_t kCoefficients[] = {
	WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT601,
	WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT709,
	WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT2020,
};
constexpr uint32_t kRanges[] = {
	WP_COLOR_REPRESENTATION_SURFACE_V1_RANGE_FULL,
	WP_COLOR_REPRESENTATION_SURFACE_V1_RANGE_LIMITED,
};
// The renderers take premultiplied colour. Straight colour is premultiplied on the way: a
// buffer with alpha under a straight-alpha commit goes through a converted view, native
// formats included (surface.cpp); the stream's converted formats premultiply as rows land.
// Premultiplied optical would need the transfer function, which nothing here knows.
constexpr uint32_t kAlphaModes[] = {
	WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_PREMULTIPLIED_ELECTRICAL,
	WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT,
};

template <size_t N>
bool contains(const uint32_t (&list)[N], uint32_t value) {
	for (uint32_t v : list) {
		if (v == value) return true;
	}
	return false;
}

ColorRepresentation::Object *object_of(wl_resource *resource) {
	return static_cast<ColorRepresentation::Object *>(wl_resource_get_user_data(resource));
}

SurfaceState *object_surface(const ColorRepresentation::Object *object) { return object->surface.get(); }

// The object's surface; null after posting `inert` (the surface is gone), or for an untracked
// surface (the request changes nothing).
SurfaceState *live_surface(wl_resource *resource) {
	ColorRepresentation::Object *object = object_of(resource);
	SurfaceState *surface = object_surface(object);
	if (surface == nullptr && object->tracked) {
		wl_resource_post_error(
			resource, WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_INERT, "the wl_surface was destroyed");
	}
	return surface;
}

void surface_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void surface_set_alpha_mode(wl_client *, wl_resource *resource, uint32_t alpha_mode) {
	SurfaceState *surface = live_surface(resource);
	if (surface == nullptr) return;
	if (!contains(kAlphaModes, alpha_mode)) {
		wl_resource_post_error(resource, WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_ALPHA_MODE,
			"alpha mode %u is not supported", alpha_mode);
		return;
	}
	surface->color_pending.alpha_mode = alpha_mode;
}

void surface_set_coefficients_and_range(wl_client *, wl_resource *resource, uint32_t coefficients, uint32_t range) {
	SurfaceState *surface = live_surface(resource);
	if (surface == nullptr) return;
	if (!contains(kCoefficients, coefficients) || !contains(kRanges, range)) {
		wl_resource_post_error(resource, WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_COEFFICIENTS,
			"coefficients %u with range %u are not supported", coefficients, range);
		return;
	}
	surface->color_pending.coefficients = coefficients;
	surface->color_pending.range = range;
}

void surface_set_chroma_location(wl_client *, wl_resource *resource, uint32_t chroma_location) {
	SurfaceState *surface = live_surface(resource);
	if (surface == nullptr) return;
	// The enum has no error of its own for values outside it; libwayland checks enum args
	// only where the XML marks them as such, so an unknown value is refused as incompatible.
	if (chroma_location < WP_COLOR_REPRESENTATION_SURFACE_V1_CHROMA_LOCATION_TYPE_0 ||
		chroma_location > WP_COLOR_REPRESENTATION_SURFACE_V1_CHROMA_LOCATION_TYPE_5) {
		wl_resource_post_error(resource, WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_PIXEL_FORMAT,
			"chroma location %u is not a chroma_location value", chroma_location);
		return;
	}
	surface->color_pending.chroma_location = chroma_location;
}

const struct wp_color_representation_surface_v1_interface kSurfaceImpl = {
	.destroy = surface_destroy,
	.set_alpha_mode = surface_set_alpha_mode,
	.set_coefficients_and_range = surface_set_coefficients_and_range,
	.set_chroma_location = surface_set_chroma_location,
};

void surface_resource_destroy(wl_resource *resource) {
	ColorRepresentation::Object *object = object_of(resource);
	if (SurfaceState *surface = object_surface(object)) {
		// Unsets everything, double-buffered: the next commit carries no metadata.
		surface->color_pending = {};
		surface->color_object = nullptr;
	}
	delete object;
}

void manager_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void manager_get_surface(wl_client *client, wl_resource *resource, uint32_t id, wl_resource *surface_resource) {
	wlr_surface *wlr = wlr_surface_from_resource(surface_resource);
	auto *plugin = static_cast<pixelport_plugin *>(wl_resource_get_user_data(resource));
	SurfaceState *surface = plugin->surface_state(wlr);
	if (surface != nullptr && surface->color_object != nullptr) {
		wl_resource_post_error(resource, WP_COLOR_REPRESENTATION_MANAGER_V1_ERROR_SURFACE_EXISTS,
			"the wl_surface already has a wp_color_representation_surface_v1");
		return;
	}
	AccountSlot slot = client_account_take(&plugin->options, client, ClientObject::ColorSurface);
	if (!slot) return;
	wl_resource *object_resource = wl_resource_create(
		client, &wp_color_representation_surface_v1_interface, wl_resource_get_version(resource), id);
	auto *object = new (std::nothrow) ColorRepresentation::Object();
	if (object_resource == nullptr || object == nullptr) {
		if (object_resource != nullptr) wl_resource_destroy(object_resource);
		delete object;
		wl_client_post_no_memory(client);
		return;
	}
	object->resource = object_resource;
	object->plugin = plugin;
	object->slot = std::move(slot);
	// A surface the plugin does not track (no compositor attached) gets an object that
	// accepts requests and changes nothing.
	if (surface != nullptr) {
		object->surface = surface->ref();
		object->tracked = true;
		surface->color_object = object;
	}
	wl_resource_set_implementation(object_resource, &kSurfaceImpl, object, surface_resource_destroy);
}

const struct wp_color_representation_manager_v1_interface kManagerImpl = {
	.destroy = manager_destroy,
	.get_surface = manager_get_surface,
};

void bind_manager(wl_client *client, void *data, uint32_t version, uint32_t id) {
	wl_resource *resource = static_cast<pixelport_plugin *>(data)->bind_resource(
		client, &wp_color_representation_manager_v1_interface, version, id);
	if (resource == nullptr) return;
	// User data: the plugin (surfaces are looked up there).
	wl_resource_set_implementation(resource, &kManagerImpl, data, nullptr);
	for (uint32_t mode : kAlphaModes) {
		wp_color_representation_manager_v1_send_supported_alpha_mode(resource, mode);
	}
	for (uint32_t coefficients : kCoefficients) {
		for (uint32_t range : kRanges) {
			wp_color_representation_manager_v1_send_supported_coefficients_and_ranges(
				resource, coefficients, range);
		}
	}
	wp_color_representation_manager_v1_send_done(resource);
}

} // namespace

core::ConvertOptions color_state_options(
	const ColorState &state, uint32_t fourcc, int32_t width, int32_t height, const core::ConvertOptions &base) {
	(void)fourcc;
	core::ConvertOptions opt = base;
	switch (state.coefficients) {
	case WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT601: opt.matrix = core::YuvMatrix::BT601; break;
	case WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT709: opt.matrix = core::YuvMatrix::BT709; break;
	case WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT2020: opt.matrix = core::YuvMatrix::BT2020; break;
	default: opt.matrix = core::default_yuv_matrix(width, height); break;
	}
	opt.range = state.range == WP_COLOR_REPRESENTATION_SURFACE_V1_RANGE_FULL ? core::YuvRange::Full
										 : core::YuvRange::Limited;
	if (state.chroma_location != 0) {
		opt.chroma_location = static_cast<core::ChromaLocation>(
			state.chroma_location - WP_COLOR_REPRESENTATION_SURFACE_V1_CHROMA_LOCATION_TYPE_0);
	}
	opt.alpha = state.alpha_mode == WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT
		? core::AlphaMode::Straight
		: core::AlphaMode::Premultiplied;
	return opt;
}

std::unique_ptr<ColorRepresentation> ColorRepresentation::create(pixelport_plugin *plugin) {
	std::unique_ptr<ColorRepresentation> c(new ColorRepresentation());
	c->plugin_ = plugin;
	return c;
}

wl_global *ColorRepresentation::create_global(uint32_t version) {
	return wl_global_create(plugin_->display, &wp_color_representation_manager_v1_interface,
		static_cast<int>(version), plugin_, bind_manager);
}

bool ColorRepresentation::client_commit(SurfaceState *surface, uint32_t fourcc) {
	surface->color = surface->color_pending;
	if (surface->color_object == nullptr || fourcc == 0) return true;
	const core::FormatInfo *info = core::format_info(fourcc);
	const ColorState &s = surface->color;
	bool yuv = info != nullptr && info->model == core::ColorModel::YUV;
	// H.273: YCbCr coefficients describe YCbCr formats only; a chroma location needs chroma
	// that is subsampled.
	const char *why = nullptr;
	if (s.coefficients != 0 && !yuv) {
		why = "coefficients need a YCbCr format";
	} else if (s.chroma_location != 0 && !(yuv && (info->hsub > 1 || info->vsub > 1))) {
		why = "a chroma location needs subsampled chroma";
	} else if (s.alpha_mode == WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT && info != nullptr &&
		info->has_alpha && surface->plugin->formats->straight_target_for(fourcc) == 0) {
		// No kernel premultiplies it (RGBA8888, BGRA8888, RGBA4444, RGBA5551, ABGR16161616):
		// shown as it is, its colour would be wrong.
		why = "straight alpha cannot be premultiplied for this format";
	}
	if (why == nullptr) return true;
	wl_resource_post_error(surface->color_object->resource, WP_COLOR_REPRESENTATION_SURFACE_V1_ERROR_PIXEL_FORMAT,
		"%s (buffer format %s)", why, info != nullptr ? info->name : "unknown");
	return false;
}

} // namespace pixelport
