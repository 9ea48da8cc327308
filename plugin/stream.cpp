#include "stream.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <list>
#include <utility>

#include "buffer.hpp"
#include "data_fd.hpp"
#include "format_policy.hpp"
#include "hold.hpp"
#include "pixelport-stream-v1-protocol.h"
#include "pixelport/core/format.hpp"
#include "pixelport/core/stream_layout.hpp"
#include "plugin.hpp"
#include "surface_state.hpp"
#include "timing.hpp"
#include "unmap.hpp"

namespace pixelport {

namespace {

constexpr size_t kWindowBytes = 1 << 20; // receive window for converted formats
constexpr size_t kBytesPerDispatch = 4 << 20; // per stream and wake-up; then others run
// Formats converted as they land are converted on the main thread: a wake-up takes chunks of
// kConvertChunkBytes and stops after the one that brings it past kConvertNsPerDispatch, so that
// other clients wait about that long for a stream, not for 4 MiB of conversion and the storage's
// page faults (a 4K NV12 frame arriving in one burst took 92-147 ms per 4 MiB wake-up on a
// loaded 2-core machine, bench/RESULTS.md).
constexpr size_t kConvertChunkBytes = 256 << 10;
constexpr uint64_t kConvertNsPerDispatch = 2'000'000;
constexpr int kMaxIov = 64;
// Writes announced and not yet read, per client: ~48 bytes each, so at most ~768 KiB of queue,
// and still a write per row for four 4K frames.
constexpr uint64_t kMaxPendingWrites = 16384;

// What one client has alive, against the limits in pixelport_options, and its streams (which
// never outlive it). Shared with its buffers, whose storage may outlive the client (a texture
// still holds it) and is charged to it until freed.
} // namespace

struct ClientUsage {
	uint64_t buffers = 0; // wl_buffers alive
	uint64_t storage_bytes = 0; // storage of its stream buffers, until freed
	uint64_t inflight_bytes = 0; // announced, not yet read
	uint64_t pending_writes = 0;
	std::vector<Stream *> streams; // alive, including those destroyed while bytes are owed
	/** The colour representation of this client's last commit (any surface). */
	ColorState color;
};

namespace {

// A commit held (HoldReason::StreamBytes) until the buffer's writes up to `need` are complete.
struct Waiter {
	SurfaceRef surface;
	uint64_t commit; // the surface's commit number
	uint64_t need; // writes of the buffer that must be complete
};

// A buffer's pixels in the renderer's format: an anonymous private mapping, so nothing is
// written (or made resident) before bytes arrive: untouched pages read as zero, the
// protocol's initial content. munmap gives the memory back at once.
struct Storage {
	uint32_t fourcc = 0;
	int32_t width = 0, height = 0;
	size_t stride = 0, size = 0, mapped = 0;
	uint8_t *data = nullptr;

	static std::unique_ptr<Storage> create(uint32_t fourcc, int32_t width, int32_t height, int bpp) {
		auto st = std::make_unique<Storage>();
		st->fourcc = fourcc;
		st->width = width;
		st->height = height;
		// Rows on 4-byte boundaries, as pixman and GL's default unpack alignment want.
		st->stride = (static_cast<size_t>(width) * static_cast<size_t>(bpp) + 3) & ~size_t{3};
		st->size = st->stride * static_cast<size_t>(height);
		st->mapped = st->size;
		void *p = mmap(nullptr, st->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			-1, 0);
		if (p == MAP_FAILED) return nullptr;
		st->data = static_cast<uint8_t *>(p);
		return st;
	}
	~Storage() { unmap_later(data, mapped); }
};

// Stored in the renderer's format (stored_format = renderer_format): it reads the storage in
// place. client_format is what the client writes, converted into the storage as it arrives.
class StreamBuffer : public PixelBuffer {
public:
	StreamBuffer(pixelport_plugin *plugin, uint32_t renderer_format) :
		PixelBuffer(plugin, renderer_format, renderer_format) {}
	~StreamBuffer() override {
		if (charged != nullptr) charged->storage_bytes -= storage->size;
	}

