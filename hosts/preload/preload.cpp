// libpixelport-preload.so: brings pixelport into an unmodified wlroots compositor of the
// release it was built against (0.18, 0.19 or 0.20; wlr-glue/wlr_compat.hpp).
//
//     LD_PRELOAD=/path/to/libpixelport-preload.so tinywl -s foot
//
// A preloaded library comes before libwlroots in the dynamic linker's lookup order, so the two
// functions below receive the compositor's calls, and libwlroots' own calls too (it is linked
// without -Bsymbolic, so they go through its PLT):
//
//   wlr_shm_create_with_renderer  (wlr_renderer_init_wl_display/_wl_shm call it)
//       -> pixelport_create() and the plugin's globals: its wl_shm instead of wlroots' own, and
//          wp_fifo_v1 and wp_commit_timing_v1, which no wlroots release serves
//   wlr_compositor_create
//       -> the real one, then pixelport_attach_compositor(): the plugin's per-surface state
//   wlr_color_representation_manager_v1_create (0.20; _with_renderer calls it)
//       -> the real one with its global hidden: the plugin serves the interface, and a client
//          must not reach wlroots' one, whose state the plugin's conversion would not see
//
// and from then on the plugin behaves as if the compositor had called its API itself. Anything
// unexpected (another wlroots release, a symbol missing, no plugin) makes the module a pure
// pass-through, said in one log line.
//
// The module links neither wlroots nor libwayland: LD_PRELOAD puts it into every process that
// inherits the variable (wrappers such as dbus-run-session too), so what it calls is looked up
// with dlsym in the process that turns out to be the compositor.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plugin_loader.hpp"
#include "wlr_compat.hpp"

#define WLR_USE_UNSTABLE
#include <wayland-server-core.h>
extern "C" {
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_shm.h>
#if PIXELPORT_WLR_COLOR_REPRESENTATION
#define static // C-only `[static N]` parameters (wlr/render/color.h), as in wlr.hpp
#include <wlr/types/wlr_color_representation_v1.h>
#undef static
#endif
}

#define PRELOAD_API extern "C" __attribute__((visibility("default")))

namespace {

constexpr const char *kWlroots = PIXELPORT_WLR_SONAME; // one release: each minor has its own soname and ABI
constexpr int kStatsPeriodMs = 100;
constexpr int kSummaryPeriodMs = 1000;

// libwayland-server functions, found in the compositor process (it has them: wlroots needs them).
struct Wayland {
	decltype(&wl_display_add_destroy_listener) add_destroy_listener;
	decltype(&wl_display_get_event_loop) get_event_loop;
	decltype(&wl_event_loop_add_timer) add_timer;
	decltype(&wl_event_source_timer_update) timer_update;
	decltype(&wl_event_source_remove) source_remove;
	decltype(&wl_event_loop_add_signal) add_signal; // optional: the summary on SIGUSR1
	decltype(&wl_global_remove) global_remove;
	decltype(&wl_list_remove) list_remove;
};

struct Preload {
	bool active = false;
	decltype(&wlr_shm_create_with_renderer) real_shm_create = nullptr;
	decltype(&wlr_compositor_create) real_compositor_create = nullptr;
	decltype(&wlr_output_init_render) real_output_init_render = nullptr; // optional: frame timing
	void (*wlr_log)(int importance, const char *fmt, ...) = nullptr; // wlroots' _wlr_log
	Wayland wl{};
	pixelport::PluginApi api;
	pixelport_options options{};
	std::string stats_path;
	std::string summary_path; // PIXELPORT_TIMING_SUMMARY

