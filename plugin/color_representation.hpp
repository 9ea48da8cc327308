// wp_color_representation_v1 (wayland-protocols staging): how a surface's YCbCr pixels are
// turned into RGB (matrix coefficients, range, chroma location) and whether its colour is
// premultiplied. The plugin serves the global for its surfaces and bakes each commit's state
// into the commit (ColorState), so a held, cached or shared commit converts with its own.
// Unset fields fall back to the default rule (color_state_options()).
#pragma once

#include <cstdint>
#include <memory>

#include "client_account.hpp"
#include "pixelport/core/convert.hpp"
#include "surface_ref.hpp"
#include "wlr.hpp"

struct pixelport_plugin;

namespace pixelport {

struct SurfaceState;

/**
 * One commit's colour representation, as the protocol spells it: 0 = unset (coefficients,
 * range, chroma_location), alpha_mode 0 = premultiplied_electrical (the protocol's default).
 */
struct ColorState {
	uint32_t coefficients = 0; // wp_color_representation_surface_v1.coefficients
	uint32_t range = 0; // .range
	uint32_t chroma_location = 0; // .chroma_location
	uint32_t alpha_mode = 0; // .alpha_mode
	bool operator==(const ColorState &) const = default;
};

/**
 * `base` with the colour fields set for a `fourcc` buffer of `width` x `height` pixels under
 * `state`. Unset coefficients and range take the default rule, GStreamer's for YUV video
 * without colorimetry (gst-libs/gst/video/video-info.c, set_default_colorimetry): limited
 * range; BT.2020 for 2160 lines or more, BT.709 for more than 576, BT.601 below. Straight
 * alpha asks the kernels to premultiply (core::AlphaMode::Straight).
 */
core::ConvertOptions color_state_options(
	const ColorState &state, uint32_t fourcc, int32_t width, int32_t height, const core::ConvertOptions &base);

/** wp_color_representation_manager_v1 (version 1) and its surface objects. */
class ColorRepresentation {
public:
	static std::unique_ptr<ColorRepresentation> create(pixelport_plugin *plugin);
	/** A wp_color_representation_manager_v1 global (version 1); its owner destroys it (pixelport.cpp). */
	wl_global *create_global(uint32_t version);

	/**
	 * From the surface's client_commit: the state this commit carries (into
	 * `surface->color`). Posts pixel_format on the surface's object if the committed buffer
	 * (`fourcc`, 0 when none is attached or known) cannot carry it; returns false then.
	 */
	bool client_commit(SurfaceState *surface, uint32_t fourcc);

	/**
	 * A wp_color_representation_surface_v1. It names its surface weakly, so it is inert once
	 * the surface is gone (`tracked` false: a surface the plugin does not track).
	 */
	struct Object {
		wl_resource *resource = nullptr;
		pixelport_plugin *plugin = nullptr;
		SurfaceRef surface;
		bool tracked = false;
		AccountSlot slot; // the client's ColorSurface count
	};

private:
	ColorRepresentation() = default;
	pixelport_plugin *plugin_ = nullptr;
};

} // namespace pixelport
