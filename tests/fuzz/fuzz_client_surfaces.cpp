// pixelport-fuzz-client: wl_surface, xdg and subsurface requests.
#include <arpa/inet.h>
#include <drm_fourcc.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "pixelport-timing-v1-client-protocol.h"
#include "pixelport/core/format.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

#include "fuzz_client.hpp"

namespace pixelport::fuzz_client {

// ---- surfaces ----

void Session::create_surface() {
	if (surfaces_.size() >= 32) return;
	auto s = std::make_unique<Surface>();
	s->surface = wl_compositor_create_surface(conn_.compositor);
	s->ack_configure = !bad();
	log("create_surface surf%zu", surfaces_.size());
	surfaces_.push_back(std::move(s));
}

void Session::make_toplevel() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0 || conn_.wm_base == nullptr) return;
	Surface &s = *surfaces_[i];
	// A second role, or a first buffer before the first configure, is an error: rarely.
	if (s.attached && !o_.role_after_buffer) return;
	if ((s.xsurface || s.role == 2 || s.attached) && !bad()) return;
	log("surf%d get_xdg_surface + get_toplevel", i);
	if (s.xsurface) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s.xsurface)); // forget, keep the server's
	if (s.toplevel) wl_proxy_destroy(reinterpret_cast<wl_proxy *>(s.toplevel));
	s.xsurface = xdg_wm_base_get_xdg_surface(conn_.wm_base, s.surface);
	s.role = 1;
	s.configured = false;
	static const xdg_surface_listener listener = {
		.configure =
			[](void *data, xdg_surface *xs, uint32_t serial) {
				auto *surface = static_cast<Surface *>(data);
				if (surface->ack_configure) {
					xdg_surface_ack_configure(xs, serial);
					surface->configured = true;
				}
			},
	};
	xdg_surface_add_listener(s.xsurface, &listener, &s);
	s.toplevel = xdg_surface_get_toplevel(s.xsurface);
	xdg_toplevel_set_title(s.toplevel, "pp-fuzz");
	wl_surface_commit(s.surface); // the initial commit: asks for the first configure
}

// True if surface `a` is `b` or one of b's ancestors (as a subsurface parent).
bool ancestor_or_self(const std::vector<std::unique_ptr<Surface>> &surfaces, int a, int b) {
	for (int k = b, depth = 0; k >= 0 && depth < 64;
		k = surfaces[k]->subsurface ? surfaces[k]->parent : -1, depth++) {
		if (k == a) return true;
	}
	return false;
}

void Session::make_subsurface() {
	int i = pick(surfaces_, surface_alive), parent = pick(surfaces_, surface_alive);
	if (i < 0 || parent < 0 || subcompositor_ == nullptr || surfaces_[i]->subsurface) return;
	if ((surfaces_[i]->role == 1 || ancestor_or_self(surfaces_, i, parent)) && !bad()) return;
	bool sync = rng_.chance(50) && o_.sync_subsurfaces;
	log("surf%d get_subsurface parent=surf%d %s", i, parent, sync ? "sync" : "desync");
	surfaces_[i]->subsurface =
		wl_subcompositor_get_subsurface(subcompositor_, surfaces_[i]->surface, surfaces_[parent]->surface);
	if (!sync) wl_subsurface_set_desync(surfaces_[i]->subsurface);
	surfaces_[i]->role = 2;
	surfaces_[i]->parent = parent;
}

void Session::subsurface_op() {
	int i = pick(surfaces_, surface_alive), j = pick(surfaces_, surface_alive);
	if (i < 0 || surfaces_[i]->subsurface == nullptr) return;
	if (j < 0) j = i;
	wl_subsurface *sub = surfaces_[i]->subsurface;
	switch (rng_.below(4)) {
	case 0:
		if (!o_.sync_subsurfaces) return;
		log("surf%d subsurface.set_sync", i);
		wl_subsurface_set_sync(sub);
		break;
	case 1:
		log("surf%d subsurface.set_desync", i);
		wl_subsurface_set_desync(sub);
		break;
	case 2: {
		int x = static_cast<int>(rng_.range(-300, 300)), y = static_cast<int>(rng_.range(-300, 300));
		log("surf%d subsurface.set_position %d,%d", i, x, y);
		wl_subsurface_set_position(sub, x, y);
		break;
	}
	default:
		// Siblings or the parent are valid; anything else is an error.
		if (!(j == surfaces_[i]->parent ||
			    (surfaces_[j]->subsurface && surfaces_[j]->parent == surfaces_[i]->parent)) &&
			!bad())
			return;
		bool above = rng_.chance(50);
		log("surf%d subsurface.place_%s surf%d", i, above ? "above" : "below", j);
		if (above)
			wl_subsurface_place_above(sub, surfaces_[j]->surface);
		else
			wl_subsurface_place_below(sub, surfaces_[j]->surface);
		break;
	}
}

