// pixelport-compositor: a small wlroots (0.18 or 0.19) compositor that exists to host the plugin.
//
// It follows tinywl: a wlr_scene draws every xdg toplevel at the output's origin (a fullscreen
// or maximized one fills its output), outputs are headless by default, and the renderer is
// pixman by default. What it adds is the
// plugin: instead of wlroots' own wl_shm it lets libpixelport.so serve wl_shm, so the
// same binary runs both the plugin and (with --no-plugin) the stock wlroots baseline.
#include "server.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace pixelport {

// One per wlr_output: renders the scene on every frame event.
struct Output {
	Server *server = nullptr;
	wlr_output *output = nullptr;
	wlr_scene_output *scene_output = nullptr;
	Listener frame;
	Listener present;
	Listener request_state;
	Listener destroy;
};

// One per xdg_toplevel: its scene subtree and the listeners that map it.
struct Toplevel {
	Server *server = nullptr;
	wlr_xdg_toplevel *xdg_toplevel = nullptr;
	wlr_scene_tree *scene_tree = nullptr;
	// Fullscreen or maximized: it fills an output. `restore` is where it was and the size it
	// had before (0x0 when it had none yet: the client picks again), for when it leaves.
	bool fills_output = false;
	wlr_box restore{};
	Listener commit;
	Listener request_fullscreen;
	Listener request_maximize;
	Listener destroy;
};

// Popups live in their parent's scene subtree; they free themselves on destroy.
struct Popup {
	wlr_xdg_popup *xdg_popup = nullptr;
	Listener commit;
	Listener destroy;
};

std::unique_ptr<Server> Server::create(const ServerOptions &options, std::string *error) {
	std::unique_ptr<Server> server(new Server());
	if (!server->init(options, error)) {
		return nullptr;
	}
	return server;
}

static void add_headless_outputs(wlr_backend *backend, void *data) {
	const auto *options = static_cast<const ServerOptions *>(data);
	if (!wlr_backend_is_headless(backend)) {
		return;
	}
	for (int i = 0; i < options->outputs; i++) {
		wlr_headless_add_output(backend, options->output_width, options->output_height);
	}
}

namespace {
constexpr size_t kClientBufferBytes = size_t{1} << 20;
} // namespace

