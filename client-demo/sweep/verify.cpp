#include "verify.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <drm_fourcc.h>
#include <libyuv.h>

#include "pattern.hpp"

extern char **environ;

namespace pixelport::sweep {

bool reference_argb(uint32_t f, int fw, int fh, size_t stride, const uint8_t *d, size_t size, int w, int h,
	std::vector<uint32_t> *out) {
	ShmLayout layout;
	if (!shm_layout(f, fw, fh, stride, &layout) || size < layout.size || w > fw || h > fh || w <= 0 || h <= 0)
		return false;
	out->assign(static_cast<size_t>(w) * h, 0);
	uint8_t *o = reinterpret_cast<uint8_t *>(out->data());
	const int os = w * 4, s = static_cast<int>(stride);
	const uint8_t *p1 = d + layout.offset[1], *p2 = d + layout.offset[2];
	const int s1 = static_cast<int>(layout.stride[1]), s2 = static_cast<int>(layout.stride[2]);
	int rc = 0;
	switch (f) {
	case DRM_FORMAT_ARGB8888:
	case DRM_FORMAT_XRGB8888: rc = libyuv::ARGBCopy(d, s, o, os, w, h); break;
	case DRM_FORMAT_RGB888: rc = libyuv::RGB24ToARGB(d, s, o, os, w, h); break;
	case DRM_FORMAT_BGR888: rc = libyuv::RAWToARGB(d, s, o, os, w, h); break;
	case DRM_FORMAT_RGB565: rc = libyuv::RGB565ToARGB(d, s, o, os, w, h); break;
	case DRM_FORMAT_NV12: rc = libyuv::NV12ToARGB(d, s, p1, s1, o, os, w, h); break;
	case DRM_FORMAT_NV21: rc = libyuv::NV21ToARGB(d, s, p1, s1, o, os, w, h); break;
	case DRM_FORMAT_YUV420: rc = libyuv::I420ToARGB(d, s, p1, s1, p2, s2, o, os, w, h); break;
	case DRM_FORMAT_YVU420: rc = libyuv::I420ToARGB(d, s, p2, s2, p1, s1, o, os, w, h); break;
	case DRM_FORMAT_YUYV: rc = libyuv::YUY2ToARGB(d, s, o, os, w, h); break;
	case DRM_FORMAT_UYVY: rc = libyuv::UYVYToARGB(d, s, o, os, w, h); break;
	default: return false;
	}
	return rc == 0;
}

PixelCheck check_pixels(const std::vector<uint32_t> &expected, int w, int h, const Shot &shot, int tolerance,
	double max_wrong_fraction) {
	PixelCheck r;
	const int vw = std::min(w, shot.width), vh = std::min(h, shot.height);
	if (vw <= 0 || vh <= 0 || expected.size() < static_cast<size_t>(w) * h) {
		r.status = "wrong";
		r.note = "nothing visible to check";
		return r;
	}
	const int nx = std::min(vw, 16), ny = std::min(vh, 16);
	int worst = -1;
	std::string worst_text;
	for (int j = 0; j < ny; j++) {
		for (int i = 0; i < nx; i++) {
			// Sample centres spread over the visible area.
			const int x = static_cast<int>((static_cast<int64_t>(2 * i + 1) * vw) / (2 * nx));
			const int y = static_cast<int>((static_cast<int64_t>(2 * j + 1) * vh) / (2 * ny));
			const uint32_t e = expected[static_cast<size_t>(y) * w + x];
			const uint8_t *g = &shot.rgb[(static_cast<size_t>(y) * shot.width + x) * 3];
			const int er = (e >> 16) & 0xff, eg = (e >> 8) & 0xff, eb = e & 0xff;
			const int d = std::max({std::abs(er - g[0]), std::abs(eg - g[1]), std::abs(eb - g[2])});
			r.samples++;
			if (d > tolerance) r.wrong++;
			if (d > worst) {
				worst = d;
				char buf[160];
				snprintf(buf, sizeof(buf), "at (%d,%d) sent #%02x%02x%02x, shown #%02x%02x%02x", x, y,
					er, eg, eb, g[0], g[1], g[2]);
				worst_text = buf;
			}
		}
	}
	const bool bad = r.wrong > static_cast<int>(max_wrong_fraction * r.samples);
	r.status = bad ? "wrong" : "ok";
	if (bad) {
		r.note = std::to_string(r.wrong) + " of " + std::to_string(r.samples) +
			" sampled pixels differ by more than " + std::to_string(tolerance) + " (worst " + worst_text +
			")";
	}
	return r;
}

bool capture_screen(const std::string &display, int timeout_ms, Shot *out, std::string *error) {
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		*error = "pipe: " + std::string(strerror(errno));
		return false;
	}
	std::vector<std::string> env;
	for (char **e = environ; *e; e++) {
		std::string kv = *e;
		if (kv.rfind("LD_LIBRARY_PATH=", 0) == 0 || kv.rfind("LD_PRELOAD=", 0) == 0) continue;
		if (!display.empty() && kv.rfind("WAYLAND_DISPLAY=", 0) == 0) continue;
		env.push_back(kv);
	}
	if (!display.empty()) env.push_back("WAYLAND_DISPLAY=" + display);
	std::vector<char *> envp;
	for (auto &s : env) envp.push_back(s.data());
	envp.push_back(nullptr);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	char a0[] = "grim", a1[] = "-t", a2[] = "ppm", a3[] = "-";
	char *argv[] = {a0, a1, a2, a3, nullptr};
	pid_t pid = -1;
	int rc = posix_spawnp(&pid, "grim", &fa, nullptr, argv, envp.data());
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		*error = "grim is not installed (apt-get install grim)";
		return false;
	}
	std::string data;
	char buf[65536];
	bool timed_out = false;
	for (;;) {
		pollfd p = {fds[0], POLLIN, 0};
		int n = poll(&p, 1, timeout_ms);
		if (n <= 0) {
			timed_out = true;
			break;
		}
		ssize_t got = read(fds[0], buf, sizeof(buf));
		if (got <= 0) break;
		data.append(buf, static_cast<size_t>(got));
	}
	close(fds[0]);
	if (timed_out) kill(pid, SIGKILL);
	int status = 0;
	waitpid(pid, &status, 0);
	if (timed_out) {
		*error = "grim did not finish within " + std::to_string(timeout_ms) + " ms";
		return false;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*error = "grim failed (the compositor has no wlr-screencopy?)";
		return false;
	}
	// "P6 W H 255" then W*H*3 bytes.
	int w = 0, h = 0, max = 0, consumed = 0;
	if (sscanf(data.c_str(), "P6 %d %d %d%n", &w, &h, &max, &consumed) != 3 || max != 255 || w <= 0 || h <= 0) {
		*error = "grim wrote no PPM image";
		return false;
	}
	size_t off = static_cast<size_t>(consumed) + 1, need = static_cast<size_t>(w) * h * 3;
	if (data.size() < off + need) {
		*error = "grim's image is truncated";
		return false;
	}
	out->width = w;
	out->height = h;
	out->rgb.assign(data.begin() + static_cast<std::ptrdiff_t>(off),
		data.begin() + static_cast<std::ptrdiff_t>(off + need));
	return true;
}

} // namespace pixelport::sweep
