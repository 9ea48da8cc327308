// The hold ledger: every commit the plugin keeps from applying, and why.
//
// A commit is held while its converted image is not complete, while stream bytes it shows are
// still arriving, while a synchronized descendant's held commit must apply with it, or while
// its client asked it to wait for a fifo barrier or a target time (the reasons below; a commit
// may wait for several at once). A held commit is one entry here: the
// surface's commit number, the one wlroots lock (wlr_surface_lock_pending at the client's
// commit) and the count of each reason it waits for. Modules add and clear reasons; the ledger
// alone locks and unlocks (wlr_surface_unlock_cached is called from hold.cpp only), and
// releases each held commit exactly once: when its last reason clears, or when it must apply
// before (let_go: an unmap, its role object destroyed, a descendant made desynchronized, its
// client too many commits ahead). Releases are in commit order: a commit whose reasons cleared
// waits for the surface's older held commits, and a run of released commits applies in one call
// into wlroots.
//
// A superseded commit (a newer one replaced it before its conversion, which will never run)
// waits for its successor (HoldReason::Successor): it applies together with the surface's next
// commit, in the same call into wlroots, so the screen never shows it. docs/design.md, "The
// commit path", has the rules and what each costs.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "listener.hpp"
#include "stats.hpp"
#include "surface_ref.hpp"
#include "wlr.hpp"

namespace pixelport {

struct SurfaceState;

/**
 * Commits a surface may make behind its oldest held one before its held commits apply at once
 * (at the next idle of the event loop, when they can show a complete image without the main
 * thread converting it; else when the running conversion ends): what wlroots caches for a
 * surface stays this small, plus what its client commits while one conversion runs, however fast
 * it commits. A client that waits for its frame callbacks never comes near it.
 */
inline constexpr uint64_t kMaxCommitsBehind = 4;
/**
 * Commits a surface may make behind its oldest held one in any case: beyond, its held commits
 * apply at once, and the one that shows is completed on the main thread if it must be.
 */
inline constexpr uint64_t kMaxCommitsHeld = 256;

/** Why a held commit waits. */
enum class HoldReason : uint8_t {
	/** Its pixels convert on the workers, or wait for the surface's running job. */
	Conversion,
	/** Bytes a stream write announced for its buffer are still to arrive. */
	StreamBytes,
	/** Held commits of synchronized descendants apply with this one (it is their root). */
	SyncChild,
	/**
	 * Superseded before its conversion: applies together with the surface's next commit (in
	 * the same call into wlroots, so nothing shows it), whenever that one applies.
	 */
	Successor,
	/**
	 * wp_fifo_v1.wait_barrier: its surface's fifo barrier is set, or older commits of the
	 * surface (one of which may set it) are still to apply (pacing.hpp).
	 */
	FifoBarrier,
	/**
	 * wp_commit_timer_v1.set_timestamp: the next frame would show it before its target time, or
	 * older commits of the surface are still to apply (pacing.hpp).
	 */
	TargetTime,
	Count,
};
inline constexpr size_t kHoldReasons = static_cast<size_t>(HoldReason::Count);

/** The reason's name as logs and docs/design.md spell it ("Conversion", ...). */
const char *hold_reason_name(HoldReason reason);

/** Why held commits apply before what they wait for is done. */
enum class LetGo : uint8_t {
	/** A null attach or a buffer the plugin holds nothing for: older held commits apply first. */
	Replaced,
	/** A role object of the surface is being destroyed: its held commits apply first. */
	RoleDestroyed,
	/** A descendant subsurface is made desynchronized (wl_subsurface.set_desync). */
	Desync,
	/** The client made more than kMaxCommitsBehind commits behind the oldest held one. */
	OverLimit,
};

/** When a release may call into wlroots. */
enum class Release : uint8_t {
	/** Now: the caller is not inside wlroots' handling of this surface's state. */
	Now,
	/** At the next idle of the event loop (inside a wlroots callback, a buffer's destroy, ...). */
	Idle,
};

/** One held commit. */
struct HeldCommit {
	/** The surface's commit number (SurfaceState::commits at its client commit). */
	uint64_t commit = 0;
	/** What wlr_surface_lock_pending returned for it. */
	uint32_t cached_seq = 0;
	std::array<uint16_t, kHoldReasons> reasons{};
	/** Must apply now, whatever it waits for. */
	bool let_go = false;
	/** Counted in pixelport_stats.held_commits (held for its conversion or its bytes). */
	bool counted = false;
	/** A synchronized subsurface's: counted in this root's sync waits while held. */
	SurfaceRef root;
};

/** Per surface (SurfaceState::holds): its held commits in commit order. Only the ledger changes it. */
class SurfaceHolds {
public:
	SurfaceHolds() = default;
	SurfaceHolds(const SurfaceHolds &) = delete;
	SurfaceHolds &operator=(const SurfaceHolds &) = delete;

