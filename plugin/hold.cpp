// The hold ledger (hold.hpp): the only code that locks and unlocks wlroots' cached surface
// states for the plugin.
#include "hold.hpp"

#include <cassert>
#include <cstring>

#include "client_account.hpp"
#include "surface_state.hpp"

namespace pixelport {

namespace {

bool waits(const HeldCommit &h) {
	for (uint16_t n : h.reasons) {
		if (n != 0) return true;
	}
	return false;
}

// Only a successor is awaited: it goes when a later held commit goes.
bool successor_only(const HeldCommit &h) {
	for (size_t i = 0; i < kHoldReasons; i++) {
		if (h.reasons[i] != 0 && i != static_cast<size_t>(HoldReason::Successor)) return false;
	}
	return h.reasons[static_cast<size_t>(HoldReason::Successor)] != 0;
}

bool ready(const HeldCommit &h) { return h.let_go || !waits(h); }

// The wlroots surface whose apply applies `surface`'s cached state: up through synchronized
// subsurfaces to the first surface that is not one. `surface` itself when it is not one.
wlr_surface *sync_root_of(wlr_surface *surface) {
	for (wlr_subsurface *sub = wlr_subsurface_try_from_wlr_surface(surface);
		sub != nullptr && sub->synchronized && sub->parent != nullptr;
		sub = wlr_subsurface_try_from_wlr_surface(surface)) {
		surface = sub->parent;
	}
	return surface;
}

bool unmapping(wlr_surface *surface) {
	return (surface->pending.committed & WLR_SURFACE_STATE_BUFFER) && surface->pending.buffer == nullptr;
}

// wl_subsurface.set_desync, found once in the interface libwayland-server exports (its
// requests' messages are compared by address: no string is compared per request).
const wl_message *set_desync_message() {
	for (int i = 0; i < wl_subsurface_interface.method_count; i++) {
		if (strcmp(wl_subsurface_interface.methods[i].name, "set_desync") == 0) {
			return &wl_subsurface_interface.methods[i];
		}
	}
	return nullptr;
}

} // namespace

const char *hold_reason_name(HoldReason reason) {
	switch (reason) {
	case HoldReason::Conversion: return "Conversion";
	case HoldReason::StreamBytes: return "StreamBytes";
	case HoldReason::SyncChild: return "SyncChild";
	case HoldReason::Successor: return "Successor";
	case HoldReason::FifoBarrier: return "FifoBarrier";
	case HoldReason::TargetTime: return "TargetTime";
	case HoldReason::Count: break;
	}
	return "?";
}

std::unique_ptr<HoldLedger> HoldLedger::create(
	wl_display *display, Stats *stats, SurfaceState *(*find)(const void *owner, wlr_surface *), const void *owner) {
	std::unique_ptr<HoldLedger> ledger(new HoldLedger());
	ledger->display_ = display;
	ledger->stats_ = stats;
	ledger->find_ = find;
	ledger->owner_ = owner;
	ledger->logger_ = wl_display_add_protocol_logger(display, request_logged, ledger.get());
	if (ledger->logger_ == nullptr) return nullptr;
	return ledger;
}

HoldLedger::~HoldLedger() {
	if (logger_ != nullptr) wl_protocol_logger_destroy(logger_);
	if (idle_ != nullptr) wl_event_source_remove(idle_);
}

HeldCommit *HoldLedger::find_held(SurfaceState *s, uint64_t commit) {
	for (HeldCommit &h : s->holds.held_) {
		if (h.commit == commit) return &h;
	}
	return nullptr;
}

// How many held commits at the front of the surface's queue may be released now: each ready one
// with those before it, a commit waiting only for its successor with the first ready one after
// it, or with a commit made since that nobody holds (it applies right after them).
size_t HoldLedger::releasable(const SurfaceState *s) const {
	const SurfaceHolds &h = s->holds;
	size_t n = 0;
	for (size_t i = 0; i < h.held_.size(); i++) {
		if (ready(h.held_[i])) {
			n = i + 1;
		} else if (!successor_only(h.held_[i])) {
			return n;
		}
	}
	if (!h.held_.empty() && !h.committing_ && s->commits > h.held_.back().commit) n = h.held_.size();
	return n;
}

bool HoldLedger::held(const SurfaceState *s, uint64_t commit) const {
	for (const HeldCommit &h : s->holds.held_) {
		if (h.commit == commit) return true;
	}
	return false;
}

bool HoldLedger::waits_for(const SurfaceState *s, uint64_t commit, HoldReason reason) const {
	for (const HeldCommit &h : s->holds.held_) {
		if (h.commit == commit) return h.reasons[static_cast<size_t>(reason)] != 0;
	}
	return false;
}

bool HoldLedger::successors_only_between(const SurfaceState *s, uint64_t after, uint64_t before) const {
	// A commit between that nobody holds is cached behind a held one (or behind a lock not the
	// plugin's) and applies with the run it follows: it waits for nothing of ours.
	for (const HeldCommit &h : s->holds.held_) {
		if (h.commit <= after || h.commit >= before) continue;
		if (h.let_go || !successor_only(h)) return false;
	}
	return true;
}

bool HoldLedger::release_successors(SurfaceState *s, uint64_t through, Release when) {
	bool changed = false;
	for (HeldCommit &h : s->holds.held_) {
		if (h.commit > through) break;
		if (!successor_only(h)) continue;
		h.reasons[static_cast<size_t>(HoldReason::Successor)] = 0;
		changed = true;
	}
	if (!changed) return false;
	if (when == Release::Now) {
		drain(s);
	} else {
		schedule(s, false);
	}
	return true;
}

void HoldLedger::client_commit(SurfaceState *s) {
	SurfaceHolds &h = s->holds;
	h.committing_ = true;
	const uint64_t behind = h.held_.empty() ? 0 : s->commits - h.held_.front().commit;
	if ((behind > kMaxCommitsBehind && !h.over_limit_) || behind == kMaxCommitsHeld + 1) {
		// Not now: wlroots is handling this commit; its role checks and the cache decision
		// come after this signal.
		h.over_limit_ = true;
		schedule(s, true);
	}
	if (h.sync_waits_ > 0) {
		for (const HeldCommit &held : h.held_) {
			if (held.reasons[static_cast<size_t>(HoldReason::SyncChild)] != 0) return; // one is enough
		}
		hold(s, HoldReason::SyncChild);
	}
}

void HoldLedger::client_commit_done(SurfaceState *s) {
	s->holds.committing_ = false;
	if (!s->holds.held_.empty() && successor_only(s->holds.held_.back())) drain(s);
}

bool HoldLedger::hold(SurfaceState *s, HoldReason reason) {
	wlr_surface *surface = s->surface;
	if (surface->role == nullptr || unmapping(surface)) return false;
	SurfaceHolds &h = s->holds;
	// Held for its pixels: what pixelport_stats.held_commits counts (not a root held for its
	// children, nor a superseded commit).
	const bool counts = reason == HoldReason::Conversion || reason == HoldReason::StreamBytes;
	if (!h.held_.empty() && h.held_.back().commit == s->commits) {
		HeldCommit &held = h.held_.back();
		held.reasons[static_cast<size_t>(reason)]++;
		if (counts && !std::exchange(held.counted, true)) stats_->add(Stat::HeldCommits);
		return true;
	}
	HeldCommit held;
	held.commit = s->commits;
	held.reasons[static_cast<size_t>(reason)] = 1;
	held.counted = counts;
	held.cached_seq = wlr_surface_lock_pending(surface);
	// A synchronized subsurface's state applies with its root's: the root's next commit is held
	// for it, so both still apply together.
	if (wlr_surface *root = sync_root_of(surface); root != surface) {
		if (SurfaceState *r = find_(owner_, root)) {
			r->holds.sync_waits_++;
			held.root = r->ref();
		}
	}
	h.held_.push_back(std::move(held));
	total_++;
	if (counts) stats_->add(Stat::HeldCommits);
	watch_roles(s);
	return true;
}

bool HoldLedger::add(SurfaceState *s, uint64_t commit, HoldReason reason) {
	HeldCommit *h = find_held(s, commit);
	if (h == nullptr) return false;
	h->reasons[static_cast<size_t>(reason)]++;
	return true;
}

bool HoldLedger::clear(SurfaceState *s, uint64_t commit, HoldReason reason, Release when) {
	HeldCommit *h = find_held(s, commit);
	if (h == nullptr || h->reasons[static_cast<size_t>(reason)] == 0) return false;
	h->reasons[static_cast<size_t>(reason)]--;
	const SurfaceRef ref = s->ref();
	if (when == Release::Now) {
		drain(s);
	} else {
		schedule(s, false);
	}
	if (on_change_ != nullptr && ref.get() != nullptr) on_change_(on_change_data_, s);
	return true;
}

bool HoldLedger::replace(SurfaceState *s, uint64_t commit, HoldReason from, HoldReason to) {
	HeldCommit *h = find_held(s, commit);
	if (h == nullptr || h->reasons[static_cast<size_t>(from)] == 0) return false;
	h->reasons[static_cast<size_t>(from)]--;
	h->reasons[static_cast<size_t>(to)]++;
	if (on_change_ != nullptr) on_change_(on_change_data_, s);
	return true;
}

void HoldLedger::let_go(SurfaceState *s, LetGo why, Release when) {
	if (s->holds.held_.empty()) return;
	for (HeldCommit &h : s->holds.held_) h.let_go = true;
	if (when == Release::Idle) {
		schedule(s, false);
		return;
	}
	// What follows in the same request hides what applies now.
	const bool hidden = why == LetGo::Replaced || why == LetGo::RoleDestroyed;
	const SurfaceRef ref = s->ref();
	const bool was = std::exchange(s->holds.applying_hidden_, hidden);
	drain(s);
	if (SurfaceState *still = ref.get()) still->holds.applying_hidden_ = was;
}

bool HoldLedger::applying_hidden(const SurfaceState *s) const { return s->holds.applying_hidden_; }

// Releases the surface's releasable held commits. A run of them is unlocked newest first, so
// that the last unlock, the oldest's, lets wlroots apply the whole run in one call, in commit
// order: a superseded commit and its successor apply together, and nothing shows the first.
// wlroots' handlers and ours run inside that call and may clear or add reasons of this surface:
// the queue is looked at again after each run.
void HoldLedger::drain(SurfaceState *s) {
	SurfaceHolds &h = s->holds;
	if (h.draining_) return; // the running drain sees the change
	h.draining_ = true;
	const SurfaceRef ref = s->ref();
	for (size_t n = releasable(s); n > 0; n = releasable(s)) {
		std::vector<HeldCommit> run(std::make_move_iterator(s->holds.held_.begin()),
			std::make_move_iterator(s->holds.held_.begin() + static_cast<std::ptrdiff_t>(n)));
		s->holds.held_.erase(s->holds.held_.begin(), s->holds.held_.begin() + static_cast<std::ptrdiff_t>(n));
		total_ -= n;
		wlr_surface *surface = s->surface;
		for (auto it = run.rbegin(); it != run.rend(); ++it) wlr_surface_unlock_cached(surface, it->cached_seq);
		// Their roots wait no more for them (after their own unlock: wlroots applies a root and
		// its synchronized children together).
		for (const HeldCommit &released : run) unroot(released.root, Release::Now);
		s = ref.get();
		if (s == nullptr) return; // never: no apply destroys its surface; never touch a freed state
	}
	s->holds.draining_ = false;
	if (s->holds.held_.empty()) {
		s->holds.over_limit_ = false;
		unwatch_roles(s);
	} else if (s->holds.over_limit_) {
		schedule(s, true); // what is left may show cheaply now
	}
}

void HoldLedger::unroot(const SurfaceRef &ref, Release when) {
	SurfaceState *root = ref.get();
	if (root == nullptr || root->holds.sync_waits_ == 0 || --root->holds.sync_waits_ > 0) return;
	bool any = false;
	for (HeldCommit &h : root->holds.held_) {
		uint16_t &n = h.reasons[static_cast<size_t>(HoldReason::SyncChild)];
		any = any || n != 0;
		n = 0;
	}
	if (!any) return;
	if (when == Release::Now) {
		drain(root);
	} else {
		schedule(root, false);
	}
}

void HoldLedger::schedule(SurfaceState *s, bool let_go) {
	deferred_.emplace_back(s->ref(), let_go);
	if (idle_ != nullptr) return;
	idle_ = wl_event_loop_add_idle(
		wl_display_get_event_loop(display_),
		[](void *data) {
			auto *ledger = static_cast<HoldLedger *>(data);
			ledger->idle_ = nullptr;
			ledger->run_idle();
		},
		this);
}

void HoldLedger::run_idle() {
	// Drains may schedule more: those run in the next idle pass.
	std::vector<std::pair<SurfaceRef, bool>> work = std::exchange(deferred_, {});
	for (auto &[ref, over_limit] : work) {
		SurfaceState *s = ref.get();
		if (s == nullptr) continue;
		if (over_limit) {
			check_over_limit(s);
		} else {
			drain(s);
		}
	}
}

void HoldLedger::check_over_limit(SurfaceState *s) {
	SurfaceHolds &h = s->holds;
	if (h.held_.empty() || s->commits - h.held_.front().commit <= kMaxCommitsBehind) {
		h.over_limit_ = false;
		return;
	}
	// Letting them go now would make the main thread convert what shows: rather wait for the
	// running conversion (its release looks again), unless the client is far past the limit.
	const bool far = s->commits - h.held_.front().commit > kMaxCommitsHeld;
	if (!far && cheap_release_ != nullptr && !cheap_release_(cheap_release_data_, s)) return;
	h.over_limit_ = false;
	stats_->add(Stat::EarlyReleases);
	for (HeldCommit &held : h.held_) held.let_go = true;
	drain(s);
}

void HoldLedger::surface_destroyed(SurfaceState *s) {
	SurfaceHolds &h = s->holds;
	for (HeldCommit &held : h.held_) {
		total_--;
		unroot(held.root, Release::Idle);
	}
	h.held_.clear();
	h.sync_waits_ = 0;
	unwatch_roles(s);
}

// ---- what lets held commits go before a request -----------------------------------------------

void HoldLedger::watch_roles(SurfaceState *s) {
	SurfaceHolds &h = s->holds;
	wlr_xdg_surface *xdg = wlr_xdg_surface_try_from_wlr_surface(s->surface);
	wl_resource *roles[2] = {s->surface->role_resource, xdg != nullptr ? xdg->role_resource : nullptr};
	for (int i = 0; i < 2; i++) {
		if (roles[i] == h.roles_[i]) continue;
		if (h.roles_[i] != nullptr) watched_roles_.erase(h.roles_[i]);
		h.role_destroy_[i].disconnect();
		h.roles_[i] = roles[i];
		if (roles[i] == nullptr) continue;
		watched_roles_[roles[i]] = s->ref();
		// Gone without a request (its client going): forgotten, so that a later resource at
		// the same address is not taken for it.
		SurfaceState *state = s;
		h.role_destroy_[i].connect_resource_destroy(roles[i], [this, state, i](void *) {
			watched_roles_.erase(state->holds.roles_[i]);
			state->holds.roles_[i] = nullptr;
		});
	}
}

void HoldLedger::unwatch_roles(SurfaceState *s) {
	SurfaceHolds &h = s->holds;
	for (int i = 0; i < 2; i++) {
		if (h.roles_[i] != nullptr) watched_roles_.erase(h.roles_[i]);
		h.role_destroy_[i].disconnect();
		h.roles_[i] = nullptr;
	}
}

// Before each request is dispatched, while anything is held (one hash lookup per request; a
// name is compared only for requests to the role objects of surfaces with held commits):
// - a `destroy` of such a role object (xdg_toplevel, xdg_popup, xdg_surface, wl_subsurface, ...)
//   first applies the surface's held commits, as stock wlroots applied them long before. A
//   destroy listener would run after wlroots' own (which resets the xdg_surface), and a held
//   state applied then would count as the first commit of a role object made meanwhile.
// - a wl_subsurface.set_desync of a subsurface with a cached state first applies the held commits
//   of its ancestors up to its root: wlroots applies a desynchronized child's cached state only at its own commits
//   or when its parent applies while the child is still synchronized, so behind an ancestor's
//   held commit that apply would come after this request and the child's state would stay
//   cached (its client waits for its frame for ever).
void HoldLedger::request_logged(void *data, wl_protocol_logger_type type, const wl_protocol_logger_message *message) {
	static const wl_message *const set_desync = set_desync_message();
	auto *ledger = static_cast<HoldLedger *>(data);
	if (type != WL_PROTOCOL_LOGGER_REQUEST || ledger->total_ == 0) return;
	if (message->message == set_desync) {
		// wlroots' own wl_subsurface: its user data is the wlr_subsurface (null once inert). Only
		// a subsurface with a cached state can have it stranded.
		auto *sub = static_cast<wlr_subsurface *>(wl_resource_get_user_data(message->resource));
		if (sub == nullptr || wl_list_empty(&sub->surface->cached)) return;
		for (wlr_surface *parent = sub->parent; parent != nullptr;) {
			if (SurfaceState *s = ledger->find_(ledger->owner_, parent)) {
				ledger->let_go(s, LetGo::Desync, Release::Now);
			}
			wlr_subsurface *up = wlr_subsurface_try_from_wlr_surface(parent);
			parent = up != nullptr && up->synchronized ? up->parent : nullptr;
		}
		return;
	}
	auto it = ledger->watched_roles_.find(message->resource);
	if (it == ledger->watched_roles_.end() || strcmp(message->message->name, "destroy") != 0) return;
	if (SurfaceState *s = it->second.get()) ledger->let_go(s, LetGo::RoleDestroyed, Release::Now);
}

} // namespace pixelport
