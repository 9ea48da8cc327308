// pixelport-sweep: how long each transport takes to put a frame on a surface, over frame
// sizes and pixel formats, on this machine. See README.md for every option.
//
// Per point (format, size, transport): a fresh window, warm-up frames, then measured frames,
// each waiting for presentation and for the compositor's pixelport-timing-v1 report before
// the next one. Results: a table, crossovers, CSV, JSON and a gnuplot PNG in --output.
// Pressure mode (--instances N) runs N concurrent clients putting one huge image each.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>
#include <tuple>

#include <CLI/CLI.hpp>
#include <drm_fourcc.h>

#include "cli.hpp"
#include "image.hpp"
#include "model.hpp"
#include "pattern.hpp"
#include "pixelport/core/format.h"
#include "plot.h"
#include "timing.hpp"
#include "transport.hpp"
#include "verdict.hpp"
#include "verify.hpp"
#include "wayland_client.hpp"

extern char **environ;

using namespace pixelport;
using namespace pixelport::client;
using namespace pixelport::sweep;
namespace fs = std::filesystem;

namespace {

struct Options {
	std::string sizes_arg, min_size = "4K", max_size = "256M";
	int steps = 9;
	std::string transports = "shm,shm-new,socket,pipe";
	std::string formats = "XRGB8888,RGB888,NV12";
	int warmup = 2, frames = 30, min_frames = 5;
	double point_seconds = 1.0;
	std::string image;
	bool pattern = false;
	std::string output;
	bool no_plot = false;
	int timeout_ms = 10000;
	int instances = 0;
	std::string pressure_size = "5785x8429";
	int pressure_frames = 3;
	std::string pressure_transport = "shm";
	int pressure_timeout_s = 300;
	std::string peer;
	std::string peer_compress = "none,lz4";
	int peer_timeout_s = 900;
	int compositor_pid = 0;
	bool peer_child = false;
	uint32_t seed = 1;
	bool no_verify = false;
	std::string verify_display; // peer child: the compositor's own display, for the screenshots
	std::string source;         // peer child: "waypipe-lz4", in window titles
	bool test_wrong_reference = false; // testing aid: compare against inverted pixels
	int confirm_rounds = 3;
	double confirm_seconds = 0.25;
};

[[noreturn]] void die(int code, const std::string &msg) {
	fprintf(stderr, "pixelport-sweep: error: %s\n", msg.c_str());
	exit(code);
}

std::vector<std::string> split(const std::string &s, char sep) {
	std::vector<std::string> out;
	std::stringstream in(s);
	std::string item;
	while (std::getline(in, item, sep)) {
		if (!item.empty()) out.push_back(item);
	}
	return out;
}

// A frame size in bytes: "4096", "4K", "1.5M", "2G" (binary units), 1 byte to a wl_shm pool's 2 GiB.
constexpr uint64_t kMaxFrameBytes = INT32_MAX;
const char *const kBytesRange = "bytes 1..2G (4096, 64K, 1.5M)";
bool parse_bytes(const std::string &s, double *out) {
	uint64_t v = 0;
	if (!cli::parse_bytes(s, 1, kMaxFrameBytes, &v)) return false;
	*out = static_cast<double>(v);
	return true;
}

// "WxH", each 1..32767 (wl_surface coordinates are 16-bit in practice).
bool parse_wxh(const std::string &s, int *w, int *h) {
	return cli::parse_wxh(s, 1, 32767, w, h);
}

// Every item of a comma-separated list, empty ones included ("a,,b" has three).
std::vector<std::string> split_all(const std::string &s) {
	std::vector<std::string> out;
	size_t start = 0;
	for (size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1) {
		out.push_back(s.substr(start, comma - start));
	}
	out.push_back(s.substr(start));
	return out;
}

/** A size request: explicit WxH, or bytes of pixel data (the shape follows per format). */
struct SizeSpec {
	int width = 0, height = 0;
	double bytes = 0;
	std::string label;
};

// Bytes of a width x height frame of `drm` in pixelport's wl_shm layout; 0 if none.
uint64_t frame_bytes(uint32_t drm, int w, int h) {
	size_t stride = shm_min_stride(drm, w);
	ShmLayout layout;
	if (stride == 0 || !shm_layout(drm, w, h, stride, &layout)) return 0;
	return layout.size;
}

// A 4:3 frame of about `bytes` on the format's chroma grid.
void shape_for(uint32_t drm, double bytes, int *w, int *h) {
	const core::FormatInfo *f = core::format_info(drm);
	int gx = f ? f->hsub : 1, gy = f ? f->vsub : 1;
	gx = std::max(gx, 2);
	gy = std::max(gy, 2);
	double bpp = static_cast<double>(frame_bytes(drm, 256, 256)) / 65536.0;
	double pixels = bytes / bpp;
	int width = static_cast<int>(std::lround(std::sqrt(pixels * 4.0 / 3.0) / gx)) * gx;
	width = std::max(width, gx);
	int height = static_cast<int>(std::lround(pixels / width / gy)) * gy;
	*w = width;
	*h = std::max(height, gy);
}

uint64_t mem_available() {
	std::ifstream in("/proc/meminfo");
	std::string key;
	uint64_t kb = 0;
	std::string unit;
	while (in >> key >> kb >> unit) {
		if (key == "MemAvailable:") return kb * 1024;
	}
	return 0;
}

// VmHWM / VmRSS of a process in bytes (0 if unreadable).
void proc_rss(int pid, uint64_t *hwm, uint64_t *rss) {
	*hwm = *rss = 0;
	if (pid <= 0) return;
	std::ifstream in("/proc/" + std::to_string(pid) + "/status");
	std::string line;
	while (std::getline(in, line)) {
		unsigned long long kb = 0;
		if (sscanf(line.c_str(), "VmHWM: %llu", &kb) == 1) *hwm = kb * 1024;
		if (sscanf(line.c_str(), "VmRSS: %llu", &kb) == 1) *rss = kb * 1024;
	}
}

int peer_pid(Connection &conn) {
	ucred cred{};
	socklen_t len = sizeof(cred);
	if (getsockopt(wl_display_get_fd(conn.display), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) return cred.pid;
	return 0;
}

std::string proc_comm(int pid) {
	std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
	std::string s;
	std::getline(in, s);
	return s;
}

std::string self_exe() {
	std::error_code ec;
	return fs::read_symlink("/proc/self/exe", ec).string();
}

// ---- progress ---------------------------------------------------------------------------------

struct Progress {
	bool tty = isatty(STDERR_FILENO) != 0;
	int total = 0, done = 0;
	uint64_t start = now_ns();
	// "about 3 min left": the time so far per step times the steps left (sizes grow, so early
	// estimates are low; it says so by being an estimate).
	std::string left() const {
		if (done == 0 || done >= total) return "";
		double s = static_cast<double>(now_ns() - start) / 1e9 / done * (total - done);
		char buf[48];
		if (s < 90) snprintf(buf, sizeof(buf), ", ~%.0f s left", s);
		else snprintf(buf, sizeof(buf), ", ~%.0f min left", s / 60);
		return buf;
	}
	void step(const std::string &label, const std::string &result) {
		done++;
		if (tty) {
			int width = 30, filled = total ? done * width / total : width;
			fprintf(stderr, "\r\033[K[%s%s] %d/%d%s %s", std::string(static_cast<size_t>(filled), '#').c_str(),
				std::string(static_cast<size_t>(width - filled), '.').c_str(), done, total, left().c_str(), label.c_str());
			if (done == total) fprintf(stderr, "\n");
		} else {
			fprintf(stderr, "pixelport-sweep: [%d/%d%s] %s: %s\n", done, total, left().c_str(), label.c_str(), result.c_str());
		}
		fflush(stderr);
	}
};

// ---- one point -----------------------------------------------------------------------------------

struct Content {
	uint32_t drm = 0;
	int width = 0, height = 0;
	size_t stride = 0;
	std::vector<uint8_t> bytes;
	bool pattern = false;
};

int64_t diff(uint64_t end, uint64_t start) { return end != 0 && start != 0 && end >= start ? static_cast<int64_t>(end - start) : -1; }

// Measures one point into p; false only when the connection is gone (the sweep must stop).
// Checks what the output shows against what was sent (verify.hpp) into p->pixels.
void verify_point(const Options &o, const Content &c, Point *p) {
	Shot shot;
	std::string error;
	if (!capture_screen(o.verify_display, o.timeout_ms, &shot, &error)) {
		p->pixels = "unverified";
		p->pixels_note = error;
		return;
	}
	const int vw = std::min(c.width, shot.width), vh = std::min(c.height, shot.height);
	std::vector<uint32_t> want;
	if (!reference_argb(c.drm, c.width, c.height, c.stride, c.bytes.data(), c.bytes.size(), vw, vh, &want)) {
		p->pixels = "unverified";
		p->pixels_note = "no reference decoder for " + p->format;
		return;
	}
	if (o.test_wrong_reference) {
		for (uint32_t &v : want) v ^= 0x00ffffff;
	}
	PixelCheck r = check_pixels(want, vw, vh, shot);
	p->pixels = r.status;
	p->pixels_note = r.note;
}

bool run_point(Connection &conn, TimingClient &timing, const Options &o, const Content &c, Transport t, Point *p,
		bool verify = true, const std::string &tag = "") {
	std::string error;
	Window win;
	// "pixelport-sweep shm NV12 640x480" ("shm@waypipe-lz4" under a peer): the timing log's
	// title field then tells runs and transports apart (scripts/demo splits the log by it).
	std::string title = "pixelport-sweep " + p->transport + (o.source.empty() ? "" : "@" + o.source) + " " + p->format +
		" " + std::to_string(c.width) + "x" + std::to_string(c.height) + tag;
	if (!win.create(&conn, title.c_str(), &error)) {
		p->note = error;
		return false;
	}
	timing.subscribe(win.surface);
	std::vector<uint8_t> frame(c.bytes.size());
	Pixels px = {c.drm, c.width, c.height, c.stride, frame.data(), frame.size()};
	bool alive = true;
	{
		SurfaceWriter writer(&conn, win.surface, t);
		uint64_t measure_start = 0;
		for (int i = 0; i < o.warmup + o.frames; i++) {
			bool measuring = i >= o.warmup;
			if (measuring && measure_start == 0) measure_start = now_ns();
			int measured = i - o.warmup;
			if (measuring && measured >= o.min_frames &&
					static_cast<double>(now_ns() - measure_start) / 1e9 > o.point_seconds) {
				break;
			}
			// vmsplice'd pages may still be in the pipe: never rewrite them before they are read.
			if (!writer.wait_consumed(o.timeout_ms)) {
				p->note = "stream writes not consumed within " + std::to_string(o.timeout_ms) + " ms";
				break;
			}
			uint64_t f0 = now_ns();
			memcpy(frame.data(), c.bytes.data(), frame.size());
			uint64_t f1 = now_ns();
			CommitWaiter waiter;
			waiter.arm(&conn, win.surface);
			if (!writer.put(px, nullptr, &error, o.timeout_ms)) {
				p->note = error;
				alive = wl_display_get_error(conn.display) == 0;
				break;
			}
			PutTiming pt = writer.timing();
			if (!waiter.wait(&conn, o.timeout_ms)) {
				alive = wl_display_get_error(conn.display) == 0;
				p->note = alive ? "frame not presented within " + std::to_string(o.timeout_ms) + " ms"
				                : "connection lost: " + conn.error_text();
				break;
			}
			CommitTiming ct;
			bool have = timing.available() && timing.wait_commit(pt.start, std::min(o.timeout_ms, 2000), &ct);
			if (!measuring) continue;
			Sample s;
			s.fill(-1);
			s[kFill] = static_cast<int64_t>(f1 - f0);
			s[kSubmit] = diff(pt.sent, pt.start);
			s[kLatency] = waiter.present_ns ? diff(waiter.present_ns, pt.start) : -1;
			if (have) {
				const uint64_t tc = ct.t[PP_SURFACE_TIMING_V1_PHASE_COMMIT], dc = ct.t[PP_SURFACE_TIMING_V1_PHASE_DATA_COMPLETE];
				s[kTransfer] = diff(dc, tc);
				s[kConvert] = diff(ct.t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_END], ct.t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_START]);
				s[kUpload] = diff(ct.t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END], ct.t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_START]);
				// wl_shm converts inside its upload: keep the phases disjoint (docs/timing.md).
				if (s[kUpload] >= 0 && s[kConvert] >= 0 &&
						ct.t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_START] >= ct.t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_START] &&
						ct.t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_END] <= ct.t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END]) {
					s[kUpload] -= std::min(s[kUpload], s[kConvert]);
				}
				s[kPresent] = diff(ct.t[PP_SURFACE_TIMING_V1_PHASE_PRESENT], tc);
				// Until the last of: the client's send, the compositor's last stream byte, its
				// conversion and its upload. Ends, not sums: the phases overlap (the stream's
				// reads run during the writes and convert as rows arrive; an shm upload may
				// contain the conversion).
				uint64_t end = std::max({pt.sent, dc, ct.t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_END],
					ct.t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END]});
				s[kCost] = static_cast<int64_t>(end - pt.start);
				p->compositor_timing = true;
			} else {
				s[kCost] = s[kSubmit];
			}
			p->samples.push_back(s);
		}
	}
	if (verify && alive && p->measured()) verify_point(o, c, p);
	timing.unsubscribe();
	win.destroy();
	if (alive && !conn.roundtrip()) alive = false;
	if (!alive && p->note.empty()) p->note = "connection lost: " + conn.error_text();
	return alive;
}

