// pixelport-commit-fuzz: surfaces, their roles, buffers and commits, and what each slot may show
// after each of them.
#include <fcntl.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "commit_fuzz.hpp"

namespace pixelport::commit_fuzz {

void Fuzzer::finding(const char *kind, const std::string &what) {
	if (++findings > 50) return; // counted; the first ones tell
	printf("finding %s seed %" PRIu64 " op %" PRIu64 ": %s\n", kind, o.seed, op, what.c_str());
	for (auto &s : surfs) {
		if (!o.verbose) break;
		printf("  surface %d kind %d slot %d role %s parent %d %s buffer %d shown %d colour %06x seq "
		       "%u done %u\n",
			s->id, static_cast<int>(s->kind), s->slot,
			s->top           ? "top"
				: s->sub ? "sub"
					 : "-",
			s->parent ? s->parent->id : 0, s->sync ? "sync" : "desync", s->has_buffer, shown(*s), s->colour,
			s->seq, s->done_seq);
	}
	fflush(stdout);
}

void Fuzzer::unsettle_tree(const Surf &s) {
	unsettle(s);
	for (auto &c : surfs)
		if (c->parent == &s) unsettle_tree(*c);
}

int Fuzzer::free_slot() const {
	for (int k = 1; k < kSlots; k++) {
		bool used = false;
		for (auto &s : surfs) used |= s->slot == k;
		if (!used) return k;
	}
	return -1;
}

void Fuzzer::on_report(void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *, const char *) {
	Surf *s = static_cast<Surf *>(data);
	Fuzzer *f = s->f;
	(flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED ? f->presented : f->discarded)++;
	char what[200];
	if (seq <= s->last_report) {
		snprintf(what, sizeof what, "surface %d: report of commit %u after commit %u's", s->id, seq,
			s->last_report);
		f->finding("timing-order", what);
	} else if (!s->unreported.count(seq)) {
		snprintf(what, sizeof what, "surface %d: report of commit %u, which attached no buffer (or none made)",
			s->id, seq);
		f->finding("timing-unknown", what);
	}
	s->unreported.erase(seq);
	s->last_report = std::max(s->last_report, seq);
}

Surf *Fuzzer::new_surface() {
	auto s = std::make_unique<Surf>();
	s->f = this;
	s->id = static_cast<int>(next_id++);
	s->slot = free_slot();
	s->surface = wl_compositor_create_surface(conn.compositor);
	s->viewport = wp_viewporter_get_viewport(conn.viewporter, s->surface);
	wp_viewport_set_destination(s->viewport, kSide, kSide);
	if (timing) {
		static const pp_surface_timing_v1_listener listener = {
			.info = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t,
					uint32_t, uint32_t, uint32_t, uint32_t) {},
			.timestamp = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t,
					     uint32_t) {},
			.done = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, const char *) {},
			.report = on_report,
			.output_name = [](void *, pp_surface_timing_v1 *, uint32_t, const char *) {},
			.reports = [](void *, pp_surface_timing_v1 *, uint32_t, wl_array *) {},
		};
		s->timing = pp_timing_manager_v1_subscribe(timing, s->surface);
		pp_surface_timing_v1_add_listener(s->timing, &listener, s.get());
	}
	surfs.push_back(std::move(s));
	return surfs.back().get();
}

bool Fuzzer::in_subtree(const Surf &root, const Surf *s) const {
	for (; s != nullptr; s = s->parent)
		if (s == &root) return true;
	return false;
}

bool Fuzzer::shown(const Surf &s) const {
	if (!s.has_buffer) return false;
	if (s.kind == Kind::toplevel) return s.top && s.configured;
	return s.sub && shown(*s.parent);
}

void Fuzzer::place(Surf &child) {
	Surf &p = *child.parent;
	int px = p.kind == Kind::toplevel ? 0 : slot_x(p.slot), py = p.kind == Kind::toplevel ? 0 : slot_y(p.slot);
	wl_subsurface_set_position(child.sub, slot_x(child.slot) - px, slot_y(child.slot) - py);
}