	// One display at a time: the plugin registers process-global wlroots state.
	wl_display *display = nullptr;
	pixelport_plugin *plugin = nullptr;
	wl_listener plugin_destroy{};
	wl_event_source *stats_timer = nullptr;
	pixelport_stats written{};
	bool stats_write_failed = false;
	wl_event_source *summary_timer = nullptr, *summary_signal = nullptr;
	pixelport_stats summarized{}; // the counters when the summary was last written
	bool summary_write_failed = false;
	// A compositor made before wl_shm (not the usual order, but allowed): attached later.
	wl_display *early_display = nullptr;
	wlr_compositor *early_compositor = nullptr;
	wl_listener early_display_destroy{};
	// What the interposed wlr_shm_create_with_renderer returns, see there.
	wlr_shm placeholder{};
#if PIXELPORT_WLR_COLOR_REPRESENTATION
	decltype(&wlr_color_representation_manager_v1_create) real_color_create = nullptr;
	// wlroots' colour manager made before the plugin: its global is hidden once the plugin runs.
	wlr_color_representation_manager_v1 *early_color = nullptr;
	wl_display *early_color_display = nullptr;
#endif
};

Preload &state();

// wlroots' log (so the lines land where the compositor's go) once the wlroots release is confirmed;
// stderr before that. Levels are wlroots': 1 error, 2 info, 3 debug.
__attribute__((format(printf, 2, 3))) void log_line(int importance, const char *fmt, ...) {
	char text[512];
	va_list args;
	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	Preload &p = state();
	if (p.wlr_log != nullptr) {
		p.wlr_log(importance, "[pixelport-preload] %s", text);
	} else {
		fprintf(stderr, "pixelport-preload: %s\n", text);
	}
}

std::string base_name(const std::string &path) {
	size_t slash = path.rfind('/');
	return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The path of this module, from the address of one of its own (hidden) functions.
std::string own_path() {
	Dl_info info{};
	if (dladdr(reinterpret_cast<void *>(&base_name), &info) == 0 || info.dli_fname == nullptr) {
		return "";
	}
	return info.dli_fname;
}

// PIXELPORT_PRELOAD_HIDE=name,name: treat these symbols as missing (to test the no-op path).
bool hidden(const char *name) {
	const char *list = getenv("PIXELPORT_PRELOAD_HIDE");
	if (list == nullptr) return false;
	std::string s = std::string(",") + list + ",";
	return s.find(std::string(",") + name + ",") != std::string::npos;
}

template <typename T>
bool find(void *scope, const char *name, T *out) {
	*out = reinterpret_cast<T>(dlsym(scope, name));
	if (*out != nullptr && !hidden(name)) return true;
	log_line(1,
		"%s not found in this process: not a wlroots " PIXELPORT_WLR_SERIES " compositor? pixelport stays off",
		name);
	return false;
}

// The libpixelport.so to load: $PIXELPORT_PLUGIN, else beside this module (installed), else
// the build tree's (hosts/preload/ and plugin/ in one build directory).
std::string plugin_path(const std::string &self) {
	if (const char *env = getenv("PIXELPORT_PLUGIN"); env != nullptr && *env != '\0') return env;
	std::string dir = self.substr(0, self.rfind('/') + 1);
	for (const char *candidate : {"libpixelport.so", "../../plugin/libpixelport.so"}) {
		if (access((dir + candidate).c_str(), R_OK) == 0) return dir + candidate;
	}
	return dir + "libpixelport.so";
}

// The numeric pixelport_options as environment variables (docs/loading.md, "Options"); the timing log
// paths are read by the plugin itself (PIXELPORT_TIMING_LOG, PIXELPORT_TIMING_TRACE).
void read_options(pixelport_options *options) {
	struct Row {
		const char *name;
		uint32_t pixelport_options::*field;
		unsigned long max;
	};
	static constexpr Row kRows[] = {
		{"PIXELPORT_SHM_VERSION", &pixelport_options::shm_version, 2},
		{"PIXELPORT_CONVERT_THREADS", &pixelport_options::convert_threads, 64},
		{"PIXELPORT_STREAM_MAX_BUFFERS", &pixelport_options::stream_max_buffers, 1u << 20},
		{"PIXELPORT_STREAM_MAX_STREAMS", &pixelport_options::stream_max_streams, 1u << 16},
		{"PIXELPORT_CLIENT_MAX_POOLS", &pixelport_options::client_max_pools, 1u << 20},
		{"PIXELPORT_CLIENT_MAX_MAPPINGS", &pixelport_options::client_max_mappings, 1u << 20},
		{"PIXELPORT_CLIENT_MAX_SHM_BUFFERS", &pixelport_options::client_max_shm_buffers, 1u << 20},
		{"PIXELPORT_CLIENT_MAX_SUBSCRIPTIONS", &pixelport_options::client_max_subscriptions, 1u << 20},
		{"PIXELPORT_CLIENT_MAX_COLOR_SURFACES", &pixelport_options::client_max_color_surfaces, 1u << 20},
		{"PIXELPORT_CLIENT_MAX_IMAGES", &pixelport_options::client_max_images, 1u << 20},
		{"PIXELPORT_FIFO_OFF", &pixelport_options::fifo_off, 1},
		{"PIXELPORT_COMMIT_TIMING_OFF", &pixelport_options::commit_timing_off, 1},
	};
	for (const Row &row : kRows) {
		const char *value = getenv(row.name);
		if (value == nullptr || *value == '\0') continue;
		char *end = nullptr;
		unsigned long n = strtoul(value, &end, 10);
		if (*end != '\0' || n > row.max) {
			log_line(1, "ignoring %s=%s (want 0..%lu)", row.name, value, row.max);
			continue;
		}
		options->*row.field = static_cast<uint32_t>(n);
	}
	// Byte budgets (0 = the plugin's default, sized to the outputs).
	struct Row64 {
		const char *name;
		uint64_t pixelport_options::*field;
	};
	static constexpr Row64 kRows64[] = {
		{"PIXELPORT_STREAM_MAX_BUFFER_BYTES", &pixelport_options::stream_max_buffer_bytes},
		{"PIXELPORT_STREAM_MAX_INFLIGHT_BYTES", &pixelport_options::stream_max_inflight_bytes},
		{"PIXELPORT_STREAM_MAX_CLIENT_BYTES", &pixelport_options::stream_max_client_bytes},
	};
	for (const Row64 &row : kRows64) {
		const char *value = getenv(row.name);
		if (value == nullptr || *value == '\0') continue;
		char *end = nullptr;
		errno = 0;
		unsigned long long n = strtoull(value, &end, 10);
		if (*end != '\0' || errno != 0 || value[0] == '-') {
			log_line(1, "ignoring %s=%s (want a byte count)", row.name, value);
			continue;
		}
		options->*row.field = n;
	}
}

// Clients the compositor starts must not inherit this module: they are not compositors, and a
// nested compositor should be asked for it explicitly. Other LD_PRELOAD entries stay.
void strip_ld_preload(const std::string &self) {
	const char *value = getenv("LD_PRELOAD");
	if (value == nullptr) return;
	std::string kept, token, all = std::string(value) + ":";
	for (char c : all) {
		if (c != ':' && c != ' ') {
			token += c;
			continue;
		}
		if (!token.empty() && base_name(token) != base_name(self)) {
			kept += (kept.empty() ? "" : ":") + token;
		}
		token.clear();
	}
	if (kept.empty()) {
		unsetenv("LD_PRELOAD");
	} else {
		setenv("LD_PRELOAD", kept.c_str(), 1);
	}
}

// Everything is decided once, at the first interposed call, inside the compositor process.
void init(Preload *p) {
	// Resolved first: the interposer must reach the real function even when the module stays off.
	find(RTLD_NEXT, "wlr_output_init_render", &p->real_output_init_render);
#if PIXELPORT_WLR_COLOR_REPRESENTATION
	find(RTLD_NEXT, "wlr_color_representation_manager_v1_create", &p->real_color_create);
#endif
	if (!find(RTLD_NEXT, "wlr_shm_create_with_renderer", &p->real_shm_create) ||
		!find(RTLD_NEXT, "wlr_compositor_create", &p->real_compositor_create)) {
		return;
	}
	// wlroots changes its soname with every minor version: the file that defines the real
	// functions tells which one this is (a statically linked wlroots never calls us at all).
	Dl_info info{};
	if (dladdr(reinterpret_cast<void *>(p->real_compositor_create), &info) == 0 || info.dli_fname == nullptr ||
		base_name(info.dli_fname) != kWlroots) {
		log_line(1, "wlroots here is %s, not %s: pixelport stays off",
			info.dli_fname != nullptr ? info.dli_fname : "unknown", kWlroots);
		return;
	}
	decltype(p->wlr_log) wlr_log = nullptr;
	if (!find(RTLD_DEFAULT, "_wlr_log", &wlr_log) ||
		!find(RTLD_DEFAULT, "wl_display_add_destroy_listener", &p->wl.add_destroy_listener) ||
		!find(RTLD_DEFAULT, "wl_display_get_event_loop", &p->wl.get_event_loop) ||
		!find(RTLD_DEFAULT, "wl_event_loop_add_timer", &p->wl.add_timer) ||
		!find(RTLD_DEFAULT, "wl_event_source_timer_update", &p->wl.timer_update) ||
		!find(RTLD_DEFAULT, "wl_event_source_remove", &p->wl.source_remove) ||
		!find(RTLD_DEFAULT, "wl_global_remove", &p->wl.global_remove) ||
		!find(RTLD_DEFAULT, "wl_list_remove", &p->wl.list_remove)) {
		return;
	}
	p->wlr_log = wlr_log;
	std::string self = own_path();
	std::string path = plugin_path(self);
	std::string error;
	if (!pixelport::load_plugin(path, &p->api, &error)) {
		log_line(1, "%s: pixelport stays off", error.c_str());
		return;
	}
	p->options.struct_size = sizeof p->options;
	read_options(&p->options);
	if (const char *stats = getenv("PIXELPORT_STATS_FILE"); stats != nullptr) p->stats_path = stats;
	if (const char *summary = getenv("PIXELPORT_TIMING_SUMMARY"); summary != nullptr && *summary != '\0') {
		p->summary_path = summary;
	}
	find(RTLD_DEFAULT, "wl_event_loop_add_signal", &p->wl.add_signal);
	strip_ld_preload(self);
	p->active = true;
	log_line(2, "loaded %s into this compositor", path.c_str());
}

Preload &state() {
	static Preload preload;
	return preload;
}

Preload &initialized_state() {
	static Preload *p = [] {
		init(&state());
		return &state();
	}();
	return *p;
}

// The plugin's counters, as many as this build knows (pixelport_stats.struct_size).
void read_stats(Preload *p, pixelport_stats *stats) {
	stats->struct_size = sizeof *stats;
	p->api.get_stats(p->plugin, stats);
}

// Written to a temporary name and renamed, so a reader never sees half a line.
void write_stats(Preload *p) {
	if (p->stats_path.empty() || p->plugin == nullptr || p->api.get_stats == nullptr) return;
	pixelport_stats stats{};
	read_stats(p, &stats);
	p->written = stats;
	std::string tmp = p->stats_path + ".tmp";
	FILE *f = fopen(tmp.c_str(), "w");
	bool ok = f != nullptr && fprintf(f, "%s\n", pixelport::stats_json(stats).c_str()) > 0;
	ok = (f != nullptr && fclose(f) == 0) && ok && rename(tmp.c_str(), p->stats_path.c_str()) == 0;
	if (!ok && !p->stats_write_failed) {
		p->stats_write_failed = true;
		log_line(1, "cannot write PIXELPORT_STATS_FILE %s: %s", p->stats_path.c_str(), strerror(errno));
	}
}

// PIXELPORT_TIMING_SUMMARY: the plugin's timing summary (per surface and output, count and
// p50/p95/p99 of each phase), replaced atomically like the stats file.
void write_summary(Preload *p) {
	if (p->summary_path.empty() || p->plugin == nullptr || p->api.timing_summary == nullptr) return;
	size_t n = p->api.timing_summary(p->plugin, nullptr, 0);
	std::string text(n + 1, '\0');
	p->api.timing_summary(p->plugin, text.data(), text.size());
	text.resize(n);
	if (p->api.get_stats != nullptr) read_stats(p, &p->summarized);
	std::string tmp = p->summary_path + ".tmp";
	FILE *f = fopen(tmp.c_str(), "w");
	bool ok = f != nullptr && fwrite(text.data(), 1, text.size(), f) == text.size();
	ok = (f != nullptr && fclose(f) == 0) && ok && rename(tmp.c_str(), p->summary_path.c_str()) == 0;
	if (!ok && !p->summary_write_failed) {
		p->summary_write_failed = true;
		log_line(1, "cannot write PIXELPORT_TIMING_SUMMARY %s: %s", p->summary_path.c_str(), strerror(errno));
	}
}

// Once a second when something was committed since the last one: compositors that die on
// SIGTERM (tinywl) still leave a summary behind.
int summary_tick(void *data) {
	auto *p = static_cast<Preload *>(data);
	pixelport_stats stats{};
	if (p->api.get_stats != nullptr) read_stats(p, &stats);
	if (memcmp(&stats, &p->summarized, sizeof(stats)) != 0) write_summary(p);
	p->wl.timer_update(p->summary_timer, kSummaryPeriodMs);
	return 0;
}

int summary_signal(int, void *data) {
	write_summary(static_cast<Preload *>(data));
	return 0;
}

// The counters go to the file while the compositor runs: many compositors (tinywl) die on
// SIGTERM without tearing down their display.
int stats_tick(void *data) {
	auto *p = static_cast<Preload *>(data);
	pixelport_stats stats{};
	read_stats(p, &stats);
	if (memcmp(&stats, &p->written, sizeof(stats)) != 0) write_stats(p);
	p->wl.timer_update(p->stats_timer, kStatsPeriodMs);
	return 0;
}

// The plugin goes with its display: the last counters and summary are written while it can
// still be read, and a later display in this process may have a plugin again.
void plugin_destroyed(wl_listener *, void *) {
	Preload &p = state();
	write_stats(&p);
	write_summary(&p);
	if (p.stats_timer != nullptr) p.wl.source_remove(p.stats_timer);
	if (p.summary_timer != nullptr) p.wl.source_remove(p.summary_timer);
	if (p.summary_signal != nullptr) p.wl.source_remove(p.summary_signal);
	p.summary_timer = p.summary_signal = nullptr;
	p.summarized = {};
	p.wl.list_remove(&p.plugin_destroy.link);
	log_line(3, "display %p destroyed, plugin destroyed", static_cast<void *>(p.display));
	p.display = nullptr;
	p.plugin = nullptr;
	p.stats_timer = nullptr;
	p.written = {};
	p.early_display = nullptr;
	p.early_compositor = nullptr;
}

#if PIXELPORT_WLR_COLOR_REPRESENTATION
// Not advertised to clients from now on; wlroots still owns the global and destroys it with
// the display. No client can have bound it: globals are made before the first client.
void hide_color_global(Preload *p, wlr_color_representation_manager_v1 *manager) {
	p->wl.global_remove(manager->global);
	log_line(2, "wlroots' wp_color_representation_manager_v1 hidden: pixelport serves it");
}
#endif

} // namespace

/**
 * Instead of wlroots' wl_shm, the plugin's. Returns a placeholder wlr_shm owned by this module:
 * non-NULL so callers see success (wlr_renderer_init_wl_shm checks that), with `global` NULL
 * because the wl_shm global belongs to the plugin. wlroots (0.18 to 0.20) has no function taking a
 * wlr_shm, so callers can only keep the pointer. Returning the real wlr_shm would advertise a
 * second wl_shm global.
 */
PRELOAD_API struct wlr_shm *wlr_shm_create_with_renderer(
	struct wl_display *display, uint32_t version, struct wlr_renderer *renderer) {
	Preload &p = initialized_state();
	if (!p.active) {
		return p.real_shm_create != nullptr ? p.real_shm_create(display, version, renderer) : nullptr;
	}
	if (p.display == display) {
		log_line(3, "wl_shm requested again for display %p: pixelport already serves it",
			static_cast<void *>(display));
		return &p.placeholder;
	}
	if (p.display != nullptr) {
		log_line(1, "pixelport already serves display %p; display %p gets wlroots' own wl_shm",
			static_cast<void *>(p.display), static_cast<void *>(display));
		return p.real_shm_create(display, version, renderer);
	}
	p.plugin = p.api.create(display, renderer, &p.options);
	// wl_shm at the compositor's version unless PIXELPORT_SHM_VERSION says otherwise, and the
	// plugin's other globals.
	uint32_t shm_version = p.options.shm_version != 0 ? p.options.shm_version : version;
	const bool fifo = p.options.fifo_off == 0 && p.api.fifo_manager_create != nullptr;
	const bool commit_timing = p.options.commit_timing_off == 0 && p.api.commit_timing_manager_create != nullptr;
	if (p.plugin == nullptr || p.api.shm_create(p.plugin, shm_version) == nullptr ||
		p.api.stream_manager_create(p.plugin, 1) == nullptr ||
		p.api.timing_manager_create(p.plugin, 4) == nullptr ||
		p.api.color_representation_manager_create(p.plugin, 1) == nullptr ||
		(fifo && p.api.fifo_manager_create(p.plugin, 1) == nullptr) ||
		(commit_timing && p.api.commit_timing_manager_create(p.plugin, 1) == nullptr)) {
		log_line(1, "the plugin failed to start (see above): wlroots' own wl_shm instead");
		p.api.destroy(p.plugin);
		p.plugin = nullptr;
		return p.real_shm_create(display, version, renderer);
	}
	p.display = display;
	p.plugin_destroy.notify = plugin_destroyed;
	p.api.add_destroy_listener(p.plugin, &p.plugin_destroy);
	if (p.early_display == display) {
		p.api.attach_compositor(p.plugin, p.early_compositor);
	}
#if PIXELPORT_WLR_COLOR_REPRESENTATION
	if (p.early_color_display == display) hide_color_global(&p, p.early_color);
	p.early_color = nullptr;
	p.early_color_display = nullptr;
#endif
	if (!p.stats_path.empty()) {
		p.stats_timer = p.wl.add_timer(p.wl.get_event_loop(display), stats_tick, &p);
		if (p.stats_timer != nullptr) p.wl.timer_update(p.stats_timer, kStatsPeriodMs);
		write_stats(&p); // zeroes: the file exists as soon as the plugin does
	}
	if (!p.summary_path.empty()) {
		wl_event_loop *loop = p.wl.get_event_loop(display);
		p.summary_timer = p.wl.add_timer(loop, summary_tick, &p);
		if (p.summary_timer != nullptr) p.wl.timer_update(p.summary_timer, kSummaryPeriodMs);
		// SIGUSR1 through the event loop (signalfd), as pixelport-compositor does.
		if (p.wl.add_signal != nullptr) p.summary_signal = p.wl.add_signal(loop, SIGUSR1, summary_signal, &p);
		write_summary(&p);
	}
	log_line(2, "pixelport serves wl_shm on display %p%s%s", static_cast<void *>(display),
		fifo ? ", and wp_fifo_v1" : "", commit_timing ? ", and wp_commit_timing_v1" : "");
	return &p.placeholder;
}

/** The real wl_compositor, then the plugin follows its surfaces. */
PRELOAD_API struct wlr_compositor *wlr_compositor_create(
	struct wl_display *display, uint32_t version, struct wlr_renderer *renderer) {
	Preload &p = initialized_state();
	if (p.real_compositor_create == nullptr) return nullptr; // no wlroots: nobody can be calling
	wlr_compositor *compositor = p.real_compositor_create(display, version, renderer);
	if (!p.active || compositor == nullptr) return compositor;
	if (p.display == display) {
		if (!p.api.attach_compositor(p.plugin, compositor)) {
			log_line(1, "a second wlr_compositor on display %p: the plugin follows the first",
				static_cast<void *>(display));
		}
	} else if (p.display == nullptr && p.early_display == nullptr) {
		// wl_shm may still come; if it never does, wlroots' calls do not reach this module
		// (a -Bsymbolic wlroots) or the compositor makes wl_shm by other means.
		log_line(2, "wlr_compositor_create before wl_shm on display %p", static_cast<void *>(display));
		p.early_display = display;
		p.early_compositor = compositor;
		p.early_display_destroy.notify = [](wl_listener *, void *) {
			state().early_display = nullptr;
			state().early_compositor = nullptr;
		};
		p.wl.add_destroy_listener(display, &p.early_display_destroy);
	}
	return compositor;
}

/**
 * The real output set-up, then the plugin follows the output's frames (presentation times of
 * commits, per-frame timing). Compositors call this for each new output before connecting their
 * own frame listener, which is where the plugin wants to be.
 */
PRELOAD_API bool wlr_output_init_render(
	struct wlr_output *output, struct wlr_allocator *allocator, struct wlr_renderer *renderer) {
	Preload &p = initialized_state();
	if (p.real_output_init_render == nullptr) return false; // no wlroots: nobody can be calling
	bool ok = p.real_output_init_render(output, allocator, renderer);
	if (ok && p.active && p.plugin != nullptr && output->event_loop == p.wl.get_event_loop(p.display) &&
		p.api.attach_output != nullptr) {
		p.api.attach_output(p.plugin, output);
	}
	return ok;
}

#if PIXELPORT_WLR_COLOR_REPRESENTATION
/**
 * The real manager, so the compositor keeps a valid one (sway fails without), with its global
 * hidden where the plugin serves wp_color_representation_manager_v1: one global of the
 * interface, and the colour a client declares reaches the plugin's conversion. wlroots would
 * also post an error for coefficients on the converted RGB images the plugin hands it.
 */
PRELOAD_API struct wlr_color_representation_manager_v1 *wlr_color_representation_manager_v1_create(
	struct wl_display *display, uint32_t version, const struct wlr_color_representation_v1_options *options) {
	Preload &p = initialized_state();
	if (p.real_color_create == nullptr) return nullptr; // no wlroots: nobody can be calling
	wlr_color_representation_manager_v1 *manager = p.real_color_create(display, version, options);
	if (!p.active || manager == nullptr) return manager;
	if (p.display == display) {
		hide_color_global(&p, manager);
	} else if (p.display == nullptr && p.early_color_display == nullptr) {
		// The plugin may still come with wl_shm; if it does not, wlroots' global stays.
		p.early_color = manager;
		p.early_color_display = display;
	}
	return manager;
}
#endif