bool Server::init(const ServerOptions &options, std::string *error) {
	options_ = options;
	display_ = wl_display_create();
	if (display_ == nullptr) {
		*error = "cannot create wl_display";
		return false;
	}
#if WAYLAND_VERSION_MAJOR > 1 || WAYLAND_VERSION_MINOR >= 23
	// A client that reads its events late (a busy machine) is disconnected only once this much
	// waits beyond the socket's buffer (libwayland's default: 4 KiB).
	wl_display_set_default_max_buffer_size(display_, kClientBufferBytes);
#endif
	wl_event_loop *loop = wl_display_get_event_loop(display_);

	// Headless unless the user picked backends: this compositor must run on a bare machine.
	if (getenv("WLR_BACKENDS") != nullptr) {
		// wlroots' autocreate adds WLR_HEADLESS_OUTPUTS (default 1) 1280x720 outputs to a
		// headless backend; the outputs must be exactly --outputs x --output, added below.
		const char *env = getenv("WLR_HEADLESS_OUTPUTS");
		std::string saved = env ? env : "";
		setenv("WLR_HEADLESS_OUTPUTS", "0", 1);
		backend_ = wlr_backend_autocreate(loop, nullptr);
		if (env) {
			setenv("WLR_HEADLESS_OUTPUTS", saved.c_str(), 1);
		} else {
			unsetenv("WLR_HEADLESS_OUTPUTS");
		}
	} else {
		backend_ = wlr_headless_backend_create(loop);
	}
	if (backend_ == nullptr) {
		*error = "cannot create the wlroots backend";
		return false;
	}

	// pixman unless WLR_RENDERER says otherwise: no GPU is assumed.
	if (getenv("WLR_RENDERER") != nullptr) {
		renderer_ = wlr_renderer_autocreate(backend_);
	} else {
		renderer_ = wlr_pixman_renderer_create();
	}
	if (renderer_ == nullptr) {
		*error = "cannot create a renderer";
		return false;
	}

	// wl_shm comes from the plugin, or from wlroots in --no-plugin mode; never both.
	if (!options.no_plugin) {
		std::string path = options.plugin_path.empty() ? default_plugin_path() : options.plugin_path;
		if (path.empty()) {
			*error = "no plugin found beside the compositor; give --plugin PATH or --no-plugin";
			return false;
		}
		if (!load_plugin(path, &plugin_api_, error)) {
			return false;
		}
		pixelport_options plugin_options{};
		plugin_options.struct_size = sizeof plugin_options;
		plugin_options.convert_threads = options.convert_threads;
		plugin_options.image_budget_client_bytes = options.image_budget_client;
		plugin_options.image_budget_total_bytes = options.image_budget_total;
		plugin_options.stream_max_buffer_bytes = options.stream_max_buffer_bytes;
		plugin_options.stream_max_buffers = options.stream_max_buffers;
		plugin_options.stream_max_inflight_bytes = options.stream_max_inflight_bytes;
		plugin_options.stream_max_streams = options.stream_max_streams;
		plugin_options.stream_max_client_bytes = options.stream_max_client_bytes;
		plugin_options.client_max_pools = options.client_max_pools;
		plugin_options.client_max_mappings = options.client_max_mappings;
		plugin_options.client_max_shm_buffers = options.client_max_shm_buffers;
		plugin_options.client_max_subscriptions = options.client_max_subscriptions;
		plugin_options.client_max_color_surfaces = options.client_max_color_surfaces;
		plugin_options.client_max_images = options.client_max_images;
		if (options_.gstreamer_withhold)
			plugin_options.gstreamer_withhold = options_.gstreamer_withhold->c_str();
		if (!options.timing_log.empty()) plugin_options.timing_log_path = options_.timing_log.c_str();
		if (!options.timing_trace.empty()) plugin_options.timing_trace_path = options_.timing_trace.c_str();
		plugin_ = plugin_api_.create(display_, renderer_, &plugin_options);
		// Each global the plugin serves, at the newest version it speaks.
		auto wanted = [&](const char *name) {
			return std::find(options.without_globals.begin(), options.without_globals.end(), name) ==
				options.without_globals.end();
		};
		bool started = plugin_ != nullptr && plugin_api_.shm_create(plugin_, 2) != nullptr;
		started = started &&
			(!wanted("pp_stream_manager_v1") || plugin_api_.stream_manager_create(plugin_, 1) != nullptr);
		started = started &&
			(!wanted("pp_timing_manager_v1") || plugin_api_.timing_manager_create(plugin_, 4) != nullptr);
		started = started &&
			(!wanted("wp_color_representation_manager_v1") ||
				plugin_api_.color_representation_manager_create(plugin_, 1) != nullptr);
		// Frame pacing: in every plugin of this ABI, looked up as optional all the same.
		started = started &&
			(!wanted("wp_fifo_manager_v1") ||
				(plugin_api_.fifo_manager_create != nullptr &&
					plugin_api_.fifo_manager_create(plugin_, 1) != nullptr));
		started = started &&
			(!wanted("wp_commit_timing_manager_v1") ||
				(plugin_api_.commit_timing_manager_create != nullptr &&
					plugin_api_.commit_timing_manager_create(plugin_, 1) != nullptr));
		if (!started) {
			*error = "the plugin " + path + " failed to start (see the log above)";
			return false;
		}
		wlr_log(WLR_INFO, "loaded plugin %s", path.c_str());
		if (wlr_renderer_get_texture_formats(renderer_, WLR_BUFFER_CAP_DMABUF) != nullptr &&
			wlr_renderer_get_drm_fd(renderer_) >= 0) {
			wlr_linux_dmabuf_v1_create_with_renderer(display_, 4, renderer_);
		}
	} else if (!wlr_renderer_init_wl_display(renderer_, display_)) {
		*error = "cannot create wlroots' wl_shm";
		return false;
	}

	allocator_ = wlr_allocator_autocreate(backend_, renderer_);
	if (allocator_ == nullptr) {
		*error = "cannot create an allocator";
		return false;
	}

	compositor_ = wlr_compositor_create(display_, 6, renderer_);
	if (plugin_ != nullptr) {
		plugin_api_.attach_compositor(plugin_, compositor_);
	}
	wlr_subcompositor_create(display_);
	wlr_data_device_manager_create(display_);

	output_layout_ = wlr_output_layout_create(display_);
	scene_ = wlr_scene_create();
	scene_layout_ = wlr_scene_attach_output_layout(scene_, output_layout_);
	new_output_.connect(&backend_->events.new_output,
		[this](void *data) { handle_new_output(static_cast<wlr_output *>(data)); });

	xdg_shell_ = wlr_xdg_shell_create(display_, 3);
	new_toplevel_.connect(&xdg_shell_->events.new_toplevel,
		[this](void *data) { handle_new_toplevel(static_cast<wlr_xdg_toplevel *>(data)); });
	new_popup_.connect(&xdg_shell_->events.new_popup,
		[this](void *data) { handle_new_popup(static_cast<wlr_xdg_popup *>(data)); });

	// Clients measure with presentation-time; grim reads the output through screencopy.
	pixelport::wlr_compat::presentation_create(display_, backend_);
	wlr_screencopy_manager_v1_create(display_);
	wlr_xdg_output_manager_v1_create(display_, output_layout_);
	// Video players (GStreamer's waylandsink) scale and crop with wp_viewporter.
	wlr_viewporter_create(display_);
	// A seat with no devices: some clients refuse to start without wl_seat.
	seat_ = wlr_seat_create(display_, "seat0");

	if (!options.embedded) {
		sigint_ = wl_event_loop_add_signal(loop, SIGINT, handle_signal, this);
		sigterm_ = wl_event_loop_add_signal(loop, SIGTERM, handle_signal, this);
		sigchld_ = wl_event_loop_add_signal(loop, SIGCHLD, handle_signal, this);
		sigusr1_ = wl_event_loop_add_signal(loop, SIGUSR1, handle_signal, this);
	}
	return true;
}

