#include "stream.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include "buffer.hpp"
#include "pixelport-stream-v1-protocol.h"
#include "pixelport/core/format.h"
#include "shm.hpp"

namespace pixelport {

namespace {

constexpr size_t kWindowBytes = 1 << 20;      // receive window for converted formats
constexpr size_t kBytesPerDispatch = 8 << 20; // then let other clients' events run
constexpr int kMaxIov = 64;

// What one client has alive, against the limits in pixelport_options. Shared by the
// client's streams and buffers, which may outlive the client (a texture still holds one).
struct ClientUsage {
	uint64_t buffers = 0;
	uint64_t inflight_bytes = 0;
};

struct Stream;

struct Waiter {
	wlr_surface *surface;
	uint64_t surface_id;
	uint32_t lock_seq;
	uint64_t need; // writes of the buffer that must be complete
};

struct StreamBuffer {
	PixelBuffer pixel; // first; fourcc = storage format (the renderer's)
	uint32_t wire_format = 0;
	const core::FormatInfo *wire = nullptr;
	std::shared_ptr<DestImage> storage;
	uint64_t stream_id = 0;
	std::shared_ptr<ClientUsage> usage; // null once the wl_buffer is gone
	uint64_t announced = 0; // writes announced for this buffer
	uint64_t completed = 0; // ... and fully read
	std::vector<Waiter> waiters;
	// Timing, CLOCK_MONOTONIC ns: last write completed; conversions since the last apply.
	uint64_t t_complete = 0, t_convert_start = 0, t_convert_end = 0;
};

struct StreamWrite {
	StreamBuffer *buffer; // locked while the write is pending
	int32_t x, y, width, height;
	uint64_t length;
	uint64_t done = 0;     // bytes read
	uint64_t converted_rows = 0; // rows (of plane 0) already converted (window path)
};

struct Stream {
	pixelport_plugin *plugin = nullptr;
	wl_resource *resource = nullptr; // null after destroy request; the stream lives on until drained
	uint64_t id = 0;
	int fd = -1;
	wl_event_source *source = nullptr;
	std::shared_ptr<ClientUsage> usage;
	std::deque<StreamWrite> writes;
	uint32_t consumed = 0;
	std::unique_ptr<uint8_t[]> window;
	size_t window_fill = 0;
	bool failed = false;
};

uint64_t next_stream_id = 1;
// Every stream alive, to end orphaned ones (client gone, bytes still owed) with the plugin.
std::vector<Stream *> live_streams;

// One ClientUsage per client, found through a destroy listener on the client.
struct UsageLink {
	wl_listener destroy;
	std::shared_ptr<ClientUsage> usage;
};

void usage_client_destroyed(wl_listener *listener, void *) {
	UsageLink *link = wl_container_of(listener, link, destroy);
	wl_list_remove(&link->destroy.link);
	delete link;
}

std::shared_ptr<ClientUsage> usage_for(wl_client *client) {
	if (wl_listener *l = wl_client_get_destroy_listener(client, usage_client_destroyed)) {
		UsageLink *link = wl_container_of(l, link, destroy);
		return link->usage;
	}
	auto *link = new UsageLink();
	link->usage = std::make_shared<ClientUsage>();
	link->destroy.notify = usage_client_destroyed;
	wl_client_add_destroy_listener(client, &link->destroy);
	return link->usage;
}

// ---- the wire layout ------------------------------------------------------------------------

// Bytes of one packed row of `plane` for a rectangle `width` pixels wide.
uint64_t plane_row_bytes(const core::FormatInfo &f, int plane, int32_t width) {
	const core::PlaneInfo &p = f.planes[plane];
	return (static_cast<uint64_t>(width) + p.hsub - 1) / p.hsub * p.unit_bytes;
}

// Bytes of the chroma group starting at rectangle row `row` (rows of plane 0).
uint64_t group_bytes(const core::FormatInfo &f, int32_t width, int32_t height, int32_t row) {
	int32_t luma_rows = std::min<int32_t>(f.vsub, height - row);
	uint64_t bytes = plane_row_bytes(f, 0, width) * static_cast<uint64_t>(luma_rows);
	for (int p = 1; p < f.num_planes; p++) bytes += plane_row_bytes(f, p, width);
	return bytes;
}

uint64_t packed_size(const core::FormatInfo &f, int32_t width, int32_t height) {
	uint64_t total = 0;
	for (int32_t row = 0; row < height; row += f.vsub) total += group_bytes(f, width, height, row);
	return total;
}

// ---- StreamBuffer as a PixelBuffer ------------------------------------------------------------

StreamBuffer *stream_buffer(PixelBuffer *b) { return reinterpret_cast<StreamBuffer *>(b); }

bool stream_buffer_source(PixelBuffer *b, core::SrcImage *out) {
	StreamBuffer *sb = stream_buffer(b);
	out->fourcc = sb->storage->fourcc;
	out->width = sb->storage->width;
	out->height = sb->storage->height;
	out->planes[0] = {sb->storage->data, sb->storage->stride, sb->storage->size};
	return true;
}

void stream_buffer_destroy(PixelBuffer *b) { delete stream_buffer(b); }

void stream_buffer_describe(PixelBuffer *b, timing::CommitRecord *record) {
	StreamBuffer *sb = stream_buffer(b);
	record->transport = timing::Transport::Stream;
	record->format = sb->wire_format;
	record->bytes = packed_size(*sb->wire, b->base.width, b->base.height);
}

void stream_buffer_applied(PixelBuffer *b, timing::CommitRecord *record) {
	StreamBuffer *sb = stream_buffer(b);
	record->t_data_complete = sb->t_complete;
	record->t_convert_start = sb->t_convert_start;
	record->t_convert_end = sb->t_convert_end;
	sb->t_convert_start = sb->t_convert_end = 0;
}

const PixelBufferImpl kStreamBufferImpl = {
	.source = stream_buffer_source,
	.destroy = stream_buffer_destroy,
	.get_shm = nullptr,
	.after_read = nullptr,
	.writable = nullptr,
	.describe = stream_buffer_describe,
	.applied = stream_buffer_applied,
};

bool is_stream_buffer(PixelBuffer *b) { return b != nullptr && b->impl == &kStreamBufferImpl; }

void release_waiters(StreamBuffer *sb) {
	pixelport_plugin *plugin = sb->pixel.plugin;
	// Unlock in commit order: a surface applies its cached states in order anyway.
	std::vector<Waiter> ready;
	std::erase_if(sb->waiters, [&](const Waiter &w) {
		if (w.need > sb->completed) return false;
		ready.push_back(w);
		return true;
	});
	for (const Waiter &w : ready) {
		if (plugin->surface_state(w.surface, w.surface_id) != nullptr) {
			wlr_surface_unlock_cached(w.surface, w.lock_seq);
		}
	}
}

// ---- wl_buffer resource -----------------------------------------------------------------------

void wl_buffer_handle_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }
const struct wl_buffer_interface kWlBufferImpl = {.destroy = wl_buffer_handle_destroy};

StreamBuffer *buffer_from_resource(wl_resource *resource) {
	if (!wl_resource_instance_of(resource, &wl_buffer_interface, &kWlBufferImpl)) return nullptr;
	return static_cast<StreamBuffer *>(wl_resource_get_user_data(resource));
}

void wl_buffer_resource_destroy(wl_resource *resource) {
	StreamBuffer *sb = buffer_from_resource(resource);
	sb->usage->buffers--;
	sb->usage.reset();
	pixel_buffer_resource_destroyed(&sb->pixel);
}

bool resource_is_instance(wl_resource *resource) {
	return wl_resource_instance_of(resource, &wl_buffer_interface, &kWlBufferImpl);
}

wlr_buffer *wlr_buffer_from_resource(wl_resource *resource) { return &buffer_from_resource(resource)->pixel.base; }

const wlr_buffer_resource_interface kResourceInterface = {
	.name = "pixelport_stream",
	.is_instance = resource_is_instance,
	.from_resource = wlr_buffer_from_resource,
};

// ---- reading the data fd ---------------------------------------------------------------------

void drop_stream(Stream *s);

// Returns true if the stream was freed (its resource was already gone).
bool stream_fail(Stream *s, const char *what) {
	s->failed = true;
	if (s->source != nullptr) {
		wl_event_source_remove(s->source);
		s->source = nullptr;
	}
	if (s->resource != nullptr) {
		wl_resource_post_error(s->resource, PP_STREAM_V1_ERROR_DATA_FD, "data fd: %s", what);
		return false;
	}
	wlr_log(WLR_INFO, "pixelport: orphaned stream ends: %s", what);
	drop_stream(s);
	return true;
}

void update_fd_interest(Stream *s) {
	if (s->source != nullptr) {
		wl_event_source_fd_update(s->source, s->writes.empty() ? 0 : WL_EVENT_READABLE);
	}
}

void complete_write(Stream *s) {
	StreamWrite w = s->writes.front();
	s->writes.pop_front();
	StreamBuffer *sb = w.buffer;
	sb->completed++;
	sb->t_complete = monotonic_ns();
	s->usage->inflight_bytes -= w.length;
	s->plugin->stats.stream_writes++;
	s->consumed++;
	if (s->resource != nullptr) {
		pp_stream_v1_send_consumed(s->resource, s->consumed);
	}
	release_waiters(sb);
	wlr_buffer_unlock(&sb->pixel.base);
}

// Native: the bytes go to their final place in the storage. Returns bytes read, 0 on EOF,
// -1 with errno on error.
ssize_t read_native(Stream *s, StreamWrite &w, size_t budget) {
	DestImage &st = *w.buffer->storage;
	uint64_t row_bytes = plane_row_bytes(*w.buffer->wire, 0, w.width);
	size_t bpp = w.buffer->wire->planes[0].unit_bytes;
	uint64_t want = std::min<uint64_t>(w.length - w.done, budget);
	if (w.x == 0 && static_cast<size_t>(row_bytes) == st.stride) {
		// Whole rows: one contiguous range.
		uint8_t *dst = st.data + static_cast<size_t>(w.y) * st.stride + w.done;
		return read(s->fd, dst, want);
	}
	iovec iov[kMaxIov];
	int n = 0;
	uint64_t pos = w.done, left = want;
	while (left > 0 && n < kMaxIov) {
		uint64_t row = pos / row_bytes, in_row = pos % row_bytes;
		uint64_t chunk = std::min(row_bytes - in_row, left);
		iov[n].iov_base = st.data + (static_cast<size_t>(w.y) + row) * st.stride + static_cast<size_t>(w.x) * bpp + in_row;
		iov[n].iov_len = chunk;
		n++;
		pos += chunk;
		left -= chunk;
	}
	return readv(s->fd, iov, n);
}

// Converted: into the window, then every complete chroma group into the storage.
ssize_t read_windowed(Stream *s, StreamWrite &w, size_t budget) {
	if (!s->window) s->window.reset(new uint8_t[kWindowBytes]);
	size_t space = kWindowBytes - s->window_fill;
	uint64_t want = std::min<uint64_t>({w.length - w.done, budget, space});
	ssize_t n = read(s->fd, s->window.get() + s->window_fill, want);
	if (n <= 0) return n;
	s->window_fill += static_cast<size_t>(n);

	const core::FormatInfo &f = *w.buffer->wire;
	DestImage &st = *w.buffer->storage;
	size_t off = 0;
	uint64_t t0 = monotonic_ns();
	core::DstImage dst;
	dst.fourcc = st.fourcc;
	dst.stride = st.stride;
	// Packed formats: as many whole rows as the window holds, in one call.
	if (f.num_planes == 1 && f.vsub == 1) {
		uint64_t row_bytes = plane_row_bytes(f, 0, w.width);
		int32_t rows = static_cast<int32_t>(s->window_fill / row_bytes);
		if (rows > 0) {
			core::SrcImage src;
			src.fourcc = f.fourcc;
			src.width = w.width;
			src.height = rows;
			src.planes[0] = {s->window.get(), row_bytes, row_bytes * static_cast<uint64_t>(rows)};
			int32_t y = w.y + static_cast<int32_t>(w.converted_rows);
			dst.width = w.width;
			dst.height = rows;
			dst.data = st.data + static_cast<size_t>(y) * st.stride + static_cast<size_t>(w.x) * 4;
			dst.size = st.stride * static_cast<size_t>(rows - 1) + static_cast<size_t>(w.width) * 4;
			core::convert_rows(src, dst, 0, rows, s->plugin->convert_options);
			off = row_bytes * static_cast<uint64_t>(rows);
			w.converted_rows += static_cast<uint64_t>(rows);
		}
	} else {
		// Planar and subsampled: one chroma group per call (luma rows, then chroma rows).
		for (;;) {
			int32_t row = static_cast<int32_t>(w.converted_rows);
			if (row >= w.height) break;
			uint64_t gb = group_bytes(f, w.width, w.height, row);
			if (s->window_fill - off < gb) break;
			int32_t luma_rows = std::min<int32_t>(f.vsub, w.height - row);
			core::SrcImage src;
			src.fourcc = f.fourcc;
			src.width = w.width;
			src.height = luma_rows;
			const uint8_t *p = s->window.get() + off;
			uint64_t r0 = plane_row_bytes(f, 0, w.width);
			src.planes[0] = {p, r0, r0 * static_cast<uint64_t>(luma_rows)};
			p += r0 * static_cast<uint64_t>(luma_rows);
			for (int pl = 1; pl < f.num_planes; pl++) {
				uint64_t rb = plane_row_bytes(f, pl, w.width);
				src.planes[pl] = {p, rb, rb};
				p += rb;
			}
			dst.width = w.width;
			dst.height = luma_rows;
			dst.data = st.data + static_cast<size_t>(w.y + row) * st.stride + static_cast<size_t>(w.x) * 4;
			dst.size = st.stride * static_cast<size_t>(luma_rows - 1) + static_cast<size_t>(w.width) * 4;
			core::convert_rows(src, dst, 0, luma_rows, s->plugin->convert_options);
			off += gb;
			w.converted_rows += static_cast<uint64_t>(luma_rows);
		}
	}
	if (off > 0) {
		if (w.buffer->t_convert_start == 0) w.buffer->t_convert_start = t0;
		w.buffer->t_convert_end = monotonic_ns();
	}
	// Keep the partial row or group for the next read.
	if (off > 0) {
		memmove(s->window.get(), s->window.get() + off, s->window_fill - off);
		s->window_fill -= off;
	}
	return n;
}

int handle_readable(int fd, uint32_t mask, void *data) {
	auto *s = static_cast<Stream *>(data);
	size_t budget = kBytesPerDispatch;
	while (!s->writes.empty() && budget > 0 && !s->failed) {
		StreamWrite &w = s->writes.front();
		bool native = w.buffer->wire_format == w.buffer->pixel.fourcc;
		ssize_t n = w.done == w.length ? 0 : native ? read_native(s, w, budget) : read_windowed(s, w, budget);
		if (w.done < w.length) {
			if (n == 0) {
				stream_fail(s, "end of file in the middle of a write");
				return 0;
			}
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR) break;
				stream_fail(s, strerror(errno));
				return 0;
			}
			w.done += static_cast<uint64_t>(n);
			budget -= std::min(budget, static_cast<size_t>(n));
			s->plugin->stats.stream_bytes += static_cast<uint64_t>(n);
		}
		if (w.done == w.length) {
			complete_write(s);
		}
	}
	if (s->writes.empty() && s->resource == nullptr) {
		drop_stream(s); // destroyed by the client and everything announced was read
		return 0;
	}
	if (s->writes.empty() && (mask & (WL_EVENT_HANGUP | WL_EVENT_ERROR))) {
		// The client closed its end with nothing owed: stop watching the fd.
		wl_event_source_remove(s->source);
		s->source = nullptr;
		return 0;
	}
	update_fd_interest(s);
	return 0;
}