	const core::FormatInfo *wire = nullptr;
	std::unique_ptr<Storage> storage;
	core::StreamAssembler assembler; // puts a write's bytes into the storage (converting if need be)
	/** The colour representation the assembler converts with. */
	ColorState assembled_color;
	bool committed = false; // attached by a commit once: `color` is its colour
	uint64_t full_bytes = 0; // the whole buffer on the wire
	std::shared_ptr<ClientUsage> charged; // storage_bytes are refunded to it when freed
	uint64_t stream_id = 0;
	std::shared_ptr<ClientUsage> usage; // null once the wl_buffer is gone
	uint64_t announced = 0; // writes announced for this buffer
	uint64_t completed = 0; // ... and fully read
	std::vector<Waiter> waiters;
	// Timing, CLOCK_MONOTONIC ns: last write completed; conversions since the last apply.
	uint64_t t_complete = 0, t_convert_start = 0, t_convert_end = 0;

	bool source(core::SrcImage *out) override {
		out->fourcc = storage->fourcc;
		out->width = storage->width;
		out->height = storage->height;
		out->planes[0] = {storage->data, storage->stride, storage->size};
		return true;
	}

	void resource_destroyed() override {
		usage->buffers--;
		usage.reset();
	}

	bool incomplete() const override { return completed < announced; }

	void describe(timing::CommitSample *record) override {
		record->transport = timing::Transport::Stream;
		record->format = client_format;
		record->bytes = full_bytes;
	}

