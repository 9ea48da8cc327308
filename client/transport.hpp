// Client-side transport library: puts pixels onto a wl_surface through wl_shm or the
// pixelport stream, with one call. Used by pixelport-paint, the tests and the sweep client.
//
//   SurfaceWriter writer(&conn, window.surface, TransportChoice::StreamPipe);
//   writer.put(pixels, nullptr, &error);   // attach + damage + commit; never blocks forever
//
// Transports:
//   shm        two wl_shm buffers in reused pools: the frame is copied into a free one
//   shm-new    a new memfd pool per frame (create, size, map, copy, pass the fd)
//   socket     pixelport stream over a socketpair: write(2) of the packed rows
//   pipe       pixelport stream over a pipe fed with vmsplice(2): pages by reference, the
//              compositor's read() is the only copy. The caller must not change the pixels
//              it passed until wait_consumed() returns (the pages may still be in the pipe).
//   auto       socket below the compositor's size hint, shm above it (shm without the plugin)
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "wayland_client.hpp"

namespace pixelport::client {

/**
 * How a client sends its frames (the programs' --transport): a choice, Auto included. What the
 * compositor records of a commit is timing::Transport (pixelport/timing/records.hpp).
 */
enum class TransportChoice { ShmReused, ShmNewPool, StreamSocket, StreamPipe, Auto };

const char *transport_name(TransportChoice t);
bool parse_transport(const std::string &name, TransportChoice *out);

/** A frame in client memory, planes in pixelport's wl_shm layout (pattern.hpp shm_layout). */
struct Pixels {
	uint32_t format = 0; // DRM fourcc
	int width = 0, height = 0;
	size_t stride = 0; // plane 0, bytes
	const uint8_t *data = nullptr;
	size_t size = 0; // bytes at data
};

struct Rect {
	int x, y, width, height; // pixels
};

/** Where the time of the last put() went, CLOCK_MONOTONIC ns. */
struct PutTiming {
	uint64_t start = 0; // put() called
	uint64_t committed = 0; // commit sent
	uint64_t sent = 0; // all pixel bytes handed to the kernel (== committed for shm)
	uint64_t bytes = 0; // pixel bytes moved: copied into shm, or sent on the stream
	TransportChoice transport = TransportChoice::ShmReused;
};

class SurfaceWriter {
public:
	SurfaceWriter(Connection *conn, wl_surface *surface, TransportChoice transport);
	~SurfaceWriter();
	SurfaceWriter(const SurfaceWriter &) = delete;
	SurfaceWriter &operator=(const SurfaceWriter &) = delete;

	/**
	 * Puts `pixels` on the surface with `damage` (null: all) and commits. Returns once the
	 * commit and all bytes are handed to the kernel; waits (dispatching events, at most
	 * timeout_ms) only for a free buffer or for socket/pipe space. False with `error` set.
	 */
	bool put(const Pixels &pixels, const Rect *damage, std::string *error, int timeout_ms = 10000);
	/** With the pipe transport: waits until the compositor read every write sent so far. */
	bool wait_consumed(int timeout_ms);
	/**
	 * With wl_shm: waits until the compositor released every buffer committed so far (a
	 * converted format's buffer is released once its commit was converted).
	 */
	bool wait_shm_released(int timeout_ms);
	const PutTiming &timing() const { return timing_; }
	/** A buffer's wl_buffer.release: the put() that committed it (its `start`) and when it came (ns). */
	struct Release {
		uint64_t put_start = 0, released = 0;
	};
	/**
	 * The releases of reused buffers (shm and stream) seen so far, oldest first; the caller
	 * takes them (clears the list) when it wants. Each commit of a buffer appears at most once.
	 */
	std::vector<Release> take_releases() { return std::exchange(releases_, {}); }
	/**
	 * Stream sends in pieces of at most `bytes` (0: as large as the kernel takes), or of
	 * random sizes in [1, bytes] when `random`: tests that the compositor reassembles any split.
	 */
	void set_chunking(size_t bytes, bool random) {
		chunk_bytes_ = bytes;
		chunk_random_ = random;
	}

	// Used by the C callbacks of the protocol listeners.
	struct Slot {
		SurfaceWriter *owner = nullptr;
		wl_buffer *buffer = nullptr;
		uint32_t format = 0;
		int width = 0, height = 0;
		bool busy = false;
		uint64_t put_start = 0; // PutTiming::start of its last commit
		uint64_t last_frame = 0; // stream: frame_ when last written
		// shm
		ShmPool pool;
		size_t stride = 0;
	};
	uint32_t consumed_ = 0;
	std::vector<Release> releases_;

private:
	TransportChoice pick(const Pixels &pixels) const;
	Slot *free_slot(Slot *slots, int timeout_ms);
	/** Dispatches events until `done()` holds (true), timeout_ms passes or the connection fails. */
	bool dispatch_until(const std::function<bool()> &done, int timeout_ms);
	bool put_shm(const Pixels &px, const Rect &damage, bool new_pool, std::string *error, int timeout_ms);
	bool put_stream(const Pixels &px, const Rect &damage, bool pipe, std::string *error, int timeout_ms);
	bool open_stream(bool pipe, std::string *error);
	bool send_all(std::vector<iovec> &iov, bool pipe, std::string *error, int timeout_ms);
	void commit(wl_buffer *buffer, const Rect &damage);

	Connection *conn_;
	wl_surface *surface_;
	TransportChoice transport_;
	Slot shm_slots_[2];
	Slot stream_slots_[2];
	pp_stream_v1 *stream_ = nullptr;
	bool stream_is_pipe_ = false;
	int data_fd_ = -1;
	uint32_t writes_sent_ = 0;
	size_t chunk_bytes_ = 0;
	bool chunk_random_ = false;
	uint64_t chunk_rng_ = 0x9e3779b97f4a7c15ull;
	uint64_t frame_ = 2; // stream frames put; starts past 0 so no slot looks "two frames old"
	Rect last_damage_ = {};
	PutTiming timing_;
};

/**
 * The byte ranges of rectangle `r` of `px` in the stream's wire order (the core's
 * packed_spans(): chroma groups, the group's luma rows, then its row of each chroma plane),
 * pointing into px.data. Returns the total length, 0 if the format is unknown, px.size is
 * short of the layout, or r is not a rectangle the stream accepts (check_stream_rect()).
 */
uint64_t stream_iovecs(const Pixels &px, const Rect &r, std::vector<iovec> *out);

/**
 * Sends one byte over the AF_UNIX socket `over` with `fd` attached (SCM_RIGHTS). Returns
 * sendmsg()'s result: 1, or -1 with errno (EPERM where the receiver refuses fds).
 */
ssize_t send_fd(int over, int fd);

} // namespace pixelport::client