void Fuzzer::commit(Surf &s) {
	static const wl_callback_listener listener = {
		.done =
			[](void *data, wl_callback *cb, uint32_t) {
				auto *fr = static_cast<Frame *>(data);
				fr->s->done_seq = std::max(fr->s->done_seq, fr->seq);
				auto &sizes = fr->s->unframed_sizes;
				for (auto it = sizes.begin(); it != sizes.end() && it->first <= fr->seq;) {
					fr->s->framed_size = it->second;
					it = sizes.erase(it);
				}
				fr->s->frames.erase(cb);
				wl_callback_destroy(cb);
				delete fr;
			},
	};
	s.seq++;
	commits++;
	wl_callback *cb = wl_surface_frame(s.surface);
	wl_callback_add_listener(cb, &listener, new Frame{&s, s.seq});
	s.frames.insert(cb);
	pace(s);
	wl_surface_commit(s.surface);
}

void Fuzzer::forget_frames(Surf &s) {
	for (wl_callback *cb : s.frames) {
		delete static_cast<Frame *>(wl_proxy_get_user_data(reinterpret_cast<wl_proxy *>(cb)));
		wl_callback_destroy(cb);
	}
	s.frames.clear();
}

Buf *Fuzzer::writable(Surf &s, uint64_t choice, int count) {
	while (static_cast<int>(s.bufs.size()) < count) s.bufs.push_back(std::make_unique<Buf>());
	Buf *b = s.bufs[choice % count].get();
	if (b->busy) return nullptr;
	if (b->recommitted_busy) { // the compositor may still read it: a fresh buffer and pool
		b->busy = true;
		b->destroy_buffer();
		b->recommitted_busy = false;
	}
	if (b->buffer && (b->w != s.w || b->h != s.h)) b->destroy_buffer();
	if (!b->buffer) {
		size_t need = buffer_bytes(o.format, s.w, s.h);
		if (b->pool && b->size < need) { // grow the pool
			munmap(b->data, b->size);
			if (ftruncate(b->fd, static_cast<off_t>(need)) != 0) return nullptr;
			b->data = static_cast<uint8_t *>(
				mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0));
			b->size = need;
			wl_shm_pool_resize(b->pool, static_cast<int32_t>(need));
		} else if (!b->pool) {
			b->fd = memfd_create("commit-fuzz", MFD_CLOEXEC);
			if (b->fd < 0 || ftruncate(b->fd, static_cast<off_t>(need)) != 0) return nullptr;
			b->data = static_cast<uint8_t *>(
				mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0));
			b->size = need;
			b->pool = wl_shm_create_pool(conn.shm, b->fd, static_cast<int32_t>(need));
		}
		if (b->data == MAP_FAILED) return nullptr;
		b->w = s.w, b->h = s.h;
		b->buffer = wl_shm_pool_create_buffer(
			b->pool, 0, s.w, s.h, static_cast<int32_t>(min_stride(o.format, s.w)), drm_to_shm(o.format));
		static const wl_buffer_listener listener = {
			.release = [](void *data, wl_buffer *) { static_cast<Buf *>(data)->busy = false; },
		};
		wl_buffer_add_listener(b->buffer, &listener, b);
		b->shows = kBlack;
	}
	return b;
}

uint32_t Fuzzer::new_colour(uint32_t not_like) {
	for (;;) {
		uint32_t c = 0;
		for (int i = 0; i < 3; i++) c = c << 8 | static_cast<uint32_t>(0x30 + pick(0xd0));
		if (!close_to(c, not_like, 3 * tol + 8)) return c;
	}
}