// ---- pp_stream_v1 -----------------------------------------------------------------------------

Stream *stream_from_resource(wl_resource *resource) { return static_cast<Stream *>(wl_resource_get_user_data(resource)); }

void stream_handle_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void stream_create_buffer(wl_client *client, wl_resource *resource, uint32_t id, int32_t width, int32_t height,
		uint32_t format) {
	Stream *s = stream_from_resource(resource);
	pixelport_plugin *plugin = s->plugin;
	uint32_t target = plugin->shm->target_for(format);
	const core::FormatInfo *wire = core::format_info(format);
	if (target == 0 || wire == nullptr) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_INVALID_FORMAT, "format 0x%08x not accepted", format);
		return;
	}
	const core::FormatInfo *storage_info = core::format_info(target);
	int bpp = storage_info != nullptr ? storage_info->planes[0].unit_bytes : 4;
	uint64_t bytes = static_cast<uint64_t>(width > 0 ? width : 0) * static_cast<uint64_t>(height > 0 ? height : 0) *
		static_cast<uint64_t>(bpp);
	if (width <= 0 || height <= 0 || width > 65535 || height > 65535) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_INVALID_SIZE, "invalid size %dx%d", width, height);
		return;
	}
	if (bytes > plugin->options.stream_max_buffer_bytes) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_LIMIT_EXCEEDED,
			"buffer of %llu bytes over the limit of %llu", static_cast<unsigned long long>(bytes),
			static_cast<unsigned long long>(plugin->options.stream_max_buffer_bytes));
		return;
	}
	std::shared_ptr<ClientUsage> usage = usage_for(client);
	if (usage->buffers >= plugin->options.stream_max_buffers) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_LIMIT_EXCEEDED, "more than %u stream buffers",
			plugin->options.stream_max_buffers);
		return;
	}
	auto *sb = new StreamBuffer();
	sb->storage = DestImage::create(target, width, height, bpp, true);
	if (sb->storage == nullptr) {
		delete sb;
		wl_client_post_no_memory(client);
		return;
	}
	sb->wire_format = format;
	sb->wire = wire;
	sb->stream_id = s->id;
	sb->usage = usage;
	sb->pixel.plugin = plugin;
	sb->pixel.fourcc = target; // the renderer reads the storage in place
	sb->pixel.target = target;
	if (!pixel_buffer_publish(&sb->pixel, client, id, &kStreamBufferImpl, &kWlBufferImpl, wl_buffer_resource_destroy,
			width, height)) {
		delete sb;
		return;
	}
	usage->buffers++;
}

