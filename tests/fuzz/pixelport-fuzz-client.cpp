// pixelport-fuzz-client: random request sequences against wl_shm, pixelport-stream-v1 and
// pixelport-timing-v1 (with wl_compositor, wl_subcompositor and xdg_wm_base around them),
// with random arguments of valid syntax and random fd kinds, for a bounded time, while a
// probe connection measures how long the compositor takes to answer a roundtrip.
//
// A protocol error is an expected outcome: the connection is dropped and a new one started.
// Connection K's requests depend only on (seed, K): `--seed S --connection K` replays it alone,
// `--max-ops N` cuts it short to find the smallest prefix that still shows a finding.
//
// Output (stdout): one "finding ..." line per stall of the probe over --stall-ms, per answer
// of the fuzz connection that took over 2 s, and for a compositor that went away, each with
// the seed, connection and request that was running and the last requests of that connection;
// then "fuzz ...", "errors ..." and "probe ..." summary lines. Exit status 0 when the run
// completed (findings are for the caller to judge), 3 when the compositor went away, 1 when
// it could not be reached at all, 2 for bad usage.
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

using namespace pixelport;
using namespace pixelport::client;

namespace {

struct Options {
	uint64_t seed = 1;
	double seconds = 10;
	int64_t only_connection = -1; // --connection: replay from this one
	int64_t connections = -1; // --connections: how many (with --connection: 1)
	int64_t max_ops = -1; // per connection
	std::string log_path;
	double stall_ms = 100;
	int bad_permille = 10; // how often an argument is picked to be invalid
	int probe_interval_ms = 10;
	// Attack classes ("case N": the hostile-client case of bench/fairness it exercises); each
	// can be left out while the compositor under test has no fix for it.
	bool clear_nonblock = true; // clear O_NONBLOCK on our copy of a stream's data fd (case 1)
	bool odd_stream_fds = true; // datagram/seqpacket/UDP/listening sockets, FIFO read-write (case 2)
	bool huge = true; // buffers and pools up to 16384 px / 1 GiB (cases 4, 5, 6)
	bool short_writes = true; // announce more than is sent and keep the fd open
	// An xdg role for a surface that had a buffer attached (an error unless that commit is
	// still held for stream bytes: then wlroots asserts once it applies, see README.md).
	bool role_after_buffer = true;
	// Synchronized subsurfaces (their commits are cached until the parent commits; a cached
	// one left at disconnect trips a wlroots use-after-free, see README.md).
	bool sync_subsurfaces = true;
};

// splitmix64: small, fast and the same everywhere, so a seed means the same run on any libc.
class Rng {
public:
	explicit Rng(uint64_t seed) : state_(seed) {}
	uint64_t next() {
		uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		return z ^ (z >> 31);
	}
	uint32_t below(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(next() % n); }
	bool chance(uint32_t percent) { return below(100) < percent; }
	int64_t range(int64_t lo, int64_t hi) {
		return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
	}

private:
	uint64_t state_;
};

// What the probe reads to say what the fuzzer was doing when it stalled.
std::atomic<uint64_t> g_conn{0}, g_op{0};
std::atomic<const char *> g_op_name{"start"};
std::atomic<uint64_t> g_stalls{0}; // probe stalls so far

double ms_since(uint64_t t0) { return static_cast<double>(now_ns() - t0) / 1e6; }

// Reads and dispatches events, waiting at most timeout_ms. Unlike Connection::dispatch_timeout
// it reads even when the flush failed: a compositor that closed the connection after a
// protocol error left the error event to read, and that is how we learn which error it was.
bool dispatch_within(Connection &c, int timeout_ms) {
	wl_display *d = c.display;
	while (wl_display_prepare_read(d) != 0) {
		if (wl_display_dispatch_pending(d) < 0) return false;
	}
	wl_display_flush(d);
	pollfd pfd = {wl_display_get_fd(d), POLLIN, 0};
	if (poll(&pfd, 1, timeout_ms) <= 0) {
		wl_display_cancel_read(d);
		return false;
	}
	if (wl_display_read_events(d) < 0) return false;
	return wl_display_dispatch_pending(d) >= 0;
}

// wl_display_sync answered within timeout_ms; false on timeout or a dead connection.
bool sync_within(Connection &c, int timeout_ms) {
	bool done = false;
	wl_callback *cb = wl_display_sync(c.display);
	static const wl_callback_listener listener = {
		.done = [](void *data, wl_callback *, uint32_t) { *static_cast<bool *>(data) = true; },
	};
	wl_callback_add_listener(cb, &listener, &done);
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000ull;
	while (!done && now_ns() < deadline && wl_display_get_error(c.display) == 0) {
		dispatch_within(c, 20);
	}
	wl_callback_destroy(cb);
	return done;
}

// Reads and dispatches what has arrived, without waiting.
void pump(Connection &c) {
	if (wl_display_get_error(c.display) != 0) return;
	wl_display_dispatch_pending(c.display);
	if (wl_display_prepare_read(c.display) != 0) return;
	wl_display_flush(c.display);
	pollfd pfd = {wl_display_get_fd(c.display), POLLIN, 0};
	if (poll(&pfd, 1, 0) > 0) {
		wl_display_read_events(c.display);
	} else {
		wl_display_cancel_read(c.display);
	}
	wl_display_dispatch_pending(c.display);
}

// ---- the probe: a well-behaved client's roundtrip, every probe_interval_ms ----

struct Stall {
	double ms;
	double at_s; // since the start of the run
	uint64_t conn, op;
	const char *op_name;
};

struct Probe {
	std::atomic<bool> stop{false};
	std::atomic<bool> ready{false};
	uint64_t count = 0;
	double worst_ms = 0, total_ms = 0;
	std::vector<Stall> stalls;
	bool lost = false;
	std::string error;
	std::thread thread;

