#include "bench_util.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <CLI/CLI.hpp>
#include <drm_fourcc.h>

#include "cli.hpp"
#include "pattern.hpp"

namespace pixelport::bench {

// CPUs of the compositor side once pin_client_side() ran; empty: not pinned.
static cpu_set_t g_compositor_cpus, g_all_cpus;
static bool g_pinned = false;
static std::string g_pinning = "not pinned: client and compositors float over all CPUs (--pin to separate them)";

// The affinity this process started with, read before pin_client_side() narrows it.
static const cpu_set_t &start_cpus() {
	static const cpu_set_t set = [] {
		cpu_set_t s;
		CPU_ZERO(&s);
		if (sched_getaffinity(0, sizeof(s), &s) != 0) CPU_SET(0, &s);
		return s;
	}();
	return set;
}

std::vector<int> usable_cpus() {
	std::vector<int> out;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &start_cpus())) out.push_back(c);
	}
	return out;
}

void pin_client_side(bool enable) {
	start_cpus();
	cpu_set_t &all = g_all_cpus;
	if (!enable || sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2) return;
	int first = -1;
	CPU_ZERO(&g_compositor_cpus);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all)) continue;
		if (first < 0) {
			first = c;
		} else {
			CPU_SET(c, &g_compositor_cpus);
		}
	}
	cpu_set_t client;
	CPU_ZERO(&client);
	CPU_SET(first, &client);
	sched_setaffinity(0, sizeof(client), &client);
	g_pinned = true;
	g_pinning = "client on CPU " + std::to_string(first) + ", compositors on the other " +
		std::to_string(CPU_COUNT(&g_compositor_cpus)) + " (--pin)";
}

void pin_compositor_side() {
	if (g_pinned) sched_setaffinity(0, sizeof(g_compositor_cpus), &g_compositor_cpus);
}

bool pin_client_thread(bool pinned) {
	if (!g_pinned) return false;
	cpu_set_t set = g_all_cpus;
	if (pinned) {
		CPU_XOR(&set, &g_all_cpus, &g_compositor_cpus); // the one CPU left to the client
	}
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

bool Child::start(const std::vector<std::string> &argv, const std::vector<std::string> &env, const std::string &log,
	std::string *error) {
	// Everything the child needs is built here: after fork() it only calls async-signal-safe code.
	auto overridden = [&](const char *kv) {
		return std::any_of(env.begin(), env.end(),
			[&](const std::string &e) { return strncmp(kv, e.c_str(), e.find('=') + 1) == 0; });
	};
	std::vector<const char *> envp, args;
	for (char **e = environ; *e != nullptr; e++) {
		if (!overridden(*e)) envp.push_back(*e);
	}
	for (const std::string &e : env) {
		if (e.back() != '=') envp.push_back(e.c_str()); // "K=" only unsets
	}
	envp.push_back(nullptr);
	for (const std::string &a : argv) args.push_back(a.c_str());
	args.push_back(nullptr);
	int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (out < 0 || in < 0) {
		*error = "cannot open " + log + ": " + strerror(errno);
		if (out >= 0) close(out);
		if (in >= 0) close(in);
		return false;
	}
	pid_ = fork();
	if (pid_ == 0) {
		setpgid(0, 0); // own group: stop() also reaches what the child starts (waypipe's command)
		if (compositor_side) {
			pin_compositor_side();
		} else if (g_pinned) {
			sched_setaffinity(0, sizeof(g_all_cpus), &g_all_cpus);
		}
		dup2(in, 0);
		dup2(out, 1);
		dup2(out, 2);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, nullptr);
		signal(SIGPIPE, SIG_DFL);
		execvpe(args[0], const_cast<char *const *>(args.data()), const_cast<char *const *>(envp.data()));
		_exit(127);
	}
	close(out);
	close(in);
	if (pid_ < 0) {
		*error = std::string("fork: ") + strerror(errno);
		return false;
	}
	setpgid(pid_, pid_); // also from here: no race with stop() before the child ran
	return true;
}

