// PixelBuffer: the wlr_buffer behind every wl_buffer the plugin creates (wl_shm and the
// pixelport stream). Native formats hand the renderer the client's pixels in place; a buffer
// in a format the renderer lacks reaches it through ConvertedViews (conversion.hpp), which
// convert its pixels into renderer-format images.
//
// Each kind (ShmBuffer in shm.cpp, StreamBuffer in stream.cpp) derives from PixelBuffer.
// Lifetime as in wlroots: the kind creates the buffer and pixel_buffer_create() gives it its
// wl_buffer resource (one request table for all kinds) and wlr_buffer; the client's
// wl_buffer.destroy drops the wlr_buffer, and the last unlock deletes the buffer.
#pragma once

#include <memory>
#include <type_traits>
#include <vector>

#include "color_representation.hpp"
#include "listener.hpp"
#include "pixelport/core/convert.hpp"
#include "surface_ref.hpp"
#include "timing.hpp"
#include "wlr.hpp"

struct pixelport_plugin;

namespace pixelport {

class PixelBuffer;
struct ConvertedImage;

/**
 * The wlr_buffer of a PixelBuffer. Standard layout with the wlr_buffer first, so the
 * wlr_buffer pointers wlroots hands back convert to it; `owner` leads to the C++ object.
 */
struct PixelBufferWlr {
	wlr_buffer base;
	PixelBuffer *owner;
};
static_assert(std::is_standard_layout_v<PixelBufferWlr>);

/** How many of the surfaces a buffer was committed to it remembers (PixelBuffer::surfaces). */
inline constexpr size_t kBufferSurfaces = 8;

class PixelBuffer : public TimedBuffer {
public:
	PixelBuffer(const PixelBuffer &) = delete;
	PixelBuffer &operator=(const PixelBuffer &) = delete;
	/** Called once the wlr_buffer is dropped and unlocked (or when creation failed). */
	virtual ~PixelBuffer();

	/** The client's pixels, planes filled for the buffer's format. False if unavailable. */
	virtual bool source(core::SrcImage *out) = 0;
	/** Shm attributes for native buffers (wlr_buffer_get_shm); false if the kind has none. */
	virtual bool get_shm(wlr_shm_attributes *attrs) { return false; }
	/** Called after the client's pixels were read, to notice faults (SIGBUS). */
	virtual void after_read() {}
	/** The compositor may write the pixels (screencopy into a client buffer): those the last
	 * source() handed out. */
	virtual bool writable() const { return false; }
	/** The client destroyed the wl_buffer (or went away); the buffer is dropped next. */
	virtual void resource_destroyed() {}
	/** Nobody locks the wlr_buffer any more: no renderer reads pointers it was given. */
	virtual void unlocked() {}
	/** Bytes the client announced are still to arrive (the stream): the pixels are not final. */
	virtual bool incomplete() const { return false; }
	// TimedBuffer: describe() (each kind) and applied() (optional).

	wlr_buffer *base() { return &wlr_.base; }
	const wlr_buffer *base() const { return &wlr_.base; }
	int32_t width() const { return wlr_.base.width; }
	int32_t height() const { return wlr_.base.height; }
	bool native() const { return stored_format == renderer_format; }

	pixelport_plugin *const plugin;
	/** DRM fourcc of the pixels the plugin holds: the client's wl_shm memory, or the stream's storage. */
	const uint32_t stored_format;
	/** DRM fourcc the renderer reads: stored_format when native, else what the conversion writes. */
	const uint32_t renderer_format;
	/** DRM fourcc the client sent: stored_format, except a stream storing its rows in another. */
	uint32_t client_format;
	wl_resource *resource = nullptr; // the wl_buffer; null once the client destroyed it
	/** Colour representation of the last commit that attached it (stream writes, other readers). */
	ColorState color;
	/** Committed and not yet released: the client must not touch its pixels. */
	bool busy = false;
	/** Counts releases: the content a commit saw is the content of this generation. */
	uint64_t generation = 0;
	/** The image holding this buffer's whole content of some generation, if one is alive. */
	std::weak_ptr<ConvertedImage> pure_image;
	/** A converted buffer read directly (not through a view): a private full conversion. */
	std::shared_ptr<ConvertedImage> private_image;
	/**
	 * The last kBufferSurfaces surfaces this buffer was committed to: candidates when the
	 * renderer asks for data (timing's upload attribution).
	 */
	std::vector<SurfaceRef> surfaces;
	Listener release;
	/** Timing record of the apply in progress, between begin and end of data access. */
	timing::CommitSample *timing_record = nullptr;

protected:
	PixelBuffer(pixelport_plugin *plugin, uint32_t stored_format, uint32_t renderer_format);

private:
	PixelBufferWlr wlr_;
};

/**
 * Creates the client's wl_buffer `id` for a constructed `buffer` of `width` x `height`
 * pixels, and its wlr_buffer. On allocation failure posts no_memory and returns false; the
 * caller still owns (and deletes) the buffer then; else wlroots' references own it.
 */
bool pixel_buffer_create(PixelBuffer *buffer, wl_client *client, uint32_t id, int width, int height);

/** The PixelBuffer behind `buffer`, or null if it is not one of ours. */
PixelBuffer *pixel_buffer_from_wlr(wlr_buffer *buffer);

/** The PixelBuffer of a wl_buffer resource, or null if the plugin did not create it. */
PixelBuffer *pixel_buffer_from_resource(wl_resource *resource);

/** Sends wl_buffer.release if the client is waiting for it. */
void pixel_buffer_release_to_client(PixelBuffer *buffer);

/** Client commit on `surface` with `buffer` attached: the buffer is busy until released. */
void pixel_buffer_committed(PixelBuffer *buffer, SurfaceState *surface);

} // namespace pixelport