	void applied(timing::CommitSample *record) override {
		record->t_data_complete = t_complete;
		record->t_convert_start = t_convert_start;
		record->t_convert_end = t_convert_end;
		t_convert_start = t_convert_end = 0;
	}
};

struct StreamWrite {
	StreamBuffer *buffer; // locked while the write is pending
	int32_t x, y, width, height;
	uint64_t length;
	uint64_t done = 0; // bytes read
	bool begun = false; // the buffer's assembler has this write's rectangle
};

} // namespace

// Named in stream.hpp (the manager lists every stream alive).
struct Stream {
	pixelport_plugin *plugin = nullptr;
	StreamManager *manager = nullptr; // plugin->streams
	wl_resource *resource = nullptr; // null after destroy request; the stream lives on until drained
	uint64_t id = 0;
	int fd = -1;
	DataFdKind kind = DataFdKind::Socket;
	wl_event_source *source = nullptr;
	std::shared_ptr<ClientUsage> usage; // its client's: the stream is in usage->streams
	std::list<Stream *>::iterator live; // in manager->live_streams
	std::deque<StreamWrite> writes;
	uint32_t consumed = 0;
	std::unique_ptr<uint8_t[]> window; // for the converting assembler of the front write
	bool failed = false;
};

namespace {

void drop_stream(Stream *s);

// When the client goes, so do its streams: fds, event sources, pending writes, windows, held
// commits (from its account's one destroy listener).
void end_client_streams(ClientAccount *account) {
	std::vector<Stream *> streams = account->streams->streams;
	for (Stream *s : streams) drop_stream(s);
}

// The client's stream usage, in its account; null when out of memory.
std::shared_ptr<ClientUsage> usage_for(wl_client *client) {
	std::shared_ptr<ClientAccount> account = client_account(client);
	if (account == nullptr) return nullptr;
	if (account->streams == nullptr) {
		account->streams = std::make_shared<ClientUsage>();
		account->end_streams = end_client_streams;
	}
	return account->streams;
}

// ---- limits -----------------------------------------------------------------------------------

// Budgets in force now (docs/design.md, "Limits and fairness"): an option when set, else a
// default sized to the largest output, never below a floor that lets 8K-class clients work.
struct Limits {
	uint64_t max_buffer_bytes, max_client_bytes, max_inflight_bytes;
	uint32_t max_buffers, max_streams;
};

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kFloorBufferBytes = 256 * kMiB; // 8192 x 8192 x 4
constexpr uint64_t kFloorClientBytes = 1024 * kMiB; // three 8192 x 8192 buffers and change

Limits limits_of(pixelport_plugin *plugin) {
	const pixelport_options &o = plugin->options;
	uint64_t output = plugin->largest_output_pixels() * 4;
	Limits l;
	l.max_buffer_bytes =
		o.stream_max_buffer_bytes != 0 ? o.stream_max_buffer_bytes : std::max(kFloorBufferBytes, 4 * output);
	l.max_client_bytes =
		o.stream_max_client_bytes != 0 ? o.stream_max_client_bytes : std::max(kFloorClientBytes, 16 * output);
	l.max_inflight_bytes = o.stream_max_inflight_bytes != 0 ? o.stream_max_inflight_bytes : 512 * kMiB;
	l.max_buffers = o.stream_max_buffers != 0 ? o.stream_max_buffers : 64;
	l.max_streams = o.stream_max_streams != 0 ? o.stream_max_streams : 16;
	return l;
}

// The StreamBuffer behind a plugin buffer, or null (none, or a wl_shm one).
StreamBuffer *stream_buffer(PixelBuffer *b) { return dynamic_cast<StreamBuffer *>(b); }

// The commits waiting for bytes that are in now: their reason clears (the ledger releases them
// in commit order).
void release_waiters(StreamBuffer *sb) {
	pixelport_plugin *plugin = sb->plugin;
	std::vector<Waiter> ready;
	std::erase_if(sb->waiters, [&](const Waiter &w) {
		if (w.need > sb->completed) return false;
		ready.push_back(w);
		return true;
	});
	for (const Waiter &w : ready) {
		if (SurfaceState *s = w.surface.get()) {
			plugin->holds->clear(s, w.commit, HoldReason::StreamBytes, Release::Now);
		}
	}
}

// ---- reading the data fd ---------------------------------------------------------------------

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
	s->usage->pending_writes--;
	s->plugin->stats.add(Stat::StreamWrites);
	s->consumed++;
	if (s->resource != nullptr) {
		pp_stream_v1_send_consumed(s->resource, s->consumed);
	}
	release_waiters(sb);
	wlr_buffer_unlock(sb->base());
}

// Reads into `iov` without ever waiting, however the client set the file's flags: returns
// bytes read, 0 on end of file, -1 with errno (EAGAIN: nothing there now).
ssize_t read_nowait(Stream *s, iovec *iov, int n) {
	if (s->kind == DataFdKind::Socket) {
		msghdr msg = {};
		msg.msg_iov = iov;
		msg.msg_iovlen = static_cast<size_t>(n);
		return recvmsg(s->fd, &msg, MSG_DONTWAIT); // fds passed along are closed by the kernel
	}
	if (s->kind == DataFdKind::Pipe) {
		ssize_t r = preadv2(s->fd, iov, n, -1, RWF_NOWAIT);
		if (r >= 0 || errno != EOPNOTSUPP) return r;
		s->kind = DataFdKind::Fifo; // a named FIFO: the kernel has no RWF_NOWAIT for it
	}
	int *relay = s->manager->relay;
	if (relay[0] < 0 && pipe2(relay, O_NONBLOCK | O_CLOEXEC) < 0) return -1;
	size_t want = 0;
	for (int i = 0; i < n; i++) want += iov[i].iov_len;
	// SPLICE_F_NONBLOCK: an empty FIFO answers EAGAIN, whoever else reads or writes it.
	ssize_t moved = splice(s->fd, nullptr, relay[1], nullptr, want, SPLICE_F_NONBLOCK);
	if (moved <= 0) return moved;
	// Exactly `moved` bytes wait in the relay: read them all into the iovecs.
	size_t left = static_cast<size_t>(moved);
	int used = 0;
	for (; used < n && left > 0; used++) {
		if (iov[used].iov_len > left) iov[used].iov_len = left;
		left -= iov[used].iov_len;
	}
	ssize_t got = readv(relay[0], iov, used);
	if (got != moved) {
		// Cannot happen with a private pipe; never leave bytes behind for another stream.
		char sink[4096];
		while (read(relay[0], sink, sizeof(sink)) > 0) {
		}
		errno = EIO;
		return -1;
	}
	return got;
}

// Reads the next bytes of the front write into the buffer's assembler: renderer formats go
// straight to their place in the storage, others into the window, and every complete row group
// is converted as it lands. Returns bytes read, 0 on end of file, -1 with errno on a read
// error, or -2 with *why set when the assembler refuses (which the checks in stream_write and
// the window's size rule out).
ssize_t read_write(Stream *s, StreamWrite &w, size_t budget, const char **why) {
	core::StreamAssembler &a = w.buffer->assembler;
	if (!w.begun) {
		StreamBuffer *sb = w.buffer;
		// A write converts with the colour representation of the buffer's last commit, or
		// before its first one, of its client's last commit.
		const ColorState &color = sb->committed || sb->usage == nullptr ? sb->color : sb->usage->color;
		// Colour matters where the rows are converted: YCbCr, and straight alpha (premultiplied
		// as the rows land). A wire format stored as it is gets premultiplied by a converted view
		// of the commit instead (surface.cpp).
		bool converted = sb->client_format != sb->storage->fourcc;
		if (converted && (sb->wire->model == core::ColorModel::YUV || sb->wire->has_alpha) &&
			!(sb->assembled_color == color)) {
			Storage &st = *sb->storage;
			core::ConvertOptions opt = color_state_options(
				color, sb->client_format, st.width, st.height, sb->plugin->convert_options);
			core::Status status = a.init(
				sb->client_format, {st.fourcc, st.width, st.height, st.data, st.stride, st.size}, opt);
			if (status != core::Status::Ok) {
				*why = core::status_str(status);
				return -2;
			}
			sb->assembled_color = color;
		}
		std::span<uint8_t> window;
		if (a.converts()) {
			if (!s->window) s->window.reset(new uint8_t[kWindowBytes]);
			window = {s->window.get(), kWindowBytes};
		}
		core::AssemblyStatus st = a.begin({w.x, w.y, w.width, w.height}, window);
		if (st != core::AssemblyStatus::NeedMore) {
			*why = core::assembly_status_str(st);
			return -2;
		}
		w.begun = true;
	}
	iovec iov[kMaxIov];
	int n = a.writable(iov, kMaxIov, budget);
	if (n == 0) {
		*why = "no room for the announced bytes";
		return -2;
	}
	ssize_t got = read_nowait(s, iov, n);
	if (got <= 0) return got;
	int32_t rows = a.rows_done();
	uint64_t t0 = monotonic_ns();
	core::AssemblyStatus st = a.arrived(static_cast<uint64_t>(got));
	if (st != core::AssemblyStatus::NeedMore && st != core::AssemblyStatus::Complete) {
		*why = core::assembly_status_str(st);
		return -2;
	}
	if (a.converts() && a.rows_done() > rows) {
		if (w.buffer->t_convert_start == 0) w.buffer->t_convert_start = t0;
		w.buffer->t_convert_end = monotonic_ns();
	}
	return got;
}

int handle_readable(int fd, uint32_t mask, void *data) {
	auto *s = static_cast<Stream *>(data);
	size_t budget = kBytesPerDispatch;
	const uint64_t t0 = monotonic_ns();
	bool converted = false; // and the time is spent: the rest waits for the next wake-up
	while (!s->writes.empty() && budget > 0 && !s->failed && !converted) {
		StreamWrite &w = s->writes.front();
		const char *why = nullptr;
		const bool converts = w.buffer->assembler.converts() || !w.begun;
		ssize_t n = w.done == w.length
			? 0
			: read_write(s, w, converts ? std::min(budget, kConvertChunkBytes) : budget, &why);
		converted = w.buffer->assembler.converts() && monotonic_ns() - t0 >= kConvertNsPerDispatch;
		if (w.done < w.length) {
			if (n == -2) {
				stream_fail(s, why);
				return 0;
			}
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
			s->plugin->stats.add(Stat::StreamBytes, static_cast<uint64_t>(n));
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

Stream *stream_from_resource(wl_resource *resource) {
	return static_cast<Stream *>(wl_resource_get_user_data(resource));
}

void stream_handle_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void stream_create_buffer(
	wl_client *client, wl_resource *resource, uint32_t id, int32_t width, int32_t height, uint32_t format) {
	Stream *s = stream_from_resource(resource);
	pixelport_plugin *plugin = s->plugin;
	uint32_t target = plugin->formats->target_for(format);
	const core::FormatInfo *wire = core::format_info(format);
	if (target == 0 || wire == nullptr) {
		wl_resource_post_error(
			resource, PP_STREAM_V1_ERROR_INVALID_FORMAT, "format 0x%08x not accepted", format);
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
	Limits limits = limits_of(plugin);
	if (bytes > limits.max_buffer_bytes) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_LIMIT_EXCEEDED,
			"buffer of %llu bytes over the limit of %llu", static_cast<unsigned long long>(bytes),
			static_cast<unsigned long long>(limits.max_buffer_bytes));
		return;
	}
	std::shared_ptr<ClientUsage> usage = s->usage;
	if (usage->buffers >= limits.max_buffers) {
		wl_resource_post_error(
			resource, PP_STREAM_V1_ERROR_LIMIT_EXCEEDED, "more than %u stream buffers", limits.max_buffers);
		return;
	}
	if (usage->storage_bytes + bytes > limits.max_client_bytes) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_LIMIT_EXCEEDED,
			"stream buffers of this client would hold %llu bytes, over the limit of %llu",
			static_cast<unsigned long long>(usage->storage_bytes + bytes),
			static_cast<unsigned long long>(limits.max_client_bytes));
		return;
	}
	auto *sb = new StreamBuffer(plugin, target);
	sb->storage = Storage::create(target, width, height, bpp);
	if (sb->storage == nullptr) {
		delete sb;
		wl_client_post_no_memory(client);
		return;
	}
	core::PackedLayout full;
	core::Status status = core::packed_layout(format, width, height, &full);
	if (status == core::Status::Ok) {
		Storage &st = *sb->storage;
		status = sb->assembler.init(format, {target, width, height, st.data, st.stride, st.size},
			color_state_options({}, format, width, height, plugin->convert_options));
	}
	if (status != core::Status::Ok) {
		delete sb;
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_INVALID_FORMAT, "format 0x%08x into 0x%08x: %s",
			format, target, core::status_str(status));
		return;
	}
	sb->full_bytes = full.total_bytes;
	sb->client_format = format;
	sb->wire = wire;
	sb->stream_id = s->id;
	sb->usage = usage;
	if (!pixel_buffer_create(sb, client, id, width, height)) {
		delete sb;
		return;
	}
	usage->buffers++;
	usage->storage_bytes += sb->storage->size;
	sb->charged = usage;
}