bool Child::running() {
	if (pid_ <= 0) return false;
	int status;
	if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
	status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	pid_ = -1;
	return false;
}

int Child::stop(int grace_ms) {
	if (!running()) return status_;
	kill(-pid_, SIGTERM);
	uint64_t deadline = now_ns() + static_cast<uint64_t>(grace_ms) * 1000000u;
	while (running() && now_ns() < deadline) usleep(5000);
	if (running()) {
		kill(-pid_, SIGKILL);
		int status;
		waitpid(pid_, &status, 0);
		status_ = 128 + SIGKILL;
		pid_ = -1;
	}
	return status_;
}

RuntimeDir::RuntimeDir(const std::string &parent) {
	// mkdtemp() makes it mode 0700, as XDG_RUNTIME_DIR must be.
	std::filesystem::path in =
		parent.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(parent);
	std::string tmpl = (in / "pixelport-bench-XXXXXX").string();
	if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
}

RuntimeDir::~RuntimeDir() {
	std::error_code ignored;
	if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

std::string RuntimeDir::unique(const std::string &prefix) {
	return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(counter_++);
}

// The file appears at bind(), before listen(): only connect() proves it is ready.
static bool listening(const std::string &path) {
	sockaddr_un addr{.sun_family = AF_UNIX, .sun_path = {}};
	path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) return false;
	int rc = connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr));
	close(fd);
	return rc == 0;
}

bool wait_for_socket(const std::string &path, Child &child, int timeout_ms) {
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	while (now_ns() < deadline && child.running()) {
		if (listening(path)) return true;
		usleep(10000);
	}
	return false;
}

bool Compositor::start(
	const std::string &binary, RuntimeDir &dir, const std::vector<std::string> &args, std::string *error) {
	std::string name = dir.unique("pp-bench");
	socket_path = dir.path() + "/" + name;
	log_path = socket_path + ".log";
	std::vector<std::string> argv = {binary, "--socket", name, "--log-level", "error"};
	argv.insert(argv.end(), args.begin(), args.end());
	if (!process.start(argv, {"XDG_RUNTIME_DIR=" + dir.path(), "WAYLAND_DISPLAY="}, log_path, error)) return false;
	if (!wait_for_socket(socket_path, process, 10000)) {
		*error = binary + " did not open " + socket_path + " within 10 s (log: " + log_path + ")";
		return false;
	}
	return true;
}

void add_common_options(CLI::App &app, CommonOptions *options, bool frames) {
	app.add_option("--compositor", options->compositor, "pixelport-compositor to start")->capture_default_str();
	app.add_flag("--quick", options->quick, "fewer frames and sizes: a smoke run of a few seconds");
	app.add_option("--output", options->output, "headless output mode of the compositors")->capture_default_str();
	app.add_flag("--pin", options->pin, "client on the first CPU, compositors on the others (see bench/README.md)");
	if (frames) {
		app.add_option("--frames-scale", options->frames_scale, "multiply the number of frames per size")
			->capture_default_str()
			->transform(cli::Range(0.01, 100.0));
	}
}

int CommonOptions::frames(int normal, int quick_frames) const {
	return std::max(2, static_cast<int>((quick ? quick_frames : normal) * frames_scale));
}

bool connect_to(client::Connection *conn, const std::string &path, std::string *error) {
	setenv("WAYLAND_DISPLAY", path.c_str(), 1);
	return conn->connect(error);
}

uint64_t sync_done(client::Connection *conn, int timeout_ms) {
	uint64_t done = 0;
	wl_callback *cb = wl_display_sync(conn->display);
	static const wl_callback_listener listener = {
		.done = [](void *data, wl_callback *, uint32_t) { *static_cast<uint64_t *>(data) = now_ns(); },
	};
	wl_callback_add_listener(cb, &listener, &done);
	wl_display_flush(conn->display);
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000u;
	while (done == 0) {
		uint64_t now = now_ns();
		if (now >= deadline ||
			(!conn->dispatch_timeout(static_cast<int>((deadline - now) / 1000000u) + 1) &&
				wl_display_get_error(conn->display) != 0)) {
			break;
		}
	}
	wl_callback_destroy(cb);
	return done;
}