// ---- pressure mode -------------------------------------------------------------------------------

struct InstanceResult {
	int index = 0;
	pid_t pid = 0;
	double real_s = 0, user_s = 0, sys_s = 0;
	long minflt = 0, majflt = 0, maxrss_kb = 0;
	bool finished = false;
	int frames = 0;
	std::string error;
};

// One pressure instance (a forked child): decode, scale, put the frame repeatedly.
int pressure_child(const Options &o, const std::string &image_path, uint32_t drm, int w, int h, Transport t,
		int report_fd) {
	auto report = [&](int frames, const std::string &err) {
		nlohmann::json j = {{"frames", frames}, {"error", err}};
		std::string line = j.dump() + "\n";
		(void)!write(report_fd, line.data(), line.size());
	};
	Image img;
	std::string error;
	if (!image_path.empty() && !load_image(image_path, &img, &error)) {
		report(0, error);
		return 1;
	}
	Content c;
	c.drm = drm;
	c.width = w;
	c.height = h;
	if (!make_frame(image_path.empty() ? nullptr : &img, drm, w, h, o.seed, &c.bytes, &c.stride, &c.pattern)) {
		report(0, "no layout for this size");
		return 1;
	}
	img.argb.clear();
	img.argb.shrink_to_fit();
	Connection conn;
	if (!conn.connect(&error)) {
		report(0, error);
		return 1;
	}
	Window win;
	if (!win.create(&conn, "pixelport-sweep pressure", &error)) {
		report(0, error);
		return 1;
	}
	SurfaceWriter writer(&conn, win.surface, t);
	Pixels px = {drm, w, h, c.stride, c.bytes.data(), c.bytes.size()};
	int frames = 0;
	for (int i = 0; i < o.pressure_frames; i++) {
		if (!writer.wait_consumed(o.timeout_ms * 3)) {
			report(frames, "stream writes not consumed in time");
			return 1;
		}
		CommitWaiter waiter;
		waiter.arm(&conn, win.surface);
		if (!writer.put(px, nullptr, &error, o.timeout_ms * 3)) {
			report(frames, error);
			return 1;
		}
		if (!waiter.wait(&conn, o.timeout_ms * 3)) {
			report(frames, "frame not presented in time: " + conn.error_text());
			return 1;
		}
		frames++;
	}
	report(frames, "");
	return 0;
}