// Destroys a role object (toplevel, xdg_surface or subsurface), in any order.
void Session::role_destroy() {
	int i = static_cast<int>(rng_.below(static_cast<uint32_t>(std::max<size_t>(surfaces_.size(), 1))));
	if (i >= static_cast<int>(surfaces_.size())) return;
	Surface &s = *surfaces_[i];
	switch (rng_.below(3)) {
	case 0:
		if (!s.toplevel) return;
		log("surf%d toplevel.destroy", i);
		xdg_toplevel_destroy(s.toplevel);
		s.toplevel = nullptr;
		if (bad()) break;
		[[fallthrough]]; // an xdg_surface without its role object cannot be committed
	case 1:
		if (!s.xsurface || (s.toplevel && !bad())) return;
		log("surf%d xdg_surface.destroy", i);
		xdg_surface_destroy(s.xsurface);
		s.xsurface = nullptr;
		break;
	default:
		if (!s.subsurface) return;
		log("surf%d subsurface.destroy", i);
		wl_subsurface_destroy(s.subsurface);
		s.subsurface = nullptr;
		break;
	}
}

void Session::surface_destroy() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	// Role objects go first; a surface destroyed before them is an error.
	if ((surfaces_[i]->xsurface || surfaces_[i]->toplevel) && !bad()) return;
	log("surf%d.destroy", i);
	wl_surface_destroy(surfaces_[i]->surface);
	surfaces_[i]->surface = nullptr;
}

void Session::attach() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	int b = rng_.chance(90) ? pick(buffers_, buffer_alive) : -1;
	Surface &s = *surfaces_[i];
	if (b >= 0 && s.xsurface && !s.configured && !bad()) return; // a buffer before the first configure
	s.attached = s.attached || b >= 0;
	int x = rng_.chance(90) ? 0 : static_cast<int>(rng_.range(-16, 16)),
	    y = rng_.chance(90) ? 0 : static_cast<int>(rng_.range(-16, 16));
	log("surf%d.attach buf%d %d,%d", i, b, x, y);
	wl_surface_attach(surfaces_[i]->surface, b >= 0 ? buffers_[b].buffer : nullptr, x, y);
}

void Session::damage() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	int x, y, w, h;
	if (rng_.chance(60)) {
		x = 0, y = 0, w = INT32_MAX, h = INT32_MAX;
	} else {
		x = static_cast<int>(rng_.range(-64, 600)), y = static_cast<int>(rng_.range(-64, 600));
		w = static_cast<int>(rng_.range(-8, 1000)), h = static_cast<int>(rng_.range(-8, 1000));
	}
	bool buffer = rng_.chance(70);
	log("surf%d.%s %d,%d %dx%d", i, buffer ? "damage_buffer" : "damage", x, y, w, h);
	if (buffer)
		wl_surface_damage_buffer(surfaces_[i]->surface, x, y, w, h);
	else
		wl_surface_damage(surfaces_[i]->surface, x, y, w, h);
}

void Session::commit() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	log("surf%d.commit", i);
	wl_surface_commit(surfaces_[i]->surface);
}

void Session::frame() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0 || callbacks_.size() >= 256) return;
	log("surf%d.frame", i);
	wl_callback *cb = wl_surface_frame(surfaces_[i]->surface);
	static const wl_callback_listener listener = {
		.done =
			[](void *data, wl_callback *cb, uint32_t) {
				auto *list = static_cast<std::vector<wl_callback *> *>(data);
				list->erase(std::remove(list->begin(), list->end(), cb), list->end());
				wl_callback_destroy(cb);
			},
	};
	wl_callback_add_listener(cb, &listener, &callbacks_);
	callbacks_.push_back(cb);
}

void Session::scale_transform() {
	int i = pick(surfaces_, surface_alive);
	if (i < 0) return;
	if (rng_.chance(50)) {
		int scale =
			bad() ? static_cast<int>(rng_.range(-1, 3)) : 1; // any other scale needs a matching buffer size
		log("surf%d.set_buffer_scale %d", i, scale);
		wl_surface_set_buffer_scale(surfaces_[i]->surface, scale);
	} else {
		int t = static_cast<int>(rng_.range(0, bad() ? 9 : 7));
		log("surf%d.set_buffer_transform %d", i, t);
		wl_surface_set_buffer_transform(surfaces_[i]->surface, t);
	}
}

} // namespace pixelport::fuzz_client
