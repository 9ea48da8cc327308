// Integration harness: a private XDG_RUNTIME_DIR and socket per test, the reference compositor
// started headless, real clients run against it, and the output read back with grim.
// Every wait has a timeout so a broken build fails instead of hanging.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "latency.hpp"
#include "wait_until.hpp"

namespace pixelport::test {

/** Path of a built program or library, from the environment meson test sets up. */
std::string build_path(const char *env_name);

/** A child process with captured stdout and stderr. */
class Process {
public:
	Process() = default;
	~Process();
	Process(const Process &) = delete;
	Process &operator=(const Process &) = delete;

	/**
	 * Starts argv[0] (searched in PATH) with `env` added to this process's environment.
	 * An entry whose value is kUnset removes that variable. In a cross-built tree run under meson's
	 * exe_wrapper (MESON_EXE_WRAPPER), a program built for this test's machine starts through
	 * the wrapper too; Debian's execs the emulator, so pid() is still the program's process.
	 */
	bool start(const std::vector<std::string> &argv, const std::map<std::string, std::string> &env);
	static constexpr const char *kUnset = "\x01unset";
	/** Reads one stdout line; false on EOF or timeout. */
	bool read_line(std::string *line, int timeout_ms);
	/** Waits for exit; returns the status (128 + signal if killed), or -1 on timeout. */
	int wait(int timeout_ms);
	/** Waits until stderr contains `text` (or the process exits); true if it does. */
	bool wait_for_err(const std::string &text, int timeout_ms);
	/** SIGTERM, then SIGKILL after `grace_ms`; returns the exit status. */
	int terminate(int grace_ms = 3000);
	bool running() const { return pid_ > 0; }
	pid_t pid() const { return pid_; }
	/** Everything read from stdout and stderr so far (drained on wait/terminate). */
	const std::string &out() const { return out_; }
	const std::string &err() const { return err_; }

private:
	void drain(int timeout_ms);
	pid_t pid_ = -1;
	int out_fd_ = -1;
	int err_fd_ = -1;
	int status_ = -1;
	std::string out_;
	std::string err_;
	size_t out_read_ = 0; // how much of out_ read_line() has consumed
};

/** An 8-bit RGB image read back from the output. */
struct Image {
	int width = 0;
	int height = 0;
	std::vector<uint8_t> rgb; // width * height * 3
	uint32_t pixel(int x, int y) const {
		const uint8_t *p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
		return static_cast<uint32_t>(p[0]) << 16 | static_cast<uint32_t>(p[1]) << 8 | p[2];
	}
};

/**
 * Pixels of `shot` that differ from `want` (0xRRGGBB, w x h, drawn at the output origin) by
 * more than `tolerance` in any channel; with `rest_black`, every pixel outside w x h must be
 * exactly black too. The first few are reported as test failures; a shot smaller than w x h
 * is reported and counts -1.
 */
int screen_mismatches(
	const Image &shot, const std::vector<uint32_t> &want, int w, int h, int tolerance, bool rest_black);

/** A private runtime dir (mode 0700) and a running pixelport-compositor on a unique socket. */
class CompositorFixture {
public:
	CompositorFixture();
	~CompositorFixture();

	/** Starts the compositor with `args` (e.g. {"--no-plugin"}); waits for its socket. */
	bool start(const std::vector<std::string> &args = {}, const std::string &output = "256x256");
	/**
	 * Starts another compositor (e.g. tinywl) from `argv` with `env` added and XDG_RUNTIME_DIR
	 * set to the private dir; waits for the socket `socket_name`, or when that is empty, for
	 * whichever `wayland-*` socket it opens there, and uses it for clients.
	 */
	bool start_command(const std::vector<std::string> &argv, const std::map<std::string, std::string> &env,
		const std::string &socket_name = "");
	/** SIGTERM and wait; returns the exit status. */
	int stop();

	/**
	 * Environment for a client of this compositor. LD_LIBRARY_PATH is removed: meson test
	 * points it at our builds of libwayland (instrumented under --sanitize), which Debian's
	 * clients (grim, wayland-info, weston-simple-shm) must not load; ours use their rpath.
	 */
	std::map<std::string, std::string> client_env() const;
	/** Runs a client to completion; returns its status, or -1 on timeout (it is killed). */
	int run_client(const std::vector<std::string> &argv, int timeout_ms, std::string *out = nullptr,
		std::string *err = nullptr);
	/** Screenshot of the output through wlr-screencopy (grim). */
	bool screenshot(Image *image);

