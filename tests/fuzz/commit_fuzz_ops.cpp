// pixelport-commit-fuzz: the random operations, one per step, and the size-burst scenario.
#include <poll.h>

#include <algorithm>
#include <cinttypes>

#include "commit_fuzz.hpp"

namespace pixelport::commit_fuzz {

Surf *Fuzzer::any(const std::function<bool(const Surf &)> &fit) {
	std::vector<Surf *> c;
	for (auto &s : surfs)
		if (fit(*s)) c.push_back(s.get());
	return c.empty() ? nullptr : c[pick(c.size())];
}

void Fuzzer::resize(Surf &s) {
	if (chance(50)) { // under the inline limit (64 Ki pixels) or over it
		s.w = 16 + 2 * static_cast<int>(pick(120)), s.h = 16 + 2 * static_cast<int>(pick(120));
	} else {
		s.w = 256 + 2 * static_cast<int>(pick(673)), s.h = 256 + 2 * static_cast<int>(pick(473));
	}
}

void Fuzzer::burst(Surf &s, int n, int count) {
	for (int i = 0; i < n && alive(); i++) {
		uint64_t choice = rng();
		Buf *b = nullptr;
		int index = -1;
		for (int k = 0; k < count && !b; k++) {
			index = static_cast<int>((choice + k) % count);
			b = writable(s, index, count);
		}
		if (count == 1 && i > 0 && s.last == 0 && s.bufs[0]->buffer) {
			commit_buffer(s, 0, false); // the same bytes again
		} else if (b) {
			commit_buffer(s, index, true);
		} else if (s.last >= 0 && s.bufs[s.last]->buffer && s.bufs[s.last]->w == s.w) {
			commit_buffer(s, s.last, false);
		}
		// Every event that came in is read: libwayland-server disconnects a client whose
		// unread events fill the socket and its buffer.
		for (bool more = true; more && alive();) {
			wl_display_flush(conn.display);
			while (wl_display_prepare_read(conn.display) != 0) wl_display_dispatch_pending(conn.display);
			pollfd pfd = {wl_display_get_fd(conn.display), POLLIN, 0};
			more = poll(&pfd, 1, 0) == 1;
			if (more) {
				wl_display_read_events(conn.display);
			} else {
				wl_display_cancel_read(conn.display);
			}
			wl_display_dispatch_pending(conn.display);
		}
	}
}

void Fuzzer::step() {
	Surf *s = surfs.empty() ? nullptr : surfs[pick(surfs.size())].get();
	uint64_t what = pick(100);
	if (!s || (what < 6 && surfs.size() < kMaxSurfaces && free_slot() > 0)) {
		Surf *n = new_surface();
		uint64_t role = pick(3);
		Surf *p = any([&](const Surf &c) { return &c != n; });
		log("new surface %d slot %d role %" PRIu64 " parent %d", n->id, n->slot, role, p ? p->id : 0);
		if (role == 0) make_toplevel(*n);
		if (role == 1 && p) make_sub(*n, *p, chance(50));
	} else if (what < 10) { // a role late, or again after its role object went
		if (s->top || s->sub) return;
		Surf *p = any([&](const Surf &c) { return !in_subtree(*s, &c); });
		bool as_top = s->kind == Kind::toplevel || (s->kind == Kind::none && (chance(50) || !p));
		log("role for %d: %s", s->id, as_top ? "toplevel" : "sub");
		if (as_top)
			make_toplevel(*s);
		else if (p)
			make_sub(*s, *p, chance(50));
	} else if (what < 13) {
		log("destroy role object of %d", s->id);
		if (s->kind == Kind::toplevel && s->has_buffer && chance(50)) unmap(*s);
		destroy_role(*s);
	} else if (what < 16 && s->kind == Kind::sub) { // made again under another parent
		Surf *p = any([&](const Surf &c) { return !in_subtree(*s, &c); });
		if (!p) return;
		log("reparent %d under %d", s->id, p->id);
		destroy_role(*s);
		make_sub(*s, *p, chance(50));
	} else if (what < 19 && s->sub) {
		s->sync = !s->sync;
		log("%d %s", s->id, s->sync ? "sync" : "desync");
		s->sync ? wl_subsurface_set_sync(s->sub) : wl_subsurface_set_desync(s->sub);
	} else if (what < 21) {
		log("destroy surface %d", s->id);
		destroy_surface(*s);
	} else if (what < 25) {
		log("unmap %d", s->id);
		if (s->kind == Kind::toplevel && !s->top) return;
		unmap(*s);
	} else if (what < 28 && s->kind == Kind::toplevel && s->top && !s->configured) { // remap
		log("remap %d", s->id);
		commit(*s);
		wait_configured(*s);
	} else if (what < 33) {
		resize(*s);
		log("size of %d: %dx%d", s->id, s->w, s->h);
	} else if (what < 37 && !s->bufs.empty()) {
		Buf &b = *s->bufs[pick(s->bufs.size())];
		log("destroy a buffer of %d (%s)", s->id, b.busy ? "busy" : "released");
		b.destroy_buffer();
	} else if (what < 45) {
		checkpoint();
	} else if (what < 49) {
		quiesce();
	} else if (can_draw(*s)) {
		int n = chance(40) ? 1 : 2 + static_cast<int>(pick(199));
		int count = 1 + static_cast<int>(pick(3));
		log("commit %d x%d on %d buffer(s) of %d (%dx%d)", n, n, count, s->id, s->w, s->h);
		burst(*s, n, count);
	}
}

void Fuzzer::size_bursts() {
	Surf &t = *new_surface();
	make_toplevel(t);
	t.w = 640, t.h = 360;
	if (writable(t, 0, 1)) commit_buffer(t, 0, true);
	quiesce();
	for (int round = 0; round < o.size_bursts && alive() && op < o.max_ops; round++) {
		op++;
		const int n = 3 + static_cast<int>(pick(4));
		log("burst of %d sizes", n);
		for (int i = 0; i < n && alive(); i++) {
			t.w = 1280 + 2 * static_cast<int>(pick(1281)), t.h = 720 + 2 * static_cast<int>(pick(721));
			// A buffer of its own each (each pool a new size): none is busy.
			Buf *b = nullptr;
			for (int k = 0; k < 8 && !b; k++) b = writable(t, (t.seq + k) % 8, 8);
			if (!b) break;
			const int index = static_cast<int>(std::find_if(t.bufs.begin(), t.bufs.end(), [&](auto &p) {
				return p.get() == b;
			}) - t.bufs.begin());
			commit_buffer(t, index, true);
		}
		wl_display_flush(conn.display);
		for (int shot = 0; shot < 40 && alive() && t.done_seq < t.seq; shot++) {
			check_screen("size-burst-blank", [&](int k) {
				// Slot 0 is the toplevel's; the others are empty.
				return k == 0 ? std::vector<uint32_t>(allowed[0].begin(), allowed[0].end())
					      : std::vector<uint32_t>{kBlack};
			});
		}
		quiesce();
	}
}

} // namespace pixelport::commit_fuzz