	const std::deque<HeldCommit> &held() const { return held_; }
	/** As a root: held commits of synchronized descendants that this surface's apply applies. */
	uint32_t sync_waits() const { return sync_waits_; }

private:
	friend class HoldLedger;
	std::deque<HeldCommit> held_;
	uint32_t sync_waits_ = 0;
	/** Its role objects' resources (wl_surface role, xdg role) while it holds commits. */
	wl_resource *roles_[2] = {nullptr, nullptr};
	/** Their destroy, which forgets them (HoldLedger::watched_roles_). */
	Listener role_destroy_[2];
	bool draining_ = false;
	bool over_limit_ = false; // past kMaxCommitsBehind: checked at idles until it is not
	bool committing_ = false; // between client_commit() and client_commit_done()
	bool applying_hidden_ = false; // HoldLedger::applying_hidden()
};

class HoldLedger {
public:
	/**
	 * The ledger of `display`'s surfaces, whose states `find` resolves (null: not one of ours);
	 * `stats` counts held commits and early releases. Null when out of memory.
	 */
	static std::unique_ptr<HoldLedger> create(wl_display *display, Stats *stats,
		SurfaceState *(*find)(const void *owner, wlr_surface *), const void *owner);
	~HoldLedger();
	HoldLedger(const HoldLedger &) = delete;
	HoldLedger &operator=(const HoldLedger &) = delete;

	/**
	 * First thing at every client commit of the surface (wlroots' client_commit, after the
	 * commit's number was counted): a surface too far ahead of its oldest held commit lets its
	 * held commits go (at the next idle, outside wlroots' commit), and a root whose synchronized
	 * descendants have held commits holds this commit for them (SyncChild; one at a time).
	 */
	void client_commit(SurfaceState *s);
	/**
	 * Last thing at every client commit of the surface, once every module has held it or not:
	 * commits that wait only for a successor apply now when this one is not held (it applies
	 * right after them), else they wait for it.
	 */
	void client_commit_done(SurfaceState *s);
	/**
	 * Holds the commit being made now (from its client_commit) for `reason`: a new hold, or one
	 * more reason of it. False (nothing held) for a surface without a role (a state held across
	 * a role's initial commit would apply as that role's first one) or for an unmap.
	 */
	bool hold(SurfaceState *s, HoldReason reason);
	/** One more `reason` for commit `commit`, if it is held; false if not. */
	bool add(SurfaceState *s, uint64_t commit, HoldReason reason);
	/**
	 * One `reason` of commit `commit` is done; with none left the commit is released (in commit
	 * order, `when`). False if it did not wait for that reason.
	 */
	bool clear(SurfaceState *s, uint64_t commit, HoldReason reason, Release when);
	/** Commit `commit` waits for `to` from now on instead of `from` (nothing is released). */
	bool replace(SurfaceState *s, uint64_t commit, HoldReason from, HoldReason to);
	/** Every held commit of the surface applies (in order, `when`), whatever it waits for. */
	void let_go(SurfaceState *s, LetGo why, Release when);

