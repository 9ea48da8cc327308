// pixelport-bench-stream: the stream transport against the kernel, wl_shm and waypipe,
// all in one run on one machine.
//
// Part 1, XRGB8888 at 1 to 256 MiB, variants interleaved frame by frame:
//   memcpy of the frame; raw socketpair (a writer thread write()s, this thread read()s into a
//   frame-sized buffer) and raw pipe (the writer vmsplice()s); the compositor's stream receive
//   over the same kinds of fd: bytes / (t_data_complete - t_commit) from the timing protocol
//   (the client announces and commits before it sends a byte), and on the client from put()
//   to the consumed event; a wl_shm client direct and through waypipe (--compress none),
//   commit -> wl_display_sync done.
// Part 2, RGB888 and NV12 streamed and converted on arrival, against XRGB8888 streamed.
// Part 3, 4 KiB to 1 MiB: put() to texture made (t_upload_end) for stream, shm with a new
//   memfd per frame and shm with a reused pool, and where those lines cross.
#include <drm_fourcc.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench_util.hpp"
#include "cli.hpp"

using namespace pixelport;
using namespace pixelport::bench;
using client::TransportChoice;

namespace {

constexpr uint64_t kMiB = 1u << 20;
constexpr uint32_t kCommit = PP_SURFACE_TIMING_V1_PHASE_COMMIT;
constexpr uint32_t kUploadEnd = PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END;

// A socketpair or pipe set up as SurfaceWriter sets up its stream (4 MiB SO_SNDBUF, 1 MiB
// pipe, or `pipe_bytes`); transfer() moves n bytes from this thread to a reader thread.
class RawChannel {
public:
	// `polling_writer`: a non-blocking writer that poll()s when full, as SurfaceWriter does.
	explicit RawChannel(bool pipe, int pipe_bytes = 1 << 20, bool polling_writer = false) :
		pipe_(pipe), pipe_bytes_(pipe_bytes), polling_writer_(polling_writer) {}
	/** False if the pipe cannot have pipe_bytes (above fs.pipe-max-size without CAP_SYS_RESOURCE). */
	bool usable() { return open(); }
	~RawChannel() { close_fds(); }
	// Time to move n bytes from src into dst, ns; 0 on error or after 10 s without progress.
	// This thread writes (client side), a reader thread on the compositor's CPUs reads.
	uint64_t transfer(const uint8_t *src, uint8_t *dst, size_t n) {
		if (!open()) return 0;
		std::atomic<bool> go{false};
		size_t got = 0;
		uint64_t t1 = 0;
		std::thread reader([&] {
			pin_compositor_side();
			while (!go.load(std::memory_order_acquire)) {
			}
			while (got < n) {
				ssize_t k = read(rd_, dst + got, n - got);
				if (k > 0) {
					got += static_cast<size_t>(k);
					continue;
				}
				pollfd p = {rd_, POLLIN, 0};
				if (k == 0 || (errno != EAGAIN && errno != EINTR) || poll(&p, 1, 10000) <= 0) break;
			}
			t1 = now_ns();
			if (got < n) shutdown_read(); // unblocks the writer
		});
		usleep(1000); // the reader is on its CPU and spinning
		uint64_t t0 = now_ns();
		go.store(true, std::memory_order_release);
		size_t done = 0;
		while (done < n) {
			iovec iov = {const_cast<uint8_t *>(src) + done, n - done};
			ssize_t k = pipe_ ? vmsplice(wr_, &iov, 1, 0) : write(wr_, iov.iov_base, iov.iov_len);
			pollfd p = {wr_, POLLOUT, 0};
			if (k < 0 && (errno == EINTR || (errno == EAGAIN && poll(&p, 1, 10000) > 0))) continue;
			if (k <= 0) break; // the reader gave up
			done += static_cast<size_t>(k);
		}
		reader.join();
		return got == n ? t1 - t0 : 0;
	}

private:
	bool open() {
		if (rd_ >= 0 && wr_ >= 0) return true;
		close_fds();
		int fds[2];
		if (pipe_) {
			if (pipe2(fds, O_CLOEXEC) < 0) return false;
			rd_ = fds[0];
			wr_ = fds[1];
			if (fcntl(wr_, F_SETPIPE_SZ, pipe_bytes_) < pipe_bytes_) {
				close_fds();
				return false;
			}
		} else {
			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) return false;
			int size = 4 << 20;
			setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
			rd_ = fds[0];
			wr_ = fds[1];
		}
		fcntl(rd_, F_SETFL, O_NONBLOCK); // the reader polls with a timeout
		if (polling_writer_) fcntl(wr_, F_SETFL, O_NONBLOCK);
		return true;
	}
	// The reader gave up: a blocked writer gets EPIPE instead of waiting forever.
	void shutdown_read() {
		close(rd_);
		rd_ = -1;
	}
	void close_fds() {
		if (rd_ >= 0) close(rd_);
		if (wr_ >= 0) close(wr_);
		rd_ = wr_ = -1;
	}
	bool pipe_;
	int pipe_bytes_;
	bool polling_writer_;
	int rd_ = -1, wr_ = -1;
};