int run_pressure(const Options &o, const std::string &image_path, const std::string &image_note, const fs::path &out) {
	int w = 0, h = 0;
	if (!parse_wxh(o.pressure_size, &w, &h)) {
		die(2, "--pressure-size '" + o.pressure_size + "' does not fit (want WxH, each 1..32767)");
	}
	std::vector<std::string> formats = split(o.formats, ',');
	uint32_t shm_code = 0;
	if (formats.empty() || !parse_format(formats[0], &shm_code)) die(2, "unknown format '" + o.formats + "'");
	uint32_t drm = shm_to_drm(shm_code);
	const core::FormatInfo *fi = core::format_info(drm);
	if (fi && (w % fi->hsub || h % fi->vsub)) {
		w -= w % fi->hsub;
		h -= h % fi->vsub;
		fprintf(stderr, "pixelport-sweep: note: pressure size rounded to %dx%d for %s's chroma grid\n", w, h, formats[0].c_str());
	}
	Transport t;
	if (!parse_transport(o.pressure_transport, &t) || t == Transport::Auto) {
		die(2, "unknown --pressure-transport '" + o.pressure_transport + "' (shm, shm-new, socket or pipe)");
	}
	uint64_t bytes = frame_bytes(drm, w, h);
	if (bytes == 0 || bytes > INT32_MAX) die(2, "pressure frame " + std::to_string(w) + "x" + std::to_string(h) + " does not fit in a wl_shm pool (2 GiB)");
	uint64_t need = bytes * 4 * static_cast<uint64_t>(o.instances);
	uint64_t avail = mem_available();
	if (avail && need > avail) {
		die(2, "pressure needs about " + human_bytes(static_cast<double>(need)) + " of memory, only " +
			human_bytes(static_cast<double>(avail)) + " available (fewer --instances or a smaller --pressure-size)");
	}
	// The compositor, to watch its memory.
	Connection probe;
	std::string error;
	if (!probe.connect(&error)) die(1, error);
	int cpid = o.compositor_pid ? o.compositor_pid : peer_pid(probe);
	bool stream_ok = probe.stream_manager != nullptr;
	probe.disconnect();
	if ((t == Transport::StreamSocket || t == Transport::StreamPipe) && !stream_ok) {
		die(1, "the compositor has no pixelport stream (no plugin?): cannot run --pressure-transport " + o.pressure_transport);
	}
	uint64_t hwm_before, rss_before;
	proc_rss(cpid, &hwm_before, &rss_before);
	fprintf(stderr, "pixelport-sweep: pressure: %d instances, each %dx%d %s (%s) via %s, %d frames; content: %s\n",
		o.instances, w, h, formats[0].c_str(), human_bytes(static_cast<double>(bytes)).c_str(), o.pressure_transport.c_str(),
		o.pressure_frames, image_note.c_str());

	std::vector<InstanceResult> results(static_cast<size_t>(o.instances));
	std::vector<int> report_fds;
	uint64_t start = now_ns();
	for (int i = 0; i < o.instances; i++) {
		int fds[2];
		if (pipe2(fds, O_CLOEXEC) < 0) die(1, std::string("pipe: ") + strerror(errno));
		fflush(nullptr);
		pid_t pid = fork();
		if (pid < 0) die(1, std::string("fork: ") + strerror(errno));
		if (pid == 0) {
			close(fds[0]);
			_exit(pressure_child(o, image_path, drm, w, h, t, fds[1]));
		}
		close(fds[1]);
		report_fds.push_back(fds[0]);
		results[static_cast<size_t>(i)].index = i;
		results[static_cast<size_t>(i)].pid = pid;
	}
	// Sample the compositor's resident memory while the instances run.
	std::atomic<bool> stop{false};
	std::atomic<uint64_t> rss_peak{rss_before};
	std::thread sampler([&] {
		while (!stop) {
			uint64_t hwm, rss;
			proc_rss(cpid, &hwm, &rss);
			if (rss > rss_peak) rss_peak = rss;
			usleep(20000);
		}
	});
	uint64_t deadline = start + static_cast<uint64_t>(o.pressure_timeout_s) * 1000000000ull;
	size_t running = results.size();
	while (running > 0) {
		for (InstanceResult &r : results) {
			if (r.pid <= 0) continue;
			int status = 0;
			rusage ru{};
			pid_t got = wait4(r.pid, &status, WNOHANG, &ru);
			bool timed_out = got == 0 && now_ns() > deadline;
			if (timed_out) {
				kill(r.pid, SIGKILL);
				got = wait4(r.pid, &status, 0, &ru);
				r.error = "killed after --pressure-timeout " + std::to_string(o.pressure_timeout_s) + " s";
			}
			if (got != r.pid) continue;
			r.real_s = static_cast<double>(now_ns() - start) / 1e9;
			r.user_s = static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6;
			r.sys_s = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
			r.minflt = ru.ru_minflt;
			r.majflt = ru.ru_majflt;
			r.maxrss_kb = ru.ru_maxrss;
			r.finished = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
			if (!timed_out && WIFSIGNALED(status)) r.error = std::string("killed by signal ") + strsignal(WTERMSIG(status));
			r.pid = 0;
			running--;
		}
		usleep(10000);
	}
	stop = true;
	sampler.join();
	for (size_t i = 0; i < results.size(); i++) {
		char buf[4096];
		ssize_t n = read(report_fds[i], buf, sizeof(buf) - 1);
		close(report_fds[i]);
		if (n > 0) {
			try {
				auto j = nlohmann::json::parse(std::string(buf, static_cast<size_t>(n)));
				results[i].frames = j.at("frames").get<int>();
				std::string err = j.at("error").get<std::string>();
				if (!err.empty() && results[i].error.empty()) results[i].error = err;
			} catch (const std::exception &) {
			}
		}
	}
	uint64_t hwm_after, rss_after;
	proc_rss(cpid, &hwm_after, &rss_after);
	double per_surface = rss_peak > rss_before ? static_cast<double>(rss_peak - rss_before) / o.instances : 0;

	std::ostringstream table;
	table << "instance  finished  frames   real s   user s    sys s   minflt   majflt  peak RSS  error\n";
	int finished = 0;
	for (const InstanceResult &r : results) {
		char line[512];
		snprintf(line, sizeof(line), "%8d  %8s  %6d %8.2f %8.2f %8.2f %8ld %8ld %9s  %s\n", r.index, r.finished ? "yes" : "no",
			r.frames, r.real_s, r.user_s, r.sys_s, r.minflt, r.majflt,
			human_bytes(static_cast<double>(r.maxrss_kb) * 1024).c_str(), r.error.c_str());
		table << line;
		finished += r.finished;
	}
	table << "compositor (pid " << cpid << (cpid ? ", " + proc_comm(cpid) : std::string()) << "): peak RSS (VmHWM) before "
	      << human_bytes(static_cast<double>(hwm_before)) << ", after " << human_bytes(static_cast<double>(hwm_after))
	      << "; RSS before " << human_bytes(static_cast<double>(rss_before)) << ", highest during "
	      << human_bytes(static_cast<double>(rss_peak)) << ", after " << human_bytes(static_cast<double>(rss_after))
	      << "\ncompositor memory per surface: " << human_bytes(per_surface) << " (frame "
	      << human_bytes(static_cast<double>(bytes)) << ")\n";
	std::cout << table.str() << std::flush;

	nlohmann::json j = {{"mode", "pressure"}, {"instances", o.instances}, {"width", w}, {"height", h},
		{"format", formats[0]}, {"transport", o.pressure_transport}, {"frames_each", o.pressure_frames},
		{"bytes_per_frame", bytes}, {"content", image_note}, {"compositor_pid", cpid},
		{"compositor", {{"vmhwm_before", hwm_before}, {"vmhwm_after", hwm_after}, {"rss_before", rss_before},
			{"rss_peak", rss_peak.load()}, {"rss_after", rss_after}, {"per_surface_bytes", per_surface}}}};
	nlohmann::json ji = nlohmann::json::array();
	std::ostringstream csv;
	csv << "instance,finished,frames,real_s,user_s,sys_s,minflt,majflt,maxrss_bytes,error\n";
	for (const InstanceResult &r : results) {
		ji.push_back({{"instance", r.index}, {"finished", r.finished}, {"frames", r.frames}, {"real_s", r.real_s},
			{"user_s", r.user_s}, {"sys_s", r.sys_s}, {"minflt", r.minflt}, {"majflt", r.majflt},
			{"maxrss_bytes", static_cast<uint64_t>(r.maxrss_kb) * 1024}, {"error", r.error}});
		csv << r.index << "," << (r.finished ? 1 : 0) << "," << r.frames << "," << r.real_s << "," << r.user_s << ","
		    << r.sys_s << "," << r.minflt << "," << r.majflt << "," << static_cast<uint64_t>(r.maxrss_kb) * 1024 << ",\""
		    << r.error << "\"\n";
	}
	j["instances_result"] = ji;
	std::ofstream(out / "pressure.json") << j.dump(2) << "\n";
	std::ofstream(out / "pressure.csv") << csv.str();
	std::ofstream(out / "pressure.txt") << table.str();
	printf("files: %s/pressure.{csv,json,txt}\n", out.c_str());
	return finished > 0 ? 0 : 1;
}