void stream_write(wl_client *client, wl_resource *resource, wl_resource *buffer_resource, int32_t x, int32_t y,
		int32_t width, int32_t height, uint32_t length) {
	Stream *s = stream_from_resource(resource);
	StreamBuffer *sb = buffer_from_resource(buffer_resource);
	if (sb == nullptr || sb->stream_id != s->id) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_FOREIGN_BUFFER, "buffer not created on this stream");
		return;
	}
	const core::FormatInfo &f = *sb->wire;
	int32_t bw = sb->pixel.base.width, bh = sb->pixel.base.height;
	bool inside = x >= 0 && y >= 0 && width > 0 && height > 0 && width <= bw - x && height <= bh - y;
	bool on_grid = inside && x % f.hsub == 0 && y % f.vsub == 0 && (width % f.hsub == 0 || x + width == bw) &&
		(height % f.vsub == 0 || y + height == bh);
	if (!on_grid) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_INVALID_RECT,
			"rectangle %d,%d %dx%d not inside the %dx%d buffer on the chroma grid", x, y, width, height, bw, bh);
		return;
	}
	uint64_t expected = packed_size(f, width, height);
	if (expected != length) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_BAD_LENGTH, "length %u, the rectangle packs to %llu",
			length, static_cast<unsigned long long>(expected));
		return;
	}
	if (s->usage->inflight_bytes + length > s->plugin->options.stream_max_inflight_bytes) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_LIMIT_EXCEEDED,
			"more than %llu bytes announced and not yet read",
			static_cast<unsigned long long>(s->plugin->options.stream_max_inflight_bytes));
		return;
	}
	if (s->failed || s->source == nullptr) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_DATA_FD, "the data fd is closed");
		return;
	}
	s->usage->inflight_bytes += length;
	sb->announced++;
	wlr_buffer_lock(&sb->pixel.base); // the storage stays while bytes are owed to it
	s->writes.push_back({sb, x, y, width, height, length});
	update_fd_interest(s);
}