void stream_write(wl_client *client, wl_resource *resource, wl_resource *buffer_resource, int32_t x, int32_t y,
	int32_t width, int32_t height, uint32_t length) {
	Stream *s = stream_from_resource(resource);
	StreamBuffer *sb = stream_buffer(pixel_buffer_from_resource(buffer_resource));
	if (sb == nullptr || sb->stream_id != s->id) {
		wl_resource_post_error(
			resource, PP_STREAM_V1_ERROR_FOREIGN_BUFFER, "buffer not created on this stream");
		return;
	}
	int32_t bw = sb->width(), bh = sb->height();
	core::PackedLayout layout;
	if (core::check_stream_rect(*sb->wire, {x, y, width, height}, bw, bh) != core::Status::Ok ||
		core::packed_layout(sb->client_format, width, height, &layout) != core::Status::Ok) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_INVALID_RECT,
			"rectangle %d,%d %dx%d not inside the %dx%d buffer on the chroma grid", x, y, width, height, bw,
			bh);
		return;
	}
	uint64_t expected = layout.total_bytes;
	if (expected != length) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_BAD_LENGTH,
			"length %u, the rectangle packs to %llu", length, static_cast<unsigned long long>(expected));
		return;
	}
	uint64_t max_inflight = limits_of(s->plugin).max_inflight_bytes;
	if (s->usage->inflight_bytes + length > max_inflight) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_LIMIT_EXCEEDED,
			"more than %llu bytes announced and not yet read",
			static_cast<unsigned long long>(max_inflight));
		return;
	}
	if (s->usage->pending_writes >= kMaxPendingWrites) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_LIMIT_EXCEEDED,
			"more than %llu writes announced and not yet read",
			static_cast<unsigned long long>(kMaxPendingWrites));
		return;
	}
	if (s->failed || s->source == nullptr) {
		wl_resource_post_error(resource, PP_STREAM_V1_ERROR_DATA_FD, "the data fd is closed");
		return;
	}
	s->usage->inflight_bytes += length;
	s->usage->pending_writes++;
	sb->announced++;
	wlr_buffer_lock(sb->base()); // the storage stays while bytes are owed to it
	s->writes.push_back({sb, x, y, width, height, length});
	update_fd_interest(s);
}

