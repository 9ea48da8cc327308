// pixelport-fuzz-client: pixelport-stream-v1 and pixelport-timing-v1 requests.
#include <arpa/inet.h>
#include <drm_fourcc.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "pixelport-timing-v1-client-protocol.h"
#include "pixelport/core/format.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

#include "fuzz_client.hpp"

namespace pixelport::fuzz_client {

// ---- pixelport-stream-v1 ----

void Session::create_stream() {
	if (conn_.stream_manager == nullptr || streams_.size() >= 32) return;
	FdKind k;
	do {
		k = !bad() ? (rng_.chance(45)                  ? FdKind::SocketStream
					     : rng_.chance(80) ? FdKind::PipeRead
							       : FdKind::FifoRead)
			   : static_cast<FdKind>(rng_.below(static_cast<uint32_t>(FdKind::Count)));
	} while (!o_.odd_stream_fds && odd_stream_kind(k));
	MadeFd m = make_fd(k, 4096);
	if (m.pass < 0) return;
	fds_.push_back(m.pass);
	if (m.peer >= 0) fds_.push_back(m.peer);
	log("create_stream stream%zu fd=%s", streams_.size(), fd_kind_name(k));
	Stream s;
	s.stream = pp_stream_manager_v1_create_stream(conn_.stream_manager, m.pass);
	s.kind = k;
	s.peer = m.peer;
	// Usually keep our copy (as a client that shares the open file description would).
	if (rng_.chance(50)) {
		s.shared = m.pass;
	} else {
		close(m.pass);
		fds_.erase(std::find(fds_.begin(), fds_.end(), m.pass));
	}
	streams_.push_back(s);
}

void Session::stream_create_buffer() {
	int s = pick(streams_, stream_alive);
	if (s < 0 || buffers_.size() >= 256) return;
	int alive = 0;
	for (const Buffer &b : buffers_) alive += b.buffer && b.stream >= 0;
	if (conn_.stream_max_buffers && alive >= static_cast<int>(conn_.stream_max_buffers) && !bad()) return;
	uint32_t format = random_stream_format();
	int w = random_dim(), h = random_dim();
	log("stream%d.create_buffer buf%zu %s %dx%d", s, buffers_.size(), format_name(format).c_str(), w, h);
	buffers_.push_back({pp_stream_v1_create_buffer(streams_[s].stream, w, h, format), s, w, h, format});
}

// Bytes of rectangle w x h of `info`, tightly packed: what pp_stream_v1.write wants.
uint64_t packed_bytes(const core::FormatInfo &info, int w, int h) {
	uint64_t n = 0;
	for (int p = 0; p < info.num_planes; p++) {
		n += core::min_stride(info, p, static_cast<uint32_t>(w)) *
			core::plane_rows(info, p, static_cast<uint32_t>(h));
	}
	return n;
}

void Session::stream_write() {
	int s = pick(streams_, stream_alive);
	if (s < 0) return;
	// Mostly a buffer of this stream, sometimes any buffer (foreign, or wl_shm).
	if (streams_[s].peer < 0 && !bad()) return; // our end is closed: end of file, an error
	int b = -1;
	bool foreign = bad();
	for (int tries = 0; tries < 8 && b < 0; tries++) {
		int c = pick(buffers_, buffer_alive);
		if (c >= 0 && (buffers_[c].stream == s || foreign)) b = c;
	}
	if (b < 0) return;
	const Buffer &buf = buffers_[b];
	const core::FormatInfo *info = core::format_info(buf.format);
	int hs = info ? info->hsub : 1, vs = info ? info->vsub : 1;
	int x = 0, y = 0, w = std::max(buf.width, 1), h = std::max(buf.height, 1);
	if (rng_.chance(50) && buf.width > 0 && buf.height > 0) {
		// A random rectangle on the chroma grid.
		x = static_cast<int>(rng_.range(0, (buf.width - 1) / hs)) * hs;
		y = static_cast<int>(rng_.range(0, (buf.height - 1) / vs)) * vs;
		w = static_cast<int>(rng_.range(1, buf.width - x));
		h = static_cast<int>(rng_.range(1, buf.height - y));
		if (x + w < buf.width) w = std::max(hs, w / hs * hs);
		if (y + h < buf.height) h = std::max(vs, h / vs * vs);
	}
	if (bad()) x = static_cast<int>(rng_.range(-4, buf.width + 4));
	if (bad()) h = static_cast<int>(rng_.range(-4, buf.height + 4));
	uint64_t length = info && w > 0 && h > 0 ? packed_bytes(*info, w, h) : 0;
	if (bad()) length = static_cast<uint64_t>(rng_.range(0, static_cast<int64_t>(length) + 16));
	length = std::min<uint64_t>(length, UINT32_MAX);
	// Announced bytes not yet read count against a per-client limit: stay under it (mostly).
	uint64_t owed = 0;
	for (const Stream &st : streams_) owed += st.owed;
	if (conn_.stream_max_inflight_bytes && owed + length > conn_.stream_max_inflight_bytes / 2 && !bad()) return;
	log("stream%d.write buf%d %d,%d %dx%d length=%" PRIu64, s, b, x, y, w, h, length);
	pp_stream_v1_write(streams_[s].stream, buf.buffer, x, y, w, h, static_cast<uint32_t>(length));
	streams_[s].owed += length;
	// Send all of it, part of it, none of it yet, or more than announced.
	uint32_t r = rng_.below(100);
	if (r < 60 || !o_.short_writes)
		feed(s, UINT64_MAX);
	else if (r < 75)
		feed(s, rng_.range(0, static_cast<int64_t>(std::min<uint64_t>(length, 1 << 20))));
	else if (r < 85) {
		feed(s, UINT64_MAX);
		stream_unannounced();
	}
}

// Writes up to `max` of the bytes a stream is owed (less when the fd is full).
void Session::feed(int s, uint64_t max) {
	Stream &st = streams_[s];
	uint64_t want = std::min(st.owed, max);
	uint64_t sent = 0;
	while (st.peer >= 0 && sent < want) {
		size_t n = static_cast<size_t>(std::min<uint64_t>(want - sent, sizeof(g_junk)));
		ssize_t k = send(st.peer, g_junk, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0 && errno == ENOTSOCK) k = write(st.peer, g_junk, n);
		if (k <= 0) break;
		sent += static_cast<uint64_t>(k);
	}
	st.owed -= sent;
	if (sent) log("stream%d fd: sent %" PRIu64 " of %" PRIu64 " owed", s, sent, want);
}

void Session::stream_feed() {
	int s = pick(streams_, stream_fd_alive);
	if (s >= 0 && streams_[s].owed) feed(s, rng_.chance(70) ? UINT64_MAX : rng_.range(1, 65536));
}

// Bytes no write announced.
void Session::stream_unannounced() {
	int s = pick(streams_, stream_fd_alive);
	if (s < 0 || streams_[s].peer < 0) return;
	size_t n = static_cast<size_t>(rng_.range(1, 8192));
	ssize_t k = send(streams_[s].peer, g_junk, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (k < 0 && errno == ENOTSOCK) k = write(streams_[s].peer, g_junk, n);
	log("stream%d fd: %zd unannounced bytes", s, k);
}

// The flag belongs to the open file description, which the compositor shares.
void Session::stream_clear_nonblock() {
	int s = pick(streams_, stream_fd_alive);
	if (s < 0 || streams_[s].shared < 0) return;
	log("stream%d shared fd: clear O_NONBLOCK", s);
	fcntl(streams_[s].shared, F_SETFL, fcntl(streams_[s].shared, F_GETFL) & ~O_NONBLOCK);
}

// Our end goes away: end of file (or an error) for the compositor.
void Session::stream_close_peer() {
	int s = pick(streams_, stream_fd_alive);
	if (s < 0) return;
	Stream &st = streams_[s];
	log("stream%d close our fds", s);
	for (int *fd : {&st.peer, &st.shared}) {
		if (*fd < 0) continue;
		close(*fd);
		fds_.erase(std::find(fds_.begin(), fds_.end(), *fd));
		*fd = -1;
	}
	st.owed = 0;
}

void Session::stream_destroy() {
	int s = pick(streams_, stream_alive);
	if (s < 0) return;
	log("stream%d.destroy", s);
	pp_stream_v1_destroy(streams_[s].stream);
	streams_[s].stream = nullptr;
}

// ---- pixelport-timing-v1 ----

void Session::timing_subscribe() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0 || timing_ == nullptr || subs_.size() >= 64) return;
	log("timing.subscribe surf%d sub%zu", i, subs_.size());
	subs_.push_back(pp_timing_manager_v1_subscribe(timing_, surfaces_[i]->surface));
}