bool BenchSurface::open(client::Connection *c, client::TransportChoice transport, std::string *error, bool subscribe) {
	conn = c;
	if (!window.create(c, "bench", error)) return false;
	if (subscribe) {
		timing = std::make_unique<client::TimingClient>(c, SIZE_MAX);
		timed = timing->subscribe(window.surface);
	}
	writer = std::make_unique<client::SurfaceWriter>(c, window.surface, transport);
	return true;
}

uint64_t BenchSurface::put_and_sync(const client::Pixels &px, uint64_t start, std::string *error, uint64_t *consumed) {
	starts.push_back(start);
	last_ = px;
	if (!writer->put(px, nullptr, error)) return 0;
	client::TransportChoice t = writer->timing().transport;
	if (t == client::TransportChoice::StreamSocket || t == client::TransportChoice::StreamPipe) {
		if (!writer->wait_consumed(10000)) {
			*error = wl_display_get_error(conn->display) != 0 ? "connection failed: " + conn->error_text()
									  : "stream bytes not consumed within 10 s";
			return 0;
		}
		if (consumed != nullptr) *consumed = now_ns();
	}
	uint64_t done = sync_done(conn);
	if (done == 0) *error = "no wl_display_sync reply within 10 s: " + conn->error_text();
	return done;
}

std::vector<const client::CommitTiming *> BenchSurface::matched() {
	if (!timed || starts.empty()) return {};
	// The last frame's record comes once it is presented or replaced by a newer commit; a
	// covered surface is never presented, so commit once more (not measured).
	auto matched = client::match_commits(timing->commits, starts);
	if (matched.back() == nullptr) {
		std::string error;
		std::vector<uint64_t> measured = starts;
		put_and_sync(last_, now_ns(), &error);
		starts = measured;
	}
	uint64_t deadline = now_ns() + 2000000000u;
	while (matched.back() == nullptr && now_ns() < deadline) {
		conn->dispatch_timeout(20);
		matched = client::match_commits(timing->commits, starts);
	}
	return matched;
}

std::vector<double> BenchSurface::phase(uint32_t from, uint32_t to) {
	std::vector<double> out;
	auto commits = matched();
	for (size_t i = 0; i < commits.size(); i++) {
		const client::CommitTiming *r = commits[i];
		if (r == nullptr) continue;
		uint64_t a = from == kPutStart ? starts[i] : r->phase(from);
		uint64_t b = to == kReady ? r->ready() : r->phase(to);
		if (a != 0 && b >= a) out.push_back(static_cast<double>(b - a));
	}
	return out;
}

std::vector<double> BenchSurface::phase(timing::Phase p) {
	std::vector<double> out;
	for (const client::CommitTiming *r : matched()) {
		if (r == nullptr) continue;
		if (auto d = r->phases()[static_cast<size_t>(p)]) out.push_back(static_cast<double>(*d));
	}
	return out;
}

Frame::Frame(uint32_t drm_format, int width, int height, uint32_t seed) {
	size_t stride = shm_min_stride(drm_format, width);
	ShmLayout layout;
	shm_layout(drm_format, width, height, stride, &layout);
	bytes.resize(layout.size);
	if (drm_format == DRM_FORMAT_XRGB8888 || drm_format == DRM_FORMAT_ARGB8888) {
		// Throughput frames up to 256 MiB: any content, but every word differs between seeds
		// (waypipe sends only what changed).
		uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
		auto *words = reinterpret_cast<uint64_t *>(bytes.data());
		for (size_t i = 0; i < bytes.size() / 8; i++) {
			x += 0x9e3779b97f4a7c15ull;
			words[i] = x ^ (x >> 29);
		}
	} else {
		encode_pattern(drm_format, width, height, stride, bytes.data(), seed, 0, 0, width, height);
	}
	px = {drm_format, width, height, stride, bytes.data(), bytes.size()};
}