	void run(const Options &o, uint64_t t_start) {
		Connection c;
		if (!c.connect(&error)) {
			lost = true;
			ready = true;
			ready.notify_all();
			return;
		}
		ready = true;
		ready.notify_all();
		while (!stop) {
			uint64_t conn = g_conn, op = g_op;
			const char *name = g_op_name;
			uint64_t t0 = now_ns();
			bool ok = sync_within(c, 30000);
			double ms = ms_since(t0);
			if (!ok) {
				lost = true;
				error = "probe roundtrip failed: " + c.error_text();
				stalls.push_back({ms, static_cast<double>(t0 - t_start) / 1e9, conn, op, name});
				return;
			}
			count++;
			total_ms += ms;
			worst_ms = std::max(worst_ms, ms);
			if (ms > o.stall_ms) {
				stalls.push_back({ms, static_cast<double>(t0 - t_start) / 1e9, conn, op, name});
				g_stalls++;
			}
			usleep(static_cast<useconds_t>(o.probe_interval_ms) * 1000); // the probe's pace
		}
	}
};

// ---- fds of every kind a client can pass ----

enum class FdKind {
	Memfd,
	SealedMemfd,
	PipeRead,
	PipeWrite,
	SocketStream,
	SocketDgram,
	SocketSeqpacket,
	DevNull,
	Directory,
	Eventfd,
	FifoRead,
	FifoReadWrite,
	UdpSocket,
	ListeningSocket,
	OwnConnection, // this client's own Wayland connection
	DisplaySocket, // a new connection to the display's socket
	CarryingOwnConnection, // a socket pair whose queued bytes carry the own connection's fd
	Count
};

// The session's Wayland connection fd, for the kinds that would keep it alive.
int g_connection_fd = -1;

const char *fd_kind_name(FdKind k) {
	static const char *names[] = {"memfd", "sealed-memfd", "pipe-read", "pipe-write", "socket-stream",
		"socket-dgram", "socket-seqpacket", "dev-null", "directory", "eventfd", "fifo-read", "fifo-rdwr", "udp",
		"listening", "own-connection", "display-socket", "carrying-own-connection"};
	return names[static_cast<int>(k)];
}

// Kinds pixelport-stream-v1 documents (and ones it refuses today); the rest are "odd".
bool odd_stream_kind(FdKind k) {
	return k == FdKind::SocketDgram || k == FdKind::SocketSeqpacket || k == FdKind::FifoReadWrite ||
		k == FdKind::UdpSocket || k == FdKind::ListeningSocket || k == FdKind::OwnConnection ||
		k == FdKind::DisplaySocket || k == FdKind::CarryingOwnConnection;
}

struct MadeFd {
	int pass = -1; // handed to the compositor (we keep it: the same open file description)
	int peer = -1; // our end to write data into, non-blocking; -1 if none
	size_t size = 0;
};

std::string fifo_dir() {
	const char *d = getenv("XDG_RUNTIME_DIR");
	return d && *d ? d : "/tmp";
}

MadeFd make_fd(FdKind k, size_t memfd_size) {
	MadeFd m;
	int p[2];
	switch (k) {
	case FdKind::Memfd:
	case FdKind::SealedMemfd: {
		bool sealed = k == FdKind::SealedMemfd;
		m.pass = memfd_create("pp-fuzz", MFD_CLOEXEC | (sealed ? MFD_ALLOW_SEALING : 0));
		if (m.pass >= 0 && ftruncate(m.pass, static_cast<off_t>(memfd_size)) == 0) m.size = memfd_size;
		if (sealed) fcntl(m.pass, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
		break;
	}
	case FdKind::PipeRead:
	case FdKind::PipeWrite:
		if (pipe2(p, O_CLOEXEC) == 0) {
			bool read_end = k == FdKind::PipeRead;
			m.pass = read_end ? p[0] : p[1];
			m.peer = read_end ? p[1] : p[0];
		}
		break;
	case FdKind::SocketStream:
	case FdKind::SocketDgram:
	case FdKind::SocketSeqpacket: {
		int type = k == FdKind::SocketStream ? SOCK_STREAM
			: k == FdKind::SocketDgram   ? SOCK_DGRAM
						     : SOCK_SEQPACKET;
		if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, p) == 0) {
			m.pass = p[0];
			m.peer = p[1];
		}
		break;
	}
	case FdKind::DevNull: m.pass = open("/dev/null", O_RDWR | O_CLOEXEC); break;
	case FdKind::Directory: m.pass = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC); break;
	case FdKind::Eventfd: m.pass = eventfd(1, EFD_CLOEXEC); break;
	case FdKind::FifoRead:
	case FdKind::FifoReadWrite: {
		static int counter = 0;
		std::string path =
			fifo_dir() + "/pp-fuzz-fifo-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
		if (mkfifo(path.c_str(), 0600) == 0) {
			m.pass = open(
				path.c_str(), (k == FdKind::FifoRead ? O_RDONLY : O_RDWR) | O_NONBLOCK | O_CLOEXEC);
			m.peer = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
			unlink(path.c_str());
		}
		break;
	}
	case FdKind::UdpSocket: m.pass = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); break;
	case FdKind::ListeningSocket: {
		m.pass = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sockaddr_un addr = {};
		addr.sun_family = AF_UNIX;
		// An address of only the family autobinds to a free abstract name.
		if (m.pass >= 0 && bind(m.pass, reinterpret_cast<sockaddr *>(&addr), sizeof(sa_family_t)) == 0) {
			listen(m.pass, 4);
		}
		break;
	}
	case FdKind::OwnConnection: m.pass = fcntl(g_connection_fd, F_DUPFD_CLOEXEC, 0); break;
	case FdKind::DisplaySocket: {
		const char *name = getenv("WAYLAND_DISPLAY");
		m.pass = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sockaddr_un addr = {};
		addr.sun_family = AF_UNIX;
		snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%s", fifo_dir().c_str(), name ? name : "wayland-0");
		if (m.pass >= 0) connect(m.pass, reinterpret_cast<sockaddr *>(&addr), sizeof(addr));
		break;
	}
	case FdKind::CarryingOwnConnection:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == 0) {
			m.pass = p[0];
			m.peer = p[1];
			client::send_fd(m.peer, g_connection_fd);
		}
		break;
	case FdKind::Count: break;
	}
	if (m.peer >= 0) fcntl(m.peer, F_SETFL, fcntl(m.peer, F_GETFL) | O_NONBLOCK);
	return m;
}

