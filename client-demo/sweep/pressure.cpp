#include "pressure.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "image.hpp"
#include "measure.hpp"
#include "model.hpp"
#include "pixelport/core/format.hpp"
#include "plan.hpp"
#include "procfs.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

using namespace pixelport::client;
namespace fs = std::filesystem;

namespace pixelport::sweep {

namespace {

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
int pressure_child(
	const Options &o, const std::string &image_path, uint32_t drm, int w, int h, TransportChoice t, int report_fd) {
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

} // namespace

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
		fprintf(stderr, "pixelport-sweep: note: pressure size rounded to %dx%d for %s's chroma grid\n", w, h,
			formats[0].c_str());
	}
	TransportChoice t;
	if (!parse_transport(o.pressure_transport, &t) || t == TransportChoice::Auto) {
		die(2, "unknown --pressure-transport '" + o.pressure_transport + "' (shm, shm-new, socket or pipe)");
	}
	uint64_t bytes = frame_bytes(drm, w, h);
	if (bytes == 0 || bytes > INT32_MAX)
		die(2,
			"pressure frame " + std::to_string(w) + "x" + std::to_string(h) +
				" does not fit in a wl_shm pool (2 GiB)");
	uint64_t need = bytes * 4 * static_cast<uint64_t>(o.instances);
	uint64_t avail = mem_available();
	if (avail && need > avail) {
		die(2,
			"pressure needs about " + human_bytes(static_cast<double>(need)) + " of memory, only " +
				human_bytes(static_cast<double>(avail)) +
				" available (fewer --instances or a smaller --pressure-size)");
	}
	// The compositor, to watch its memory.
	Connection probe;
	std::string error;
	if (!probe.connect(&error)) die(1, error);
	int cpid = o.compositor_pid ? o.compositor_pid : peer_pid(probe);
	bool stream_ok = probe.stream_manager != nullptr;
	probe.disconnect();
	if ((t == TransportChoice::StreamSocket || t == TransportChoice::StreamPipe) && !stream_ok) {
		die(1,
			"the compositor has no pixelport stream (no plugin?): cannot run --pressure-transport " +
				o.pressure_transport);
	}
	uint64_t hwm_before, rss_before;
	proc_rss(cpid, &hwm_before, &rss_before);
	fprintf(stderr, "pixelport-sweep: pressure: %d instances, each %dx%d %s (%s) via %s, %d frames; content: %s\n",
		o.instances, w, h, formats[0].c_str(), human_bytes(static_cast<double>(bytes)).c_str(),
		o.pressure_transport.c_str(), o.pressure_frames, image_note.c_str());

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
				r.error = "killed after --pressure-timeout " + std::to_string(o.pressure_timeout_s) +
					" s";
			}
			if (got != r.pid) continue;
			r.real_s = static_cast<double>(now_ns() - start) / 1e9;
			r.user_s = static_cast<double>(ru.ru_utime.tv_sec) +
				static_cast<double>(ru.ru_utime.tv_usec) / 1e6;
			r.sys_s = static_cast<double>(ru.ru_stime.tv_sec) +
				static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
			r.minflt = ru.ru_minflt;
			r.majflt = ru.ru_majflt;
			r.maxrss_kb = ru.ru_maxrss;
			r.finished = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
			if (!timed_out && WIFSIGNALED(status))
				r.error = std::string("killed by signal ") + strsignal(WTERMSIG(status));
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
		snprintf(line, sizeof(line), "%8d  %8s  %6d %8.2f %8.2f %8.2f %8ld %8ld %9s  %s\n", r.index,
			r.finished ? "yes" : "no", r.frames, r.real_s, r.user_s, r.sys_s, r.minflt, r.majflt,
			human_bytes(static_cast<double>(r.maxrss_kb) * 1024).c_str(), r.error.c_str());
		table << line;
		finished += r.finished;
	}
	table << "compositor (pid " << cpid << (cpid ? ", " + proc_comm(cpid) : std::string())
	      << "): peak RSS (VmHWM) before " << human_bytes(static_cast<double>(hwm_before)) << ", after "
	      << human_bytes(static_cast<double>(hwm_after)) << "; RSS before "
	      << human_bytes(static_cast<double>(rss_before)) << ", highest during "
	      << human_bytes(static_cast<double>(rss_peak)) << ", after " << human_bytes(static_cast<double>(rss_after))
	      << "\ncompositor memory per surface: " << human_bytes(per_surface) << " (frame "
	      << human_bytes(static_cast<double>(bytes)) << ")\n";
	std::cout << table.str() << std::flush;

	nlohmann::json j = {{"mode", "pressure"}, {"instances", o.instances}, {"width", w}, {"height", h},
		{"format", formats[0]}, {"transport", o.pressure_transport}, {"frames_each", o.pressure_frames},
		{"bytes_per_frame", bytes}, {"content", image_note}, {"compositor_pid", cpid},
		{"compositor",
			{{"vmhwm_before", hwm_before}, {"vmhwm_after", hwm_after}, {"rss_before", rss_before},
				{"rss_peak", rss_peak.load()}, {"rss_after", rss_after},
				{"per_surface_bytes", per_surface}}}};
	nlohmann::json ji = nlohmann::json::array();
	std::ostringstream csv;
	csv << "instance,finished,frames,real_s,user_s,sys_s,minflt,majflt,maxrss_bytes,error\n";
	for (const InstanceResult &r : results) {
		ji.push_back(
			{{"instance", r.index}, {"finished", r.finished}, {"frames", r.frames}, {"real_s", r.real_s},
				{"user_s", r.user_s}, {"sys_s", r.sys_s}, {"minflt", r.minflt}, {"majflt", r.majflt},
				{"maxrss_bytes", static_cast<uint64_t>(r.maxrss_kb) * 1024}, {"error", r.error}});
		csv << r.index << "," << (r.finished ? 1 : 0) << "," << r.frames << "," << r.real_s << "," << r.user_s
		    << "," << r.sys_s << "," << r.minflt << "," << r.majflt << ","
		    << static_cast<uint64_t>(r.maxrss_kb) * 1024 << ",\"" << r.error << "\"\n";
	}
	j["instances_result"] = ji;
	std::ofstream(out / "pressure.json") << j.dump(2) << "\n";
	std::ofstream(out / "pressure.csv") << csv.str();
	std::ofstream(out / "pressure.txt") << table.str();
	printf("files: %s/pressure.{csv,json,txt}\n", out.c_str());
	return finished > 0 ? 0 : 1;
}

} // namespace pixelport::sweep
