// Which pixel formats the plugin serves, and as what: a format the renderer samples from CPU
// memory is used in place; any other format the core can convert into one of those is
// converted during upload. wl_shm and the stream both ask this one object.
#pragma once

#include <cstdint>
#include <span>
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

} // namespace pixelport