// ---- one connection's objects ----

struct Pool {
	wl_shm_pool *pool = nullptr;
	int fd = -1; // our copy (memfd kinds: may be truncated later)
	int64_t size = 0;
	int64_t file = 0; // size of the file under it, as far as we know
};
struct Buffer {
	wl_buffer *buffer = nullptr;
	int stream = -1; // index of the stream it was made on, -1 for wl_shm
	int width = 0, height = 0;
	uint32_t format = 0;
};
struct Surface {
	wl_surface *surface = nullptr;
	xdg_surface *xsurface = nullptr;
	xdg_toplevel *toplevel = nullptr;
	wl_subsurface *subsurface = nullptr;
	bool ack_configure = true;
	bool configured = false;
	bool attached = false; // a buffer was attached at some point
	int role = 0; // 0 none, 1 xdg_surface, 2 subsurface: a wl_surface keeps its role
	int parent = -1; // surface index, while a subsurface
};
struct Stream {
	pp_stream_v1 *stream = nullptr;
	int shared = -1; // our copy of the fd the compositor reads
	int peer = -1; // where we write
	FdKind kind = FdKind::Count;
	uint64_t owed = 0; // announced but not yet sent
};

// Filler for stream data: its content does not matter, only how much of it there is.
uint8_t g_junk[1 << 16];

struct Run;

class Session {
public:
	Session(const Options &o, Run &run, uint64_t index);
	~Session();
	// Runs until the planned number of requests, a protocol error, a stall or the deadline.
	// False when the compositor could not be reached.
	bool go(uint64_t deadline_ns);

