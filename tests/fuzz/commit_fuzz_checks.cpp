// pixelport-commit-fuzz: screenshots checked against what each slot may show, and quiescent points
// (everything applied: exactly each slot's last colour, timing reports all in).
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "commit_fuzz.hpp"

namespace pixelport::commit_fuzz {

bool Fuzzer::screenshot(std::vector<uint8_t> *rgb) {
	std::string path = std::string(getenv("XDG_RUNTIME_DIR")) + "/commit-fuzz-" + std::to_string(getpid()) + ".ppm";
	wl_display_flush(conn.display);
	pid_t pid = fork();
	if (pid == 0) {
		execlp("grim", "grim", "-t", "ppm", path.c_str(), static_cast<char *>(nullptr));
		_exit(127);
	}
	int status = -1;
	for (int i = 0; i < 3000; i++) { // keep answering the compositor meanwhile
		if (waitpid(pid, &status, WNOHANG) == pid) break;
		conn.dispatch_timeout(10);
	}
	int w = 0, h = 0, maxval = 0;
	std::ifstream in(path, std::ios::binary);
	std::string magic;
	in >> magic >> w >> h >> maxval;
	in.get();
	rgb->resize(static_cast<size_t>(w) * h * 3);
	in.read(reinterpret_cast<char *>(rgb->data()), static_cast<std::streamsize>(rgb->size()));
	unlink(path.c_str());
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && in && magic == "P6" && w == kOutputW && h == kOutputH;
}

void Fuzzer::check_screen(const char *what, const std::function<std::vector<uint32_t>(int)> &cands) {
	checkpoints++;
	std::vector<uint8_t> rgb;
	if (!screenshot(&rgb)) {
		finding("no-screenshot", std::string(what) + ": grim failed");
		return;
	}
	for (int k = 0; k < kSlots; k++) {
		std::vector<uint32_t> got;
		for (int dy : {4, 12, 20})
			for (int dx : {4, 12, 20}) {
				const uint8_t *p =
					&rgb[(static_cast<size_t>(slot_y(k) + dy) * kOutputW + slot_x(k) + dx) * 3];
				got.push_back(static_cast<uint32_t>(p[0]) << 16 | p[1] << 8 | p[2]);
			}
		std::vector<uint32_t> want = cands(k);
		bool good = std::any_of(want.begin(), want.end(), [&](uint32_t a) {
			return std::all_of(got.begin(), got.end(), [&](uint32_t g) { return close_to(g, a, tol); });
		});
		if (good) continue;
		std::string seen, wanted;
		char hex[16];
		for (uint32_t c : got) snprintf(hex, sizeof hex, " %06x", c), seen += hex;
		for (size_t i = 0; i < want.size() && i < 8; i++)
			snprintf(hex, sizeof hex, " %06x", want[i]), wanted += hex;
		finding(what,
			"slot " + std::to_string(k) + " shows" + seen + "; want one of " + std::to_string(want.size()) +
				":" + wanted + (want.size() > 8 ? " ..." : ""));
	}
}

void Fuzzer::checkpoint() {
	if (!conn.roundtrip()) return;
	check_screen("wrong-colour", [this](int k) {
		std::vector<uint32_t> c(allowed[k].rbegin(), allowed[k].rend());
		if (may_be_empty[k]) c.insert(c.begin(), kBlack);
		return c;
	});
}

std::vector<uint32_t> Fuzzer::settled_screen(std::vector<Surf *> *visible) const {
	std::vector<uint32_t> want(kSlots, kBlack);
	const Surf *top = nullptr;
	for (auto &s : surfs) {
		if (!shown(*s)) continue;
		if (s->kind == Kind::toplevel) {
			if (!top || s->top_order > top->top_order) top = s.get();
		} else {
			want[s->slot] = s->colour;
			visible->push_back(s.get());
		}
	}
	if (top) want[0] = top->colour, visible->push_back(const_cast<Surf *>(top));
	return want;
}

void Fuzzer::quiesce() {
	// Every cached state applied: every surface commits, children before their parents.
	// wlroots 0.18 caches the commits of a desync subsurface under a sync one too, but its
	// parent's apply does not apply them (subsurface_handle_parent_commit looks at the
	// child's own flag): such a child is made sync for these commits, then desync again.
	std::vector<Surf *> order, toggled;
	for (auto &s : surfs) {
		order.push_back(s.get());
		if (s->sub && !s->sync && effectively_sync(*s))
			wl_subsurface_set_sync(s->sub), toggled.push_back(s.get());
	}
	std::stable_sort(order.begin(), order.end(), [&](Surf *a, Surf *b) { return depth(*a) > depth(*b); });
	for (Surf *s : order) commit(*s);
	for (Surf *s : toggled) wl_subsurface_set_desync(s->sub);
	std::vector<Surf *> visible;
	std::vector<uint32_t> want = settled_screen(&visible);
	// A subsurface of a toplevel under the top one: that toplevel gets no frame callback (covered,
	// it is on no output), so its last commits may still wait for their conversion, a remap
	// among them; until they apply, its subsurfaces (their own commits applied) may show
	// nothing.
	std::vector<bool> unsure(kSlots, false);
	for (Surf *s : visible) {
		const Surf *root = s;
		while (root->parent != nullptr) root = root->parent;
		if (s != root && root->kind == Kind::toplevel &&
			std::find(visible.begin(), visible.end(), root) == visible.end() &&
			root->done_seq < root->seq) {
			unsure[s->slot] = true;
		}
	}
	uint64_t end = now_ns() + 30'000'000'000ull;
	for (Surf *s : visible) {
		while (s->done_seq < s->seq && alive() && now_ns() < end) conn.dispatch_timeout(100);
		if (s->done_seq < s->seq && alive()) {
			finding("not-applied",
				"surface " + std::to_string(s->id) + "'s commit " + std::to_string(s->seq) +
					" got no frame callback in 30 s (last one for commit " +
					std::to_string(s->done_seq) + ")");
		}
	}
	if (!conn.roundtrip()) return;
	quiescent++;
	for (auto &s : surfs) { // reports come in commit order: none is still due before the last
		auto end = s->unreported.lower_bound(s->last_report);
		if (end == s->unreported.begin()) continue;
		finding("timing-missing",
			"surface " + std::to_string(s->id) + ": " +
				std::to_string(std::distance(s->unreported.begin(), end)) +
				" commit(s) before commit " + std::to_string(s->last_report) +
				" never reported, the first " + std::to_string(*s->unreported.begin()));
		s->unreported.erase(s->unreported.begin(), end);
	}
	check_screen("not-last-colour", [&](int k) {
		return unsure[k] ? std::vector<uint32_t>{want[k], kBlack} : std::vector<uint32_t>{want[k]};
	});
	for (int k = 0; k < kSlots; k++) {
		allowed[k] = {want[k]};
		may_be_empty[k] = want[k] == kBlack || unsure[k];
	}
	// What an unmap, a remap or a new role may reveal without a commit: the last colour of
	// each surface with a buffer (toplevels: any of them); of one not shown now, any colour
	// since it was last seen shown (its commits may still convert).
	for (Surf *s : visible) {
		if (!unsure[screen_slot(*s)]) s->unverified = {s->colour};
	}
	for (auto &s : surfs)
		if (s->has_buffer) allowed[screen_slot(*s)].insert(s->unverified.begin(), s->unverified.end());
}

} // namespace pixelport::commit_fuzz