Stats stats_of(std::vector<double> values) {
	Stats s;
	s.n = values.size();
	if (values.empty()) return s;
	std::sort(values.begin(), values.end());
	size_t n = values.size();
	s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
	s.p95 = values[static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n))) - 1];
	return s;
}

static std::string printf_string(const char *fmt, double v, const char *unit) {
	char buf[64];
	snprintf(buf, sizeof(buf), fmt, v, unit);
	return buf;
}

std::string fmt_ns(double ns) {
	if (ns <= 0) return "-";
	if (ns < 1e3) return printf_string("%.0f %s", ns, "ns");
	if (ns < 1e6) return printf_string("%.1f %s", ns / 1e3, "µs");
	if (ns < 1e9) return printf_string("%.2f %s", ns / 1e6, "ms");
	return printf_string("%.2f %s", ns / 1e9, "s");
}

std::string fmt_rate(double bps) {
	if (bps <= 0) return "-";
	if (bps < 1e9) return printf_string("%.0f %s", bps / 1e6, "MB/s");
	return printf_string("%.2f %s", bps / 1e9, "GB/s");
}

std::string fmt_ratio(double r) { return r > 0 && std::isfinite(r) ? printf_string("%.3f%s", r, "x") : "-"; }

std::string fmt_size(uint64_t b) {
	if (b >= (1u << 20)) return printf_string("%.4g %s", static_cast<double>(b) / (1u << 20), "MiB");
	return printf_string("%.4g %s", static_cast<double>(b) / 1024, "KiB");
}

// Display width of UTF-8 text (µ is two bytes, one column).
static size_t columns(const std::string &s) {
	return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xc0) != 0x80; }));
}

void Table::print(const std::string &title) const {
	std::vector<size_t> width;
	for (const auto &r : rows_) {
		if (width.size() < r.size()) width.resize(r.size(), 0);
		for (size_t i = 0; i < r.size(); i++) width[i] = std::max(width[i], columns(r[i]));
	}
	printf("\n%s\n", title.c_str());
	for (const auto &r : rows_) {
		for (size_t i = 0; i < r.size(); i++) {
			std::string pad(width[i] - columns(r[i]), ' ');
			printf(i == 0 ? "%s%s" : "  %s%s", i == 0 ? r[i].c_str() : pad.c_str(),
				i == 0 ? pad.c_str() : r[i].c_str());
		}
		printf("\n");
	}
	fflush(stdout);
}

CpuTime process_cpu(pid_t pid) {
	CpuTime t;
	double tick_ns = 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK));
	std::error_code ec;
	std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
	for (const auto &task : std::filesystem::directory_iterator(task_dir, ec)) {
		FILE *f = fopen((task.path() / "stat").c_str(), "r");
		if (f == nullptr) continue;
		char line[1024];
		size_t n = fread(line, 1, sizeof(line) - 1, f);
		fclose(f);
		line[n] = '\0';
		// Fields after the command (which may hold spaces): state is field 3, utime 14, stime 15.
		const char *p = strrchr(line, ')');
		unsigned long long utime = 0, stime = 0;
		if (p == nullptr ||
			sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
			continue;
		double ns = static_cast<double>(utime + stime) * tick_ns;
		(task.path().filename() == std::to_string(pid) ? t.main : t.others) += ns;
	}
	return t;
}

double host_steal_ns() {
	FILE *f = fopen("/proc/stat", "r");
	if (f == nullptr) return 0;
	// The first line sums every CPU: "cpu  user nice system idle iowait irq softirq steal ...".
	unsigned long long v[8] = {};
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		&v[6], &v[7]);
	fclose(f);
	return n == 8 ? static_cast<double>(v[7]) * 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK)) : 0;
}

