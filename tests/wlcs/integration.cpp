// libpixelport-wlcs.so: runs the reference compositor (pixelport::Server) inside the wlcs
// process so the Wayland conformance suite can test it. See docs/conformance.md.
//
// Display server version 3 with start_on_this_thread only: wlcs runs our wl_display on a
// thread of its own and proxies every hook (create_client_socket, position_window_absolute,
// the pointer and touch calls, stop) onto that thread through its own wl_event_loop, which we
// dispatch from ours. So every hook below runs on the compositor's thread and needs no lock.
//
// Environment: PIXELPORT_WLCS_NO_PLUGIN=1 runs stock wlroots' wl_shm (--no-plugin);
// PIXELPORT_WLCS_PLUGIN overrides the plugin built beside this module.
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include <wayland-client-core.h>
#include <wlcs/display_server.h>
#include <wlcs/pointer.h>
#include <wlcs/touch.h>

#include "server.hpp"

namespace {

// The globals pixelport::Server creates (server.cpp), at the versions wlroots 0.18 and the
// plugin advertise. wlcs skips tests whose extensions are missing here.
const WlcsExtensionDescriptor kExtensions[] = {
	{"wl_compositor", 6},
	{"wl_subcompositor", 1},
	{"wl_data_device_manager", 3},
	{"wl_shm", 2},
	{"wl_seat", 9},
	{"wl_output", 4},
	{"xdg_wm_base", 3},
	{"zxdg_output_manager_v1", 3},
	{"wp_presentation", 1},
	{"wp_viewporter", 1},
	{"zwlr_screencopy_manager_v1", 3},
};

const WlcsIntegrationDescriptor kDescriptor = {
	1,
	sizeof(kExtensions) / sizeof(kExtensions[0]),
	kExtensions,
};

uint32_t now_msec() {
	timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return static_cast<uint32_t>(now.tv_sec * 1000 + now.tv_nsec / 1000000);
}

struct Display;

// A server-side wl_client created for one socket handed to wlcs, found again by the fd wlcs
// connected with (position_window_absolute gives us only the client-side wl_display).
struct ClientEntry {
	wl_listener destroy;
	Display *owner;
	wl_client *client;
	int client_fd;
};

// wlcs 1.5.0 (Debian 12) attaches buffers to xdg_surfaces without waiting to ack a configure
// (fixed upstream in wlcs#324, 2023-12), which wlroots rightly refuses with
// xdg_surface.unconfigured_buffer. So, in both modes alike, every xdg_surface counts as
// configured from creation and again after an unmap: that one error is not enforced, and the
// wlcs tests that check for it are expected failures. PIXELPORT_WLCS_STRICT_XDG=1 turns this
// off to show the unpatched behaviour.
struct ConfigureShim {
	pixelport::Listener client_commit;
	pixelport::Listener commit;
	pixelport::Listener destroy;
};

struct Display {
	WlcsDisplayServer base; // first: wlcs hands us &base
	std::unique_ptr<pixelport::Server> server;
	std::unordered_map<int, ClientEntry *> clients;
	pixelport::Listener new_xdg_surface;
	int32_t next_touch_id = 0;
	// run_on_loop's channel: [0] is read by the loop, [1] written by callers.
	int calls[2] = {-1, -1};
	std::mutex calls_mutex;
	std::thread::id loop_thread;
};

// Runs `fn` on the compositor thread and waits for it: a pointer to it goes down a socket
// the event loop watches, one byte comes back when it has run.
void run_on_loop(Display *d, const std::function<void()> &fn) {
	if (std::this_thread::get_id() == d->loop_thread) {
		fn();
		return;
	}
	std::lock_guard<std::mutex> lock(d->calls_mutex);
	const std::function<void()> *call = &fn;
	char done = 0;
	if (write(d->calls[1], &call, sizeof(call)) != sizeof(call) || read(d->calls[1], &done, 1) != 1) {
		fprintf(stderr, "pixelport-wlcs: cannot reach the compositor thread\n");
		abort();
	}
}

int handle_call(int fd, uint32_t, void *) {
	const std::function<void()> *call = nullptr;
	if (read(fd, &call, sizeof(call)) == sizeof(call)) {
		(*call)();
		char done = 1;
		(void)!write(fd, &done, 1);
	}
	return 0;
}

void add_configure_shim(wlr_xdg_surface *xdg_surface) {
	auto *shim = new ConfigureShim();
	xdg_surface->configured = true;
	// An unmapping commit resets it (wlr_xdg_surface.c reset_xdg_surface).
	shim->commit.connect(
		&xdg_surface->surface->events.commit, [xdg_surface](void *) { xdg_surface->configured = true; });
	// A first commit may now map; wlroots asserts that an unmapping commit never follows an
	// initial one, so the flag, recomputed on every other commit anyway, is cleared first.
	shim->client_commit.connect(&xdg_surface->surface->events.client_commit,
		[xdg_surface](void *) { xdg_surface->initial_commit = false; });
	shim->destroy.connect(&xdg_surface->events.destroy, [shim](void *) { delete shim; });
}

Display *display_of(WlcsDisplayServer *base) { return reinterpret_cast<Display *>(base); }

// The surface under layout point (x, y) and the point in its coordinates, or null.
wlr_surface *surface_at(Display *d, double x, double y, double *sx, double *sy) {
	wlr_scene_node *node = wlr_scene_node_at(&d->server->scene()->tree.node, x, y, sx, sy);
	if (node == nullptr || node->type != WLR_SCENE_NODE_BUFFER) {
		return nullptr;
	}
	wlr_scene_surface *scene_surface = wlr_scene_surface_try_from_buffer(wlr_scene_buffer_from_node(node));
	return scene_surface != nullptr ? scene_surface->surface : nullptr;
}

// Layout position of the surface's scene node: input already focused there keeps going to
// it (implicit grab) even when the point leaves it.
bool surface_origin(Display *d, wlr_surface *surface, int *x, int *y) {
	wlr_scene_node *root = &d->server->scene()->tree.node;
	struct Search {
		wlr_surface *surface;
		wlr_scene_buffer *found;
	} search{surface, nullptr};
	wlr_scene_node_for_each_buffer(
		root,
		[](wlr_scene_buffer *buffer, int, int, void *data) {
			auto *s = static_cast<Search *>(data);
			wlr_scene_surface *scene_surface = wlr_scene_surface_try_from_buffer(buffer);
			if (scene_surface != nullptr && scene_surface->surface == s->surface) {
				s->found = buffer;
			}
		},
		&search);
	return search.found != nullptr && wlr_scene_node_coords(&search.found->node, x, y);
}

// ---- pointer: seat notifications straight from the hooks, no wlr_input_device --------------

struct Pointer {
	WlcsPointer base;
	Display *display;
	double x = 0, y = 0;
	int buttons = 0;
};

void pointer_update(Pointer *p) {
	wlr_seat *seat = p->display->server->seat();
	double sx = 0, sy = 0;
	wlr_surface *focus = seat->pointer_state.focused_surface;
	int ox = 0, oy = 0;
	if (p->buttons > 0 && focus != nullptr && surface_origin(p->display, focus, &ox, &oy)) {
		// A held button keeps the pointer on the surface it pressed.
		wlr_seat_pointer_notify_motion(seat, now_msec(), p->x - ox, p->y - oy);
	} else if (wlr_surface *surface = surface_at(p->display, p->x, p->y, &sx, &sy)) {
		wlr_seat_pointer_notify_enter(seat, surface, sx, sy);
		wlr_seat_pointer_notify_motion(seat, now_msec(), sx, sy);
	} else {
		wlr_seat_pointer_notify_clear_focus(seat);
	}
	wlr_seat_pointer_notify_frame(seat);
}

void pointer_button(Pointer *p, int button, wl_pointer_button_state state) {
	wlr_seat *seat = p->display->server->seat();
	p->buttons += state == WL_POINTER_BUTTON_STATE_PRESSED ? 1 : -1;
	wlr_seat_pointer_notify_button(seat, now_msec(), static_cast<uint32_t>(button), state);
	wlr_seat_pointer_notify_frame(seat);
}

WlcsPointer *create_pointer(WlcsDisplayServer *base) {
	auto *p = new Pointer{};
	p->display = display_of(base);
	p->base.version = WLCS_POINTER_VERSION;
	p->base.move_absolute = [](WlcsPointer *wp, wl_fixed_t x, wl_fixed_t y) {
		auto *p = reinterpret_cast<Pointer *>(wp);
		p->x = wl_fixed_to_double(x);
		p->y = wl_fixed_to_double(y);
		pointer_update(p);
	};
	p->base.move_relative = [](WlcsPointer *wp, wl_fixed_t dx, wl_fixed_t dy) {
		auto *p = reinterpret_cast<Pointer *>(wp);
		p->x += wl_fixed_to_double(dx);
		p->y += wl_fixed_to_double(dy);
		pointer_update(p);
	};
	p->base.button_down = [](WlcsPointer *wp, int button) {
		pointer_button(reinterpret_cast<Pointer *>(wp), button, WL_POINTER_BUTTON_STATE_PRESSED);
	};
	p->base.button_up = [](WlcsPointer *wp, int button) {
		pointer_button(reinterpret_cast<Pointer *>(wp), button, WL_POINTER_BUTTON_STATE_RELEASED);
	};
	p->base.destroy = [](WlcsPointer *wp) { delete reinterpret_cast<Pointer *>(wp); };
	return &p->base;
}

// ---- touch: one touch point per WlcsTouch ---------------------------------------------------
//
// wlcs 1.5.0 calls touch_down/move/up straight from the test thread (not through its proxy,
// unlike every other hook) and passes whole pixels where the header says wl_fixed_t. So
// these hooks hop onto the compositor thread themselves and read the values as pixels.

struct Touch {
	WlcsTouch base;
	Display *display;
	int32_t id;
	bool down = false;
};

void touch_down(Touch *t, double x, double y) {
	wlr_seat *seat = t->display->server->seat();
	double sx = 0, sy = 0;
	if (wlr_surface *surface = surface_at(t->display, x, y, &sx, &sy)) {
		wlr_seat_touch_notify_down(seat, surface, now_msec(), t->id, sx, sy);
		wlr_seat_touch_notify_frame(seat);
		t->down = true;
	}
}

void touch_move(Touch *t, double x, double y) {
	wlr_seat *seat = t->display->server->seat();
	wlr_touch_point *point = t->down ? wlr_seat_touch_get_point(seat, t->id) : nullptr;
	int ox = 0, oy = 0;
	// Motion stays with the surface the touch went down on, in its coordinates.
	if (point != nullptr && surface_origin(t->display, point->surface, &ox, &oy)) {
		wlr_seat_touch_notify_motion(seat, now_msec(), t->id, x - ox, y - oy);
		wlr_seat_touch_notify_frame(seat);
	}
}

void touch_up(Touch *t) {
	wlr_seat *seat = t->display->server->seat();
	if (t->down && wlr_seat_touch_get_point(seat, t->id) != nullptr) {
		wlr_seat_touch_notify_up(seat, now_msec(), t->id);
		wlr_seat_touch_notify_frame(seat);
	}
	t->down = false;
}

WlcsTouch *create_touch(WlcsDisplayServer *base) {
	auto *t = new Touch{};
	t->display = display_of(base);
	t->id = t->display->next_touch_id++;
	t->base.version = WLCS_TOUCH_VERSION;
	t->base.touch_down = [](WlcsTouch *wt, wl_fixed_t x, wl_fixed_t y) {
		auto *t = reinterpret_cast<Touch *>(wt);
		run_on_loop(t->display, [t, x, y] { touch_down(t, x, y); });
	};
	t->base.touch_move = [](WlcsTouch *wt, wl_fixed_t x, wl_fixed_t y) {
		auto *t = reinterpret_cast<Touch *>(wt);
		run_on_loop(t->display, [t, x, y] { touch_move(t, x, y); });
	};
	t->base.touch_up = [](WlcsTouch *wt) {
		auto *t = reinterpret_cast<Touch *>(wt);
		run_on_loop(t->display, [t] { touch_up(t); });
	};
	t->base.destroy = [](WlcsTouch *wt) { delete reinterpret_cast<Touch *>(wt); };
	return &t->base;
}

// ---- the display server ---------------------------------------------------------------------

int create_client_socket(WlcsDisplayServer *base) {
	Display *d = display_of(base);
	int fds[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) {
		return -1;
	}
	wl_client *client = wl_client_create(d->server->display(), fds[0]);
	if (client == nullptr) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	auto *entry = new ClientEntry{{}, d, client, fds[1]};
	entry->destroy.notify = [](wl_listener *listener, void *) {
		auto *entry = reinterpret_cast<ClientEntry *>(listener);
		auto it = entry->owner->clients.find(entry->client_fd);
		if (it != entry->owner->clients.end() && it->second == entry) {
			entry->owner->clients.erase(it);
		}
		delete entry;
	};
	wl_client_add_destroy_listener(client, &entry->destroy);
	d->clients[fds[1]] = entry; // a reused fd number replaces a client on its way out
	return fds[1];
}

void position_window_absolute(WlcsDisplayServer *base, wl_display *client_display, wl_surface *surface, int x, int y) {
	Display *d = display_of(base);
	auto it = d->clients.find(wl_display_get_fd(client_display));
	if (it == d->clients.end()) {
		fprintf(stderr, "pixelport-wlcs: position_window_absolute: unknown client\n");
		return;
	}
	// Same object id on both ends of the connection.
	wl_resource *resource =
		wl_client_get_object(it->second->client, wl_proxy_get_id(reinterpret_cast<wl_proxy *>(surface)));
	wlr_surface *wlr_surface = resource != nullptr ? wlr_surface_from_resource(resource) : nullptr;
	if (wlr_surface == nullptr || !d->server->move_toplevel(wlr_surface, x, y)) {
		fprintf(stderr, "pixelport-wlcs: position_window_absolute: not a toplevel's surface\n");
	}
}

void start_on_this_thread(WlcsDisplayServer *base, wl_event_loop *wlcs_loop) {
	Display *d = display_of(base);
	// wlcs's proxied calls arrive on its loop; its epoll fd becomes readable when they do.
	wl_event_loop *loop = wl_display_get_event_loop(d->server->display());
	wl_event_source *source = wl_event_loop_add_fd(
		loop, wl_event_loop_get_fd(wlcs_loop), WL_EVENT_READABLE,
		[](int, uint32_t, void *data) {
			wl_event_loop_dispatch(static_cast<wl_event_loop *>(data), 0);
			return 0;
		},
		wlcs_loop);
	d->loop_thread = std::this_thread::get_id();
	wl_event_source *calls = wl_event_loop_add_fd(loop, d->calls[0], WL_EVENT_READABLE, handle_call, nullptr);
	std::string error;
	if (!d->server->start(&error)) {
		fprintf(stderr, "pixelport-wlcs: %s\n", error.c_str());
		abort();
	}
	d->server->run();
	wl_event_source_remove(calls);
	wl_event_source_remove(source);
	d->loop_thread = {};
}

WlcsDisplayServer *create_server(int, const char **) {
	static bool log_initialised = false;
	if (!log_initialised) {
		const char *level = getenv("PIXELPORT_WLCS_LOG");
		wlr_log_init(level != nullptr && std::string(level) == "debug" ? WLR_DEBUG : WLR_ERROR, nullptr);
		log_initialised = true;
	}
	pixelport::ServerOptions options;
	options.embedded = true;
	const char *no_plugin = getenv("PIXELPORT_WLCS_NO_PLUGIN");
	options.no_plugin = no_plugin != nullptr && std::string(no_plugin) == "1";
	const char *plugin = getenv("PIXELPORT_WLCS_PLUGIN");
	options.plugin_path = plugin != nullptr ? plugin : PIXELPORT_WLCS_DEFAULT_PLUGIN;

	std::string error;
	auto server = pixelport::Server::create(options, &error);
	if (!server) {
		fprintf(stderr, "pixelport-wlcs: %s\n", error.c_str());
		return nullptr;
	}
	wlr_seat_set_capabilities(server->seat(), WL_SEAT_CAPABILITY_POINTER | WL_SEAT_CAPABILITY_TOUCH);

	auto *d = new Display{};
	d->server = std::move(server);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, d->calls) < 0) {
		delete d;
		return nullptr;
	}
	const char *strict = getenv("PIXELPORT_WLCS_STRICT_XDG");
	if (strict == nullptr || std::string(strict) != "1") {
		d->new_xdg_surface.connect(&d->server->xdg_shell()->events.new_surface,
			[](void *data) { add_configure_shim(static_cast<wlr_xdg_surface *>(data)); });
	}
	d->base.version = 3;
	d->base.start = nullptr; // wlcs prefers start over start_on_this_thread
	d->base.start_on_this_thread = start_on_this_thread;
	d->base.stop = [](WlcsDisplayServer *base) { display_of(base)->server->stop(); };
	d->base.create_client_socket = create_client_socket;
	d->base.position_window_absolute = position_window_absolute;
	d->base.create_pointer = create_pointer;
	d->base.create_touch = create_touch;
	d->base.get_descriptor = [](const WlcsDisplayServer *) { return &kDescriptor; };
	return &d->base;
}

void destroy_server(WlcsDisplayServer *base) {
	Display *d = display_of(base);
	d->new_xdg_surface.disconnect();
	d->server.reset(); // destroys the clients, whose destroy listeners empty d->clients
	close(d->calls[0]);
	close(d->calls[1]);
	delete d;
}

} // namespace

extern "C" __attribute__((visibility("default"))) const WlcsServerIntegration wlcs_server_integration = {
	1,
	create_server,
	destroy_server,
};