	// The requests (public for the op table below).
	void log(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	template <typename T>
	int pick(const std::vector<T> &v, bool (*alive)(const T &));
	uint32_t random_shm_format();
	uint32_t random_stream_format();
	int random_dim();
	// True for the rare argument that is picked to be invalid (a protocol error ends the connection).
	bool bad() { return rng_.below(1000) < static_cast<uint32_t>(o_.bad_permille); }
	void bind_extras();

	void create_pool();
	void pool_create_buffer();
	void pool_resize();
	void pool_grow_storm();
	void pool_destroy();
	void pool_truncate();
	void buffer_destroy();
	void create_surface();
	void make_toplevel();
	void make_subsurface();
	void subsurface_op();
	void role_destroy();
	void surface_destroy();
	void attach();
	void damage();
	void commit();
	void frame();
	void scale_transform();
	void create_stream();
	void stream_create_buffer();
	void stream_write();
	void feed(int s, uint64_t max);
	void stream_feed();
	void stream_unannounced();
	void stream_clear_nonblock();
	void stream_close_peer();
	void stream_destroy();
	void timing_subscribe();
	void timing_subscribe_storm();
	void timing_flush();
	void timing_destroy();
	void manager_destroy();

private:
	void op();
	const Options &o_;
	Run &run_;
	uint64_t index_;
	Rng rng_;
	Connection conn_;
	wl_registry *registry_ = nullptr;
	wl_subcompositor *subcompositor_ = nullptr;
	pp_timing_manager_v1 *timing_ = nullptr;
	std::vector<Pool> pools_;
	std::vector<Buffer> buffers_;
	std::vector<std::unique_ptr<Surface>> surfaces_;
	std::vector<Stream> streams_;
	std::vector<pp_surface_timing_v1 *> subs_;
	std::vector<wl_callback *> callbacks_;
	std::vector<wl_proxy *> storm_; // storms' objects, kept until the disconnect
	std::vector<int> fds_; // every fd we hold for this connection
	std::deque<std::string> recent_;
	uint64_t ops_ = 0;
	FILE *log_ = nullptr;
};

struct Run {
	uint64_t t_start = now_ns();
	uint64_t connections = 0, requests = 0, fuzz_stalls = 0;
	std::map<std::string, uint64_t> endings; // "wl_shm_pool#1", "planned", "timeout", ...
	std::vector<std::string> findings;
	FILE *log = nullptr;
	bool compositor_gone = false;
	std::map<uint64_t, std::deque<std::string>> recent; // last requests of the last connections
	std::map<uint64_t, std::deque<std::string>> kept; // ... and of those with a finding
};

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

template <typename T>
int Session::pick(const std::vector<T> &v, bool (*alive)(const T &)) {
	if (v.empty()) return -1;
	int start = static_cast<int>(rng_.below(static_cast<uint32_t>(v.size())));
	for (size_t i = 0; i < v.size(); i++) {
		int k = static_cast<int>((start + i) % v.size());
		if (alive(v[k])) return k;
	}
	return -1;
}

bool pool_alive(const Pool &p) { return p.pool != nullptr; }
bool buffer_alive(const Buffer &b) { return b.buffer != nullptr; }
bool surface_alive(const std::unique_ptr<Surface> &s) { return s->surface != nullptr; }
bool stream_alive(const Stream &s) { return s.stream != nullptr; }
bool stream_fd_alive(const Stream &s) { return s.peer >= 0 || s.shared >= 0; }
bool sub_alive(pp_surface_timing_v1 *const &s) { return s != nullptr; }

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

// ---- surfaces ----

void Session::create_surface() {
	if (surfaces_.size() >= 32) return;
	auto s = std::make_unique<Surface>();
	s->surface = wl_compositor_create_surface(conn_.compositor);
	s->ack_configure = !bad();
	log("create_surface surf%zu", surfaces_.size());
	surfaces_.push_back(std::move(s));
}

void Session::make_toplevel() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0 || conn_.wm_base == nullptr) return;
	Surface &s = *surfaces_[i];
	// A second role, or a first buffer before the first configure, is an error: rarely.
	if (s.attached && !o_.role_after_buffer) return;
	if ((s.xsurface || s.role == 2 || s.attached) && !bad()) return;
	log("surf%d get_xdg_surface + get_toplevel", i);
	if (s.xsurface) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s.xsurface)); // forget, keep the server's
	if (s.toplevel) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s.toplevel));
	s.xsurface = xdg_wm_base_get_xdg_surface(conn_.wm_base, s.surface);
	s.role = 1;
	s.configured = false;
	static const xdg_surface_listener listener = {
		.configure =
			[](void *data, xdg_surface *xs, uint32_t serial) {
				auto *surface = static_cast<Surface *>(data);
				if (surface->ack_configure) {
					xdg_surface_ack_configure(xs, serial);
					surface->configured = true;
				}
			},
	};
	xdg_surface_add_listener(s.xsurface, &listener, &s);
	s.toplevel = xdg_surface_get_toplevel(s.xsurface);
	xdg_toplevel_set_title(s.toplevel, "pp-fuzz");
	wl_surface_commit(s.surface); // the initial commit: asks for the first configure
}