	const std::string &runtime_dir() const { return runtime_dir_; }
	const std::string &socket() const { return socket_; }
	Process &compositor() { return compositor_; }

private:
	std::string runtime_dir_;
	std::string socket_;
	Process compositor_;
};

/** A test client mode that must end in one protocol error. */
struct ErrorCase {
	const char *mode;
	int code;
	const char *interface;
};

/** What a test client prints for protocol error `code` on `interface`: "error CODE INTERFACE\n". */
std::string protocol_error_line(int code, const char *interface);

/** "pool-size-zero" -> "pool_size_zero": a GoogleTest parameter name. */
std::string error_case_name(const ErrorCase &c);

/**
 * Runs `program MODE` against a fresh compositor: it must print "error CODE INTERFACE", and
 * the compositor must go on serving another client and exit cleanly.
 */
void expect_protocol_error(const std::string &program, const ErrorCase &c);

/** A normal client (pixelport-paint) still gets its frame presented; the compositor runs. */
void expect_compositor_serves_others(CompositorFixture &fx);

/**
 * Starts `program MODE` as a client and reads its verdict line, then expects "holding":
 * the client stays connected until terminated.
 */
void start_holding(
	CompositorFixture &fx, Process *client, const std::string &program, const char *mode, std::string *verdict);

/** Open file descriptors and memory mappings of a process (from /proc). */
size_t count_fds(pid_t pid);
size_t count_maps(pid_t pid);

/** The number a field of /proc/PID/status starts with (`field`: "VmRSS:", "FDSize:", ...); 0 if
 * the process or the field is gone. */
size_t proc_status_number(pid_t pid, const char *field);

/** Resident set size of a process in KiB (VmRSS in /proc/PID/status); 0 if unknown. */
size_t rss_kib(pid_t pid);

/**
 * CPU time of a process's main thread (a compositor's event loop), ns, from
 * /proc/PID/task/PID/schedstat: what work cost that thread however loaded the machine (wall
 * time includes other processes' turns).
 */
uint64_t main_thread_cpu_ns(pid_t pid);

/**
 * Polls count(pid) for up to `timeout_ms` (3 s by default) until it is at most `limit` (a
 * client that just exited may not be torn down in the compositor yet); returns the last count.
 * Works with count_fds, count_maps and rss_kib.
 */
size_t settle_at_most(size_t (*count)(pid_t), pid_t pid, size_t limit, int timeout_ms = 3000);

/**
 * Waits (wait_until_steady) until the process's event loop is idle: its main thread busy for
 * under 0.5 ms in each of 3 intervals of 10 ms (a probe client's syncs cost it microseconds),
 * at most 5 s. Returns whether it was.
 */
bool wait_main_thread_idle(pid_t pid);

/**
 * A compositor's fd count once it is idle (wait_main_thread_idle) and the count has not changed
 * over 3 looks 10 ms apart: a client that just exited is torn down by then.
 */
size_t idle_fd_count(pid_t pid);

/** A sanitizer build (AddressSanitizer or ThreadSanitizer): slower, with allocators of its own. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PIXELPORT_TEST_SANITIZED 1
#endif

/**
 * Slack for mapping counts: the sanitizers' allocators map regions of their own (and
 * AddressSanitizer keeps freed memory in quarantine), so under them heap growth shows as
 * mappings. Leaks there are LeakSanitizer's job; the tight bound applies to the normal build.
 */
#if defined(PIXELPORT_TEST_SANITIZED)
inline constexpr size_t kMapsSlack = 64;
#else
inline constexpr size_t kMapsSlack = 0;
#endif

/**
 * ThreadSanitizer keeps shadow memory for what the program touches (several times its size):
 * under it, bounds on a compositor's peak RSS are this many times as large.
 */
#if defined(__SANITIZE_THREAD__)
inline constexpr size_t kRssScale = 4;
#else
inline constexpr size_t kRssScale = 1;
#endif

/** One line of pixelport-probe-client: what it saw since the previous line (times in us). */
struct ProbeStats {
	uint64_t roundtrips = 0;
	uint64_t worst_roundtrip_us = 0;
	uint64_t frames = 0;
	uint64_t worst_frame_gap_us = 0;
	std::string error; // the connection died: why ("" when it did not)
	/**
	 * CPU time the hypervisor took from this machine in the same window (the most of any one
	 * CPU: /proc/stat "steal" and the stalls StallWatch saw, latency.hpp): no process here ran
	 * then, the compositor neither.
	 */
	uint64_t steal_us = 0;
	/** The median and 99th percentile of the answered roundtrips (0 from a probe without them). */
	uint64_t p50_roundtrip_us = 0;
	uint64_t p99_roundtrip_us = 0;
	/**
	 * Of the slowest answered roundtrip, from the threads' schedstat: the compositor's main
	 * thread running and waiting on a run queue, the probe's running and waiting (all 0 when
	 * the probe could not read them, `sched` false).
	 */
	bool sched = false;
	uint64_t main_run_us = 0, main_wait_us = 0, self_run_us = 0, self_wait_us = 0;
};

/**
 * Parses "probe roundtrips=N worst_roundtrip_us=N frames=N worst_frame_gap_us=N
 * [ p50_roundtrip_us=N p99_roundtrip_us=N[ main_run_us=N main_wait_us=N self_run_us=N self_wait_us=N]]
 * [ error=...]".
 */
bool parse_probe_line(const std::string &line, ProbeStats *stats);

/**
 * pixelport-probe-client (PIXELPORT_PROBE_CLIENT) against a running compositor: a well-behaved
 * client that syncs every 10 ms and keeps presenting frames. Use:
 *     ProbeClient probe;
 *     ASSERT_TRUE(probe.start(fx));          // connected, first frame shown
 *     ProbeStats before;
 *     ASSERT_TRUE(probe.sample(&before));    // discards the start-up figures
 *     ... attack ...
 *     ProbeStats during;
 *     ASSERT_TRUE(probe.stop(&during));      // since the sample
 *     expect_latency("probe", during.worst_roundtrip_us, baseline, during.steal_us);
 */
class ProbeClient {
public:
	/** Starts it and waits (up to 10 s) for its first frame; false if it did not come. */
	bool start(CompositorFixture &fx);
	/**
	 * SIGUSR1: the figures since the previous sample (or start); it keeps running. A window
	 * lasts at least kMinWindowMs (it waits out the rest): an attack over in a few ms would
	 * otherwise leave a window with no sync of the probe's (one per 10 ms) answered in it.
	 */
	bool sample(ProbeStats *stats, int timeout_ms = 5000, int min_window_ms = kMinWindowMs);
	static constexpr int kMinWindowMs = 100;
	/** SIGTERM: the figures since the previous sample; false if no line came. */
	bool stop(ProbeStats *stats, int timeout_ms = 5000);
	Process &process() { return process_; }

private:
	Process process_;
	std::vector<uint64_t> steal_; // per CPU at the previous sample or start, µs
	uint64_t window_start_ms_ = 0; // CLOCK_MONOTONIC at the previous sample or start
};

/**
 * Samples a process's fd count and RSS every 5 ms on a thread of its own, from start() until
 * stop() (or destruction), keeping the peaks: what an attack made the compositor hold at most.
 */
class PeakSampler {
public:
	PeakSampler() = default;
	~PeakSampler() { stop(); }
	PeakSampler(const PeakSampler &) = delete;
	PeakSampler &operator=(const PeakSampler &) = delete;
	void start(pid_t pid);
	void stop();
	size_t peak_fds() const { return peak_fds_; }
	size_t peak_rss_kib() const { return peak_rss_kib_; }

private:
	struct Thread;
	Thread *thread_ = nullptr;
	size_t peak_fds_ = 0;
	size_t peak_rss_kib_ = 0;
};

/**
 * A compositor with a probe client connected and warmed up, its baseline fds and RSS, and a
 * PeakSampler: the arena of a hostile-client case (docs/design.md, "Limits and fairness").
 * start(), attack, expect_probe_served(), attacker exits, expect_back_to_baseline(), print().
 */
struct AttackArena {
	/** RSS the compositor may keep after an attacker left: malloc keeps some freed heap; under
	 * AddressSanitizer freed memory sits in its quarantine instead (64 MiB in the compositors
	 * CompositorFixture starts, with redzones and allocator caches on top); ThreadSanitizer's
	 * allocator and shadow keep some too. */
#if defined(PIXELPORT_TEST_SANITIZED)
	static constexpr size_t kRssSlackKib = 320 * 1024;
#else
	static constexpr size_t kRssSlackKib = 8 * 1024;
#endif
	static constexpr int kSettleMs = 1000; // "back to baseline within 1 s"

