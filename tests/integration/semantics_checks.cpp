// pixelport-semantics-client: screenshots compared with what each block must show.
#include <drm_fourcc.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "reference.hpp"
#include "wayland_client.hpp"

#include "semantics_client.hpp"

namespace pixelport::semantics {

bool screenshot(int *w, int *h, std::vector<uint8_t> *rgb) {
	std::string path = std::string(getenv("XDG_RUNTIME_DIR")) + "/semantics-" + std::to_string(getpid()) + ".ppm";
	pid_t pid = fork();
	if (pid == 0) {
		execlp("grim", "grim", "-t", "ppm", path.c_str(), static_cast<char *>(nullptr));
		_exit(127);
	}
	// Keep answering the compositor while grim runs.
	int status = 0;
	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) break;
		conn.dispatch_timeout(10);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
	std::ifstream in(path, std::ios::binary);
	std::string magic;
	int maxval = 0;
	in >> magic >> *w >> *h >> maxval;
	in.get();
	rgb->resize(static_cast<size_t>(*w) * *h * 3);
	in.read(reinterpret_cast<char *>(rgb->data()), static_cast<std::streamsize>(rgb->size()));
	unlink(path.c_str());
	return in && magic == "P6";
}

// want[i]: the colour the centre of block i must show (0xRRGGBB, black for nothing).
void checkpoint(Run &run, const char *name, const std::vector<uint32_t> &want, int tolerance) {
	if (!settle()) {
		printf("checkpoint %s FAIL: connection lost: %s\n", name, conn.error_text().c_str());
		run.failures++;
		return;
	}
	int w = 0, h = 0;
	std::vector<uint8_t> rgb;
	if (!screenshot(&w, &h, &rgb)) {
		printf("checkpoint %s FAIL: no screenshot\n", name);
		run.failures++;
		return;
	}
	std::string bad;
	for (size_t i = 0; i < want.size(); i++) {
		int x = static_cast<int>(i) * kBlock + kBlock / 2, y = kBlock / 2;
		const uint8_t *p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
		uint32_t got = static_cast<uint32_t>(p[0]) << 16 | p[1] << 8 | p[2];
		for (int shift : {16, 8, 0}) {
			int d = static_cast<int>((got >> shift) & 0xff) - static_cast<int>((want[i] >> shift) & 0xff);
			if (d > tolerance || d < -tolerance) {
				char line[128];
				snprintf(line, sizeof(line), " block %zu shows %06x, want %06x;", i, got, want[i]);
				bad += line;
				break;
			}
		}
	}
	printf("checkpoint %s %s%s\n", name, bad.empty() ? "ok" : "FAIL:", bad.c_str());
	fflush(stdout);
	if (!bad.empty()) run.failures++;
}

void expect(Run &run, const char *name, bool ok, const std::string &what) {
	printf("checkpoint %s %s%s\n", name, ok ? "ok" : "FAIL: ", ok ? "" : what.c_str());
	fflush(stdout);
	if (!ok) run.failures++;
}

// Waits up to `ms` for the buffer's release.
bool wait_release(Buffer &b, int ms) {
	for (int i = 0; i < ms / 10 && !b.released; i++) conn.dispatch_timeout(10);
	return b.released;
}

// Converted wl_shm buffers are released once converted; buffers the renderer reads in
// place (native formats, stream storage) stay busy while a surface shows them.
void make(Run &run, Buffer &b, uint32_t rgb) {
	if (!b.create(run.transport == "shm", run.format, kBlock, kBlock, rgb)) {
		fprintf(stderr, "cannot make a %s %s buffer\n", run.format_arg, run.transport.c_str());
		exit(1);
	}
}

} // namespace pixelport::semantics