// True if surface `a` is `b` or one of b's ancestors (as a subsurface parent).
bool ancestor_or_self(const std::vector<std::unique_ptr<Surface>> &surfaces, int a, int b) {
	for (int k = b, depth = 0; k >= 0 && depth < 64;
		k = surfaces[k]->subsurface ? surfaces[k]->parent : -1, depth++) {
		if (k == a) return true;
	}
	return false;
}

void Session::make_subsurface() {
	int i = pick(surfaces_, surface_alive), parent = pick(surfaces_, surface_alive);
	if (i < 0 || parent < 0 || subcompositor_ == nullptr || surfaces_[i]->subsurface) return;
	if ((surfaces_[i]->role == 1 || ancestor_or_self(surfaces_, i, parent)) && !bad()) return;
	bool sync = rng_.chance(50) && o_.sync_subsurfaces;
	log("surf%d get_subsurface parent=surf%d %s", i, parent, sync ? "sync" : "desync");
	surfaces_[i]->subsurface =
		wl_subcompositor_get_subsurface(subcompositor_, surfaces_[i]->surface, surfaces_[parent]->surface);
	if (!sync) wl_subsurface_set_desync(surfaces_[i]->subsurface);
	surfaces_[i]->role = 2;
	surfaces_[i]->parent = parent;
}

void Session::subsurface_op() {
	int i = pick(surfaces_, surface_alive), j = pick(surfaces_, surface_alive);
	if (i < 0 || surfaces_[i]->subsurface == nullptr) return;
	if (j < 0) j = i;
	wl_subsurface *sub = surfaces_[i]->subsurface;
	switch (rng_.below(4)) {
	case 0:
		if (!o_.sync_subsurfaces) return;
		log("surf%d subsurface.set_sync", i);
		wl_subsurface_set_sync(sub);
		break;
	case 1:
		log("surf%d subsurface.set_desync", i);
		wl_subsurface_set_desync(sub);
		break;
	case 2: {
		int x = static_cast<int>(rng_.range(-300, 300)), y = static_cast<int>(rng_.range(-300, 300));
		log("surf%d subsurface.set_position %d,%d", i, x, y);
		wl_subsurface_set_position(sub, x, y);
		break;
	}
	default:
		// Siblings or the parent are valid; anything else is an error.
		if (!(j == surfaces_[i]->parent ||
			    (surfaces_[j]->subsurface && surfaces_[j]->parent == surfaces_[i]->parent)) &&
			!bad())
			return;
		bool above = rng_.chance(50);
		log("surf%d subsurface.place_%s surf%d", i, above ? "above" : "below", j);
		if (above)
			wl_subsurface_place_above(sub, surfaces_[j]->surface);
		else
			wl_subsurface_place_below(sub, surfaces_[j]->surface);
		break;
	}
}

// Destroys a role object (toplevel, xdg_surface or subsurface), in any order.
void Session::role_destroy() {
	int i = static_cast<int>(rng_.below(static_cast<uint32_t>(std::max<size_t>(surfaces_.size(), 1))));
	if (i >= static_cast<int>(surfaces_.size())) return;
	Surface &s = *surfaces_[i];
	switch (rng_.below(3)) {
	case 0:
		if (!s.toplevel) return;
		log("surf%d toplevel.destroy", i);
		xdg_toplevel_destroy(s.toplevel);
		s.toplevel = nullptr;
		if (bad()) break;
		[[fallthrough]]; // an xdg_surface without its role object cannot be committed
	case 1:
		if (!s.xsurface || (s.toplevel && !bad())) return;
		log("surf%d xdg_surface.destroy", i);
		xdg_surface_destroy(s.xsurface);
		s.xsurface = nullptr;
		break;
	default:
		if (!s.subsurface) return;
		log("surf%d subsurface.destroy", i);
		wl_subsurface_destroy(s.subsurface);
		s.subsurface = nullptr;
		break;
	}
}

void Session::surface_destroy() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	// Role objects go first; a surface destroyed before them is an error.
	if ((surfaces_[i]->xsurface || surfaces_[i]->toplevel) && !bad()) return;
	log("surf%d.destroy", i);
	wl_surface_destroy(surfaces_[i]->surface);
	surfaces_[i]->surface = nullptr;
}

