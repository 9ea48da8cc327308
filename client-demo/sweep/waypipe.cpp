#include "waypipe.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "procfs.hpp"
#include "wayland_client.hpp"

extern char **environ;

using pixelport::client::now_ns;
namespace fs = std::filesystem;

namespace pixelport::sweep {

namespace {

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
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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

} // namespace

// Runs the shm transports of this sweep as a child through waypipe; appends its points.
void run_peer(const Options &o, const std::vector<std::string> &size_args,
	const std::vector<std::string> &shm_transports, const fs::path &out, std::vector<Point> *points,
	std::vector<std::string> *series, std::vector<std::string> *notes) {
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
		fprintf(stderr, "pixelport-sweep: peer: waypipe --compress %s (client and server on this machine)\n",
			compress.c_str());
		pid_t client = spawn(
			{"waypipe", "--no-gpu", "--oneshot", "--compress", compress, "--socket", sock, "client"}, log);
		if (client < 0) {
			notes->push_back("peer waypipe " + compress + " skipped: cannot start waypipe");
			continue;
		}
		// One deadline for the whole peer run: a loaded machine may be slow at any step.
		const uint64_t deadline = now_ns() + static_cast<uint64_t>(o.peer_timeout_s) * 1000000000ull;
		while (!fs::exists(sock, ec) && now_ns() < deadline) usleep(20000);
		std::vector<std::string> argv = {"waypipe", "--no-gpu", "--compress", compress, "--socket", sock,
			"server", "--", self_exe(), "--peer-child", "--transports", transports, "--formats", o.formats,
			"--sizes", sizes, "--warmup", std::to_string(o.warmup), "--frames", std::to_string(o.frames),
			"--min-frames", std::to_string(o.min_frames), "--point-seconds",
			std::to_string(o.point_seconds), "--timeout-ms", std::to_string(o.timeout_ms), "--output",
			dir.string(), "--no-plot", "--seed", std::to_string(o.seed), "--source", "waypipe-" + compress};
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
			fprintf(stderr, tty ? "\r\033[Kpeer waypipe-%s: %s" : "pixelport-sweep: peer waypipe-%s: %s\n",
				compress.c_str(), last.c_str());
			fflush(stderr);
		};
		const int left_ms =
			static_cast<int>(std::max<int64_t>(0, static_cast<int64_t>(deadline - now_ns()) / 1000000));
		int status = server > 0 ? wait_for(server, left_ms, tick) : -1;
		if (tty && !shown.empty()) fprintf(stderr, "\n");
		wait_for(client, 3000);
		std::string label = "@waypipe-" + compress;
		std::ifstream in(dir / "sweep.json");
		if (status != 0 || !in) {
			const std::string limit = std::to_string(o.peer_timeout_s) + " s";
			std::string why = "no results written";
			if (server < 0 && !fs::exists(sock, ec)) {
				why = "waypipe client made no socket in " + limit;
			} else if (server < 0) {
				why = "cannot start waypipe server";
			} else if (status == -1) {
				why = "still running after " + limit + ", killed";
			} else if (status != 0) {
				why = "waypipe server exited with status " + std::to_string(status);
			}
			notes->push_back("peer waypipe " + compress + " failed: " + why + "; see " + log);
			continue;
		}
		try {
			nlohmann::json j = nlohmann::json::parse(in);
			for (Point p : points_from_json(j)) {
				p.transport += label;
				if (std::find(series->begin(), series->end(), p.transport) == series->end())
					series->push_back(p.transport);
				points->push_back(std::move(p));
			}
		} catch (const std::exception &e) {
			notes->push_back("peer waypipe " + compress + ": unreadable results: " + e.what());
		}
	}
}

} // namespace pixelport::sweep