// Samples of one variant at one size, ns.
struct Series {
	std::vector<double> ns;
	Stats stats() const { return stats_of(ns); }
};

double rate(uint64_t bytes, double ns) { return ns > 0 ? static_cast<double>(bytes) * 1e9 / ns : 0; }

struct FrameSize {
	int w, h;
};

FrameSize size_for(uint64_t bytes, int bpp) {
	// Square: every size here is a power of four pixels (256 MiB: 8192x8192).
	auto pixels = static_cast<int64_t>(bytes / static_cast<uint64_t>(bpp));
	int w = static_cast<int>(std::sqrt(static_cast<double>(pixels)));
	return {w, static_cast<int>(pixels / w)};
}

// waypipe client (towards the compositor) and server (a Wayland socket for our client).
struct Waypipe {
	Child client, server;
	std::string display_path;
	bool start(RuntimeDir &dir, const Compositor &compositor, std::string *error) {
		std::string sock = dir.path() + "/" + dir.unique("waypipe") + ".sock";
		std::string display = dir.unique("waypipe-display");
		std::string log = dir.path() + "/waypipe.log";
		std::string compositor_name = compositor.socket_path.substr(compositor.socket_path.rfind('/') + 1);
		std::vector<std::string> env = {"XDG_RUNTIME_DIR=" + dir.path(), "WAYLAND_DISPLAY=" + compositor_name};
		// Not pinned: waypipe's two ends would be on two machines; here they may use every CPU.
		client.compositor_side = server.compositor_side = false;
		if (!client.start({"waypipe", "--socket", sock, "--compress", "none", "--no-gpu", "client"}, env, log,
			    error) ||
			!wait_for_socket(sock, client, 10000)) {
			if (error->empty()) *error = "waypipe client did not open its socket (log: " + log + ")";
			return false;
		}
		// The server's command only keeps it alive; our in-process client connects to its display.
		if (!server.start({"waypipe", "--socket", sock, "--compress", "none", "--no-gpu", "--display", display,
					  "server", "--", "sleep", "100000"},
			    env, log, error)) {
			return false;
		}
		display_path = dir.path() + "/" + display;
		if (!wait_for_socket(display_path, server, 10000)) {
			*error = "waypipe server did not open " + display_path + " (log: " + log + ")";
			return false;
		}
		return true;
	}
};

// Where line a crosses line b (same sizes): "a faster below X" etc.
std::string crossing(const std::vector<uint64_t> &sizes, const std::vector<double> &a, const std::vector<double> &b,
	const std::string &an, const std::string &bn) {
	std::string out;
	for (size_t i = 0; i < sizes.size(); i++) {
		if (!(a[i] > 0 && b[i] > 0)) return an + " vs " + bn + ": not measured at every size";
	}
	for (size_t i = 0; i + 1 < sizes.size(); i++) {
		double d0 = a[i] - b[i], d1 = a[i + 1] - b[i + 1];
		if ((d0 < 0) == (d1 < 0)) continue;
		double x0 = std::log2(static_cast<double>(sizes[i])), x1 = std::log2(static_cast<double>(sizes[i + 1]));
		double x = x0 + d0 / (d0 - d1) * (x1 - x0);
		out += (out.empty() ? "" : "; ") + std::string("cross at ~") +
			fmt_size(static_cast<uint64_t>(std::exp2(x))) + " (" + (d0 < 0 ? an : bn) + " faster below)";
	}
	if (out.empty()) out = std::string(a[0] < b[0] ? an : bn) + " faster at every size (no crossing)";
	return an + " vs " + bn + ": " + out;
}

} // namespace