void Session::attach() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	int b = rng_.chance(90) ? pick(buffers_, buffer_alive) : -1;
	Surface &s = *surfaces_[i];
	if (b >= 0 && s.xsurface && !s.configured && !bad()) return; // a buffer before the first configure
	s.attached = s.attached || b >= 0;
	int x = rng_.chance(90) ? 0 : static_cast<int>(rng_.range(-16, 16)),
	    y = rng_.chance(90) ? 0 : static_cast<int>(rng_.range(-16, 16));
	log("surf%d.attach buf%d %d,%d", i, b, x, y);
	wl_surface_attach(surfaces_[i]->surface, b >= 0 ? buffers_[b].buffer : nullptr, x, y);
}

void Session::damage() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	int x, y, w, h;
	if (rng_.chance(60)) {
		x = 0, y = 0, w = INT32_MAX, h = INT32_MAX;
	} else {
		x = static_cast<int>(rng_.range(-64, 600)), y = static_cast<int>(rng_.range(-64, 600));
		w = static_cast<int>(rng_.range(-8, 1000)), h = static_cast<int>(rng_.range(-8, 1000));
	}
	bool buffer = rng_.chance(70);
	log("surf%d.%s %d,%d %dx%d", i, buffer ? "damage_buffer" : "damage", x, y, w, h);
	if (buffer)
		wl_surface_damage_buffer(surfaces_[i]->surface, x, y, w, h);
	else
		wl_surface_damage(surfaces_[i]->surface, x, y, w, h);
}

void Session::commit() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	log("surf%d.commit", i);
	wl_surface_commit(surfaces_[i]->surface);
}

void Session::frame() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0 || callbacks_.size() >= 256) return;
	log("surf%d.frame", i);
	wl_callback *cb = wl_surface_frame(surfaces_[i]->surface);
	static const wl_callback_listener listener = {
		.done =
			[](void *data, wl_callback *cb, uint32_t) {
				auto *list = static_cast<std::vector<wl_callback *> *>(data);
				list->erase(std::remove(list->begin(), list->end(), cb), list->end());
				wl_callback_destroy(cb);
			},
	};
	wl_callback_add_listener(cb, &listener, &callbacks_);
	callbacks_.push_back(cb);
}

void Session::scale_transform() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	if (rng_.chance(50)) {
		int scale =
			bad() ? static_cast<int>(rng_.range(-1, 3)) : 1; // any other scale needs a matching buffer size
		log("surf%d.set_buffer_scale %d", i, scale);
		wl_surface_set_buffer_scale(surfaces_[i]->surface, scale);
	} else {
		int t = static_cast<int>(rng_.range(0, bad() ? 9 : 7));
		log("surf%d.set_buffer_transform %d", i, t);
		wl_surface_set_buffer_transform(surfaces_[i]->surface, t);
	}
}

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

// ---- the loop ----

struct OpKind {
	const char *name;
	int weight;
	void (Session::*fn)();
};

const OpKind kOps[] = {
	{"create_pool", 6, &Session::create_pool},
	{"pool_create_buffer", 10, &Session::pool_create_buffer},
	{"pool_resize", 2, &Session::pool_resize},
	{"pool_grow_storm", 1, &Session::pool_grow_storm},
	{"pool_destroy", 2, &Session::pool_destroy},
	{"pool_truncate", 1, &Session::pool_truncate},
	{"buffer_destroy", 4, &Session::buffer_destroy},
	{"create_surface", 4, &Session::create_surface},
	{"make_toplevel", 3, &Session::make_toplevel},
	{"make_subsurface", 3, &Session::make_subsurface},
	{"subsurface_op", 3, &Session::subsurface_op},
	{"role_destroy", 2, &Session::role_destroy},
	{"surface_destroy", 2, &Session::surface_destroy},
	{"attach", 8, &Session::attach},
	{"damage", 5, &Session::damage},
	{"commit", 10, &Session::commit},
	{"frame", 2, &Session::frame},
	{"scale_transform", 1, &Session::scale_transform},
	{"create_stream", 4, &Session::create_stream},
	{"stream_create_buffer", 6, &Session::stream_create_buffer},
	{"stream_write", 10, &Session::stream_write},
	{"stream_feed", 5, &Session::stream_feed},
	{"stream_unannounced", 1, &Session::stream_unannounced},
	{"stream_clear_nonblock", 2, &Session::stream_clear_nonblock},
	{"stream_close_peer", 1, &Session::stream_close_peer},
	{"stream_destroy", 2, &Session::stream_destroy},
	{"timing_subscribe", 2, &Session::timing_subscribe},
	{"timing_subscribe_storm", 1, &Session::timing_subscribe_storm},
	{"timing_flush", 2, &Session::timing_flush},
	{"timing_destroy", 1, &Session::timing_destroy},
	{"manager_destroy", 1, &Session::manager_destroy},
};