bool Server::start(std::string *error) {
	const char *socket = nullptr;
	if (options_.embedded) {
		socket = ""; // the host hands clients over through wl_client_create
	} else if (options_.socket_name.empty()) {
		socket = wl_display_add_socket_auto(display_);
	} else if (wl_display_add_socket(display_, options_.socket_name.c_str()) == 0) {
		socket = options_.socket_name.c_str();
	}
	if (socket == nullptr) {
		*error = "cannot open a Wayland socket (is XDG_RUNTIME_DIR set and writable?)";
		return false;
	}
	socket_ = socket;

	// The headless backend creates no output unless asked.
	if (wlr_backend_is_headless(backend_)) {
		add_headless_outputs(backend_, &options_);
	} else {
		wlr_multi_for_each_backend(backend_, add_headless_outputs, &options_);
	}
	if (!wlr_backend_start(backend_)) {
		*error = "cannot start the wlroots backend";
		return false;
	}
	if (!options_.embedded) {
		setenv("WAYLAND_DISPLAY", socket_.c_str(), 1);
	}
	wlr_log(WLR_INFO, "running on WAYLAND_DISPLAY=%s (%s)", socket_.c_str(),
		plugin_ != nullptr ? "with pixelport" : "stock wlroots, no plugin");

	if (!options_.startup_command.empty()) {
		child_ = fork();
		if (child_ < 0) {
			*error = "fork failed";
			return false;
		}
		if (child_ == 0) {
			// The event loop blocked these signals for its signalfd; the client must not inherit that.
			sigset_t none;
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, nullptr);
			setpgid(0, 0);
			unsetenv("WAYLAND_SOCKET");
			execl("/bin/sh", "/bin/sh", "-c", options_.startup_command.c_str(), nullptr);
			_exit(127);
		}
	}
	return true;
}

void Server::run() { wl_display_run(display_); }

std::string Server::timing_summary() const {
	if (plugin_ == nullptr || plugin_api_.timing_summary == nullptr) {
		return "";
	}
	std::string text(plugin_api_.timing_summary(plugin_, nullptr, 0) + 1, '\0');
	plugin_api_.timing_summary(plugin_, text.data(), text.size());
	text.pop_back();
	return text;
}

bool Server::plugin_stats(pixelport_stats *stats) const {
	if (plugin_ == nullptr || plugin_api_.get_stats == nullptr) {
		return false;
	}
	stats->struct_size = sizeof *stats;
	plugin_api_.get_stats(plugin_, stats);
	return true;
}

void Server::stop() { wl_display_terminate(display_); }

int Server::handle_signal(int signal, void *data) {
	auto *server = static_cast<Server *>(data);
	if (signal == SIGCHLD) {
		server->reap_children();
	} else if (signal == SIGUSR1) {
		fprintf(stderr, "%s", server->timing_summary().c_str());
	} else {
		wlr_log(WLR_INFO, "signal %d: shutting down", signal);
		server->stop();
	}
	return 0;
}

void Server::reap_children() {
	int status = 0;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid != child_) {
			continue;
		}
		child_ = -1;
		exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		wlr_log(WLR_INFO, "startup command exited with status %d", exit_code_);
		stop();
	}
}

