// pixelport-fuzz-client: a session (one connection): its setup and teardown, random arguments, and the wl_shm requests.
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

// Filler for stream data: its content does not matter, only how much of it there is.
uint8_t g_junk[1 << 16];

Session::Session(const Options &o, Run &run, uint64_t index) :
	o_(o), run_(run), index_(index), rng_(Rng(Rng(o.seed).next() ^ index).next()), log_(run.log) {}

Session::~Session() {
	// Proxies still alive go without a request; then the fds.
	for (wl_callback *c : callbacks_) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(c));
	for (wl_proxy *p : storm_) wl_proxy_destroy(p);
	for (auto *s : subs_)
		if (s) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s));
	for (auto &s : streams_)
		if (s.stream) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s.stream));
	for (auto &b : buffers_)
		if (b.buffer) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(b.buffer));
	for (auto &p : pools_)
		if (p.pool) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(p.pool));
	for (auto &s : surfaces_) {
		if (s->toplevel) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s->toplevel));
		if (s->xsurface) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s->xsurface));
		if (s->subsurface) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s->subsurface));
		if (s->surface) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s->surface));
	}
	if (timing_) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(timing_));
	if (subcompositor_) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(subcompositor_));
	if (registry_) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(registry_));
	conn_.disconnect();
	for (int fd : fds_) close(fd);
}

void Session::log(const char *fmt, ...) {
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_) fprintf(log_, "c%" PRIu64 " o%" PRIu64 " %s\n", index_, ops_, line);
	recent_.push_back("o" + std::to_string(ops_) + " " + line);
	if (recent_.size() > 40) recent_.pop_front();
}

uint32_t random_fourcc(Rng &rng) {
	auto all = core::all_formats();
	if (rng.chance(80)) return all[rng.below(static_cast<uint32_t>(all.size()))].fourcc;
	return static_cast<uint32_t>(rng.next());
}

uint32_t Session::random_shm_format() {
	if (!conn_.shm_formats.empty() && !bad()) {
		return conn_.shm_formats[rng_.below(static_cast<uint32_t>(conn_.shm_formats.size()))];
	}
	return rng_.chance(20) ? rng_.below(2) : random_fourcc(rng_);
}

uint32_t Session::random_stream_format() {
	if (!conn_.stream_formats.empty() && !bad()) {
		return conn_.stream_formats[rng_.below(static_cast<uint32_t>(conn_.stream_formats.size()))];
	}
	return random_fourcc(rng_);
}

// Mostly small, sometimes 0, negative or (with huge) up to 16384.
int Session::random_dim() {
	if (bad()) return static_cast<int>(rng_.range(-3, 0));
	uint32_t r = rng_.below(100);
	if (r < 75) return static_cast<int>(rng_.range(1, 64));
	if (r < 97 || !o_.huge) return static_cast<int>(rng_.range(1, 512));
	return static_cast<int>(rng_.range(1, 16384));
}

void Session::bind_extras() {
	static const wl_registry_listener listener = {
		.global =
			[](void *data, wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
				auto *s = static_cast<Session *>(data);
				if (strcmp(interface, wl_subcompositor_interface.name) == 0) {
					s->subcompositor_ = static_cast<wl_subcompositor *>(
						wl_registry_bind(registry, name, &wl_subcompositor_interface, 1));
				} else if (strcmp(interface, pp_timing_manager_v1_interface.name) == 0) {
					// Version 1 (per-phase events) or the newest (batched reports, flush).
					uint32_t v = s->rng_.chance(50) ? 1 : std::min(version, 3u);
					s->timing_ = static_cast<pp_timing_manager_v1 *>(
						wl_registry_bind(registry, name, &pp_timing_manager_v1_interface, v));
				}
			},
		.global_remove = [](void *, wl_registry *, uint32_t) {},
	};
	registry_ = wl_display_get_registry(conn_.display);
	wl_registry_add_listener(registry_, &listener, this);
	sync_within(conn_, 2000);
}

// ---- wl_shm ----

void Session::create_pool() {
	if (pools_.size() >= 64) return;
	FdKind k = !bad() ? (rng_.chance(85) ? FdKind::Memfd : FdKind::SealedMemfd)
			  : static_cast<FdKind>(rng_.below(static_cast<uint32_t>(FdKind::Count)));
	size_t file = rng_.chance(90) ? static_cast<size_t>(rng_.range(1, 1 << 20))
		: o_.huge             ? static_cast<size_t>(rng_.range(1, 1ll << 30))
				      : static_cast<size_t>(rng_.range(1, 4 << 20));
	MadeFd m = make_fd(k, file);
	if (m.pass < 0) return;
	fds_.push_back(m.pass);
	if (m.peer >= 0) fds_.push_back(m.peer);
	int64_t size = !bad()     ? static_cast<int64_t>(m.size ? m.size : 4096)
		: rng_.chance(50) ? rng_.range(-4096, 0)
				  : rng_.range(1, 2ll * static_cast<int64_t>(m.size ? m.size : 4096));
	size = std::clamp<int64_t>(size, INT32_MIN, INT32_MAX);
	log("create_pool pool%zu fd=%s(%zu) size=%" PRId64, pools_.size(), fd_kind_name(k), m.size, size);
	pools_.push_back({wl_shm_create_pool(conn_.shm, m.pass, static_cast<int32_t>(size)), m.pass, size,
		static_cast<int64_t>(m.size)});
}