// Many subscriptions on one surface, kept until the disconnect (their teardown is the test);
// a few storms in one connection pass the per-client cap of 1024 (limit_exceeded).
void Session::timing_subscribe_storm() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0 || timing_ == nullptr) return;
	uint32_t n = 32 + rng_.below(512);
	log("timing.subscribe_storm surf%d x%u", i, n);
	for (uint32_t k = 0; k < n; k++) {
		storm_.push_back(
			reinterpret_cast<wl_proxy *>(pp_timing_manager_v1_subscribe(timing_, surfaces_[i]->surface)));
	}
}

void Session::timing_flush() {
	int i = pick(subs_, sub_alive);
	if (i < 0 || pp_surface_timing_v1_get_version(subs_[i]) < PP_SURFACE_TIMING_V1_FLUSH_SINCE_VERSION) return;
	log("sub%d.flush", i);
	pp_surface_timing_v1_flush(subs_[i]);
}

void Session::timing_destroy() {
	int i = pick(subs_, sub_alive);
	if (i < 0) return;
	log("sub%d.destroy", i);
	pp_surface_timing_v1_destroy(subs_[i]);
	subs_[i] = nullptr;
}

void Session::manager_destroy() {
	if (rng_.chance(50)) {
		if (!timing_) return;
		log("timing_manager.destroy");
		pp_timing_manager_v1_destroy(timing_);
		timing_ = nullptr;
	} else {
		if (!conn_.stream_manager) return;
		log("stream_manager.destroy");
		pp_stream_manager_v1_destroy(conn_.stream_manager);
		conn_.stream_manager = nullptr;
	}
}

} // namespace pixelport::fuzz_client
