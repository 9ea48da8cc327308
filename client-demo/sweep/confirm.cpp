#include "confirm.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>

#include "measure.hpp"
#include "progress.hpp"

using namespace pixelport::client;

namespace pixelport::sweep {

namespace {

void sleep_ms(int ms) {
	timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, nullptr);
}

// One confirming round's own compositor: `cmd --socket NAME` through /bin/sh, stopped with
// SIGTERM after the round (and by the kernel if the sweep dies first). A round in a compositor
// of its own has what a separate run has: a new process, heap and plugin state.
class RoundCompositor {
public:
	~RoundCompositor() { stop(); }

	// Starts it and connects *conn to it; false with *error set (nothing left running).
	bool start(const std::string &cmd, int round, Connection *conn, std::string *error) {
		const char *runtime = getenv("XDG_RUNTIME_DIR");
		if (runtime == nullptr) {
			*error = "no XDG_RUNTIME_DIR";
			return false;
		}
		name_ = "pixelport-confirm-" + std::to_string(getpid()) + "-" + std::to_string(round);
		const std::string path = std::string(runtime) + "/" + name_;
		const std::string line = "exec " + cmd + " --socket " + name_;
		const pid_t parent = getpid();
		pid_ = fork();
		if (pid_ < 0) {
			*error = "fork failed";
			return false;
		}
		if (pid_ == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != parent) _exit(127);
			// Its stdout is not the sweep's table; its stderr (errors only, as a rule) stays.
			int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
			if (null >= 0) dup2(null, STDOUT_FILENO);
			execl("/bin/sh", "/bin/sh", "-c", line.c_str(), nullptr);
			_exit(127);
		}
		// Its socket appears once the plugin is loaded and the globals exist.
		struct stat st;
		for (int waited = 0; stat(path.c_str(), &st) != 0; waited += 20) {
			int status = 0;
			if (waitpid(pid_, &status, WNOHANG) == pid_) {
				pid_ = -1;
				*error = "'" + line + "' exited before it had a socket";
				return false;
			}
			if (waited > 5000) {
				*error = "'" + line + "' had no socket within 5 s";
				stop();
				return false;
			}
			sleep_ms(20);
		}
		const char *old = getenv("WAYLAND_DISPLAY");
		const std::string saved = old ? old : "";
		setenv("WAYLAND_DISPLAY", name_.c_str(), 1);
		bool ok = conn->connect(error);
		if (old)
			setenv("WAYLAND_DISPLAY", saved.c_str(), 1);
		else
			unsetenv("WAYLAND_DISPLAY");
		if (!ok) stop();
		return ok;
	}

	void stop() {
		if (pid_ <= 0) return;
		kill(pid_, SIGTERM);
		int status = 0;
		for (int waited = 0; waitpid(pid_, &status, WNOHANG) == 0; waited += 10) {
			if (waited == 5000) kill(pid_, SIGKILL);
			sleep_ms(10);
		}
		pid_ = -1;
	}

private:
	pid_t pid_ = -1;
	std::string name_;
};

} // namespace

void confirm_crossovers(Connection &conn, TimingClient &timing, const Options &o, const Source &src,
	std::vector<Comparison> *comparisons_io, int *confirm_runs_io, int *apart_runs_io, bool *alive_io) {
	std::vector<Comparison> &comparisons = *comparisons_io;
	int &confirm_runs = *confirm_runs_io;
	bool &alive = *alive_io;
	Options co = o;
	co.warmup = 1;
	co.min_frames = std::min(o.min_frames, 3);
	co.frames = std::max(co.min_frames, std::min(o.frames, 15));
	co.point_seconds = o.confirm_seconds;
	bool own_compositor = !o.confirm_compositor.empty();
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
			fprintf(stderr,
				"pixelport-sweep: confirming %zu candidate crossover sizes: %d rounds of %zu points\n",
				targets.size(), o.confirm_rounds, needs.size());
		}
		Progress cp;
		cp.total = o.confirm_rounds * static_cast<int>(needs.size());
		for (int round = 0; round < o.confirm_rounds && alive; round++) {
			// Each round on a connection of its own, to a compositor of its own where
			// --confirm-compositor says how to start one: rounds within one process agreed
			// more than separate runs of the demo did. Else a new connection to the sweep's
			// compositor (new client state there, new pools and streams); else the sweep's.
			RoundCompositor comp;
			Connection fresh;
			std::string error;
			bool own = false;
			if (own_compositor) {
				own = comp.start(o.confirm_compositor, round + 1, &fresh, &error);
				if (!own) {
					fprintf(stderr,
						"pixelport-sweep: confirming rounds in the sweep's compositor: %s\n",
						error.c_str());
					own_compositor = false;
				}
			}
			if (!own && !(own = fresh.connect(&error)))
				fprintf(stderr, "pixelport-sweep: confirming round %d on the sweep's connection: %s\n",
					round + 1, error.c_str());
			const bool apart = own && own_compositor;
			Connection &rc = own ? fresh : conn;
			std::unique_ptr<TimingClient> own_timing;
			if (own && timing.available()) own_timing = std::make_unique<TimingClient>(&fresh);
			TimingClient &rt = own_timing ? *own_timing : timing;
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
					make_frame(src.path.empty() ? nullptr : &src.img, f, n.width, n.height, o.seed,
						&c.bytes, &c.stride, &c.pattern);
				}
				TransportChoice t;
				parse_transport(n.side.transport, &t);
				Point p;
				p.format = n.side.format;
				p.transport = n.side.transport;
				p.width = n.width;
				p.height = n.height;
				p.bytes = c.bytes.size();
				// Titled apart: scripts/demo compares the sweep's own points only.
				bool ok = run_point(rc, rt, co, c, t, &p, false, " confirm");
				// A round's own compositor lost: the round ends, the sweep goes on.
				if (!ok && apart) {
					fprintf(stderr,
						"pixelport-sweep: confirming round %d: its compositor was lost (%s)\n",
						round + 1, p.note.c_str());
					own_compositor = false;
				} else {
					alive = ok;
				}
				if (p.stats(kCost).count) cost[k] = static_cast<double>(p.stats(kCost).p50);
				cp.step("confirming round " + std::to_string(round + 1) + ": " + p.format + " " +
						p.transport + " " + human_bytes(static_cast<double>(p.bytes)),
					p.measured() ? "median cost " + timing::format_duration_ns(cost[k])
						     : "failed: " + p.note);
				if (!ok) break;
			}
			for (auto &[cmp, i] : targets) {
				double ca = cost[static_cast<size_t>(
					need_index[{cmp->a, cmp->sizes[i].width, cmp->sizes[i].height}])];
				double cb = cost[static_cast<size_t>(
					need_index[{cmp->b, cmp->sizes[i].width, cmp->sizes[i].height}])];
				if (ca > 0 && cb > 0) cmp->sizes[i].ratios.push_back(ca / cb);
			}
			confirm_runs++;
			if (apart && own_compositor) (*apart_runs_io)++;
			own_timing.reset(); // its destroy requests need the connection
			fresh.disconnect();
			comp.stop();
		}
	}
	conclude_all(&comparisons);
}

} // namespace pixelport::sweep