int main(int argc, char *argv[]) {
	CommonOptions common;
	CLI::App app{"pixelport-bench-stream: stream receive vs raw fds, wl_shm and waypipe, same run"};
	add_common_options(app, &common);
	if (int rc = cli::parse(app, argc, argv, "pixelport-bench-stream"); rc >= 0) return rc;
	signal(SIGPIPE, SIG_IGN); // a raw channel's writer sees EPIPE if its reader gave up

	pin_client_side(common.pin);
	RuntimeDir dir;
	std::string error;
	Compositor compositor;
	client::Connection conn, wconn;
	Waypipe waypipe;
	auto fail = [](const std::string &what) {
		fprintf(stderr, "pixelport-bench-stream: %s\n", what.c_str());
		return 1;
	};
	if (!compositor.start(common.compositor, dir, {"--output", common.output}, &error) ||
		!connect_to(&conn, compositor.socket_path, &error)) {
		return fail(error);
	}
	if (conn.stream_manager == nullptr) return fail("the compositor has no pixelport stream (plugin not loaded?)");
	bool have_waypipe = waypipe.start(dir, compositor, &error) && connect_to(&wconn, waypipe.display_path, &error);
	printf("pixelport-bench-stream: one plugin compositor; medians (p50) and p95 of repeated frames, variants "
	       "interleaved; GB/s = 1e9 B/s; %s\n",
		machine_note().c_str());
	if (!have_waypipe) {
		printf("waypipe: not measured: %s\n", error.c_str());
	} else {
		printf("waypipe 0.8.4 (--compress none --no-gpu, default threads) between our client and the "
		       "compositor; "
		       "through it the client %s pp_stream_manager_v1\n",
			wconn.stream_manager ? "sees" : "does not see");
	}
	fflush(stdout);

	// ---- part 1: throughput -----------------------------------------------------------------
	struct Big {
		uint64_t bytes;
		int frames, quick_frames;
	};
	const Big bigs[] = {
		{1 * kMiB, 100, 5}, {4 * kMiB, 60, 3}, {16 * kMiB, 30, 3}, {64 * kMiB, 12, 0}, {256 * kMiB, 6, 0}};
	bool big_pipe_note = false;
	Table t1({"size", "path", "p50", "p95", "throughput", "ratio", "ratio of", "target"});
	for (const Big &big : bigs) {
		int n = common.frames(big.frames, big.quick_frames);
		if (common.quick && big.quick_frames == 0) continue;
		FrameSize fs = size_for(big.bytes, 4);
		Frame f[3] = {{DRM_FORMAT_XRGB8888, fs.w, fs.h, 1}, {DRM_FORMAT_XRGB8888, fs.w, fs.h, 2},
			{DRM_FORMAT_XRGB8888, fs.w, fs.h, 3}};
		std::vector<uint8_t> dst(big.bytes, 1); // written: no first-touch faults in the timing
		// A pipe as large as the frame (up to 16 MiB): does the 1 MiB pipe limit vmsplice?
		int big_pipe_bytes = static_cast<int>(std::min<uint64_t>(big.bytes, 16 * kMiB));
		RawChannel raw_socket(false), raw_pipe(true), raw_big_pipe(true, big_pipe_bytes),
			raw_polling_pipe(true, 1 << 20, true);
		bool have_big_pipe = big_pipe_bytes > (1 << 20) && raw_big_pipe.usable();
		if (!have_big_pipe && big_pipe_bytes > (1 << 20) && !big_pipe_note) {
			printf("note: a pipe of %s is not permitted here (fs.pipe-max-size, no CAP_SYS_RESOURCE): no "
			       "large-pipe rows\n",
				fmt_size(static_cast<uint64_t>(big_pipe_bytes)).c_str());
			big_pipe_note = true;
		}
		BenchSurface stream_socket, stream_pipe, shm, wshm;
		if (!stream_socket.open(&conn, TransportChoice::StreamSocket, &error) ||
			!stream_pipe.open(&conn, TransportChoice::StreamPipe, &error) ||
			!shm.open(&conn, TransportChoice::ShmReused, &error) ||
			(have_waypipe && !wshm.open(&wconn, TransportChoice::ShmReused, &error))) {
			return fail(error);
		}
		Series memcpy_ns, socket_ns, pipe_ns, big_pipe_ns, polling_pipe_ns, ss_client, sp_client, shm_ns,
			wshm_ns;
		// One frame of each variant; false with error set.
		std::vector<std::function<bool(int)>> variants = {
			[&](int i) {
				uint64_t t0 = now_ns();
				memcpy(dst.data(), f[i % 3].bytes.data(), big.bytes);
				memcpy_ns.ns.push_back(static_cast<double>(now_ns() - t0));
				return true;
			},
			[&](int i) {
				uint64_t t = raw_socket.transfer(f[i % 3].bytes.data(), dst.data(), big.bytes);
				socket_ns.ns.push_back(static_cast<double>(t));
				return t != 0 || (error = "raw socketpair transfer failed", false);
			},
			[&](int i) {
				uint64_t t = raw_pipe.transfer(f[i % 3].bytes.data(), dst.data(), big.bytes);
				pipe_ns.ns.push_back(static_cast<double>(t));
				return t != 0 || (error = "raw vmsplice transfer failed", false);
			},
			[&](int i) {
				uint64_t t = raw_polling_pipe.transfer(f[i % 3].bytes.data(), dst.data(), big.bytes);
				polling_pipe_ns.ns.push_back(static_cast<double>(t));
				return t != 0 || (error = "raw vmsplice transfer (polling writer) failed", false);
			},
			[&](int i) {
				if (!have_big_pipe) return true;
				uint64_t t = raw_big_pipe.transfer(f[i % 3].bytes.data(), dst.data(), big.bytes);
				big_pipe_ns.ns.push_back(static_cast<double>(t));
				return t != 0 || (error = "raw vmsplice transfer (large pipe) failed", false);
			},
			[&](int i) {
				uint64_t start = now_ns(), consumed = 0;
				if (stream_socket.put_and_sync(f[i % 3].px, start, &error, &consumed) == 0)
					return false;
				ss_client.ns.push_back(static_cast<double>(consumed - start));
				return true;
			},
			[&](int i) {
				uint64_t start = now_ns(), consumed = 0;
				if (stream_pipe.put_and_sync(f[i % 3].px, start, &error, &consumed) == 0) return false;
				sp_client.ns.push_back(static_cast<double>(consumed - start));
				return true;
			},
			[&](int i) {
				uint64_t done = shm.put_and_sync(f[i % 3].px, now_ns(), &error);
				shm_ns.ns.push_back(static_cast<double>(done - shm.writer->timing().committed));
				return done != 0;
			},
			[&](int i) {
				if (!have_waypipe) return true;
				uint64_t done = wshm.put_and_sync(f[i % 3].px, now_ns(), &error);
				wshm_ns.ns.push_back(static_cast<double>(done - wshm.writer->timing().committed));
				return done != 0 || (error = "through waypipe: " + error, false);
			},
		};
		for (int i = -2; i < n; i++) {
			if (i == 0) { // the first two frames set up (and first touch) both buffers of each writer
				for (Series *s : {&memcpy_ns, &socket_ns, &pipe_ns, &big_pipe_ns, &polling_pipe_ns,
					     &ss_client, &sp_client, &shm_ns, &wshm_ns}) {
					s->ns.clear();
				}
				for (BenchSurface *s : {&stream_socket, &stream_pipe, &shm, &wshm}) s->clear();
			}
			for (size_t k = 0; k < variants.size(); k++) {
				if (!variants[(static_cast<size_t>(i + 2) + k) % variants.size()](i + 2))
					return fail(error);
			}
		}
		Series ss_comp{stream_socket.phase(timing::Phase::Transfer)},
			sp_comp{stream_pipe.phase(timing::Phase::Transfer)};
		std::string size = fmt_size(big.bytes);
		auto row = [&](const char *path, const Series &s, const Series *base, const char *base_name,
				   const char *target) {
			Stats st = s.stats(), b = base ? base->stats() : Stats{};
			t1.row({size, path, fmt_ns(st.median), fmt_ns(st.p95), fmt_rate(rate(big.bytes, st.median)),
				base ? fmt_ratio(b.median / st.median) : "", base_name, target});
		};
		row("memcpy", memcpy_ns, nullptr, "", "");
		row("raw socketpair", socket_ns, nullptr, "", "");
		row("stream socket, compositor", ss_comp, &socket_ns, "raw socketpair", ">= 0.9");
		row("stream socket, client put->consumed", ss_client, &socket_ns, "raw socketpair", "");
		row("raw vmsplice pipe", pipe_ns, &memcpy_ns, "memcpy", "");
		row("raw vmsplice, writer polls like SurfaceWriter", polling_pipe_ns, &pipe_ns, "raw vmsplice", "");
		if (have_big_pipe) {
			std::string name = "raw vmsplice, " + fmt_size(static_cast<uint64_t>(big_pipe_bytes)) + " pipe";
			row(name.c_str(), big_pipe_ns, &memcpy_ns, "memcpy", "");
		}
		row("stream vmsplice, compositor", sp_comp, &pipe_ns, "raw vmsplice", ">= 0.9");
		row("stream vmsplice, compositor", sp_comp, &memcpy_ns, "memcpy",
			big.bytes >= 4 * kMiB ? ">= 0.7" : "");
		row("stream vmsplice, client put->consumed", sp_client, &pipe_ns, "raw vmsplice", "");
		row("shm direct, commit->sync", shm_ns, nullptr, "", "");
		if (have_waypipe) {
			row("shm via waypipe, commit->sync", wshm_ns, &shm_ns, "shm direct", "");
			Stats w = wshm_ns.stats(), sp = sp_client.stats();
			t1.row({size, "stream vmsplice put->consumed vs waypipe", "", "", "",
				fmt_ratio(w.median / sp.median), "waypipe commit->sync", ">= 2"});
		}
	}
	t1.print("Part 1: XRGB8888 throughput (ratio = baseline time / this time, i.e. throughput / baseline's)");

	// ---- part 2: converted formats --------------------------------------------------------------
	FrameSize conv = common.quick ? FrameSize{1920, 1080} : FrameSize{3840, 2160};
	int conv_frames = common.frames(40, 3);
	Table t2({"format", "fd", "wire bytes", "commit->data complete p50", "p95", "Mpixel/s", "time vs XRGB8888",
		"commit->texture p50"});
	for (bool pipe : {false, true}) {
		std::vector<uint32_t> formats = {DRM_FORMAT_XRGB8888, DRM_FORMAT_RGB888, DRM_FORMAT_NV12};
		std::vector<std::unique_ptr<Frame>> frames;
		std::vector<std::unique_ptr<BenchSurface>> surfaces;
		for (uint32_t fmt : formats) {
			frames.push_back(std::make_unique<Frame>(fmt, conv.w, conv.h, 1));
			surfaces.push_back(std::make_unique<BenchSurface>());
			if (!surfaces.back()->open(
				    &conn, pipe ? TransportChoice::StreamPipe : TransportChoice::StreamSocket, &error))
				return fail(error);
		}
		for (int i = -2; i < conv_frames; i++) {
			for (size_t k = 0; k < formats.size(); k++) {
				BenchSurface &s = *surfaces[(static_cast<size_t>(i + 2) + k) % formats.size()];
				const Frame &f = *frames[(static_cast<size_t>(i + 2) + k) % formats.size()];
				if (i == 0 && k == 0) {
					for (auto &each : surfaces) each->clear();
				}
				if (s.put_and_sync(f.px, now_ns(), &error) == 0) return fail(error);
			}
		}
		double xrgb = 0;
		for (size_t k = 0; k < formats.size(); k++) {
			Stats d = stats_of(surfaces[k]->phase(timing::Phase::Transfer));
			Stats tex = stats_of(surfaces[k]->phase(kCommit, kUploadEnd));
			if (k == 0) xrgb = d.median;
			t2.row({client::format_name(client::drm_to_shm(formats[k])),
				pipe ? "vmsplice pipe" : "socketpair", fmt_size(frames[k]->px.size), fmt_ns(d.median),
				fmt_ns(d.p95),
				std::to_string(static_cast<int>(static_cast<double>(conv.w) * conv.h * 1e3 / d.median)),
				fmt_ratio(d.median / xrgb), fmt_ns(tex.median)});
		}
	}
	t2.print("Part 2: streamed and converted on arrival, " + std::to_string(conv.w) + "x" + std::to_string(conv.h) +
		" (compositor timing; time vs XRGB8888 > 1 means slower)");

	// ---- part 3: small buffers ------------------------------------------------------------------
	std::vector<uint64_t> small = {4096, 16384, 65536, 262144, kMiB};
	int small_frames = common.frames(300, 10);
	struct Line {
		const char *name;
		TransportChoice transport;
		bool via_waypipe = false;
		std::vector<double> p50;
	};
	std::vector<Line> lines = {{"stream socket", TransportChoice::StreamSocket},
		{"stream vmsplice", TransportChoice::StreamPipe}, {"shm new memfd", TransportChoice::ShmNewPool},
		{"shm reused pool", TransportChoice::ShmReused}};
	if (have_waypipe) lines.push_back({"shm reused via waypipe", TransportChoice::ShmReused, true});
	Table t3({"size", "path", "put->texture p50", "p95", "commit->texture p50", "p95"});
	for (uint64_t bytes : small) {
		FrameSize fs = size_for(bytes, 4);
		Frame f0(DRM_FORMAT_XRGB8888, fs.w, fs.h, 1), f1(DRM_FORMAT_XRGB8888, fs.w, fs.h, 2);
		std::vector<std::unique_ptr<BenchSurface>> surfaces;
		for (const Line &l : lines) {
			surfaces.push_back(std::make_unique<BenchSurface>());
			if (!surfaces.back()->open(l.via_waypipe ? &wconn : &conn, l.transport, &error))
				return fail(error);
		}
		for (int i = -2; i < small_frames; i++) {
			for (size_t k = 0; k < lines.size(); k++) {
				size_t v = (static_cast<size_t>(i + 2) + k) % lines.size();
				if (i == 0 && k == 0) {
					for (auto &each : surfaces) each->clear();
				}
				if (surfaces[v]->put_and_sync(i % 2 ? f1.px : f0.px, now_ns(), &error) == 0)
					return fail(lines[v].name + (": " + error));
			}
		}
		for (size_t k = 0; k < lines.size(); k++) {
			Stats put = stats_of(surfaces[k]->phase(BenchSurface::kPutStart, kUploadEnd));
			Stats commit = stats_of(surfaces[k]->phase(kCommit, kUploadEnd));
			lines[k].p50.push_back(put.median);
			t3.row({fmt_size(bytes), lines[k].name, fmt_ns(put.median), fmt_ns(put.p95),
				fmt_ns(commit.median), fmt_ns(commit.p95)});
		}
	}
	t3.print("Part 3: small XRGB8888 buffers, latency to texture made (t_upload_end; put-> includes the copy or "
		 "send)");
	printf("\nWhere the put->texture lines cross (p50, interpolated on log2 size):\n");
	for (size_t a = 0; a < 2; a++) {
		for (size_t b = 2; b < lines.size(); b++) {
			printf("  %s\n",
				crossing(small, lines[a].p50, lines[b].p50, lines[a].name, lines[b].name).c_str());
		}
	}
	if (have_waypipe) {
		// Does the stream protocol get through waypipe at all? (It lists the global.)
		printf("\nstream through waypipe: ");
		if (wconn.stream_manager == nullptr) {
			printf("no pp_stream_manager_v1 global\n");
		} else {
			BenchSurface s;
			Frame f(DRM_FORMAT_XRGB8888, 64, 64, 1);
			std::string e;
			bool ok = s.open(&wconn, TransportChoice::StreamSocket, &e) &&
				s.put_and_sync(f.px, now_ns(), &e) != 0;
			printf("%s\n", ok ? "a 64x64 frame arrived" : ("fails: " + e).c_str());
		}
	}
	return 0;
}