// ---- waypipe peer --------------------------------------------------------------------------------

pid_t spawn(const std::vector<std::string> &argv, const std::string &log) {
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
	posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
	std::vector<std::string> copy = argv;
	std::vector<char *> args;
	for (auto &s : copy) args.push_back(s.data());
	args.push_back(nullptr);
	pid_t pid = -1;
	int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
	posix_spawn_file_actions_destroy(&actions);
	return rc == 0 ? pid : -1;
}

// Waits at most timeout_ms; returns the exit status, or -1 (then the process is killed).
// `tick`, when given, runs about once a second while waiting.
int wait_for(pid_t pid, int timeout_ms, const std::function<void()> &tick = nullptr) {
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	uint64_t next_tick = now_ns() + 1000000000ull;
	for (;;) {
		if (tick && now_ns() > next_tick) {
			tick();
			next_tick = now_ns() + 1000000000ull;
		}
		int status = 0;
		if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (now_ns() > deadline) {
			kill(pid, SIGTERM);
			usleep(200000);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		usleep(20000);
	}
}

bool in_path(const std::string &prog) {
	const char *path = getenv("PATH");
	for (const std::string &dir : split(path ? path : "/usr/bin:/bin", ':')) {
		if (access((dir + "/" + prog).c_str(), X_OK) == 0) return true;
	}
	return false;
}

// Runs the shm transports of this sweep as a child through waypipe; appends its points.
void run_peer(const Options &o, const std::vector<std::string> &size_args, const std::vector<std::string> &shm_transports,
		const fs::path &out, std::vector<Point> *points, std::vector<std::string> *series, std::vector<std::string> *notes) {
	if (!in_path("waypipe")) {
		notes->push_back("peer waypipe skipped: waypipe is not installed (apt-get install waypipe)");
		return;
	}
	if (shm_transports.empty()) {
		notes->push_back("peer waypipe skipped: it runs the shm transports, none were asked for");
		return;
	}
	std::string transports;
	for (const auto &t : shm_transports) transports += (transports.empty() ? "" : ",") + t;
	std::string sizes;
	for (const auto &s : size_args) sizes += (sizes.empty() ? "" : ",") + s;
	for (const std::string &compress : split(o.peer_compress, ',')) {
		fs::path dir = out / ("peer-waypipe-" + compress);
		std::error_code ec;
		fs::create_directories(dir, ec);
		std::string sock = (dir / "waypipe.sock").string(), log = (dir / "waypipe.log").string();
		fs::remove(sock, ec);
		fprintf(stderr, "pixelport-sweep: peer: waypipe --compress %s (client and server on this machine)\n", compress.c_str());
		pid_t client = spawn({"waypipe", "--no-gpu", "--oneshot", "--compress", compress, "--socket", sock, "client"}, log);
		if (client < 0) {
			notes->push_back("peer waypipe " + compress + " skipped: cannot start waypipe");
			continue;
		}
		uint64_t until = now_ns() + 5000000000ull;
		while (!fs::exists(sock, ec) && now_ns() < until) usleep(20000);
		std::vector<std::string> argv = {"waypipe", "--no-gpu", "--compress", compress, "--socket", sock, "server", "--",
			self_exe(), "--peer-child", "--transports", transports, "--formats", o.formats, "--sizes", sizes,
			"--warmup", std::to_string(o.warmup), "--frames", std::to_string(o.frames), "--min-frames",
			std::to_string(o.min_frames), "--point-seconds", std::to_string(o.point_seconds), "--timeout-ms",
			std::to_string(o.timeout_ms), "--output", dir.string(), "--no-plot", "--seed", std::to_string(o.seed),
			"--source", "waypipe-" + compress};
		// The screenshots go straight to the compositor, not through waypipe.
		const char *display = getenv("WAYLAND_DISPLAY");
		if (o.no_verify) {
			argv.push_back("--no-verify");
		} else {
			argv.push_back("--verify-display");
			argv.push_back(display ? display : "wayland-0");
		}
		// The same content: --image or --pattern as given; with neither, the child finds the same photo.
		if (!o.image.empty()) {
			argv.push_back("--image");
			argv.push_back(o.image);
		} else if (o.pattern) {
			argv.push_back("--pattern");
		}
		pid_t server = fs::exists(sock, ec) ? spawn(argv, log) : -1;
		// The child's progress lines land in the log: show the latest one here.
		std::string shown;
		const bool tty = isatty(STDERR_FILENO) != 0;
		auto tick = [&] {
			std::ifstream in(log);
			std::string line, last;
			while (std::getline(in, line)) {
				if (line.rfind("pixelport-sweep: [", 0) == 0) last = line.substr(17);
			}
			if (last.empty() || last == shown) return;
			shown = last;
			fprintf(stderr, tty ? "\r\033[Kpeer waypipe-%s: %s" : "pixelport-sweep: peer waypipe-%s: %s\n", compress.c_str(),
				last.c_str());
			fflush(stderr);
		};
		int status = server > 0 ? wait_for(server, o.peer_timeout_s * 1000, tick) : -1;
		if (tty && !shown.empty()) fprintf(stderr, "\n");
		wait_for(client, 3000);
		std::string label = "@waypipe-" + compress;
		std::ifstream in(dir / "sweep.json");
		if (status != 0 || !in) {
			notes->push_back("peer waypipe " + compress + " failed (status " + std::to_string(status) + "); see " + log);
			continue;
		}
		try {
			nlohmann::json j = nlohmann::json::parse(in);
			for (Point p : points_from_json(j)) {
				p.transport += label;
				if (std::find(series->begin(), series->end(), p.transport) == series->end()) series->push_back(p.transport);
				points->push_back(std::move(p));
			}
		} catch (const std::exception &e) {
			notes->push_back("peer waypipe " + compress + ": unreadable results: " + e.what());
		}
	}
}

} // namespace

