// pixelport-fuzz-client's shared parts. The program is split by concern:
// pixelport-fuzz-client.cpp (the usage, the run, main), fuzz_client_probe.cpp (the probe and
// waiting for events), fuzz_client_fds.cpp (fds of every kind), fuzz_client_session.cpp (a
// connection's setup, random arguments, wl_shm), fuzz_client_surfaces.cpp (surfaces and
// roles), fuzz_client_stream.cpp (the stream and timing protocols) and fuzz_client_loop.cpp
// (the requests picked by weight).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pixelport-timing-v1-client-protocol.h"
#include "transport.hpp"
#include "wayland_client.hpp"

namespace pixelport::fuzz_client {

using namespace pixelport::client;

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
extern std::atomic<uint64_t> g_conn, g_op;
extern std::atomic<const char *> g_op_name;
extern std::atomic<uint64_t> g_stalls; // probe stalls so far

inline double ms_since(uint64_t t0) { return static_cast<double>(now_ns() - t0) / 1e6; }

// ---- waiting for events (fuzz_client_probe.cpp) ----
// Reads and dispatches events, waiting at most timeout_ms. Unlike Connection::dispatch_timeout
// it reads even when the flush failed: a compositor that closed the connection after a
// protocol error left the error event to read, and that is how we learn which error it was.
bool dispatch_within(Connection &c, int timeout_ms);
// wl_display_sync answered within timeout_ms; false on timeout or a dead connection.
bool sync_within(Connection &c, int timeout_ms);
// Reads and dispatches what has arrived, without waiting.
void pump(Connection &c);

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
	void run(const Options &o, uint64_t t_start);
};

// ---- fds of every kind a client can pass (fuzz_client_fds.cpp) ----

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
extern int g_connection_fd;

const char *fd_kind_name(FdKind k);
// Kinds pixelport-stream-v1 documents (and ones it refuses today); the rest are "odd".
bool odd_stream_kind(FdKind k);

struct MadeFd {
	int pass = -1; // handed to the compositor (we keep it: the same open file description)
	int peer = -1; // our end to write data into, non-blocking; -1 if none
	size_t size = 0;
};

/** Where FIFOs are made: $XDG_RUNTIME_DIR, else /tmp. */
std::string fifo_dir();
/** An fd of kind `k` (memfds of memfd_size bytes); its peer, if any, non-blocking. */
MadeFd make_fd(FdKind k, size_t memfd_size);

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
extern uint8_t g_junk[1 << 16];

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

inline bool pool_alive(const Pool &p) { return p.pool != nullptr; }
inline bool buffer_alive(const Buffer &b) { return b.buffer != nullptr; }
inline bool surface_alive(const std::unique_ptr<Surface> &s) { return s->surface != nullptr; }
inline bool stream_alive(const Stream &s) { return s.stream != nullptr; }
inline bool stream_fd_alive(const Stream &s) { return s.peer >= 0 || s.shared >= 0; }
inline bool sub_alive(pp_surface_timing_v1 *const &s) { return s != nullptr; }

/** A fourcc of core::all_formats() mostly, else any 32 bits. */
uint32_t random_fourcc(Rng &rng);

} // namespace pixelport::fuzz_client
