#include "harness.hpp"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char **environ;

namespace pixelport::test {

static uint64_t now_ms() {
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

std::string build_path(const char *env_name) {
	const char *value = getenv(env_name);
	if (value == nullptr || *value == '\0') {
		fprintf(stderr, "harness: %s is not set (run through `meson test`)\n", env_name);
		return "";
	}
	return value;
}

Process::~Process() {
	if (pid_ > 0) {
		terminate(1000);
	}
	if (out_fd_ >= 0) close(out_fd_);
	if (err_fd_ >= 0) close(err_fd_);
}

// Which machine an ELF file is for: its class, byte order and e_machine ("" if it is none).
static std::string elf_machine(const char *path) {
	unsigned char h[EI_NIDENT + 4]; // e_ident, e_type, e_machine: the same offsets in both classes
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return "";
	bool ok = read(fd, h, sizeof(h)) == static_cast<ssize_t>(sizeof(h)) && memcmp(h, ELFMAG, SELFMAG) == 0;
	close(fd);
	if (!ok) return "";
	return {static_cast<char>(h[EI_CLASS]), static_cast<char>(h[EI_DATA]), static_cast<char>(h[EI_NIDENT + 2]),
		static_cast<char>(h[EI_NIDENT + 3])};
}

// A cross-built tree's tests run under meson's exe_wrapper (qemu-user), which meson test names in
// MESON_EXE_WRAPPER (its words joined by spaces): a program built for this test's own machine
// starts through it too, as without binfmt_misc the kernel cannot start it from the emulated
// test. The build machine's programs (grim, sh, wayland-info) start as they are.
static std::vector<std::string> wrapped(const std::vector<std::string> &argv) {
	static const char *wrapper = getenv("MESON_EXE_WRAPPER");
	if (wrapper == nullptr || *wrapper == '\0' || argv.empty() || argv[0].find('/') == std::string::npos) {
		return argv;
	}
	static const std::string own = elf_machine("/proc/self/exe");
	if (own.empty() || elf_machine(argv[0].c_str()) != own) return argv;
	std::vector<std::string> out;
	std::istringstream words(wrapper);
	for (std::string w; words >> w;) out.push_back(w);
	out.insert(out.end(), argv.begin(), argv.end());
	return out;
}

bool Process::start(const std::vector<std::string> &argv_in, const std::map<std::string, std::string> &env) {
	const std::vector<std::string> argv = wrapped(argv_in);
	int out_pipe[2], err_pipe[2];
	if (pipe2(out_pipe, O_CLOEXEC) < 0) return false;
	if (pipe2(err_pipe, O_CLOEXEC) < 0) {
		close(out_pipe[0]);
		close(out_pipe[1]);
		return false;
	}
	std::map<std::string, std::string> merged;
	for (char **e = environ; *e != nullptr; e++) {
		std::string kv = *e;
		size_t eq = kv.find('=');
		if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
	}
	for (const auto &[k, v] : env) {
		if (v == kUnset) {
			merged.erase(k);
		} else {
			merged[k] = v;
		}
	}
	std::vector<std::string> env_strings;
	for (const auto &[k, v] : merged) env_strings.push_back(k + "=" + v);
	std::vector<char *> envp, args;
	for (auto &s : env_strings) envp.push_back(s.data());
	envp.push_back(nullptr);
	std::vector<std::string> argv_copy = argv;
	for (auto &s : argv_copy) args.push_back(s.data());
	args.push_back(nullptr);

	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
	posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	// Own process group: terminate() then reaches grandchildren (sh -c ...) too.
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
	posix_spawnattr_setpgroup(&attr, 0);
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	int rc = posix_spawnp(&pid_, args[0], &actions, &attr, args.data(), envp.data());
	posix_spawn_file_actions_destroy(&actions);
	posix_spawnattr_destroy(&attr);
	close(out_pipe[1]);
	close(err_pipe[1]);
	if (rc != 0) {
		close(out_pipe[0]);
		close(err_pipe[0]);
		pid_ = -1;
		err_ = std::string("spawn ") + argv[0] + ": " + strerror(rc);
		return false;
	}
	out_fd_ = out_pipe[0];
	err_fd_ = err_pipe[0];
	fcntl(out_fd_, F_SETFL, O_NONBLOCK);
	fcntl(err_fd_, F_SETFL, O_NONBLOCK);
	return true;
}

// Reads what is available from stdout/stderr, waiting at most timeout_ms for the first byte.
void Process::drain(int timeout_ms) {
	pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
	if (poll(fds, 2, timeout_ms) <= 0) return;
	char buf[65536];
	for (auto &f : fds) {
		if (f.fd < 0 || !(f.revents & (POLLIN | POLLHUP))) continue;
		ssize_t n;
		while ((n = read(f.fd, buf, sizeof(buf))) > 0) {
			(f.fd == out_fd_ ? out_ : err_).append(buf, static_cast<size_t>(n));
		}
	}
}

bool Process::read_line(std::string *line, int timeout_ms) {
	uint64_t deadline = now_ms() + static_cast<uint64_t>(timeout_ms);
	for (;;) {
		size_t nl = out_.find('\n', out_read_);
		if (nl != std::string::npos) {
			*line = out_.substr(out_read_, nl - out_read_);
			out_read_ = nl + 1;
			return true;
		}
		uint64_t now = now_ms();
		if (now >= deadline || out_fd_ < 0) return false;
		size_t before = out_.size() + err_.size();
		drain(static_cast<int>(deadline - now));
		if (out_.size() + err_.size() == before && pid_ > 0) {
			int status;
			if (waitpid(pid_, &status, WNOHANG) == pid_) {
				status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
				pid_ = -1;
				drain(0);
				size_t nl2 = out_.find('\n', out_read_);
				if (nl2 == std::string::npos) return false;
			}
		}
	}
}

int Process::wait(int timeout_ms) {
	if (pid_ <= 0) return status_;
	uint64_t deadline = now_ms() + static_cast<uint64_t>(timeout_ms);
	for (;;) {
		int status;
		pid_t r = waitpid(pid_, &status, WNOHANG);
		if (r == pid_) {
			status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			pid_ = -1;
			drain(0);
			return status_;
		}
		uint64_t now = now_ms();
		if (now >= deadline) return -1;
		drain(static_cast<int>(std::min<uint64_t>(deadline - now, 20)));
	}
}

bool Process::wait_for_err(const std::string &text, int timeout_ms) {
	uint64_t deadline = now_ms() + static_cast<uint64_t>(timeout_ms);
	while (err_.find(text) == std::string::npos && now_ms() < deadline) {
		if (pid_ <= 0) break;
		drain(20);
	}
	return err_.find(text) != std::string::npos;
}

int Process::terminate(int grace_ms) {
	if (pid_ <= 0) return status_;
	kill(-pid_, SIGTERM);
	int status = wait(grace_ms);
	if (status < 0) {
		kill(-pid_, SIGKILL);
		status = wait(5000);
	}
	return status;
}

CompositorFixture::CompositorFixture() {
	// Private runtime dir: tests run in parallel and as any user.
	std::string tmpl = (std::filesystem::temp_directory_path() / "pixelport-test-XXXXXX").string();
	if (mkdtemp(tmpl.data()) != nullptr) {
		runtime_dir_ = tmpl;
		chmod(runtime_dir_.c_str(), 0700);
	}
	static std::atomic<int> counter{0};
	socket_ = "pixelport-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

CompositorFixture::~CompositorFixture() {
	compositor_.terminate(3000);
	if (!runtime_dir_.empty()) {
		std::error_code ec;
		std::filesystem::remove_all(runtime_dir_, ec);
	}
}

bool CompositorFixture::start(const std::vector<std::string> &args, const std::string &output) {
	std::vector<std::string> argv = {
		build_path("PIXELPORT_COMPOSITOR"), "--socket", socket_, "--output", output, "--log-level", "error"};
	argv.insert(argv.end(), args.begin(), args.end());
	// Rerender whole outputs: the screenshot then shows each surface's full texture, not
	// only what the last damage repainted, so tests see exactly what the plugin produced.
	std::map<std::string, std::string> env = {{"WLR_SCENE_DEBUG_DAMAGE", "rerender"}};
#if defined(__SANITIZE_ADDRESS__)
	// ASan's default quarantine keeps 256 MiB of freed memory resident (about 300 MiB of RSS
	// with redzones): 20,000 short-lived surfaces then looked like 300 MiB of growth. 64 MiB
	// still catches a use after any recent free, and the RSS bounds measure the compositor.
	const char *asan = getenv("ASAN_OPTIONS");
	env["ASAN_OPTIONS"] = std::string(asan != nullptr ? asan : "") + ":quarantine_size_mb=64";
#endif
	return start_command(argv, env, socket_);
}

// True once something listens on the socket: the file appears at bind(), before listen(),
// and a client connecting in between is refused.
static bool accepts_connections(const std::string &path) {
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sockaddr_un addr = {};
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
	bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0;
	if (fd >= 0) close(fd);
	return ok;
}

// A listening socket the compositor opened in the runtime dir: `name`, or any wayland-*.
static std::string find_socket(const std::string &dir, const std::string &name) {
	std::error_code ec;
	for (const auto &entry : std::filesystem::directory_iterator(dir, ec)) {
		std::string file = entry.path().filename().string();
		bool wanted = name.empty() ? file.rfind("wayland-", 0) == 0 : file == name;
		if (wanted && entry.is_socket(ec) && accepts_connections(entry.path().string())) return file;
	}
	return "";
}

bool CompositorFixture::start_command(const std::vector<std::string> &argv,
	const std::map<std::string, std::string> &env, const std::string &socket_name) {
	std::map<std::string, std::string> full_env = env;
	full_env["XDG_RUNTIME_DIR"] = runtime_dir_;
	if (!compositor_.start(argv, full_env)) return false;
	uint64_t deadline = now_ms() + 10000;
	while (now_ms() < deadline) {
		std::string found = find_socket(runtime_dir_, socket_name);
		if (!found.empty()) {
			socket_ = found;
			return true;
		}
		if (compositor_.wait(20) >= 0) return false; // exited early
	}
	return false;
}

int CompositorFixture::stop() { return compositor_.terminate(5000); }

std::map<std::string, std::string> CompositorFixture::client_env() const {
	return {{"XDG_RUNTIME_DIR", runtime_dir_}, {"WAYLAND_DISPLAY", socket_}, {"LD_LIBRARY_PATH", Process::kUnset}};
}

int CompositorFixture::run_client(
	const std::vector<std::string> &argv, int timeout_ms, std::string *out, std::string *err) {
	Process client;
	if (!client.start(argv, client_env())) {
		if (err) *err = client.err();
		return -1;
	}
	int status = client.wait(timeout_ms);
	if (status < 0) client.terminate(1000);
	if (out) *out = client.out();
	if (err) *err = client.err();
	return status;
}

bool CompositorFixture::screenshot(Image *image) {
	std::string path = runtime_dir_ + "/screenshot.ppm";
	std::string err;
	if (run_client({"grim", "-t", "ppm", path}, 10000, nullptr, &err) != 0) {
		fprintf(stderr, "grim failed: %s\n", err.c_str());
		return false;
	}
	std::ifstream in(path, std::ios::binary);
	std::string magic;
	int maxval = 0;
	in >> magic >> image->width >> image->height >> maxval;
	in.get();
	if (!in || magic != "P6" || maxval != 255 || image->width <= 0 || image->height <= 0) return false;
	image->rgb.resize(static_cast<size_t>(image->width) * image->height * 3);
	in.read(reinterpret_cast<char *>(image->rgb.data()), static_cast<std::streamsize>(image->rgb.size()));
	return static_cast<size_t>(in.gcount()) == image->rgb.size();
}

int screen_mismatches(
	const Image &shot, const std::vector<uint32_t> &want, int w, int h, int tolerance, bool rest_black) {
	if (shot.width < w || shot.height < h || want.size() < static_cast<size_t>(w) * static_cast<size_t>(h)) {
		ADD_FAILURE() << "screenshot " << shot.width << "x" << shot.height << " smaller than the " << w << "x"
			      << h << " frame (or no reference)";
		return -1;
	}
	int bad = 0;
	for (int y = 0; y < (rest_black ? shot.height : h); y++) {
		for (int x = 0; x < (rest_black ? shot.width : w); x++) {
			bool inside = x < w && y < h;
			uint32_t exp = inside ? want[static_cast<size_t>(y) * w + x] : 0, got = shot.pixel(x, y);
			for (int c = 0; c < 24; c += 8) {
				int d = static_cast<int>((got >> c) & 0xff) - static_cast<int>((exp >> c) & 0xff);
				if (std::abs(d) > (inside ? tolerance : 0)) {
					if (bad++ < 3) {
						ADD_FAILURE() << "pixel (" << x << "," << y << "): got " << std::hex
							      << got << " want " << exp;
					}
					break;
				}
			}
		}
	}
	return bad;
}

void expect_compositor_serves_others(CompositorFixture &fx) {
	std::string out, err;
	EXPECT_EQ(fx.run_client({build_path("PIXELPORT_PAINT"), "--hold-ms", "0"}, 10000, &out, &err), 0) << err;
	EXPECT_EQ(out, "presented XRGB8888 128x96\n");
	EXPECT_TRUE(fx.compositor().running());
}

std::string protocol_error_line(int code, const char *interface) {
	return "error " + std::to_string(code) + " " + interface + "\n";
}

std::string error_case_name(const ErrorCase &c) {
	std::string name = c.mode;
	for (char &ch : name) ch = ch == '-' ? '_' : ch;
	return name;
}

void expect_protocol_error(const std::string &program, const ErrorCase &c) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	std::string out, err;
	ASSERT_EQ(fx.run_client({program, c.mode}, 20000, &out, &err), 0) << err;
	EXPECT_EQ(out, protocol_error_line(c.code, c.interface));
	expect_compositor_serves_others(fx);
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

void start_holding(
	CompositorFixture &fx, Process *client, const std::string &program, const char *mode, std::string *verdict) {
	ASSERT_TRUE(client->start({program, mode}, fx.client_env()));
	ASSERT_TRUE(client->read_line(verdict, 20000)) << client->err();
	std::string holding;
	ASSERT_TRUE(client->read_line(&holding, 5000)) << client->err();
	ASSERT_EQ(holding, "holding");
}

size_t count_fds(pid_t pid) {
	size_t n = 0;
	DIR *dir = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
	if (dir == nullptr) return 0;
	while (readdir(dir) != nullptr) n++;
	closedir(dir);
	return n;
}

size_t settle_at_most(size_t (*count)(pid_t), pid_t pid, size_t limit, int timeout_ms) {
	size_t n = 0;
	wait_until([&] { return (n = count(pid)) <= limit; }, std::chrono::milliseconds(timeout_ms));
	return n;
}

bool wait_main_thread_idle(pid_t pid) {
	return wait_until_steady([pid] { return main_thread_cpu_ns(pid); }, 3, std::chrono::milliseconds(10),
		std::chrono::seconds(5), 500'000);
}

size_t idle_fd_count(pid_t pid) {
	wait_main_thread_idle(pid);
	wait_until_steady([pid] { return count_fds(pid); }, 3, std::chrono::milliseconds(10), std::chrono::seconds(2));
	return count_fds(pid);
}

size_t count_maps(pid_t pid) {
	std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
	size_t n = 0;
	std::string line;
	while (std::getline(in, line)) n++;
	return n;
}

uint64_t main_thread_cpu_ns(pid_t pid) {
	std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/schedstat");
	uint64_t ns = 0;
	in >> ns;
	return ns;
}

size_t proc_status_number(pid_t pid, const char *field) {
	std::ifstream in("/proc/" + std::to_string(pid) + "/status");
	const size_t n = strlen(field);
	std::string line;
	while (std::getline(in, line)) {
		if (line.compare(0, n, field) == 0) return static_cast<size_t>(strtoull(line.c_str() + n, nullptr, 10));
	}
	return 0;
}

size_t rss_kib(pid_t pid) { return proc_status_number(pid, "VmRSS:"); }

struct PeakSampler::Thread {
	std::thread thread;
	std::atomic<bool> stop{false};
	std::atomic<size_t> fds{0}, rss{0};
};

void PeakSampler::start(pid_t pid) {
	stop();
	peak_fds_ = count_fds(pid);
	peak_rss_kib_ = rss_kib(pid);
	thread_ = new Thread();
	thread_->fds = peak_fds_;
	thread_->rss = peak_rss_kib_;
	thread_->thread = std::thread([t = thread_, pid] {
		while (!t->stop) {
			size_t f = count_fds(pid), r = rss_kib(pid);
			if (f > t->fds) t->fds = f;
			if (r > t->rss) t->rss = r;
			usleep(5000); // the sampling interval
		}
	});
}

void PeakSampler::stop() {
	if (thread_ == nullptr) return;
	thread_->stop = true;
	thread_->thread.join();
	peak_fds_ = thread_->fds;
	peak_rss_kib_ = thread_->rss;
	delete thread_;
	thread_ = nullptr;
}

bool parse_probe_line(const std::string &line, ProbeStats *stats) {
	unsigned long long rt = 0, worst = 0, frames = 0, gap = 0;
	int used = 0;
	if (sscanf(line.c_str(), "probe roundtrips=%llu worst_roundtrip_us=%llu frames=%llu worst_frame_gap_us=%llu%n",
		    &rt, &worst, &frames, &gap, &used) != 4) {
		return false;
	}
	*stats = ProbeStats{rt, worst, frames, gap, ""};
	std::string rest = line.substr(static_cast<size_t>(used));
	// The error comes last (its text has spaces); the percentiles, when there, before it.
	size_t error_at = rest.find(" error=");
	if (error_at != std::string::npos) {
		stats->error = rest.substr(error_at + 7);
		rest.resize(error_at);
	}
	unsigned long long p50 = 0, p99 = 0, run = 0, wait = 0, self_run = 0, self_wait = 0;
	int n = sscanf(rest.c_str(),
		" p50_roundtrip_us=%llu p99_roundtrip_us=%llu main_run_us=%llu main_wait_us=%llu self_run_us=%llu "
		"self_wait_us=%llu",
		&p50, &p99, &run, &wait, &self_run, &self_wait);
	if (n >= 2) {
		stats->p50_roundtrip_us = p50;
		stats->p99_roundtrip_us = p99;
	}
	if (n == 6) {
		stats->sched = true;
		stats->main_run_us = run;
		stats->main_wait_us = wait;
		stats->self_run_us = self_run;
		stats->self_wait_us = self_wait;
	}
	return true;
}

bool ProbeClient::start(CompositorFixture &fx) {
	if (!process_.start({build_path("PIXELPORT_PROBE_CLIENT")}, fx.client_env())) return false;
	std::string line;
	steal_ = cpu_stolen_us();
	bool ready = process_.read_line(&line, 10000) && line == "probe ready";
	window_start_ms_ = now_ms();
	return ready;
}

bool ProbeClient::sample(ProbeStats *stats, int timeout_ms, int min_window_ms) {
	if (!process_.running()) return false;
	uint64_t min_end = window_start_ms_ + static_cast<uint64_t>(min_window_ms), start = now_ms();
	// The rest of the window measured: its length is the measurement, not a wait for a state.
	if (start < min_end) usleep(static_cast<useconds_t>((min_end - start) * 1000));
	kill(process_.pid(), SIGUSR1);
	std::string line;
	bool got = process_.read_line(&line, timeout_ms) && parse_probe_line(line, stats);
	window_start_ms_ = now_ms();
	if (!got) return false;
	std::vector<uint64_t> now = cpu_stolen_us();
	stats->steal_us = stolen_between(steal_, now);
	steal_ = std::move(now);
	return true;
}

bool ProbeClient::stop(ProbeStats *stats, int timeout_ms) {
	if (process_.running()) {
		kill(process_.pid(), SIGTERM);
		process_.wait(timeout_ms);
	}
	std::string line;
	while (process_.read_line(&line, 0)) {
		if (parse_probe_line(line, stats)) return true;
	}
	return false;
}

std::set<std::string> shm_formats_from_wayland_info(const std::string &text) {
	std::set<std::string> formats;
	std::istringstream in(text);
	std::string line;
	bool in_shm = false;
	while (std::getline(in, line)) {
		if (line.rfind("interface:", 0) == 0) {
			in_shm = line.find("'wl_shm'") != std::string::npos;
			continue;
		}
		size_t q = line.find("= '");
		if (in_shm && q != std::string::npos && line.size() >= q + 7) {
			formats.insert(line.substr(q + 3, 4));
		}
	}
	return formats;
}

void AttackArena::start(const std::vector<std::string> &args) {
	ASSERT_TRUE(fx.start(args));
	expect_compositor_serves_others(fx); // first-use allocations happen now, not in the attack
	ASSERT_TRUE(probe.start(fx));
	ProbeStats warmup;
	ASSERT_TRUE(probe.sample(&warmup));
	// The attack starts on a quiet machine: one 300 ms window (within 6 s) in which the probe,
	// with nothing attacking, is served in under half the bound. Right after a heavy test (a
	// sweep starting and stopping compositors) every process here stalled for 200-400 ms at
	// times, with no attack running; that stall is not the attack's doing.
	for (int waited = 0; waited < 6000; waited += 300) {
		ASSERT_TRUE(probe.sample(&warmup, 5000, 300)); // a 300 ms window measured
		if (warmup.worst_roundtrip_us < kLatencyFloorMs * 1000u / 2) break;
		fprintf(stderr, "attack arena: the probe waited %llu us with no attack; waiting for a quiet window\n",
			static_cast<unsigned long long>(warmup.worst_roundtrip_us));
	}
	quiet = warmup;
	pid = fx.compositor().pid();
	fds0 = count_fds(pid);
	rss0 = rss_kib(pid);
	peaks.start(pid);
}

void AttackArena::expect_probe_served(
	ProbeStats *stats, const LatencyBaseline &baseline, bool expect_frames, int min_window_ms) {
	ASSERT_TRUE(probe.sample(stats, 5000, min_window_ms));
	EXPECT_EQ(stats->error, "");
	EXPECT_GT(stats->roundtrips, 0u);
	// Time the hypervisor took from the machine in this window delayed every process alike
	// (steal is counted in 10 ms ticks, and is 0 on a machine that has none).
	const testing::TestInfo *test = testing::UnitTest::GetInstance()->current_test_info();
	expect_latency(std::string(test != nullptr ? test->name() : "probe") + " probe worst roundtrip",
		stats->worst_roundtrip_us, baseline, stats->steal_us);
	if (expect_frames) {
		EXPECT_GT(stats->frames, 0u);
	}
}

LatencyBaseline AttackArena::quiet_baseline(const std::string &why) const {
	return {quiet.worst_roundtrip_us, "this compositor's probe over 300 ms with no attack, just before it: " + why};
}

LatencyBaseline stock_probe_baseline(const std::string &what, const std::function<void(AttackArena &)> &attack,
	const std::vector<std::string> &args) {
	AttackArena stock;
	std::vector<std::string> all = {"--no-plugin"};
	all.insert(all.end(), args.begin(), args.end());
	stock.start(all);
	if (testing::Test::HasFatalFailure()) return {0, "stock wlroots did not start"};
	attack(stock);
	ProbeStats stats, after;
	EXPECT_TRUE(stock.probe.sample(&stats));
	EXPECT_EQ(stats.error, "");
	stock.probe.stop(&after);
	EXPECT_EQ(stock.fx.stop(), 0) << stock.fx.compositor().err();
	printf("stock %s worst_roundtrip_us=%llu\n", what.c_str(),
		static_cast<unsigned long long>(stats.worst_roundtrip_us));
	return {stats.worst_roundtrip_us, "stock wlroots (--no-plugin), " + what};
}

void AttackArena::expect_back_to_baseline(size_t extra_fds) {
	EXPECT_LE(settle_at_most(count_fds, pid, fds0 + extra_fds, kSettleMs), fds0 + extra_fds);
	EXPECT_LE(settle_at_most(rss_kib, pid, rss0 + kRssSlackKib, kSettleMs), rss0 + kRssSlackKib)
		<< "baseline " << rss0 << " KiB";
}

void AttackArena::print(const char *name, const ProbeStats &stats) {
	peaks.stop();
	printf("fairness %s worst_roundtrip_us=%llu frames=%llu worst_frame_gap_us=%llu peak_rss_kib=%zu "
	       "base_rss_kib=%zu peak_fds=%zu base_fds=%zu main_run_us=%llu main_wait_us=%llu self_run_us=%llu "
	       "self_wait_us=%llu steal_us=%llu\n",
		name, static_cast<unsigned long long>(stats.worst_roundtrip_us),
		static_cast<unsigned long long>(stats.frames),
		static_cast<unsigned long long>(stats.worst_frame_gap_us), peaks.peak_rss_kib(), rss0, peaks.peak_fds(),
		fds0, static_cast<unsigned long long>(stats.main_run_us),
		static_cast<unsigned long long>(stats.main_wait_us), static_cast<unsigned long long>(stats.self_run_us),
		static_cast<unsigned long long>(stats.self_wait_us), static_cast<unsigned long long>(stats.steal_us));
	fflush(stdout);
}

} // namespace pixelport::test