void Session::pool_create_buffer() {
	int p = pick(pools_, pool_alive);
	if (p < 0 || buffers_.size() >= 256) return;
	uint32_t format = random_shm_format();
	int w = random_dim(), h = random_dim();
	const core::FormatInfo *info = core::format_info(shm_to_drm(format));
	int64_t avail = std::min(pools_[p].size, pools_[p].file);
	int64_t offset = rng_.chance(80) ? 0 : rng_.range(0, std::max<int64_t>(avail / 2, 0)) / 4 * 4;
	auto valid_stride = [&] {
		if (!info || w <= 0) return static_cast<int64_t>(w) * 4;
		uint64_t st = core::min_stride(*info, 0, static_cast<uint32_t>(w));
		if (info->num_planes == 3) st = std::max(st, 2 * core::min_stride(*info, 1, static_cast<uint32_t>(w)));
		return static_cast<int64_t>((st + 3) / 4 * 4);
	};
	// Bytes the buffer spans (the plugin's layout: chroma planes follow plane 0).
	auto span = [&](int64_t stride) {
		if (!info || h <= 0) return stride * h;
		int64_t n = 0;
		for (int k = 0; k < info->num_planes; k++) {
			int64_t ps = info->num_planes == 3 && k > 0 ? stride / 2 : stride;
			n += ps * static_cast<int64_t>(core::plane_rows(*info, k, static_cast<uint32_t>(h)));
		}
		return n;
	};
	int64_t stride = valid_stride();
	if (!bad()) {
		// Shrink until it fits the pool.
		while ((w > 1 || h > 1) && span(stride) > avail - offset) {
			w = std::max(1, w / 2);
			h = std::max(1, h / 2);
			stride = valid_stride();
		}
		if (span(stride) > avail - offset) return;
		if (rng_.chance(15)) stride += rng_.range(1, 16) * 4;
	} else {
		stride = rng_.chance(50) ? stride + rng_.range(1, 3) : rng_.range(-8, 70000);
		if (rng_.chance(30)) offset = rng_.range(-64, avail + 64);
	}
	stride = std::clamp<int64_t>(stride, INT32_MIN, INT32_MAX);
	log("pool%d.create_buffer buf%zu %s %dx%d stride=%" PRId64 " offset=%" PRId64, p, buffers_.size(),
		format_name(format).c_str(), w, h, stride, offset);
	wl_buffer *b = wl_shm_pool_create_buffer(
		pools_[p].pool, static_cast<int32_t>(offset), w, h, static_cast<int32_t>(stride), format);
	buffers_.push_back({b, -1, w, h, format});
}

void Session::pool_resize() {
	int p = pick(pools_, pool_alive);
	if (p < 0) return;
	int64_t size = !bad() ? pools_[p].size + rng_.range(0, 1 << 16) : rng_.range(-4096, pools_[p].size);
	if (size > pools_[p].file && !bad()) {
		if (ftruncate(pools_[p].fd, size) != 0) return; // sealed: resizing would be an error
		pools_[p].file = size;
	}
	size = std::clamp<int64_t>(size, INT32_MIN, INT32_MAX);
	log("pool%d.resize %" PRId64, p, size);
	wl_shm_pool_resize(pools_[p].pool, static_cast<int32_t>(size));
	if (size > pools_[p].size) pools_[p].size = size;
}

// A pool grown by one byte at a time with a 1x1 buffer made after each growth (the mapping
// per pool bound).
void Session::pool_grow_storm() {
	int p = pick(pools_, pool_alive);
	if (p < 0 || pools_[p].size <= 0) return;
	int n = static_cast<int>(rng_.range(100, 3000));
	if (pools_[p].file < pools_[p].size + n && ftruncate(pools_[p].fd, pools_[p].size + n) != 0) return;
	pools_[p].file = std::max(pools_[p].file, pools_[p].size + n);
	log("pool%d.grow_storm x%d from %" PRId64, p, n, pools_[p].size);
	for (int i = 0; i < n && pools_[p].size < INT32_MAX; i++) {
		wl_shm_pool_resize(pools_[p].pool, static_cast<int32_t>(++pools_[p].size));
		wl_buffer *b = wl_shm_pool_create_buffer(pools_[p].pool, 0, 1, 1, 4, WL_SHM_FORMAT_XRGB8888);
		if (i % 64 == 0 && buffers_.size() < 256) {
			buffers_.push_back({b, -1, 1, 1, WL_SHM_FORMAT_XRGB8888});
		} else {
			storm_.push_back(reinterpret_cast<wl_proxy *>(b)); // kept until the disconnect
		}
	}
}

void Session::pool_destroy() {
	int p = pick(pools_, pool_alive);
	if (p < 0) return;
	log("pool%d.destroy", p);
	wl_shm_pool_destroy(pools_[p].pool);
	pools_[p].pool = nullptr;
}

// Shrinks the file under a pool (the SIGBUS guard's case).
void Session::pool_truncate() {
	int p = static_cast<int>(rng_.below(static_cast<uint32_t>(std::max<size_t>(pools_.size(), 1))));
	if (p >= static_cast<int>(pools_.size())) return;
	int64_t size = rng_.range(0, std::max<int64_t>(pools_[p].size, 0));
	log("pool%d.fd truncate %" PRId64, p, size);
	if (ftruncate(pools_[p].fd, size) == 0) pools_[p].file = std::min(pools_[p].file, size);
}

void Session::buffer_destroy() {
	int b = pick(buffers_, buffer_alive);
	if (b < 0) return;
	log("buf%d.destroy", b);
	wl_buffer_destroy(buffers_[b].buffer);
	buffers_[b].buffer = nullptr;
}

} // namespace pixelport::fuzz_client