const struct pp_stream_v1_interface kStreamImpl = {
	.destroy = stream_handle_destroy,
	.create_buffer = stream_create_buffer,
	.write = stream_write,
};

void drop_stream(Stream *s) {
	// Pending writes will never complete: release their buffers and any held commits'
	// surfaces stay held until the client goes (wlroots then frees the cached states).
	for (StreamWrite &w : s->writes) wlr_buffer_unlock(&w.buffer->pixel.base);
	s->writes.clear();
	if (s->source != nullptr) wl_event_source_remove(s->source);
	if (s->fd >= 0) close(s->fd);
	std::erase(live_streams, s);
	delete s;
}

void stream_resource_destroy(wl_resource *resource) {
	Stream *s = stream_from_resource(resource);
	s->resource = nullptr;
	// Announced bytes are still read (the buffers stay valid); without any, the stream ends.
	if (s->writes.empty() || s->failed || s->source == nullptr) {
		drop_stream(s);
	}
}

// ---- pp_stream_manager_v1 ---------------------------------------------------------------------

void manager_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void manager_create_stream(wl_client *client, wl_resource *resource, uint32_t id, int32_t fd) {
	auto *manager = static_cast<StreamManager *>(wl_resource_get_user_data(resource));
	struct stat st;
	if (fstat(fd, &st) != 0 || !(S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode))) {
		close(fd);
		wl_resource_post_error(resource, PP_STREAM_MANAGER_V1_ERROR_INVALID_FD,
			"the data fd must be a socket or a pipe");
		return;
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || (flags & O_ACCMODE) == O_WRONLY || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		close(fd);
		wl_resource_post_error(resource, PP_STREAM_MANAGER_V1_ERROR_INVALID_FD, "the data fd is not readable");
		return;
	}
	auto *s = new Stream();
	s->plugin = manager->plugin();
	s->id = next_stream_id++;
	s->fd = fd;
	s->usage = usage_for(client);
	s->resource = wl_resource_create(client, &pp_stream_v1_interface, wl_resource_get_version(resource), id);
	if (s->resource == nullptr) {
		close(fd);
		delete s;
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(s->resource, &kStreamImpl, s, stream_resource_destroy);
	live_streams.push_back(s);
	s->source = wl_event_loop_add_fd(wl_display_get_event_loop(s->plugin->display), fd, 0, handle_readable, s);
}

