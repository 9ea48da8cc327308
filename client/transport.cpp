#include "transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "pattern.hpp"
#include "pixelport/core/format.hpp"
#include "pixelport/core/stream_layout.hpp"

namespace pixelport::client {

const char *transport_name(TransportChoice t) {
	switch (t) {
	case TransportChoice::ShmReused: return "shm";
	case TransportChoice::ShmNewPool: return "shm-new";
	case TransportChoice::StreamSocket: return "socket";
	case TransportChoice::StreamPipe: return "pipe";
	case TransportChoice::Auto: return "auto";
	}
	return "?";
}

bool parse_transport(const std::string &name, TransportChoice *out) {
	for (TransportChoice t : {TransportChoice::ShmReused, TransportChoice::ShmNewPool,
		     TransportChoice::StreamSocket, TransportChoice::StreamPipe, TransportChoice::Auto}) {
		if (name == transport_name(t)) {
			*out = t;
			return true;
		}
	}
	return false;
}

uint64_t stream_iovecs(const Pixels &px, const Rect &r, std::vector<iovec> *out) {
	out->clear();
	const core::FormatInfo *f = core::format_info(px.format);
	ShmLayout shm;
	core::PackedLayout layout;
	if (f == nullptr || !shm_layout(px.format, px.width, px.height, px.stride, &shm) || shm.size > px.size ||
		core::check_stream_rect(*f, {r.x, r.y, r.width, r.height}, px.width, px.height) != core::Status::Ok ||
		core::packed_layout(px.format, r.width, r.height, &layout) != core::Status::Ok) {
		return 0;
	}
	core::PlaneRef planes[core::kMaxPlanes];
	for (int p = 0; p < f->num_planes; p++) {
		planes[p] = {const_cast<uint8_t *>(px.data) + shm.offset[p], shm.stride[p]};
	}
	// The core says where each wire byte lies; ranges that meet in memory merge into one.
	uint64_t total = 0;
	while (total < layout.total_bytes) {
		iovec batch[64];
		uint64_t covered = 0;
		size_t n = core::packed_spans(
			layout, r.x, r.y, planes, total, layout.total_bytes - total, batch, 64, &covered);
		for (size_t i = 0; i < n; i++) {
			iovec &last = out->empty() ? batch[i] : out->back();
			if (!out->empty() &&
				static_cast<uint8_t *>(last.iov_base) + last.iov_len == batch[i].iov_base) {
				last.iov_len += batch[i].iov_len;
			} else {
				out->push_back(batch[i]);
			}
		}
		total += covered;
	}
	return total;
}

SurfaceWriter::SurfaceWriter(Connection *conn, wl_surface *surface, TransportChoice transport) :
	conn_(conn), surface_(surface), transport_(transport) {
	for (Slot *slots : {shm_slots_, stream_slots_}) {
		slots[0].owner = slots[1].owner = this;
	}
}

SurfaceWriter::~SurfaceWriter() {
	for (Slot *slots : {shm_slots_, stream_slots_}) {
		for (int i = 0; i < 2; i++) {
			if (slots[i].buffer) wl_buffer_destroy(slots[i].buffer);
		}
	}
	if (stream_) pp_stream_v1_destroy(stream_);
	if (data_fd_ >= 0) close(data_fd_);
}

TransportChoice SurfaceWriter::pick(const Pixels &px) const {
	if (transport_ != TransportChoice::Auto) return transport_;
	if (conn_->stream_manager == nullptr) return TransportChoice::ShmReused;
	return px.size < conn_->stream_size_hint ? TransportChoice::StreamSocket : TransportChoice::ShmReused;
}

static const wl_buffer_listener kSlotListener = {
	.release =
		[](void *data, wl_buffer *) {
			auto *slot = static_cast<SurfaceWriter::Slot *>(data);
			auto &releases = slot->owner->releases_;
			// Kept for a caller that takes them; one that never does holds at most this many.
			if (releases.size() >= 1024) releases.erase(releases.begin(), releases.begin() + 512);
			if (slot->busy) releases.push_back({slot->put_start, now_ns()});
			slot->busy = false;
		},
};

SurfaceWriter::Slot *SurfaceWriter::free_slot(Slot *slots, int timeout_ms) {
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	for (;;) {
		for (int i = 0; i < 2; i++) {
			if (!slots[i].busy) return &slots[i];
		}
		uint64_t now = now_ns();
		if (now >= deadline) return nullptr;
		if (!conn_->dispatch_timeout(static_cast<int>((deadline - now) / 1000000u) + 1) &&
			wl_display_get_error(conn_->display) != 0) {
			return nullptr;
		}
	}
}

void SurfaceWriter::commit(wl_buffer *buffer, const Rect &d) {
	wl_surface_attach(surface_, buffer, 0, 0);
	wl_surface_damage_buffer(surface_, d.x, d.y, d.width, d.height);
	wl_surface_commit(surface_);
	// Before the flush: once sent, the compositor may run (and finish) before we do.
	timing_.committed = now_ns();
	wl_display_flush(conn_->display);
}

bool SurfaceWriter::put(const Pixels &px, const Rect *damage, std::string *error, int timeout_ms) {
	timing_ = {};
	timing_.start = now_ns();
	Rect full = {0, 0, px.width, px.height};
	const Rect &d = damage != nullptr ? *damage : full;
	TransportChoice t = pick(px);
	timing_.transport = t;
	bool ok = false;
	switch (t) {
	case TransportChoice::ShmReused: ok = put_shm(px, d, false, error, timeout_ms); break;
	case TransportChoice::ShmNewPool: ok = put_shm(px, d, true, error, timeout_ms); break;
	case TransportChoice::StreamSocket: ok = put_stream(px, d, false, error, timeout_ms); break;
	case TransportChoice::StreamPipe: ok = put_stream(px, d, true, error, timeout_ms); break;
	case TransportChoice::Auto: break;
	}
	if (ok && timing_.sent == 0) timing_.sent = timing_.committed;
	return ok;
}

bool SurfaceWriter::put_shm(const Pixels &px, const Rect &d, bool new_pool, std::string *error, int timeout_ms) {
	uint32_t shm_format = drm_to_shm(px.format);
	if (!conn_->has_shm_format(shm_format)) {
		*error = "wl_shm lacks " + format_name(shm_format);
		return false;
	}
	if (new_pool) {
		// The 2006 experiment's cost: a fresh shared segment for every frame.
		ShmPool pool;
		if (!pool.create(conn_, px.size, error)) return false;
		memcpy(pool.data, px.data, px.size);
		wl_buffer *buffer = wl_shm_pool_create_buffer(
			pool.pool, 0, px.width, px.height, static_cast<int32_t>(px.stride), shm_format);
		static const wl_buffer_listener release_destroys = {
			.release = [](void *, wl_buffer *b) { wl_buffer_destroy(b); },
		};
		wl_buffer_add_listener(buffer, &release_destroys, nullptr);
		timing_.bytes = px.size;
		commit(buffer, d);
		return true; // pool, mapping and fd go now; the compositor keeps its own mapping
	}
	Slot *slot = free_slot(shm_slots_, timeout_ms);
	if (slot == nullptr) {
		*error = "no wl_shm buffer was released in time";
		return false;
	}
	if (slot->buffer == nullptr || slot->format != px.format || slot->width != px.width ||
		slot->height != px.height || slot->stride != px.stride) {
		if (slot->buffer) wl_buffer_destroy(slot->buffer);
		slot->buffer = nullptr;
		slot->pool.destroy();
		if (!slot->pool.create(conn_, px.size, error)) return false;
		slot->buffer = wl_shm_pool_create_buffer(
			slot->pool.pool, 0, px.width, px.height, static_cast<int32_t>(px.stride), shm_format);
		wl_buffer_add_listener(slot->buffer, &kSlotListener, slot);
		slot->format = px.format;
		slot->width = px.width;
		slot->height = px.height;
		slot->stride = px.stride;
	}
	// Whole frame: the other buffer's old content must not show through undamaged areas.
	memcpy(slot->pool.data, px.data, px.size);
	timing_.bytes = px.size;
	slot->busy = true;
	slot->put_start = timing_.start;
	commit(slot->buffer, d);
	return true;
}

static const pp_stream_v1_listener kStreamListener = {
	.consumed = [](void *data, pp_stream_v1 *,
			    uint32_t count) { static_cast<SurfaceWriter *>(data)->consumed_ = count; },
};

bool SurfaceWriter::open_stream(bool pipe, std::string *error) {
	if (conn_->stream_manager == nullptr) {
		*error = "the compositor has no pixelport stream (no plugin?)";
		return false;
	}
	int fds[2];
	if (pipe) {
		if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
			*error = std::string("pipe: ") + strerror(errno);
			return false;
		}
		// A big pipe keeps vmsplice going while the compositor drains it.
		fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
		stream_ = pp_stream_manager_v1_create_stream(conn_->stream_manager, fds[0]);
		close(fds[0]);
		data_fd_ = fds[1];
	} else {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) < 0) {
			*error = std::string("socketpair: ") + strerror(errno);
			return false;
		}
		int size = 4 << 20;
		setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
		stream_ = pp_stream_manager_v1_create_stream(conn_->stream_manager, fds[0]);
		close(fds[0]); // libwayland keeps its own copy until the request is sent
		data_fd_ = fds[1];
	}
	pp_stream_v1_add_listener(stream_, &kStreamListener, this);
	stream_is_pipe_ = pipe;
	return true;
}