void Session::op() {
	static const int total = [] {
		int t = 0;
		for (const OpKind &k : kOps) t += k.weight;
		return t;
	}();
	int r = static_cast<int>(rng_.below(static_cast<uint32_t>(total)));
	const OpKind *kind = &kOps[0];
	for (const OpKind &k : kOps) {
		if (r < k.weight) {
			kind = &k;
			break;
		}
		r -= k.weight;
	}
	// The same draw either way, so leaving a class out does not shift the rest of the run.
	if (kind->fn == &Session::stream_clear_nonblock && !o_.clear_nonblock) return;
	g_op = ops_;
	g_op_name = kind->name;
	(this->*kind->fn)();
}

bool Session::go(uint64_t deadline_ns) {
	g_conn = index_;
	g_op = 0;
	g_op_name = "connect";
	std::string error;
	if (!conn_.connect(&error)) {
		run_.findings.push_back("compositor-gone: connection " + std::to_string(index_) + " refused: " + error);
		run_.compositor_gone = true;
		return false;
	}
	g_connection_fd = wl_display_get_fd(conn_.display);
	bind_extras();
	run_.connections++;
	uint64_t stalls_at_start = g_stalls;
	// Mostly short connections, some long ones: both early teardown and deep states.
	uint64_t planned = rng_.chance(75) ? static_cast<uint64_t>(rng_.range(1, 300))
					   : static_cast<uint64_t>(rng_.range(300, 3000));
	if (o_.max_ops >= 0) planned = std::min<uint64_t>(planned, static_cast<uint64_t>(o_.max_ops));
	if (log_) fprintf(log_, "c%" PRIu64 " connect, %" PRIu64 " requests planned\n", index_, planned);
	std::string ending = "planned";
	for (ops_ = 0; ops_ < planned; ops_++) {
		if (now_ns() >= deadline_ns) {
			ending = "deadline";
			break;
		}
		op();
		run_.requests++;
		if (rng_.chance(12)) pump(conn_);
		bool check = rng_.chance(3);
		if (check) {
			g_op_name = "fuzz roundtrip";
			uint64_t t0 = now_ns();
			if (!sync_within(conn_, 2000) && wl_display_get_error(conn_.display) == 0) {
				run_.fuzz_stalls++;
				// Where the bytes are: unsent in our socket (the compositor does not read us), or
				// unread on our side.
				int fd = wl_display_get_fd(conn_.display), unsent = -1, unread = -1;
				ioctl(fd, TIOCOUTQ, &unsent);
				ioctl(fd, FIONREAD, &unread);
				int flushed = wl_display_flush(conn_.display);
				char line[240];
				snprintf(line, sizeof(line),
					"fuzz-roundtrip-timeout: %.0f ms, seed %" PRIu64 " connection %" PRIu64
					" op %" PRIu64 " (socket: %d bytes unsent, %d unread; flush %d%s%s)",
					ms_since(t0), o_.seed, index_, ops_, unsent, unread, flushed,
					flushed < 0 ? " " : "", flushed < 0 ? strerror(errno) : "");
				run_.findings.push_back(line);
				ending = "timeout";
				break;
			}
		}
		if (wl_display_get_error(conn_.display) != 0) break;
	}
	if (wl_display_get_error(conn_.display) == 0 && ending != "timeout") sync_within(conn_, 2000);
	int err = wl_display_get_error(conn_.display);
	if (err == EPROTO) {
		const wl_interface *iface = nullptr;
		uint32_t id = 0;
		uint32_t code = wl_display_get_protocol_error(conn_.display, &iface, &id);
		ending = std::string(iface ? iface->name : "?") + "#" + std::to_string(code);
		if (log_) fprintf(log_, "c%" PRIu64 " protocol error %s\n", index_, ending.c_str());
	} else if (err != 0) {
		ending = std::string("disconnected:") + strerror(err);
	}
	run_.endings[ending]++;
	// The last requests of this connection, for the report: kept for good when something
	// was found while it ran, else while it is one of the last few (a stall of the probe is
	// only known once the compositor answers again, often after this connection closed).
	if (g_stalls != stalls_at_start || ending == "timeout") {
		if (run_.kept.size() < 8) run_.kept[index_] = recent_;
	}
	run_.recent[index_] = recent_;
	while (run_.recent.size() > 3) run_.recent.erase(run_.recent.begin());
	return true;
}

} // namespace