const struct pp_stream_v1_interface kStreamImpl = {
	.destroy = stream_handle_destroy,
	.create_buffer = stream_create_buffer,
	.write = stream_write,
};

void drop_stream(Stream *s) {
	// Pending writes will never complete: release their buffers. Commits waiting for their bytes
	// wait no more: they apply with what arrived (at the next idle: the client may be going).
	for (StreamWrite &w : s->writes) {
		s->usage->inflight_bytes -= w.length;
		s->usage->pending_writes--;
		for (const Waiter &waiter : std::exchange(w.buffer->waiters, {})) {
			if (SurfaceState *surface = waiter.surface.get()) {
				s->plugin->holds->clear(surface, waiter.commit, HoldReason::StreamBytes, Release::Idle);
			}
		}
		wlr_buffer_unlock(w.buffer->base());
	}
	s->writes.clear();
	if (s->source != nullptr) wl_event_source_remove(s->source);
	if (s->fd >= 0) close(s->fd);
	if (s->resource != nullptr) wl_resource_set_user_data(s->resource, nullptr); // its client is going
	std::erase(s->usage->streams, s);
	s->manager->live_streams.erase(s->live);
	delete s;
}

void stream_resource_destroy(wl_resource *resource) {
	Stream *s = stream_from_resource(resource);
	if (s == nullptr) return; // already dropped with its client
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
	DataFdKind kind = DataFdKind::Socket;
	const char *why = vet_data_fd(wl_client_get_display(client), fd, &kind);
	if (*why != '\0') {
		close(fd);
		wl_resource_post_error(resource, PP_STREAM_MANAGER_V1_ERROR_INVALID_FD, "data fd: %s", why);
		return;
	}
	std::shared_ptr<ClientUsage> usage = usage_for(client);
	if (usage == nullptr) {
		close(fd);
		wl_client_post_no_memory(client);
		return;
	}
	uint32_t max_streams = limits_of(manager->plugin()).max_streams;
	if (usage->streams.size() >= max_streams) {
		close(fd);
		wl_resource_post_error(
			resource, PP_STREAM_MANAGER_V1_ERROR_LIMIT_EXCEEDED, "more than %u streams", max_streams);
		return;
	}
	// Reads do not rely on it (read_nowait), but a well-behaved fd is non-blocking anyway.
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	auto *s = new Stream();
	s->plugin = manager->plugin();
	s->manager = manager;
	s->id = manager->next_stream_id++;
	s->fd = fd;
	s->kind = kind;
	s->usage = usage;
	s->resource = wl_resource_create(client, &pp_stream_v1_interface, wl_resource_get_version(resource), id);
	if (s->resource == nullptr) {
		close(fd);
		delete s;
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(s->resource, &kStreamImpl, s, stream_resource_destroy);
	s->live = manager->live_streams.insert(manager->live_streams.end(), s);
	usage->streams.push_back(s);
	s->source = wl_event_loop_add_fd(wl_display_get_event_loop(s->plugin->display), fd, 0, handle_readable, s);
}

const struct pp_stream_manager_v1_interface kManagerImpl = {
	.destroy = manager_destroy,
	.create_stream = manager_create_stream,
};

} // namespace

