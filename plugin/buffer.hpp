// PixelBuffer: the wlr_buffer behind every wl_buffer the plugin creates (wl_shm and the
// pixelport stream). Native formats hand the renderer the client's pixels in place; a buffer
// in a format the renderer lacks reaches it through ConvertedViews (conversion.hpp), which
// convert its pixels into renderer-format images.
#pragma once

#include <memory>
#include <vector>

#include "color_representation.hpp"
#include "plugin.hpp"

namespace pixelport {

struct PixelBuffer;
struct ConvertedImage;

/** What a kind of PixelBuffer (shm, stream) implements. */
struct PixelBufferImpl {
	/** The client's pixels, planes filled for the buffer's format. False if unavailable. */
	bool (*source)(PixelBuffer *buffer, core::SrcImage *out);
	/** Frees the concrete buffer (called once the wlr_buffer is dropped and unlocked). */
	void (*destroy)(PixelBuffer *buffer);
	/** Optional: shm attributes for native buffers (wlr_buffer_get_shm). */
	bool (*get_shm)(PixelBuffer *buffer, wlr_shm_attributes *attrs);
	/** Optional: called after the client's pixels were read, to notice faults (SIGBUS). */
	void (*after_read)(PixelBuffer *buffer);
	/** Optional: the compositor may write the pixels (screencopy into a client buffer). */
	bool (*writable)(PixelBuffer *buffer);
	/** Timing: transport and buffer bytes, at the client's commit. */
	void (*describe)(PixelBuffer *buffer, timing::CommitRecord *record);
	/** Optional, timing: phases that happened before the apply (stream receive). */
	void (*applied)(PixelBuffer *buffer, timing::CommitRecord *record);
};

struct PixelBuffer {
	wlr_buffer base; // first: wlr_buffer pointers are cast back to PixelBuffer
	const PixelBufferImpl *impl = nullptr;
	pixelport_plugin *plugin = nullptr;
	wl_resource *resource = nullptr; // the wl_buffer; null once the client destroyed it
	uint32_t fourcc = 0; // the client's DRM format
	uint32_t target = 0; // the renderer's format; == fourcc when native
	/** The format of the client's bytes when it differs from `fourcc` (the stream's wire format). */
	uint32_t wire_fourcc = 0;
	/** Colour representation of the last commit that attached it (stream writes, other readers). */
	ColorState color;
	/** Committed and not yet released: the client must not touch its pixels. */
	bool busy = false;
	/** Counts releases: the content a commit saw is the content of this generation. */
	uint64_t generation = 0;
	/** The image holding this buffer's whole content of some generation, if one is alive. */
	std::weak_ptr<ConvertedImage> pure_image;
	/** A converted buffer read directly (not through a view): a private full conversion. */
	std::shared_ptr<DestImage> private_image;
	/** Surfaces this buffer was committed to: candidates when the renderer asks for data. */
	std::vector<wlr_surface *> surfaces;
	Listener release;
	/** Timing record of the apply in progress, between begin and end of data access. */
	timing::CommitRecord *timing_record = nullptr;

	bool native() const { return fourcc == target; }
	/** The format the client sent its pixels in. */
	uint32_t client_fourcc() const { return wire_fourcc != 0 ? wire_fourcc : fourcc; }
};

/** Sets up `buffer->base` and the release listener; call once after filling the fields. */
void pixel_buffer_init(PixelBuffer *buffer, const PixelBufferImpl *impl, int width, int height);

/**
 * Creates the client's wl_buffer `id` for a filled-in `buffer` (whose concrete struct starts
 * with it, so the resource's user data is both), with the kind's request table and destroy
 * callback, then pixel_buffer_init(). On allocation failure posts no_memory and returns false;
 * the caller still owns (and frees) the buffer then.
 */
bool pixel_buffer_publish(PixelBuffer *buffer, wl_client *client, uint32_t id, const PixelBufferImpl *impl,
	const struct wl_buffer_interface *requests, wl_resource_destroy_func_t destroy, int width, int height);

/** The PixelBuffer behind `buffer`, or null if it is not one of ours. */
PixelBuffer *pixel_buffer_from_wlr(wlr_buffer *buffer);

/** To call from the wl_buffer resource's destroy: forgets the resource and drops the buffer. */
void pixel_buffer_resource_destroyed(PixelBuffer *buffer);

/** Sends wl_buffer.release if the client is waiting for it. */
void pixel_buffer_release_to_client(PixelBuffer *buffer);

/** CLOCK_MONOTONIC now, ns. */
uint64_t monotonic_ns();

/** Client commit on `surface` with `buffer` attached: the buffer is busy until released. */
void pixel_buffer_committed(PixelBuffer *buffer, wlr_surface *surface);

/**
 * Converts the buffer's pixels into `dst` (`fourcc`, the buffer's size, `stride` bytes per
 * row): the rectangles of `damage` (buffer coordinates, clamped to the buffer), or everything
 * when it is null, reading YCbCr as `color` says (color_state_options()). Counts the conversion in the plugin's stats (`count_upload` false: its
 * pixels only, for the later bands of one conversion) and times it in `record` (if not null).
 * False (logged) if the pixels cannot be read or converted.
 */
bool pixel_buffer_convert(PixelBuffer *buffer, uint8_t *dst, size_t stride, uint32_t fourcc,
	const pixman_region32_t *damage, const ColorState &color, timing::CommitRecord *record,
	bool count_upload = true);

} // namespace pixelport