bool BusyLoop::start(int cpu, std::string *error) {
	stop();
	cpu_set_t set = start_cpus();
	if (cpu >= 0) {
		if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set)) {
			*error = "CPU " + std::to_string(cpu) + " is not one this process may run on";
			return false;
		}
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		// Only system calls from here: the parent may have other threads.
		setsid();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) _exit(0); // the bench ended before prctl()
		sched_setaffinity(0, sizeof(set), &set);
		volatile uint64_t spins = 0;
		for (;;) spins = spins + 1;
	}
	if (pid < 0) {
		*error = std::string("fork: ") + strerror(errno);
		return false;
	}
	pid_ = pid;
	cpu_ = cpu;
	started_ns_ = now_ns();
	return true;
}

double BusyLoop::stop() {
	if (pid_ <= 0) return 0;
	double cpu = process_cpu(pid_).main;
	double wall = static_cast<double>(now_ns() - started_ns_);
	kill(pid_, SIGKILL);
	int status;
	waitpid(pid_, &status, 0);
	pid_ = -1;
	return wall > 0 ? cpu / wall : 0;
}

// Field 39 of /proc/PID/task/TID/stat: the CPU the thread last ran on; -1 when unreadable.
static int last_cpu(pid_t pid) {
	std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/stat";
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) return -1;
	char line[1024];
	ssize_t n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0) return -1;
	line[n] = '\0';
	// The command (field 2) may hold spaces and ')': fields 3 and on follow its last ')'.
	const char *p = strrchr(line, ')');
	if (p == nullptr) return -1;
	p++;
	for (int field = 3;; field++) {
		while (*p == ' ') p++;
		if (*p == '\0') return -1;
		if (field == 39) break;
		while (*p != ' ' && *p != '\0') p++;
	}
	char *end = nullptr;
	long cpu = strtol(p, &end, 10);
	return end != p && cpu >= 0 && cpu < CPU_SETSIZE ? static_cast<int>(cpu) : -1;
}

void Placement::watch(const std::string &name, pid_t pid) {
	names_.push_back(name);
	pids_.push_back(pid);
}

void Placement::sample() {
	std::vector<int> row;
	for (pid_t pid : pids_) row.push_back(pid == 0 ? sched_getcpu() : last_cpu(pid));
	rows_.push_back(std::move(row));
}

std::string Placement::shares(size_t process) const {
	std::map<int, size_t> count;
	size_t known = 0;
	for (const auto &row : rows_) {
		if (row[process] < 0) continue;
		count[row[process]]++;
		known++;
	}
	if (known == 0) return "-";
	std::string out;
	for (const auto &[cpu, n] : count) {
		if (!out.empty()) out += " ";
		long pct = std::lround(100.0 * static_cast<double>(n) / static_cast<double>(known));
		out += std::to_string(cpu) + ":" + (pct == 0 ? std::string("<1") : std::to_string(pct));
	}
	return out;
}

double Placement::on_cpu(size_t process, int cpu) const {
	if (rows_.empty()) return 0;
	size_t n = static_cast<size_t>(std::count_if(
		rows_.begin(), rows_.end(), [&](const std::vector<int> &r) { return r[process] == cpu; }));
	return static_cast<double>(n) / static_cast<double>(rows_.size());
}

double Placement::together(size_t a, size_t b) const {
	if (rows_.empty()) return 0;
	size_t n = static_cast<size_t>(std::count_if(
		rows_.begin(), rows_.end(), [&](const std::vector<int> &r) { return r[a] >= 0 && r[a] == r[b]; }));
	return static_cast<double>(n) / static_cast<double>(rows_.size());
}

std::string autogroup_note() {
	int fd = open("/proc/sys/kernel/sched_autogroup_enabled", O_RDONLY | O_CLOEXEC);
	char c = '?';
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1) c = '?';
		close(fd);
	}
	return c == '1' ? "autogroup on" : c == '0' ? "autogroup off" : "autogroup unknown";
}

std::string machine_note() {
	double load[1] = {0};
	getloadavg(load, 1);
	char buf[128];
	snprintf(buf, sizeof(buf), "%u cores, load average %.2f", std::thread::hardware_concurrency(), load[0]);
	return buf + ("; " + g_pinning);
}

} // namespace pixelport::bench