const struct pp_stream_manager_v1_interface kManagerImpl = {
	.destroy = manager_destroy,
	.create_stream = manager_create_stream,
};

} // namespace

std::unique_ptr<StreamManager> StreamManager::create(pixelport_plugin *plugin) {
	static bool registered = false;
	if (!registered) {
		wlr_buffer_register_resource_interface(&kResourceInterface); // lives forever, as it must
		registered = true;
	}
	std::unique_ptr<StreamManager> manager(new StreamManager());
	manager->plugin_ = plugin;
	manager->global_ = wl_global_create(plugin->display, &pp_stream_manager_v1_interface, 1, manager.get(), bind);
	if (manager->global_ == nullptr) return nullptr;
	return manager;
}

StreamManager::~StreamManager() {
	// Clients are gone (the host destroys them first); streams still reading owed bytes end now.
	std::vector<Stream *> mine;
	for (Stream *s : live_streams) {
		if (s->plugin == plugin_ && s->resource == nullptr) mine.push_back(s);
	}
	for (Stream *s : mine) drop_stream(s);
	if (global_ != nullptr) wl_global_destroy(global_);
}

void StreamManager::bind(wl_client *client, void *data, uint32_t version, uint32_t id) {
	auto *manager = static_cast<StreamManager *>(data);
	wl_resource *resource = wl_resource_create(client, &pp_stream_manager_v1_interface, static_cast<int>(version), id);
	if (resource == nullptr) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(resource, &kManagerImpl, manager, nullptr);
	const pixelport_options &o = manager->plugin_->options;
	for (uint32_t format : manager->plugin_->shm->formats()) {
		pp_stream_manager_v1_send_format(resource, shm_format_to_drm(format));
	}
	pp_stream_manager_v1_send_size_hint(resource, o.stream_size_hint);
	pp_stream_manager_v1_send_limits(resource, static_cast<uint32_t>(std::min<uint64_t>(o.stream_max_buffer_bytes, UINT32_MAX)),
		o.stream_max_buffers, static_cast<uint32_t>(std::min<uint64_t>(o.stream_max_inflight_bytes, UINT32_MAX)));
}

void StreamManager::handle_client_commit(SurfaceState *surface, wlr_buffer *buffer) {
	PixelBuffer *pb = pixel_buffer_from_wlr(buffer);
	if (!is_stream_buffer(pb)) return;
	StreamBuffer *sb = stream_buffer(pb);
	if (sb->completed >= sb->announced) return;
	// Hold this commit (and, by wlroots' ordering, later ones) until the bytes are in.
	uint32_t seq = wlr_surface_lock_pending(surface->surface);
	sb->waiters.push_back({surface->surface, surface->id, seq, sb->announced});
	plugin_->stats.held_commits++;
}

} // namespace pixelport
