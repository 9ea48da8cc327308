// Which pixel formats the plugin serves, and as what: a format the renderer samples from CPU
// memory is used in place; any other format the core can convert into one of those is
// converted during upload. wl_shm and the stream both ask this one object.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pixelport {

class FormatPolicy {
public:
	/**
	 * `renderer_formats`: DRM fourccs the renderer samples from CPU memory
	 * (wlr_renderer_get_texture_formats with WLR_BUFFER_CAP_DATA_PTR). Only formats the core's
	 * table describes are served: without a plane layout a buffer cannot be validated.
	 */
	explicit FormatPolicy(std::span<const uint32_t> renderer_formats);

	/** Served DRM fourccs: native ones in the renderer's order, then converted ones in the core's. */
	const std::vector<uint32_t> &served() const { return served_; }
	/** How many of served() are native. */
	size_t native_count() const { return native_count_; }
	/** The renderer format a `fourcc` buffer is uploaded as (itself when native), 0 if not served. */
	uint32_t target_for(uint32_t fourcc) const;
	/**
	 * target_for() for a wl_shm buffer with plane-0 `stride` bytes: pixman and GL's default
	 * unpack alignment need 4-byte row starts, so a native format with another stride is
	 * converted instead, when the core can. 0 if it cannot be shown.
	 */
	uint32_t target_for_stride(uint32_t fourcc, uint64_t stride) const;
	/**
	 * The renderer format a served `fourcc` buffer with alpha is converted into when its colour
	 * is straight (premultiplied on the way, even where the renderer takes `fourcc` itself:
	 * core::pick_target_for_alpha). 0 if not served, or no kernel premultiplies it.
	 */
	uint32_t straight_target_for(uint32_t fourcc) const;
	/** ARGB8888 and XRGB8888, which every wl_shm must offer, are served. */
	bool serves_required() const;

private:
	std::vector<uint32_t> renderer_;
	std::vector<uint32_t> served_;
	std::vector<uint32_t> targets_; // parallel to served_
	size_t native_count_ = 0;
};

/**
 * GStreamer's Wayland code as found in a client's process: libgstwayland-1.0 (1.22 and later)
 * or the waylandsink plugin mapped, from the text of /proc/PID/maps. Its version is read from
 * the library's file name (libgstwayland-1.0.so.0.2200.0 is 1.22.0; GStreamer numbers its
 * libraries so.0.MMmm.0), else from libgstreamer-1.0's; 0.0 when no name carries one.
 */
struct GstWayland {
	bool found = false;
	uint32_t minor = 0; // GStreamer 1.minor.micro
	uint32_t micro = 0;
};
GstWayland find_gst_wayland(std::string_view maps);

/** A format left out of a client's wl_shm format list, and why (for the log line). */
struct WithheldFormat {
	uint32_t fourcc = 0;
	const char *why = "";
};

/**
 * Which wl_shm formats a client that maps GStreamer's Wayland code is not told about
 * (docs/design.md, "Formats withheld from a client"): a format it mislabels or cannot lay out
 * would show wrong or not at all, where without it the client converts to a format it fills
 * right, as it does without the plugin. Only the format list changes: a client that uses a
 * withheld format anyway gets it converted, as any other client.
 *
 * The switch (pixelport_options.gstreamer_withhold, PIXELPORT_GSTREAMER_WITHHOLD): items
 * separated by commas, applied left to right to an empty set: "auto" adds the rule for the
 * client's GStreamer version (auto_rule()), a DRM format name (RGB888) adds that format,
 * "-NAME" takes it out again, "none" empties the set. Empty or absent means "auto".
 */
class WithheldFormats {
public:
	/** Parses `spec`; false with `error` (the item, and why) for an unknown name or item. */
	static bool parse(std::string_view spec, WithheldFormats *out, std::string *error);
	/** What is withheld from a client with `gst` (nothing when !gst.found), in table order. */
	std::vector<WithheldFormat> for_client(const GstWayland &gst) const;
	/** Whether any client can have a format withheld (else no client's maps need reading). */
	bool can_withhold() const { return can_withhold_; }
	/** The version-dependent part: what GStreamer 1.`minor` cannot use right. */
	static std::vector<WithheldFormat> auto_rule(const GstWayland &gst);

private:
	struct Item {
		enum Kind : uint8_t { Auto, Add, Remove, Clear } kind;
		uint32_t fourcc;
	};
	std::vector<Item> items_;
	bool can_withhold_ = false;
};

} // namespace pixelport
