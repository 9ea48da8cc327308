#include "buffer.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "conversion.hpp"
#include "pixelport/core/format.hpp"
#include "plugin.hpp"
#include "surface_state.hpp"
#include "wlr_compat.hpp"

namespace pixelport {

PixelBuffer::PixelBuffer(pixelport_plugin *plugin, uint32_t stored_format, uint32_t renderer_format) :
	plugin(plugin), stored_format(stored_format), renderer_format(renderer_format), client_format(stored_format) {
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
	for (const SurfaceRef &ref : buffer->surfaces) {
		SurfaceState *state = ref.get();
		if (state != nullptr && state->surface->current.buffer == buffer->base()) {
			return state;
		}
	}
	return nullptr;
}

static bool buffer_begin_data_ptr_access(
	wlr_buffer *base, uint32_t flags, void **data, uint32_t *format, size_t *stride) {
	PixelBuffer *buffer = from_base(base);
	if (flags & WLR_BUFFER_DATA_PTR_ACCESS_WRITE) {
		// Only screencopy-style users write, and only into a native, writable mapping: the one
		// this access hands out, made by the read (a resize since the last read maps anew).
		core::SrcImage src;
		if (!buffer->native() || !buffer->source(&src) || !buffer->writable()) {
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
			buffer->plugin->stats.add(Stat::NativeUploads);
		}
		*data = const_cast<uint8_t *>(src.planes[0].data);
		*format = buffer->stored_format;
		*stride = src.planes[0].stride;
		return true;
	}

	// Surfaces see a converted buffer through views (conversion.hpp); this is another reader
	// of the wl_buffer itself: a private full conversion of what the buffer holds now.
	std::shared_ptr<ConvertedImage> image = buffer->plugin->conversions->convert_whole(buffer);
	if (image == nullptr) return false;
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

void pixel_buffer_committed(PixelBuffer *buffer, SurfaceState *surface) {
	buffer->busy = true;
	std::erase_if(buffer->surfaces, [](const SurfaceRef &ref) { return ref.get() == nullptr; });
	const SurfaceRef ref = surface->ref();
	if (std::find(buffer->surfaces.begin(), buffer->surfaces.end(), ref) == buffer->surfaces.end()) {
		// The newest few: one buffer committed to thousands of surfaces must not make each
		// commit walk them all (only timing's upload attribution reads the list).
		if (buffer->surfaces.size() >= kBufferSurfaces) buffer->surfaces.erase(buffer->surfaces.begin());
		buffer->surfaces.push_back(ref);
	}
}

} // namespace pixelport
