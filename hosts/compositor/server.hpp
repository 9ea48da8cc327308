// The reference compositor as a library: create, start, run, stop. main.cpp is a thin
// wrapper, and test harnesses (wlcs) can embed it without global state.
#pragma once

#include <sys/types.h>

#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "listener.hpp"
#include "plugin_loader.hpp"
#include "wlr.hpp"

namespace pixelport {

struct ServerOptions {
	/** Size of each headless output, in pixels, and its refresh rate in mHz. */
	int output_width = 1280;
	int output_height = 720;
	int refresh_mhz = 60000;
	int outputs = 1;
	/** Plugin to dlopen; "" means default_plugin_path(). Ignored with no_plugin. */
	std::string plugin_path;
	/** Stock wlroots behaviour: wlroots' own wl_shm, no plugin. The baseline for benchmarks. */
	bool no_plugin = false;
	/**
	 * The plugin's globals left out (pp_stream_manager_v1, pp_timing_manager_v1,
	 * wp_color_representation_manager_v1, wp_fifo_manager_v1, wp_commit_timing_manager_v1);
	 * wl_shm is always the plugin's.
	 */
	std::vector<std::string> without_globals;
	/** Socket name under $XDG_RUNTIME_DIR; "" picks wayland-N. */
	std::string socket_name;
	/** Run through /bin/sh -c once the socket is up; the server stops when it exits. */
	std::string startup_command;
	/** The plugin's conversion workers (pixelport_options.convert_threads); 0: its default. */
	uint32_t convert_threads = 0;
	/** Converted-image budgets in bytes (pixelport_options.image_budget_*); 0: the plugin's defaults. */
	uint64_t image_budget_client = 0;
	uint64_t image_budget_total = 0;
	/** Stream budgets (pixelport_options.stream_max_*); 0: the plugin's defaults. */
	uint64_t stream_max_buffer_bytes = 0;
	uint32_t stream_max_buffers = 0;
	uint64_t stream_max_inflight_bytes = 0;
	uint32_t stream_max_streams = 0;
	uint64_t stream_max_client_bytes = 0;
	/** Per-client object caps (pixelport_options.client_max_*); 0: the plugin's defaults. */
	uint32_t client_max_pools = 0;
	uint32_t client_max_mappings = 0;
	uint32_t client_max_shm_buffers = 0;
	uint32_t client_max_subscriptions = 0;
	uint32_t client_max_color_surfaces = 0;
	uint32_t client_max_images = 0;
	/**
	 * pixelport_options.gstreamer_withhold: formats left out of GStreamer clients' wl_shm
	 * format lists; unset: the plugin reads PIXELPORT_GSTREAMER_WITHHOLD, else "auto".
	 */
	std::optional<std::string> gstreamer_withhold;
	/** The plugin's timing logs (JSON Lines, Chrome trace); "" for none. */
	std::string timing_log;
	std::string timing_trace;
	/** Embedded in another process (wlcs): no listening socket, no WAYLAND_DISPLAY, no signal
	 *  handlers (they would block signals process-wide); clients come via wl_client_create. */
	bool embedded = false;
};

struct Output;
struct Toplevel;

class Server {
public:
	/** Builds the display, backend, renderer and globals. Returns null with `error` set. */
	static std::unique_ptr<Server> create(const ServerOptions &options, std::string *error);
	~Server();
	Server(const Server &) = delete;
	Server &operator=(const Server &) = delete;

	/** Opens the socket, starts the backend and the startup command. */
	bool start(std::string *error);
	/** Runs the event loop until stop() or the startup command exits. */
	void run();
	/** Makes run() return; safe from any callback on the loop thread. */
	void stop();

	/** 0 normally; the startup command's status (128 + signal if killed) when it ended. */
	int exit_code() const { return exit_code_; }
	const std::string &socket_name() const { return socket_; }
	wl_display *display() const { return display_; }
	bool plugin_loaded() const { return plugin_ != nullptr; }
	/** The plugin's counters; false without a plugin. */
	bool plugin_stats(pixelport_stats *stats) const;
	/** The plugin's timing summary table; "" without a plugin. */
	std::string timing_summary() const;

	// Used by the per-object handlers in server.cpp.
	wlr_scene *scene() const { return scene_; }
	wlr_seat *seat() const { return seat_; }
	wlr_xdg_shell *xdg_shell() const { return xdg_shell_; }
	/** Moves the toplevel whose wl_surface is `surface` to layout (x, y); false if none. */
	bool move_toplevel(wlr_surface *surface, int x, int y);
	/**
	 * Answers the toplevel's requested fullscreen and maximized states: either fills its output
	 * (a configure of the output's size, placed at the output's corner, on top); leaving both
	 * gives back the place and size it had before.
	 */
	void apply_toplevel_state(Toplevel *toplevel);
	void remove_output(Output *output);
	void remove_toplevel(Toplevel *toplevel);

private:
	Server() = default;
	bool init(const ServerOptions &options, std::string *error);
	void handle_new_output(wlr_output *wlr_output);
	void handle_new_toplevel(wlr_xdg_toplevel *xdg_toplevel);
	void handle_new_popup(wlr_xdg_popup *xdg_popup);
	static int handle_signal(int signal, void *data);
	void reap_children();

	ServerOptions options_;
	wl_display *display_ = nullptr;
	wlr_backend *backend_ = nullptr;
	wlr_renderer *renderer_ = nullptr;
	wlr_allocator *allocator_ = nullptr;
	wlr_compositor *compositor_ = nullptr;
	wlr_output_layout *output_layout_ = nullptr;
	wlr_scene *scene_ = nullptr;
	wlr_scene_output_layout *scene_layout_ = nullptr;
	wlr_xdg_shell *xdg_shell_ = nullptr;
	wlr_seat *seat_ = nullptr;

	PluginApi plugin_api_;
	struct pixelport_plugin *plugin_ = nullptr;

	std::list<std::unique_ptr<Output>> outputs_;
	std::list<std::unique_ptr<Toplevel>> toplevels_;

	wl_event_source *sigint_ = nullptr;
	wl_event_source *sigterm_ = nullptr;
	wl_event_source *sigchld_ = nullptr;
	wl_event_source *sigusr1_ = nullptr;
	pid_t child_ = -1;
	int exit_code_ = 0;
	std::string socket_;

	Listener new_output_;
	Listener new_toplevel_;
	Listener new_popup_;
};

} // namespace pixelport
