#include "buffer.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "pixelport/core/format.hpp"
#include "wlr_compat.hpp"

namespace pixelport {

std::shared_ptr<DestImage> DestImage::create(
	uint32_t fourcc, int32_t width, int32_t height, int bytes_per_pixel, bool zero) {
	auto image = std::make_shared<DestImage>();
	image->fourcc = fourcc;
	image->width = width;
	image->height = height;
	// Rows start on 4-byte boundaries: pixman refuses other strides, and GL's default
	// unpack alignment is 4.
	image->stride = (static_cast<size_t>(width) * static_cast<size_t>(bytes_per_pixel) + 3) & ~size_t{3};
	image->size = image->stride * static_cast<size_t>(height);
	// 64-byte aligned rows start for the SIMD kernels and the renderer.
	size_t alloc = (image->size + 63) & ~size_t{63};
	image->data = static_cast<uint8_t *>(aligned_alloc(64, alloc));
	if (image->data == nullptr) {
		return nullptr;
	}
	if (zero) {
		memset(image->data, 0, image->size);
	}
	return image;
}

DestImage::~DestImage() { free(data); }

PixelBuffer::PixelBuffer(pixelport_plugin *plugin, uint32_t fourcc, uint32_t target) :
	plugin(plugin), fourcc(fourcc), target(target) {
	wlr_.owner = this;
}

PixelBuffer::~PixelBuffer() = default;

static PixelBuffer *from_base(wlr_buffer *base) {
	// Valid: PixelBufferWlr is standard-layout and starts with the wlr_buffer.
	return reinterpret_cast<PixelBufferWlr *>(base)->owner;
}

static void buffer_destroy(wlr_buffer *base) {
	PixelBuffer *buffer = from_base(base);
	buffer->release.disconnect(); // wlroots 0.19 asserts that no release listener is left
	wlr_compat::buffer_finish(base);
	delete buffer;
}

// The surface whose commit is being applied with this buffer right now, if any: wlroots
// creates (or updates) the texture inside surface_commit_state, while current.buffer is set.
static SurfaceState *applying_surface(PixelBuffer *buffer) {
	for (wlr_surface *surface : buffer->surfaces) {
		SurfaceState *state = buffer->plugin->surface_state(surface);
		if (state != nullptr && surface->current.buffer == buffer->base()) {
			return state;
		}
	}
	return nullptr;
}

bool pixel_buffer_convert(PixelBuffer *buffer, uint8_t *data, size_t stride, uint32_t fourcc,
	const pixman_region32_t *damage, const ColorState &color, timing::CommitSample *record, bool count_upload) {
	core::SrcImage src;
	if (!buffer->source(&src)) {
		return false;
	}
	core::DstImage dst;
	dst.fourcc = fourcc;
	dst.width = buffer->width();
	dst.height = buffer->height();
	dst.data = data;
	dst.stride = stride;
	dst.size = stride * static_cast<size_t>(dst.height);

	std::vector<core::Rect> rects;
	if (damage != nullptr) {
		int n = 0;
		const pixman_box32_t *boxes = pixman_region32_rectangles(const_cast<pixman_region32_t *>(damage), &n);
		rects.reserve(static_cast<size_t>(n));
		for (int i = 0; i < n; i++) {
			// Clamp: damage_buffer may name pixels outside the buffer.
			int32_t x1 = std::clamp(boxes[i].x1, 0, dst.width), x2 = std::clamp(boxes[i].x2, 0, dst.width);
			int32_t y1 = std::clamp(boxes[i].y1, 0, dst.height),
				y2 = std::clamp(boxes[i].y2, 0, dst.height);
			if (x2 > x1 && y2 > y1) {
				rects.push_back({x1, y1, x2 - x1, y2 - y1});
			}
		}
	} else {
		rects.push_back({0, 0, dst.width, dst.height});
	}
	if (record != nullptr) record->t_convert_start = monotonic_ns();
	core::ConvertOptions options =
		color_state_options(color, buffer->fourcc, dst.width, dst.height, buffer->plugin->convert_options);
	core::Status status = core::convert_rects(src, dst, rects, options);
	if (record != nullptr) record->t_convert_end = monotonic_ns();
	buffer->after_read();
	if (status != core::Status::Ok) {
		wlr_log(WLR_ERROR, "pixelport: converting %s %dx%d failed: %s", core::format_name(buffer->fourcc),
			dst.width, dst.height, core::status_str(status));
		return false;
	}
	pixelport_stats &stats = buffer->plugin->stats;
	if (count_upload) stats.converted_uploads++;
	for (const core::Rect &r : rects) {
		stats.converted_pixels += static_cast<uint64_t>(r.width) * static_cast<uint64_t>(r.height);
	}
	return true;
}

static bool buffer_begin_data_ptr_access(
	wlr_buffer *base, uint32_t flags, void **data, uint32_t *format, size_t *stride) {
	PixelBuffer *buffer = from_base(base);
	if (flags & WLR_BUFFER_DATA_PTR_ACCESS_WRITE) {
		// Only screencopy-style users write, and only into a native, writable mapping.
		if (!buffer->native() || !buffer->writable()) {
			return false;
		}
	}
	if (buffer->native()) {
		// Timing: the record of the commit being applied, if anyone listens.
		SurfaceState *surface = applying_surface(buffer);
		buffer->timing_record = surface != nullptr && buffer->plugin->timing != nullptr
			? buffer->plugin->timing->upload_started(surface)
			: nullptr;

		core::SrcImage src;
		if (!buffer->source(&src)) {
			return false;
		}
		if (!(flags & WLR_BUFFER_DATA_PTR_ACCESS_WRITE)) {
			buffer->plugin->stats.native_uploads++;
		}
		*data = const_cast<uint8_t *>(src.planes[0].data);
		*format = buffer->fourcc;
		*stride = src.planes[0].stride;
		return true;
	}

	// Surfaces see a converted buffer through views (conversion.hpp); this is another reader
	// of the wl_buffer itself: a private full conversion of what the buffer holds now.
	std::shared_ptr<DestImage> image = DestImage::create(buffer->target, base->width, base->height);
	if (image == nullptr ||
		!pixel_buffer_convert(
			buffer, image->data, image->stride, image->fourcc, nullptr, buffer->color, nullptr)) {
		return false;
	}
	buffer->private_image = image;
	*data = image->data;
	*format = image->fourcc;
	*stride = image->stride;
	return true;
}

// The renderer is done reading (pixman: pointer wrapped; GLES2: texture uploaded).
static void buffer_end_data_ptr_access(wlr_buffer *base) {
	PixelBuffer *buffer = from_base(base);
	if (buffer->timing_record != nullptr) {
		buffer->timing_record->t_upload_end = monotonic_ns();
		buffer->timing_record = nullptr;
	}
}

static bool buffer_get_shm(wlr_buffer *base, wlr_shm_attributes *attrs) {
	PixelBuffer *buffer = from_base(base);
	return buffer->native() && buffer->get_shm(attrs);
}

static const wlr_buffer_impl kBufferImpl = {
	.destroy = buffer_destroy,
	.get_dmabuf = nullptr,
	.get_shm = buffer_get_shm,
	.begin_data_ptr_access = buffer_begin_data_ptr_access,
	.end_data_ptr_access = buffer_end_data_ptr_access,
};

// ---- wl_buffer: one request table and resource interface for every kind --------------------

static void wl_buffer_handle_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

static const struct wl_buffer_interface kWlBufferImpl = {
	.destroy = wl_buffer_handle_destroy,
};

static void wl_buffer_resource_destroy(wl_resource *resource) {
	auto *buffer = static_cast<PixelBuffer *>(wl_resource_get_user_data(resource));
	buffer->resource_destroyed();
	buffer->resource = nullptr;
	buffer->busy = false;
	wlr_buffer_drop(buffer->base());
}

static bool resource_is_instance(wl_resource *resource) {
	return wl_resource_instance_of(resource, &wl_buffer_interface, &kWlBufferImpl);
}

// wlr_buffer_try_from_resource() takes the lock itself.
static wlr_buffer *wlr_buffer_from_resource(wl_resource *resource) {
	return static_cast<PixelBuffer *>(wl_resource_get_user_data(resource))->base();
}

// Process-global and never unregistered (wlroots has no unregister): it must live forever.
static const wlr_buffer_resource_interface kResourceInterface = {
	.name = "pixelport",
	.is_instance = resource_is_instance,
	.from_resource = wlr_buffer_from_resource,
};

bool pixel_buffer_create(PixelBuffer *buffer, wl_client *client, uint32_t id, int width, int height) {
	static std::once_flag registered;
	std::call_once(registered, [] { wlr_buffer_register_resource_interface(&kResourceInterface); });
	buffer->resource = wl_resource_create(client, &wl_buffer_interface, 1, id);
	if (buffer->resource == nullptr) {
		wl_client_post_no_memory(client);
		return false;
	}
	wlr_buffer_init(buffer->base(), &kBufferImpl, width, height);
	// Unlocked by everyone (texture gone): the client may reuse its pixels.
	buffer->release.connect(&buffer->base()->events.release, [buffer](void *) {
		buffer->unlocked();
		pixel_buffer_release_to_client(buffer);
	});
	wl_resource_set_implementation(buffer->resource, &kWlBufferImpl, buffer, wl_buffer_resource_destroy);
	return true;
}

PixelBuffer *pixel_buffer_from_wlr(wlr_buffer *buffer) {
	return buffer != nullptr && buffer->impl == &kBufferImpl ? from_base(buffer) : nullptr;
}

PixelBuffer *pixel_buffer_from_resource(wl_resource *resource) {
	return resource != nullptr && resource_is_instance(resource)
		? static_cast<PixelBuffer *>(wl_resource_get_user_data(resource))
		: nullptr;
}

void pixel_buffer_release_to_client(PixelBuffer *buffer) {
	if (buffer->busy) {
		// The client may write its pixels from now on: what it commits next is new content.
		buffer->generation++;
		if (buffer->resource != nullptr) wl_buffer_send_release(buffer->resource);
	}
	buffer->busy = false;
}

void pixel_buffer_committed(PixelBuffer *buffer, wlr_surface *surface) {
	buffer->busy = true;
	std::erase_if(
		buffer->surfaces, [buffer](wlr_surface *s) { return buffer->plugin->surface_state(s) == nullptr; });
	if (std::find(buffer->surfaces.begin(), buffer->surfaces.end(), surface) == buffer->surfaces.end()) {
		// The newest few: one buffer committed to thousands of surfaces must not make each
		// commit walk them all (only timing's upload attribution reads the list).
		if (buffer->surfaces.size() >= kBufferSurfaces) buffer->surfaces.erase(buffer->surfaces.begin());
		buffer->surfaces.push_back(surface);
	}
}

} // namespace pixelport