bool SurfaceWriter::send_all(std::vector<iovec> &iov, bool pipe, std::string *error, int timeout_ms) {
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	size_t first = 0;
	while (first < iov.size()) {
		int n = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
		iovec piece;
		if (chunk_bytes_ > 0) {
			// Test mode: one limited piece of the first range per call.
			size_t limit = chunk_bytes_;
			if (chunk_random_) {
				chunk_rng_ ^= chunk_rng_ << 13;
				chunk_rng_ ^= chunk_rng_ >> 7;
				chunk_rng_ ^= chunk_rng_ << 17;
				limit = 1 + chunk_rng_ % chunk_bytes_;
			}
			piece = {iov[first].iov_base, std::min(limit, iov[first].iov_len)};
		}
		const iovec *vec = chunk_bytes_ > 0 ? &piece : &iov[first];
		if (chunk_bytes_ > 0) n = 1;
		ssize_t done = pipe ? vmsplice(data_fd_, vec, static_cast<unsigned long>(n), SPLICE_F_NONBLOCK)
				    : writev(data_fd_, vec, n);
		if (done < 0) {
			if (errno != EAGAIN && errno != EINTR) {
				*error = std::string(pipe ? "vmsplice: " : "writev: ") + strerror(errno);
				return false;
			}
			// Full: wait for room, answering the compositor meanwhile (never block forever).
			uint64_t now = now_ns();
			if (now >= deadline) {
				*error = "the compositor stopped reading the stream";
				return false;
			}
			wl_display_flush(conn_->display);
			pollfd fds[2] = {{data_fd_, POLLOUT, 0}, {wl_display_get_fd(conn_->display), POLLIN, 0}};
			poll(fds, 2, static_cast<int>(std::min<uint64_t>((deadline - now) / 1000000u + 1, 100)));
			if (fds[1].revents & POLLIN) conn_->dispatch_timeout(0);
			if (wl_display_get_error(conn_->display) != 0) {
				*error = conn_->error_text();
				return false;
			}
			continue;
		}
		auto left = static_cast<size_t>(done);
		while (left > 0 && first < iov.size()) {
			if (left >= iov[first].iov_len) {
				left -= iov[first].iov_len;
				first++;
			} else {
				iov[first].iov_base = static_cast<uint8_t *>(iov[first].iov_base) + left;
				iov[first].iov_len -= left;
				left = 0;
			}
		}
	}
	return true;
}