int main(int argc, char *argv[]) {
	Options o;
	CLI::App app{"random request sequences against the pixelport globals, with a probe client"};
	app.add_option("--seed", o.seed, "seed of the run (connection K's requests depend on seed and K only)");
	app.add_option("--seconds", o.seconds, "how long to run");
	app.add_option(
		"--connection", o.only_connection, "replay connection K of the seed (and --connections - 1 after it)");
	app.add_option(
		"--connections", o.connections, "run this many connections at most (default: 1 with --connection)");
	app.add_option("--max-ops", o.max_ops, "at most N requests per connection");
	app.add_option("--log", o.log_path, "write every request to this file");
	app.add_option("--stall-ms", o.stall_ms, "probe roundtrips longer than this are findings");
	app.add_option("--bad-permille", o.bad_permille, "how often (per 1000) an argument is picked to be invalid");
	app.add_option("--probe-interval-ms", o.probe_interval_ms, "pause between probe roundtrips");
	app.add_flag("!--no-clear-nonblock", o.clear_nonblock, "do not clear O_NONBLOCK on shared stream fds");
	app.add_flag("!--no-odd-stream-fds", o.odd_stream_fds, "streams only over the fd kinds the protocol documents");
	app.add_flag("!--no-huge", o.huge, "buffers and pools at most 512 px / 4 MiB");
	app.add_flag("!--no-short-writes", o.short_writes, "always send everything announced at once");
	app.add_flag(
		"!--no-role-after-buffer", o.role_after_buffer, "no xdg role for a surface that had a buffer attached");
	app.add_flag("!--no-sync-subsurfaces", o.sync_subsurfaces, "every subsurface desynchronized");
	CLI11_PARSE(app, argc, argv);
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(g_junk); i++) g_junk[i] = static_cast<uint8_t>(i * 131 + 7);

	Run run;
	if (!o.log_path.empty()) {
		run.log = fopen(o.log_path.c_str(), "w");
		if (!run.log) {
			fprintf(stderr, "cannot write %s: %s\n", o.log_path.c_str(), strerror(errno));
			return 2;
		}
	}
	printf("fuzz seed=%" PRIu64 " seconds=%.1f classes:%s%s%s%s%s%s\n", o.seed, o.seconds,
		o.clear_nonblock ? " clear-nonblock" : "", o.odd_stream_fds ? " odd-stream-fds" : "",
		o.huge ? " huge" : "", o.short_writes ? " short-writes" : "",
		o.role_after_buffer ? " role-after-buffer" : "", o.sync_subsurfaces ? " sync-subsurfaces" : "");
	fflush(stdout);

	Probe probe;
	probe.thread = std::thread([&] { probe.run(o, run.t_start); });
	probe.ready.wait(false); // connected, or lost
	if (probe.lost) {
		fprintf(stderr, "probe: %s\n", probe.error.c_str());
		probe.thread.join();
		return 1;
	}

	uint64_t deadline = run.t_start + static_cast<uint64_t>(o.seconds * 1e9);
	uint64_t first = o.only_connection >= 0 ? static_cast<uint64_t>(o.only_connection) : 0;
	uint64_t count = o.connections >= 0 ? static_cast<uint64_t>(o.connections)
		: o.only_connection >= 0    ? 1
					    : UINT64_MAX;
	for (uint64_t k = first; k - first < count && now_ns() < deadline; k++) {
		Session s(o, run, k);
		if (!s.go(deadline) || probe.lost) break;
	}
	g_op_name = "done";
	probe.stop = true;
	probe.thread.join();
	if (run.log) fclose(run.log);

	for (const Stall &s : probe.stalls) {
		char line[200];
		snprintf(line, sizeof(line),
			"probe-stall: %.1f ms at %.2f s, seed %" PRIu64 " connection %" PRIu64 " op %" PRIu64 " (%s)",
			s.ms, s.at_s, o.seed, s.conn, s.op, s.op_name);
		run.findings.push_back(line);
	}
	if (probe.lost) run.findings.push_back("probe-lost: " + probe.error);
	for (const std::string &f : run.findings) printf("finding %s\n", f.c_str());
	if (!run.findings.empty()) {
		// The last requests of the connections around the findings, for a first look.
		run.kept.merge(run.recent);
		for (auto &[conn, lines] : run.kept) {
			printf("recent requests of connection %" PRIu64 ":\n", conn);
			for (const std::string &l : lines) printf("  %s\n", l.c_str());
		}
	}
	printf("fuzz connections=%" PRIu64 " requests=%" PRIu64 " fuzz_stalls=%" PRIu64 " findings=%zu\n",
		run.connections, run.requests, run.fuzz_stalls, run.findings.size());
	printf("endings");
	for (auto &[what, n] : run.endings) printf(" %s=%" PRIu64, what.c_str(), n);
	printf("\n");
	printf("probe roundtrips=%" PRIu64 " worst_ms=%.2f mean_ms=%.3f\n", probe.count, probe.worst_ms,
		probe.count ? probe.total_ms / static_cast<double>(probe.count) : 0.0);
	return run.compositor_gone || probe.lost ? 3 : 0;
}
