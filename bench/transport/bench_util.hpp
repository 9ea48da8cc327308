// Plumbing shared by the transport benchmarks (pixelport-bench-shm, -stream, -timing): a
// private runtime dir, child processes (compositor, waypipe) that cannot outlive a timeout,
// in-process clients on a named socket, statistics and tables. The timing protocol is the
// client library's (timing_client.hpp).
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pixelport-timing-v1-client-protocol.h"
#include "timing_client.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

namespace CLI {
class App;
}

namespace pixelport::bench {

using client::now_ns;

/** A child in its own process group, stdout and stderr appended to a log file. */
class Child {
public:
	Child() = default;
	~Child() { stop(2000); }
	Child(const Child &) = delete;
	Child &operator=(const Child &) = delete;

	/**
	 * Starts argv[0] (PATH searched) with `env` ("K=V"; "K=" unsets K) over ours, on the
	 * compositor side's CPUs (see pin_client_side()), or on all when !compositor_side.
	 */
	bool start(const std::vector<std::string> &argv, const std::vector<std::string> &env, const std::string &log,
		std::string *error);
	bool running();
	/** SIGTERM to the group, SIGKILL after grace_ms; the exit status (128+signal), -1 if none. */
	int stop(int grace_ms);
	pid_t pid() const { return pid_; }
	bool compositor_side = true;

private:
	pid_t pid_ = -1;
	int status_ = -1;
};

/** A private XDG_RUNTIME_DIR (mode 0700), removed with its contents. */
class RuntimeDir {
public:
	/** Made in `parent`, or in the temporary directory (TMPDIR, else /tmp) when empty. */
	explicit RuntimeDir(const std::string &parent = "");
	~RuntimeDir();
	const std::string &path() const { return path_; }
	/** A name unique in this process, e.g. "pp-bench-1234-3". */
	std::string unique(const std::string &prefix);

private:
	std::string path_;
	int counter_ = 0;
};

/** True once the Unix socket `path` accepts connect(), polling while `child` runs. */
bool wait_for_socket(const std::string &path, Child &child, int timeout_ms);

/** pixelport-compositor, headless, on a unique socket in `dir`; log in the dir. */
struct Compositor {
	Child process;
	std::string socket_path;
	std::string log_path;
	bool start(
		const std::string &binary, RuntimeDir &dir, const std::vector<std::string> &args, std::string *error);
};

/**
 * Client and compositor on separate CPUs: this thread (and threads it starts later) on CPU 0,
 * children started after this call on the others. Unpinned, waking the compositor may
 * preempt the client on its CPU, and a client timestamp taken right after a send then comes
 * after the compositor's work; pinned, every roundtrip pays a cross-CPU wakeup (about 40 µs
 * on the 2-core VM against 8 µs). No-op with fewer than 2 CPUs; machine_note() says which.
 */
void pin_client_side(bool enable);
/** Moves the calling thread to the compositor side's CPUs (raw baselines' reader). */
void pin_compositor_side();
/**
 * After pin_client_side(true): the calling thread on the client's CPU (true) or back on all
 * CPUs (false), so pinned and unpinned rounds alternate in one run. False if not pinnable.
 */
bool pin_client_thread(bool pinned);

/** Options every benchmark has. */
struct CommonOptions {
	std::string compositor = PIXELPORT_COMPOSITOR_DEFAULT;
	bool quick = false;
	std::string output = "256x256@60";
	double frames_scale = 1.0;
	bool pin = false;
	/** Frames to measure: `normal`, or `quick` with --quick, times --frames-scale (at least 2). */
	int frames(int normal, int quick) const;
};
/** --compositor, --quick, --output, --pin; --frames-scale too when `frames`. */
void add_common_options(CLI::App &app, CommonOptions *options, bool frames = true);

/** Connects `conn` to the compositor socket at `path` (an absolute WAYLAND_DISPLAY). */
bool connect_to(client::Connection *conn, const std::string &path, std::string *error);

/** wl_display_sync and wait for done; CLOCK_MONOTONIC ns of done, 0 on timeout or error. */
uint64_t sync_done(client::Connection *conn, int timeout_ms = 10000);

/**
 * A toplevel that frames are put on with a SurfaceWriter, subscribed to its timing when the
 * compositor has the plugin. Remembers when each frame's put() started.
 */
struct BenchSurface {
	client::Connection *conn = nullptr;
	client::Window window;
	std::unique_ptr<client::SurfaceWriter> writer;
	std::unique_ptr<client::TimingClient> timing; // every commit kept; null when not subscribed
	bool timed = false;
	std::vector<uint64_t> starts;