// Smallest rectangle holding a and b, widened to the format's chroma grid.
static Rect grid_union(const Rect &a, const Rect &b, const core::FormatInfo &f, int width, int height) {
	int x0 = std::min(a.x, b.x), y0 = std::min(a.y, b.y);
	int x1 = std::max(a.x + a.width, b.x + b.width), y1 = std::max(a.y + a.height, b.y + b.height);
	x0 -= x0 % f.hsub;
	y0 -= y0 % f.vsub;
	x1 = std::min(width, (x1 + f.hsub - 1) / f.hsub * f.hsub);
	y1 = std::min(height, (y1 + f.vsub - 1) / f.vsub * f.vsub);
	return {x0, y0, x1 - x0, y1 - y0};
}

bool SurfaceWriter::put_stream(const Pixels &px, const Rect &d, bool pipe, std::string *error, int timeout_ms) {
	const core::FormatInfo *f = core::format_info(px.format);
	if (f == nullptr) {
		*error = "unknown format";
		return false;
	}
	if (stream_ == nullptr && !open_stream(pipe, error)) return false;
	if (stream_is_pipe_ != pipe) {
		*error = "a writer keeps one stream kind";
		return false;
	}
	Slot *slot = free_slot(stream_slots_, timeout_ms);
	if (slot == nullptr) {
		*error = "no stream buffer was released in time";
		return false;
	}
	Rect send = {0, 0, px.width, px.height};
	if (slot->buffer == nullptr || slot->format != px.format || slot->width != px.width ||
		slot->height != px.height) {
		if (slot->buffer) wl_buffer_destroy(slot->buffer);
		slot->buffer = pp_stream_v1_create_buffer(stream_, px.width, px.height, px.format);
		wl_buffer_add_listener(slot->buffer, &kSlotListener, slot);
		slot->format = px.format;
		slot->width = px.width;
		slot->height = px.height;
	} else if (slot->last_frame + 2 == frame_) {
		// This buffer holds the frame before last: it lacks the last damage and this one.
		send = grid_union(d, last_damage_, *f, px.width, px.height);
	}
	std::vector<iovec> iov;
	uint64_t length = stream_iovecs(px, send, &iov);
	if (length == 0 || length > UINT32_MAX) {
		*error = "frame cannot be streamed (format or size)";
		return false;
	}
	// Announce, then commit at once: the compositor holds the commit until the bytes are in.
	pp_stream_v1_write(
		stream_, slot->buffer, send.x, send.y, send.width, send.height, static_cast<uint32_t>(length));
	slot->busy = true;
	slot->put_start = timing_.start;
	slot->last_frame = frame_;
	commit(slot->buffer, d);
	frame_++;
	last_damage_ = d;
	writes_sent_++;
	timing_.bytes = length;
	if (!send_all(iov, pipe, error, timeout_ms)) return false;
	timing_.sent = now_ns();
	return true;
}

bool SurfaceWriter::dispatch_until(const std::function<bool()> &done, int timeout_ms) {
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	while (!done()) {
		uint64_t now = now_ns();
		if (now >= deadline) return false;
		if (!conn_->dispatch_timeout(static_cast<int>((deadline - now) / 1000000u) + 1) &&
			wl_display_get_error(conn_->display) != 0) {
			return false;
		}
	}
	return true;
}

bool SurfaceWriter::wait_consumed(int timeout_ms) {
	return dispatch_until([this] { return consumed_ == writes_sent_; }, timeout_ms);
}

bool SurfaceWriter::wait_shm_released(int timeout_ms) {
	return dispatch_until([this] { return !shm_slots_[0].busy && !shm_slots_[1].busy; }, timeout_ms);
}

ssize_t send_fd(int over, int fd) {
	char byte = 0;
	iovec iov = {&byte, 1};
	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
	msghdr msg = {};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);
	cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(over, &msg, MSG_NOSIGNAL);
}

} // namespace pixelport::client