std::unique_ptr<StreamManager> StreamManager::create(pixelport_plugin *plugin) {
	std::unique_ptr<StreamManager> manager(new StreamManager());
	manager->plugin_ = plugin;
	return manager;
}

wl_global *StreamManager::create_global(uint32_t version) {
	return wl_global_create(
		plugin_->display, &pp_stream_manager_v1_interface, static_cast<int>(version), this, bind);
}

StreamManager::~StreamManager() {
	// Clients are gone (the host destroys them first); streams still reading owed bytes end now.
	std::vector<Stream *> mine(live_streams.begin(), live_streams.end());
	for (Stream *s : mine) drop_stream(s);
	if (relay[0] >= 0) {
		close(relay[0]);
		close(relay[1]);
	}
}

void StreamManager::bind(wl_client *client, void *data, uint32_t version, uint32_t id) {
	auto *manager = static_cast<StreamManager *>(data);
	wl_resource *resource = manager->plugin_->bind_resource(client, &pp_stream_manager_v1_interface, version, id);
	if (resource == nullptr) return;
	wl_resource_set_implementation(resource, &kManagerImpl, manager, nullptr);
	const pixelport_options &o = manager->plugin_->options;
	Limits limits = limits_of(manager->plugin_);
	for (uint32_t format : manager->plugin_->formats->served()) {
		pp_stream_manager_v1_send_format(resource, format);
	}
	pp_stream_manager_v1_send_size_hint(resource, o.stream_size_hint);
	pp_stream_manager_v1_send_limits(resource,
		static_cast<uint32_t>(std::min<uint64_t>(limits.max_buffer_bytes, UINT32_MAX)), limits.max_buffers,
		static_cast<uint32_t>(std::min<uint64_t>(limits.max_inflight_bytes, UINT32_MAX)));
}

void StreamManager::handle_client_commit(SurfaceState *surface, PixelBuffer *buffer) {
	StreamBuffer *sb = stream_buffer(buffer);
	if (sb == nullptr) return;
	sb->committed = true;
	if (sb->completed >= sb->announced) return;
	// A surface without a role shows nothing, and a held commit of it would apply after a role
	// the client gives it meanwhile (an xdg_surface's initial commit), which wlroots aborts on.
	// Its commit applies now; the bytes land in the buffer as they arrive.
	if (surface->surface->role == nullptr) return;
	// Hold this commit (and, by wlroots' ordering, later ones) until the bytes are in.
	if (plugin_->holds->hold(surface, HoldReason::StreamBytes)) {
		sb->waiters.push_back({surface->ref(), surface->commits, sb->announced});
	}
}

void StreamManager::note_color(wl_client *client, const ColorState &color) {
	// Only clients that made a stream have usage; others need nothing here.
	ClientAccount *account = client_account_find(client);
	if (account != nullptr && account->streams != nullptr) account->streams->color = color;
}

} // namespace pixelport