int main(int argc, char *argv[]) {
	Options o;
	CLI::App app{"pixelport-sweep: time every transport over frame sizes and formats on this machine"};
	CLI::Option *sizes_opt = app.add_option("--sizes", o.sizes_arg,
		"explicit sizes, comma-separated: WxH (pixels, each 1..32767, the same for every format) or bytes "
		"(1 to 2G: 4K, 1M, 1.5M; shape 4:3 per format)");
	app.add_option("--min-size", o.min_size, "smallest frame, bytes of pixel data (K, M, G suffixes; 1 to 2G)")
		->capture_default_str();
	app.add_option("--max-size", o.max_size, "largest frame")->capture_default_str();
	app.add_option("--steps", o.steps, "number of sizes, log-spaced from --min-size to --max-size")
		->capture_default_str()->transform(cli::Range(1, 64));
	app.add_option("--transports", o.transports, "comma-separated: shm, shm-new, socket, pipe")->capture_default_str();
	app.add_option("--formats", o.formats, "comma-separated DRM format names")->capture_default_str();
	app.add_option("--warmup", o.warmup, "unmeasured frames per point")->capture_default_str()->transform(cli::Range(0, 1000));
	app.add_option("--frames", o.frames, "measured frames per point (at most)")->capture_default_str()->transform(cli::Range(1, 100000));
	app.add_option("--min-frames", o.min_frames, "measured frames per point at least, even past --point-seconds")
		->capture_default_str()->transform(cli::Range(1, 100000));
	app.add_option("--point-seconds", o.point_seconds, "stop measuring a point after this long (once --min-frames are in)")
		->capture_default_str()->transform(cli::Range(0.0, 3600.0));
	app.add_option("--image", o.image,
		"JPEG, PNG or WebP to scale to every size (a regular file of at most 256 MiB and 2^28 pixels; default: a Debian "
		"wallpaper photo if installed)");
	app.add_flag("--pattern", o.pattern, "synthetic pattern instead of an image");
	app.add_option("-o,--output", o.output, "output folder (default: pixelport-sweep-DATE-TIME here)");
	app.add_flag("--no-plot", o.no_plot, "no PNG plot (no gnuplot run)");
	app.add_option("--timeout-ms", o.timeout_ms, "longest wait for any one event (presentation, buffer, stream)")
		->capture_default_str()->transform(cli::Range(100, 600000));
	app.add_option("--instances", o.instances, "pressure mode: N concurrent clients each putting one huge image")
		->transform(cli::Range(1, 64));
	app.add_option("--pressure-size", o.pressure_size, "pressure mode: frame WxH (each 1..32767)")->capture_default_str();
	app.add_option("--pressure-frames", o.pressure_frames, "pressure mode: frames each instance puts")
		->capture_default_str()->transform(cli::Range(1, 10000));
	app.add_option("--pressure-transport", o.pressure_transport, "pressure mode: shm, shm-new, socket or pipe")->capture_default_str();
	app.add_option("--pressure-timeout", o.pressure_timeout_s, "pressure mode: seconds before unfinished instances are killed")
		->capture_default_str()->transform(cli::Range(1, 86400));
	app.add_option("--peer", o.peer, "also run the shm transports through a peer: waypipe")->check(CLI::IsMember({"waypipe"}));
	app.add_option("--peer-compress", o.peer_compress, "waypipe compressions to run, comma-separated")->capture_default_str();
	app.add_option("--peer-timeout", o.peer_timeout_s, "seconds for each peer run")->capture_default_str()
		->transform(cli::Range(1, 86400));
	// 4194304: Linux's largest pid_max.
	app.add_option("--compositor-pid", o.compositor_pid, "compositor process for memory figures (default: the socket's peer)")
		->transform(cli::Range(0, 4194304));
	app.add_option("--seed", o.seed, "pattern seed")->capture_default_str()->transform(cli::Range(0u, UINT32_MAX));
	app.add_flag("--peer-child", o.peer_child, "internal: a run under a peer, results only in --output")->group("");
	app.add_option("--source", o.source, "internal: the peer run's name in window titles")->group("");
	app.add_option("--verify-display", o.verify_display, "internal: Wayland display for the pixel check")->group("");
	app.add_flag("--test-wrong-reference", o.test_wrong_reference,
		"testing aid: check the pixels against an inverted reference (every point must come out invalid)")->group("");
	app.add_flag("--no-verify", o.no_verify, "do not check the shown pixels (grim screenshots) against what was sent");
	app.add_option("--confirm-rounds", o.confirm_rounds,
		"extra alternating rounds near each candidate crossover for the verdict (0: none)")
		->capture_default_str()->transform(cli::Range(0, 50));
	app.add_option("--confirm-seconds", o.confirm_seconds, "measuring time per point in a confirming round")
		->capture_default_str()->transform(cli::Range(0.0, 60.0));
	app.set_version_flag("--version", std::string("pixelport-sweep ") + PIXELPORT_VERSION);
	if (int rc = cli::parse(app, argc, argv, "pixelport-sweep"); rc >= 0) return rc;
	signal(SIGPIPE, SIG_IGN);

	// ---- check every input before measuring anything ----
	std::vector<std::string> transport_names = split(o.transports, ',');
	std::vector<Transport> transports;
	for (const std::string &n : transport_names) {
		Transport t;
		if (!parse_transport(n, &t) || t == Transport::Auto) die(2, "unknown transport '" + n + "' (shm, shm-new, socket or pipe)");
		transports.push_back(t);
	}
	std::vector<std::string> format_names = split(o.formats, ',');
	std::vector<uint32_t> formats;
	for (std::string &n : format_names) {
		uint32_t code;
		if (!parse_format(n, &code)) die(2, "unknown format '" + n + "'");
		n = format_name(code);
		formats.push_back(shm_to_drm(code));
	}
	if (transports.empty() || formats.empty()) die(2, "no transport or no format to measure");

	// Sizes (not in pressure mode): per format, the frame shape for each requested size.
	std::vector<SizeSpec> sizes;
	std::vector<std::string> size_args; // what a peer child gets
	if (o.instances == 0) {
		if (sizes_opt->count() > 0) {
			// Given, even empty: exactly these sizes, never the default sweep.
			if (o.sizes_arg.empty()) die(2, std::string("--sizes: empty (want WxH or ") + kBytesRange + ", comma-separated)");
			for (const std::string &s : split_all(o.sizes_arg)) {
				SizeSpec spec;
				if (s.find_first_of("xX") != std::string::npos) {
					if (!parse_wxh(s, &spec.width, &spec.height)) {
						die(2, "--sizes: size '" + s + "' does not fit (want WxH, width and height 1..32767)");
					}
				} else if (!parse_bytes(s, &spec.bytes)) {
					die(2, "--sizes: bad size '" + s + "' (want WxH or " + kBytesRange + ")");
				}
				spec.label = s;
				sizes.push_back(spec);
				size_args.push_back(s);
			}
		} else {
			double lo, hi;
			if (!parse_bytes(o.min_size, &lo)) die(2, "--min-size: bad size '" + o.min_size + "' (want " + kBytesRange + ")");
			if (!parse_bytes(o.max_size, &hi)) die(2, "--max-size: bad size '" + o.max_size + "' (want " + kBytesRange + ")");
			if (lo > hi) die(2, "--min-size " + o.min_size + " is larger than --max-size " + o.max_size);
			for (int i = 0; i < o.steps; i++) {
				SizeSpec spec;
				spec.bytes = o.steps == 1 ? lo : std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * i / (o.steps - 1));
				spec.bytes = std::round(spec.bytes);
				spec.label = std::to_string(static_cast<uint64_t>(spec.bytes));
				sizes.push_back(spec);
				size_args.push_back(spec.label);
			}
		}
		uint64_t largest = 0;
		for (uint32_t f : formats) {
			for (SizeSpec &s : sizes) {
				int w = s.width, h = s.height;
				if (w == 0) shape_for(f, s.bytes, &w, &h);
				uint64_t b = frame_bytes(f, w, h);
				const core::FormatInfo *fi = core::format_info(f);
				if (b == 0 || (fi && (w % fi->hsub || h % fi->vsub))) {
					die(2, "size " + std::to_string(w) + "x" + std::to_string(h) + " does not fit " + format_name(drm_to_shm(f)) +
						" (off its chroma grid)");
				}
				if (b > INT32_MAX) {
					die(2, "size " + s.label + " does not fit: a " + std::to_string(w) + "x" + std::to_string(h) + " " +
						format_name(drm_to_shm(f)) + " frame is " + human_bytes(static_cast<double>(b)) + ", wl_shm pools hold at most 2 GiB");
				}
				largest = std::max(largest, b);
			}
		}
		// Content, a frame copy, two reused shm buffers and the compositor's converted copy.
		uint64_t need = largest * 5, avail = mem_available();
		if (avail && need > avail) {
			die(2, "the largest frame (" + human_bytes(static_cast<double>(largest)) + ") needs about " +
				human_bytes(static_cast<double>(need)) + " of memory, only " + human_bytes(static_cast<double>(avail)) +
				" available (lower --max-size)");
		}
	}

	Image img;
	std::string image_path, content_note;
	if (!o.image.empty()) {
		std::string error;
		if (!load_image(o.image, &img, &error)) die(2, error);
		image_path = o.image;
	} else if (!o.pattern) {
		image_path = find_system_photo();
		if (!image_path.empty()) {
			std::string error;
			if (!load_image(image_path, &img, &error)) {
				fprintf(stderr, "pixelport-sweep: note: %s; using the synthetic pattern\n", error.c_str());
				image_path.clear();
			}
		}
	}
	if (!image_path.empty()) {
		content_note = "image " + image_path + " (" + std::to_string(img.width) + "x" + std::to_string(img.height) + ")";
		if (o.image.empty()) content_note += ", a photo from a Debian wallpaper package";
	} else {
		content_note = o.pattern ? "synthetic pattern (--pattern)"
		                         : "synthetic pattern (no --image and no Debian wallpaper photo installed; "
		                           "apt-get install lomiri-wallpapers-20.04 for one)";
	}

	fs::path out = o.output;
	if (out.empty()) {
		char stamp[64];
		time_t now = time(nullptr);
		strftime(stamp, sizeof(stamp), "pixelport-sweep-%Y%m%d-%H%M%S", localtime(&now));
		out = stamp;
	}
	{
		std::error_code ec;
		fs::create_directories(out, ec);
		std::ofstream probe(out / ".write-test");
		if (ec || !probe) die(2, "cannot write to output folder " + out.string() + (ec ? ": " + ec.message() : ""));
		probe.close();
		fs::remove(out / ".write-test", ec);
	}

	if (o.instances > 0) return run_pressure(o, image_path, content_note, out);

	// ---- the compositor ----
	Connection conn;
	std::string error;
	if (!conn.connect(&error)) die(1, error);
	auto timing_owner = std::make_unique<TimingClient>(&conn);
	TimingClient &timing = *timing_owner;
	const bool have_timing = timing.available();
	int cpid = o.compositor_pid ? o.compositor_pid : peer_pid(conn);
	uint64_t hwm_before, rss_before;
	proc_rss(cpid, &hwm_before, &rss_before);
	std::vector<std::string> notes;
	if (!o.peer_child) {
		fprintf(stderr, "pixelport-sweep: compositor %s (pid %d)%s%s; content: %s\n", cpid ? proc_comm(cpid).c_str() : "?",
			cpid, conn.stream_manager ? ", pixelport stream" : ", no pixelport stream (no plugin?)",
			timing.available() ? ", pixelport timing" : ", no timing protocol: compositor phases '-'", content_note.c_str());
	}
	if (!timing.available()) notes.push_back("compositor phases unavailable (no pp_timing_manager_v1): cost = client submit time");

	std::vector<Point> points;
	Progress progress;
	progress.total = static_cast<int>(formats.size() * sizes.size() * transports.size());
	bool alive = true;
	for (size_t fi = 0; fi < formats.size() && alive; fi++) {
		uint32_t f = formats[fi];
		for (const SizeSpec &s : sizes) {
			if (!alive) break;
			int w = s.width, h = s.height;
			if (w == 0) shape_for(f, s.bytes, &w, &h);
			Content c;
			c.drm = f;
			c.width = w;
			c.height = h;
			make_frame(image_path.empty() ? nullptr : &img, f, w, h, o.seed, &c.bytes, &c.stride, &c.pattern);
			for (size_t ti = 0; ti < transports.size(); ti++) {
				Point p;
				p.format = format_names[fi];
				p.transport = transport_names[ti];
				p.width = w;
				p.height = h;
				p.bytes = c.bytes.size();
				p.content = c.pattern ? "pattern" : "image";
				Transport t = transports[ti];
				bool stream = t == Transport::StreamSocket || t == Transport::StreamPipe;
				if (stream && conn.stream_manager == nullptr) {
					p.note = "no pixelport stream in this compositor (no plugin?)";
				} else if (stream && std::find(conn.stream_formats.begin(), conn.stream_formats.end(), f) == conn.stream_formats.end()) {
					p.note = "the stream does not take " + p.format;
				} else if (stream && conn.stream_max_buffer_bytes && p.bytes > conn.stream_max_buffer_bytes) {
					p.note = "over the stream's buffer limit (" + human_bytes(conn.stream_max_buffer_bytes) + ")";
				} else if (!stream && !conn.has_shm_format(drm_to_shm(f))) {
					p.note = "wl_shm does not advertise " + p.format;
				} else {
					alive = run_point(conn, timing, o, c, t, &p);
				}
				std::string label = p.format + " " + p.transport + " " + human_bytes(static_cast<double>(p.bytes));
				timing::Percentiles cs = p.stats(kCost);
				progress.step(label, p.measured() ? "median cost " + timing::format_duration_ns(static_cast<double>(cs.p50)) + " (" +
						std::to_string(cs.count) + " frames)" + (p.note.empty() ? "" : "; " + p.note)
				                                  : "skipped: " + p.note);
				points.push_back(std::move(p));
				if (!alive) break;
			}
		}
	}
	uint64_t hwm_after, rss_after;
	proc_rss(cpid, &hwm_after, &rss_after);

	// ---- the verdict: repeat both sides near each candidate crossover, alternating ----
	std::vector<Comparison> comparisons;
	int confirm_runs = 0;
	if (!o.peer_child) {
		comparisons = plan_comparisons(points);
		Options co = o;
		co.warmup = 1;
		co.min_frames = std::min(o.min_frames, 3);
		co.frames = std::max(co.min_frames, std::min(o.frames, 15));
		co.point_seconds = o.confirm_seconds;
		// A pass confirms what the calls so far suggest; what it finds may move the crossover
		// to sizes not yet repeated, which the next pass takes (at most three).
		for (int pass = 0; pass < 3 && alive && o.confirm_rounds > 0; pass++) {
			// What to measure: each side at each size to confirm, once per round.
			struct Need {
				Side side;
				int width, height;
				bool operator<(const Need &n) const {
					return std::tie(side.format, width, height, side.transport) <
						std::tie(n.side.format, n.width, n.height, n.side.transport);
				}
			};
			std::map<Need, int> need_index;
			std::vector<std::pair<Comparison *, size_t>> targets;
			for (Comparison &c : comparisons) {
				for (size_t i : confirm_indices(c)) {
					targets.push_back({&c, i});
					need_index[{c.a, c.sizes[i].width, c.sizes[i].height}] = 0;
					need_index[{c.b, c.sizes[i].width, c.sizes[i].height}] = 0;
				}
			}
			if (targets.empty()) break;
			std::vector<Need> needs;
			for (auto &[n, idx] : need_index) {
				idx = static_cast<int>(needs.size());
				needs.push_back(n);
			}
			if (pass == 0 && isatty(STDERR_FILENO) == 0) {
				fprintf(stderr, "pixelport-sweep: confirming %zu candidate crossover sizes: %d rounds of %zu points\n",
					targets.size(), o.confirm_rounds, needs.size());
			}
			Progress cp;
			cp.total = o.confirm_rounds * static_cast<int>(needs.size());
			for (int round = 0; round < o.confirm_rounds && alive; round++) {
				// Alternate the order every round: A then B, then B then A.
				std::vector<size_t> order(needs.size());
				for (size_t i = 0; i < order.size(); i++) order[i] = round % 2 ? order.size() - 1 - i : i;
				std::vector<double> cost(needs.size(), 0);
				Content c;
				for (size_t k : order) {
					const Need &n = needs[k];
					uint32_t code = 0;
					parse_format(n.side.format, &code);
					uint32_t f = shm_to_drm(code);
					if (c.drm != f || c.width != n.width || c.height != n.height) {
						c = Content();
						c.drm = f;
						c.width = n.width;
						c.height = n.height;
						make_frame(image_path.empty() ? nullptr : &img, f, n.width, n.height, o.seed, &c.bytes, &c.stride,
							&c.pattern);
					}
					Transport t;
					parse_transport(n.side.transport, &t);
					Point p;
					p.format = n.side.format;
					p.transport = n.side.transport;
					p.width = n.width;
					p.height = n.height;
					p.bytes = c.bytes.size();
					// Titled apart: scripts/demo compares the sweep's own points only.
					alive = run_point(conn, timing, co, c, t, &p, false, " confirm");
					if (p.stats(kCost).count) cost[k] = static_cast<double>(p.stats(kCost).p50);
					cp.step("confirming round " + std::to_string(round + 1) + ": " + p.format + " " + p.transport + " " +
							human_bytes(static_cast<double>(p.bytes)),
						p.measured() ? "median cost " + timing::format_duration_ns(cost[k]) : "failed: " + p.note);
					if (!alive) break;
				}
				for (auto &[cmp, i] : targets) {
					double ca = cost[static_cast<size_t>(need_index[{cmp->a, cmp->sizes[i].width, cmp->sizes[i].height}])];
					double cb = cost[static_cast<size_t>(need_index[{cmp->b, cmp->sizes[i].width, cmp->sizes[i].height}])];
					if (ca > 0 && cb > 0) cmp->sizes[i].ratios.push_back(ca / cb);
				}
				confirm_runs++;
			}
		}
		for (Comparison &c : comparisons) conclude(&c);
	}
	timing_owner.reset(); // its destroy requests need the connection
	conn.disconnect();
	if (!alive) notes.push_back("the sweep stopped early: the connection to the compositor was lost");

	std::vector<std::string> series = transport_names;
	if (!o.peer.empty() && !o.peer_child) run_peer(o, size_args, [&] {
		std::vector<std::string> shm;
		for (const auto &n : transport_names) {
			if (n == "shm" || n == "shm-new") shm.push_back(n);
		}
		return shm;
	}(), out, &points, &series, &notes);

	std::vector<Crossover> crossovers = find_crossovers(points, transport_names);
	size_t measured = static_cast<size_t>(std::count_if(points.begin(), points.end(), [](const Point &p) { return p.measured(); }));

	nlohmann::json j = to_json(points, crossovers);
	j["meta"] = {{"tool", "pixelport-sweep"}, {"content", content_note}, {"compositor_pid", cpid},
		{"compositor", cpid ? proc_comm(cpid) : ""}, {"compositor_timing", have_timing},
		{"compositor_memory", {{"vmhwm_before", hwm_before}, {"vmhwm_after", hwm_after}, {"rss_before", rss_before},
			{"rss_after", rss_after}}},
		{"transports", series}, {"formats", format_names}, {"notes", notes},
		{"definitions", {{"cost", "put() start until the last of: the client's send end, the compositor's "
			"data_complete, convert_end and upload_end (pixelport-timing-v1); the client's submit time when the "
			"compositor has no timing protocol"},
			{"throughput_mbs", "bytes / median cost, 10^6 bytes per second"}}}};
	std::string verdict;
	if (!o.peer_child) {
		std::ostringstream h;
		size_t invalid = static_cast<size_t>(std::count_if(points.begin(), points.end(), [](const Point &p) { return !p.valid(); }));
		h << "verdict (this machine; " << format_names.size() << " format(s), " << sizes.size() << " sizes";
		if (!sizes.empty()) {
			h << " from " << (sizes.front().label) << " to " << sizes.back().label;
		}
		h << "; " << (have_timing ? "cost = hand-over until the compositor holds the frame"
		                          : "cost = client submit time (no timing protocol)")
		  << ")\n";
		h << "   how sure: near each crossover both sides were measured in " << o.confirm_rounds
		  << " more alternating rounds; a side wins a size only when every run agrees by more than "
		  << static_cast<int>(kTieFloor * 100) << "% and by more than half the run-to-run spread";
		if (invalid) h << "\n   " << invalid << " point(s) showed wrong pixels and are left out (see the table)";
		verdict = verdict_text(comparisons, h.str());
		j["verdict"] = {{"text", verdict}, {"comparisons", verdict_json(comparisons)}, {"confirm_rounds", o.confirm_rounds},
			{"confirm_seconds", o.confirm_seconds}, {"rounds_run", confirm_runs}, {"tie_floor", kTieFloor}};
	}
	std::string table = format_table(points);
	std::ostringstream cross;
	for (const Crossover &c : crossovers) cross << "  " << c.text << "\n";
	{
		std::ofstream(out / "sweep.json") << j.dump(1) << "\n";
		std::ofstream(out / "sweep.csv") << format_csv(points);
		std::ofstream(out / "frames.csv") << format_frames_csv(points);
		std::ofstream(out / "table.txt") << table << "\ncrossovers (median cost):\n" << cross.str();
		std::ofstream(out / "crossovers.txt") << cross.str();
		if (!verdict.empty()) {
			std::ofstream(out / "verdict.txt") << verdict;
			std::ofstream(out / "verdict.json") << j["verdict"].dump(1) << "\n";
		}
	}
	if (!o.no_plot && measured > 0) {
		try {
			std::vector<PlotMark> marks;
			for (const Comparison &c : comparisons) {
				if (c.question == 1 && c.crossover) marks.push_back({c.format, c.a.transport + "/" + c.b.transport, c.at_bytes});
			}
			sweep::plot_png(points, (out / "sweep.png").string(), marks);
		} catch (const std::exception &e) {
			notes.push_back(std::string("no plot: ") + e.what());
		}
	}
	if (!o.peer_child) {
		std::cout << "\n" << table << "\ncrossovers (median cost; the compositor phases are pixelport-timing-v1's):\n"
		          << (crossovers.empty() ? "  none: fewer than two transports measured\n" : cross.str());
		for (const std::string &n : notes) std::cout << "note: " << n << "\n";
		std::cout << "compositor memory (pid " << cpid << "): peak RSS " << human_bytes(static_cast<double>(hwm_before)) << " before, "
		          << human_bytes(static_cast<double>(hwm_after)) << " after\n";
		std::cout << "files: " << out.string() << "/{sweep.csv,sweep.json,frames.csv,table.txt,verdict.txt,verdict.json"
		          << (fs::exists(out / "sweep.png") ? ",sweep.png" : "") << "}\n";
		std::cout << "\n" << verdict << std::flush;
	}
	if (measured == 0) {
		fprintf(stderr, "pixelport-sweep: error: nothing could be measured%s\n",
			points.empty() || points.front().note.empty() ? "" : (" (" + points.front().note + ")").c_str());
		return 1;
	}
	return alive ? 0 : 1;
}