	CompositorFixture fx;
	ProbeClient probe;
	pid_t pid = -1;
	size_t fds0 = 0, rss0 = 0;
	PeakSampler peaks;

	/** Starts the compositor with `args`, warms it up, connects the probe, takes the baseline. */
	void start(const std::vector<std::string> &args = {});
	/**
	 * The probe's figures since start (or the last sample): its worst roundtrip within the
	 * latency rule against `baseline` (expect_latency, named after the test), and frames kept
	 * coming (unless `expect_frames` is false: wlroots sends no frame events to a surface the
	 * attacker's windows hide). The window measured lasts at least `min_window_ms` (an attack
	 * over in a few ms leaves the probe that long to count frames in).
	 */
	void expect_probe_served(ProbeStats *stats, const LatencyBaseline &baseline, bool expect_frames = true,
		int min_window_ms = ProbeClient::kMinWindowMs);
	/**
	 * The baseline of an attack stock wlroots cannot run (the plugin's protocols, its formats,
	 * its budgets): this compositor's probe over the last 300 ms window start() measured, with no
	 * attack yet (`quiet`). `why` says why stock cannot serve the attack.
	 */
	LatencyBaseline quiet_baseline(const std::string &why) const;
	/** The probe's figures over start()'s last window: nothing attacking yet. */
	ProbeStats quiet;
	/** fds and RSS back at (or below) the baseline within 1 s; `extra_fds` for clients still
	 * connected on purpose. */
	void expect_back_to_baseline(size_t extra_fds = 0);
	/** One "fairness NAME ..." line: the probe's worst roundtrip and the compositor's peaks. */
	void print(const char *name, const ProbeStats &stats);
};

/**
 * The baseline of an attack stock wlroots can run too: the probe's worst roundtrip in an arena
 * of stock's own (pixelport-compositor --no-plugin and `args`) while `attack` runs there (it
 * returns when the attack is over), in the same test. `what` names the attack.
 */
LatencyBaseline stock_probe_baseline(const std::string &what, const std::function<void(AttackArena &)> &attack,
	const std::vector<std::string> &args = {});

/** The wl_shm formats wayland-info lists, as its four-character names (e.g. "NV12"). */
std::set<std::string> shm_formats_from_wayland_info(const std::string &text);

/**
 * The formats the stock compositor serves: what wlroots' pixman renderer samples from CPU
 * memory (WLR_BUFFER_CAP_DATA_PTR), asked of the wlroots this build uses at run time (14 on
 * 0.18 and 0.19; 0.20 adds ABGR16161616). As wayland-info names them (e.g. "AR24").
 */
const std::set<std::string> &native_shm_formats();

/**
 * What the plugin adds on top: every format the conversion core can turn into one of the
 * native ones (core pick_target), e.g. RGB888, 1555/4444, half float, YUV.
 */
const std::set<std::string> &converted_shm_formats();

/**
 * What the plugin's wl_shm advertises: the native formats the core's table describes (a
 * renderer format without a plane layout cannot be validated, so it is not served) and the
 * converted ones. As wayland-info names them; served_shm_format_names() as the core names them
 * ("NV12"), in the core table's order.
 */
const std::set<std::string> &served_shm_formats();
const std::vector<std::string> &served_shm_format_names();

/** The renderer samples `fourcc` (DRM) from CPU memory: the plugin uses it in place. */
bool is_native_shm_format(uint32_t fourcc);

/** A DRM fourcc as its four characters, as wayland-info prints it ("NV12", "AR24"). */
std::string fourcc_name(uint32_t fourcc);

} // namespace pixelport::test