	/** Window and writer; subscribed to timing when `subscribe` and the compositor has it. */
	bool open(client::Connection *c, client::TransportChoice transport, std::string *error, bool subscribe = true);
	/**
	 * put() (start time `start`), for streams wait until the compositor consumed the bytes
	 * (*consumed gets when), then wl_display_sync; returns when sync was done, 0 on error.
	 */
	uint64_t put_and_sync(
		const client::Pixels &px, uint64_t start, std::string *error, uint64_t *consumed = nullptr);
	/** A phase value meaning "when the client's put() started". */
	static constexpr uint32_t kPutStart = 100;
	/**
	 * A phase value meaning "the renderer has the pixels": the later of upload end and
	 * convert end (with pixman a converted commit is converted after its upload, lazily).
	 */
	static constexpr uint32_t kReady = 101;
	/**
	 * to - from of every frame since the last clear() that the compositor reported, ns (only
	 * with the plugin). Waits up to 2 s for late records.
	 */
	std::vector<double> phase(uint32_t from, uint32_t to);
	/** A phase as the timing core defines it (client::CommitTiming::phases()) of every such frame, ns. */
	std::vector<double> phase(timing::Phase p);
	/** Forget frames so far (after warm-up). */
	void clear() { starts.clear(); }

private:
	/** The commit of each frame since clear() (nullptr where none), waiting for the last one. */
	std::vector<const client::CommitTiming *> matched();
	client::Pixels last_; // put again to finish the last frame's record
};

/** A frame in client memory: pattern for small YUV/RGB frames, fast filler otherwise. */
struct Frame {
	std::vector<uint8_t> bytes;
	client::Pixels px;
	Frame(uint32_t drm_format, int width, int height, uint32_t seed);
	Frame(const Frame &) = delete;
	Frame &operator=(const Frame &) = delete;
};

/** Median and nearest-rank p95 of samples (ns or any unit). */
struct Stats {
	double median = 0, p95 = 0;
	size_t n = 0;
};
Stats stats_of(std::vector<double> values);

/** Human units: "1.23 ms", "4.56 GB/s" (decimal G), "1.02x". */
std::string fmt_ns(double ns);
std::string fmt_rate(double bytes_per_s);
std::string fmt_ratio(double r);
std::string fmt_size(uint64_t bytes);

/** A text table with aligned columns; the first column left-aligned, others right. */
class Table {
public:
	explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
	void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
	void print(const std::string &title) const;

private:
	std::vector<std::vector<std::string>> rows_;
};

/** CPU time (user + system) a process spent so far, ns: its main thread and all others. */
struct CpuTime {
	double main = 0, others = 0;
};
CpuTime process_cpu(pid_t pid);
/**
 * CPU time the hypervisor gave to others while this machine wanted it, all CPUs together, ns
 * since boot (/proc/stat "steal", 10 ms ticks); 0 on a machine that does not count it.
 */
double host_steal_ns();

/**
 * A process that spins on one CPU until stop(): the other program keeping a core busy on a
 * desktop. It runs in its own session (its own autogroup, as a program started elsewhere
 * would be) and dies with this process (PR_SET_PDEATHSIG).
 */
class BusyLoop {
public:
	BusyLoop() = default;
	~BusyLoop() { stop(); }
	BusyLoop(const BusyLoop &) = delete;
	BusyLoop &operator=(const BusyLoop &) = delete;

	/** Starts it pinned to `cpu`, or on every CPU of the mask we started with when cpu < 0. */
	bool start(int cpu, std::string *error);
	/**
	 * Ends it by its pid (SIGKILL, then reaped). Returns the share of one CPU it got since
	 * start() (its CPU time / wall time, 10 ms ticks), 0 when it was not running.
	 */
	double stop();
	bool running() const { return pid_ > 0; }
	pid_t pid() const { return pid_; }
	int cpu() const { return cpu_; }

private:
	pid_t pid_ = -1;
	int cpu_ = -1;
	uint64_t started_ns_ = 0;
};

/** CPUs this process could run on before pin_client_side() (ascending). */
std::vector<int> usable_cpus();

/**
 * Where threads ran: the CPU each process's main thread last ran on (/proc/PID/task/PID/stat
 * field 39, "processor") and the calling thread's current CPU (sched_getcpu()), read together
 * by sample(). Call it between timed sections: it reads a few small files.
 */
class Placement {
public:
	/** Watched processes by name; pid 0 means the calling thread. */
	void watch(const std::string &name, pid_t pid);
	void sample();
	size_t samples() const { return rows_.size(); }
	/** "0:97 1:3": percent of samples on each CPU it was seen on; "-" with no sample. */
	std::string shares(size_t process) const;
	/** Fraction of samples (0..1) in which the process was on `cpu`. */
	double on_cpu(size_t process, int cpu) const;
	/** Fraction of samples (0..1) in which processes a and b were on the same CPU. */
	double together(size_t a, size_t b) const;
	const std::vector<std::string> &names() const { return names_; }

private:
	std::vector<std::string> names_;
	std::vector<pid_t> pids_;
	std::vector<std::vector<int>> rows_; // per sample, a CPU per process (-1: unknown)
};

/** Whether the kernel groups processes by session for CPU shares (sched_autogroup_enabled). */
std::string autogroup_note();

/** How loaded the machine was (cores, 1-minute load average) and the pinning. */
std::string machine_note();

} // namespace pixelport::bench