void Server::handle_new_output(wlr_output *wlr_output) {
	wlr_output_init_render(wlr_output, allocator_, renderer_);

	wlr_output_state state;
	wlr_output_state_init(&state);
	wlr_output_state_set_enabled(&state, true);
	if (wlr_output_is_headless(wlr_output)) {
		wlr_output_state_set_custom_mode(
			&state, options_.output_width, options_.output_height, options_.refresh_mhz);
	} else if (wlr_output_mode *mode = wlr_output_preferred_mode(wlr_output)) {
		wlr_output_state_set_mode(&state, mode);
	}
	wlr_output_commit_state(wlr_output, &state);
	wlr_output_state_finish(&state);

	auto output = std::make_unique<Output>();
	output->server = this;
	output->output = wlr_output;
	Output *o = output.get();
	// wlroots' headless output presents with refresh 0 ("unknown"): clients that pace by the
	// refresh (Mesa's Vulkan WSI sends commit-timing targets only with one) get the mode's, in
	// every listener after this one (wp_presentation's, the plugin's).
	if (wlr_output_is_headless(wlr_output)) {
		o->present.connect(&wlr_output->events.present, [o](void *data) {
			auto *event = static_cast<wlr_output_event_present *>(data);
			if (event->refresh == 0 && o->output->refresh > 0) {
				event->refresh = static_cast<int>(int64_t{1000000000000} / o->output->refresh);
			}
		});
	}

	// Before our frame listener: the plugin measures render start on the frame event.
	if (plugin_ != nullptr && plugin_api_.attach_output != nullptr) {
		plugin_api_.attach_output(plugin_, wlr_output);
	}

	// Each frame event renders the scene and tells clients their frame was shown.
	o->frame.connect(&wlr_output->events.frame, [o](void *) {
		wlr_scene_output_commit(o->scene_output, nullptr);
		timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		wlr_scene_output_send_frame_done(o->scene_output, &now);
	});
	o->request_state.connect(&wlr_output->events.request_state, [o](void *data) {
		auto *event = static_cast<wlr_output_event_request_state *>(data);
		wlr_output_commit_state(o->output, event->state);
	});
	o->destroy.connect(&wlr_output->events.destroy, [o](void *) { o->server->remove_output(o); });

	wlr_output_layout_output *layout_output = wlr_output_layout_add_auto(output_layout_, wlr_output);
	o->scene_output = wlr_scene_output_create(scene_, wlr_output);
	wlr_scene_output_layout_add_output(scene_layout_, layout_output, o->scene_output);
	outputs_.push_back(std::move(output));
}

void Server::remove_output(Output *output) {
	outputs_.remove_if([output](const auto &o) { return o.get() == output; });
}

void Server::handle_new_toplevel(wlr_xdg_toplevel *xdg_toplevel) {
	auto toplevel = std::make_unique<Toplevel>();
	Toplevel *t = toplevel.get();
	t->server = this;
	t->xdg_toplevel = xdg_toplevel;
	// Every window sits at the output origin: tests compare pixels at known positions.
	t->scene_tree = wlr_scene_xdg_surface_create(&scene_->tree, xdg_toplevel->base);
	xdg_toplevel->base->data = t->scene_tree;
	t->commit.connect(&xdg_toplevel->base->surface->events.commit, [t](void *) {
		// The client maps only after answering a configure: 0x0 lets it pick its size, unless
		// it asked to be fullscreen or maximized before.
		if (t->xdg_toplevel->base->initial_commit) {
			wlr_xdg_toplevel_set_size(t->xdg_toplevel, 0, 0);
			t->server->apply_toplevel_state(t);
		}
	});
	// Before the initial commit the request is only noted (wlroots keeps it in `requested`);
	// the initial commit's configure answers it.
	auto requested = [t](void *) {
		if (t->xdg_toplevel->base->initialized) t->server->apply_toplevel_state(t);
	};
	t->request_fullscreen.connect(&xdg_toplevel->events.request_fullscreen, requested);
	t->request_maximize.connect(&xdg_toplevel->events.request_maximize, requested);
	t->destroy.connect(&xdg_toplevel->events.destroy, [t](void *) { t->server->remove_toplevel(t); });
	toplevels_.push_back(std::move(toplevel));
}