void Fuzzer::commit_buffer(Surf &s, int index, bool rewrite) {
	Buf &b = *s.bufs[index];
	if (rewrite || b.shows == kBlack) {
		uint32_t rgb = new_colour(s.colour);
		fill(o.format, b.w, b.h, rgb, b.data);
		b.shows = expected(o.format, rgb, b.h);
	}
	b.recommitted_busy |= b.busy;
	b.busy = true;
	wl_surface_attach(s.surface, b.buffer, 0, 0);
	wl_surface_damage_buffer(s.surface, 0, 0, b.w, b.h);
	s.has_buffer = true;
	s.colour = b.shows;
	s.last = index;
	allowed[screen_slot(s)].insert(b.shows);
	s.unverified.insert(b.shows);
	s.unframed_sizes[s.seq + 1] = {b.w, b.h};
	commit(s);
	s.unreported.insert(s.seq);
}

void Fuzzer::unmap(Surf &s) {
	const bool mapped_toplevel = s.top && s.configured && s.has_buffer;
	wl_surface_attach(s.surface, nullptr, 0, 0);
	s.has_buffer = false;
	unsettle_tree(s);
	commit(s);
	if (mapped_toplevel) s.configured = false; // reset: the next commit is an initial one again
}

bool Fuzzer::make_toplevel(Surf &s) {
	if (s.has_buffer) unmap(s);
	s.kind = Kind::toplevel;
	for (auto &c : surfs) { // children move with their parent: toplevels sit at the origin
		if (c->parent == &s) place(*c);
	}
	s.xs = xdg_wm_base_get_xdg_surface(conn.wm_base, s.surface);
	static const xdg_surface_listener listener = {
		.configure =
			[](void *data, xdg_surface *xs, uint32_t serial) {
				xdg_surface_ack_configure(xs, serial);
				static_cast<Surf *>(data)->configured = true;
			},
	};
	xdg_surface_add_listener(s.xs, &listener, &s);
	s.top = xdg_surface_get_toplevel(s.xs);
	s.top_order = next_order++;
	s.configured = false;
	unsettle_tree(s);
	commit(s);
	return wait_configured(s);
}

bool Fuzzer::wait_configured(Surf &s) {
	for (uint64_t end = now_ns() + 10'000'000'000ull; !s.configured && alive() && now_ns() < end;)
		conn.dispatch_timeout(100);
	if (!s.configured && alive()) finding("no-configure", "surface " + std::to_string(s.id) + " got no configure");
	return s.configured;
}

void Fuzzer::destroy_role(Surf &s) {
	unsettle_tree(s);
	if (s.top) xdg_toplevel_destroy(s.top);
	if (s.xs) xdg_surface_destroy(s.xs);
	s.top = nullptr, s.xs = nullptr, s.configured = false;
	if (s.sub) wl_subsurface_destroy(s.sub);
	s.sub = nullptr, s.parent = nullptr;
}

void Fuzzer::make_sub(Surf &s, Surf &p, bool sync) {
	s.kind = Kind::sub;
	s.sub = wl_subcompositor_get_subsurface(conn.subcompositor, s.surface, p.surface);
	s.parent = &p;
	s.sync = sync;
	if (!sync) wl_subsurface_set_desync(s.sub);
	place(s);
	unsettle_tree(s);
	commit(p);
}

void Fuzzer::destroy_surface(Surf &s) {
	for (auto &c : surfs) {
		if (c->parent == &s) destroy_role(*c); // a child of a gone parent: its role object is inert
	}
	destroy_role(s);
	unsettle(s);
	forget_frames(s);
	if (s.timing) pp_surface_timing_v1_destroy(s.timing);
	wp_viewport_destroy(s.viewport);
	wl_surface_destroy(s.surface);
	s.bufs.clear(); // after the surface: its buffers' pools go
	surfs.erase(std::find_if(surfs.begin(), surfs.end(), [&](auto &p) { return p.get() == &s; }));
}

void Fuzzer::log(const char *fmt, ...) {
	if (!o.verbose) return;
	va_list ap;
	va_start(ap, fmt);
	printf("op %" PRIu64 ": ", op);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

} // namespace pixelport::commit_fuzz