	bool held(const SurfaceState *s, uint64_t commit) const;
	/**
	 * The surface's states apply now because what follows hides them (a null attach or another
	 * buffer right behind, a role object being destroyed): nothing converts them to be shown.
	 */
	bool applying_hidden(const SurfaceState *s) const;
	bool waits_for(const SurfaceState *s, uint64_t commit, HoldReason reason) const;
	/**
	 * Nothing numbered after `after` and before `before` waits for anything but a successor:
	 * each held one waits only for its successor, and those nobody holds are cached behind
	 * them (true when there is none). Released with `before`, they all apply with it.
	 */
	bool successors_only_between(const SurfaceState *s, uint64_t after, uint64_t before) const;
	/**
	 * The held commits numbered up to `through` that wait only for a successor wait no more:
	 * they apply (when `when` says) without it, with the commits nobody holds behind them. For
	 * a commit that must apply before its successor may be decided (a fifo barrier it sets).
	 * Returns whether any did.
	 */
	bool release_successors(SurfaceState *s, uint64_t through, Release when);
	/** Held commits of every surface. */
	size_t total() const { return total_; }

	/**
	 * `check(surface)` tells whether every held commit of the surface could apply now and leave
	 * it showing a complete image without converting anything on the main thread (the
	 * conversion's knowledge; without a check: always). A surface past kMaxCommitsBehind lets its
	 * held commits go only then, else once a release of its own makes it so; past
	 * kMaxCommitsHeld, at once.
	 */
	void set_cheap_release(bool (*check)(void *data, SurfaceState *surface), void *data) {
		cheap_release_ = check;
		cheap_release_data_ = data;
	}

	/**
	 * `changed(data, surface)` after the reasons of one of the surface's held commits changed
	 * (clear, replace): frame pacing looks again whether a later held commit's turn came (one
	 * superseded, or released, before it).
	 */
	void set_on_change(void (*changed)(void *data, SurfaceState *surface), void *data) {
		on_change_ = changed;
		on_change_data_ = data;
	}

	/**
	 * The surface is going: its held commits are dropped without unlocking (wlroots frees its
	 * cached states), and its roots no longer wait for them.
	 */
	void surface_destroyed(SurfaceState *s);

private:
	HoldLedger() = default;
	HeldCommit *find_held(SurfaceState *s, uint64_t commit);
	size_t releasable(const SurfaceState *s) const;
	void drain(SurfaceState *s);
	void schedule(SurfaceState *s, bool let_go);
	void run_idle();
	/** Past kMaxCommitsBehind: lets the surface's held commits go if they can show cheaply. */
	void check_over_limit(SurfaceState *s);
	void unroot(const SurfaceRef &root, Release when);
	void watch_roles(SurfaceState *s);
	void unwatch_roles(SurfaceState *s);
	static void request_logged(void *data, wl_protocol_logger_type type, const wl_protocol_logger_message *message);

	wl_display *display_ = nullptr;
	Stats *stats_ = nullptr;
	SurfaceState *(*find_)(const void *owner, wlr_surface *) = nullptr;
	const void *owner_ = nullptr;
	bool (*cheap_release_)(void *, SurfaceState *) = nullptr;
	void *cheap_release_data_ = nullptr;
	void (*on_change_)(void *, SurfaceState *) = nullptr;
	void *on_change_data_ = nullptr;
	size_t total_ = 0;
	wl_protocol_logger *logger_ = nullptr;
	wl_event_source *idle_ = nullptr;
	/** Surfaces to drain (or to let go) at the next idle. */
	std::vector<std::pair<SurfaceRef, bool>> deferred_;
	/** The role objects of surfaces with held commits: their destroy request lets them go. */
	std::unordered_map<wl_resource *, SurfaceRef> watched_roles_;
};

} // namespace pixelport