void Server::apply_toplevel_state(Toplevel *t) {
	wlr_xdg_toplevel *xdg = t->xdg_toplevel;
	const bool fullscreen = xdg->requested.fullscreen, maximized = xdg->requested.maximized;
	wlr_scene_node *node = &t->scene_tree->node;
	if (fullscreen || maximized) {
		// The output it asked for, else the one under its top-left corner, else the first.
		wlr_output *output = fullscreen ? xdg->requested.fullscreen_output : nullptr;
		if (output == nullptr) output = wlr_output_layout_output_at(output_layout_, node->x, node->y);
		if (output == nullptr && !outputs_.empty()) output = outputs_.front()->output;
		wlr_box box{};
		if (output != nullptr) wlr_output_layout_get_box(output_layout_, output, &box);
		if (wlr_box_empty(&box)) {
			// No output to fill: it keeps the size it picks.
			wlr_xdg_toplevel_set_fullscreen(xdg, fullscreen);
			wlr_xdg_toplevel_set_maximized(xdg, maximized);
			return;
		}
		if (!t->fills_output) {
			const wlr_box geometry = wlr_compat::xdg_geometry(xdg->base);
			t->restore = {node->x, node->y, geometry.width, geometry.height};
			t->fills_output = true;
		}
		wlr_scene_node_set_position(node, box.x, box.y);
		wlr_scene_node_raise_to_top(node);
		wlr_xdg_toplevel_set_size(xdg, box.width, box.height);
	} else if (t->fills_output) {
		t->fills_output = false;
		wlr_scene_node_set_position(node, t->restore.x, t->restore.y);
		wlr_xdg_toplevel_set_size(xdg, t->restore.width, t->restore.height);
	}
	// One configure carries the size and both states (wlroots sends it when idle).
	wlr_xdg_toplevel_set_fullscreen(xdg, fullscreen);
	wlr_xdg_toplevel_set_maximized(xdg, maximized);
	wlr_xdg_surface_schedule_configure(xdg->base);
}

bool Server::move_toplevel(wlr_surface *surface, int x, int y) {
	for (const auto &t : toplevels_) {
		if (t->xdg_toplevel->base->surface == surface) {
			wlr_scene_node_set_position(&t->scene_tree->node, x, y);
			return true;
		}
	}
	return false;
}

void Server::remove_toplevel(Toplevel *toplevel) {
	toplevels_.remove_if([toplevel](const auto &t) { return t.get() == toplevel; });
}

void Server::handle_new_popup(wlr_xdg_popup *xdg_popup) {
	auto *popup = new Popup();
	popup->xdg_popup = xdg_popup;
	wlr_xdg_surface *parent = wlr_xdg_surface_try_from_wlr_surface(xdg_popup->parent);
	if (parent != nullptr && parent->data != nullptr) {
		auto *parent_tree = static_cast<wlr_scene_tree *>(parent->data);
		xdg_popup->base->data = wlr_scene_xdg_surface_create(parent_tree, xdg_popup->base);
	}
	popup->commit.connect(&xdg_popup->base->surface->events.commit, [popup](void *) {
		if (popup->xdg_popup->base->initial_commit) {
			wlr_xdg_surface_schedule_configure(popup->xdg_popup->base);
		}
	});
	popup->destroy.connect(&xdg_popup->events.destroy, [popup](void *) { delete popup; });
}

Server::~Server() {
	if (child_ > 0) {
		kill(-child_, SIGTERM);
	}
	if (display_ != nullptr) {
		wl_display_destroy_clients(display_);
	}
	if (plugin_ != nullptr) {
		plugin_api_.destroy(plugin_);
		plugin_ = nullptr;
	}
	toplevels_.clear();
	for (wl_event_source *source : {sigint_, sigterm_, sigchld_, sigusr1_}) {
		if (source != nullptr) {
			wl_event_source_remove(source);
		}
	}
	new_output_.disconnect();
	new_toplevel_.disconnect();
	new_popup_.disconnect();
	if (scene_ != nullptr) {
		wlr_scene_node_destroy(&scene_->tree.node);
	}
	if (backend_ != nullptr) {
		// Destroys the outputs, whose destroy handlers empty outputs_.
		wlr_backend_destroy(backend_);
	}
	outputs_.clear();
	if (allocator_ != nullptr) {
		wlr_allocator_destroy(allocator_);
	}
	if (renderer_ != nullptr) {
		wlr_renderer_destroy(renderer_);
	}
	if (display_ != nullptr) {
		wl_display_destroy(display_);
	}
	unload_plugin(&plugin_api_);
}

} // namespace pixelport
