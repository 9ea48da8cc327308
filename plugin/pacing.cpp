// Frame pacing (pacing.hpp): when a commit that waits for a fifo barrier or a target time may
// apply. The protocols' objects are in fifo.cpp and commit_timing.cpp; both only set a surface's
// pending PacingRequest.
#include "pacing.hpp"

#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "hold.hpp"
#include "plugin.hpp"
#include "surface_state.hpp"

namespace pixelport {

namespace {

// A request moves with its state (pending to cached to current) and is gone from where it was:
// set_barrier, wait_barrier and a timestamp count for one commit only.
void move_request(void *dst, void *src) {
	auto *from = static_cast<PacingRequest *>(src);
	*static_cast<PacingRequest *>(dst) = *from;
	*from = PacingRequest{};
}

// Cached states are made by wlroots (zeroed: no request).
const wlr_surface_synced_impl kRequestImpl = {
	.state_size = sizeof(PacingRequest),
	.init_state = nullptr,
	.finish_state = nullptr,
	.move_state = move_request,
};

// A subsurface in synchronized mode, itself or through an ancestor (wlroots' own rule).
bool synchronized(wlr_surface *surface) {
	for (wlr_subsurface *sub = wlr_subsurface_try_from_wlr_surface(surface); sub != nullptr;) {
		if (sub->synchronized) return true;
		if (sub->parent == nullptr) return false;
		sub = wlr_subsurface_try_from_wlr_surface(sub->parent);
	}
	return false;
}

bool on_output(wlr_surface *surface, wlr_output *output) {
	wlr_surface_output *so;
	wl_list_for_each(so, &surface->current_outputs, link) {
		if (so->output == output) return true;
	}
	return false;
}

} // namespace

SurfacePacing::SurfacePacing(Pacing *pacing, SurfaceState *surface) : pacing(pacing), state(surface) {
	static_assert(std::is_trivially_copyable_v<PacingRequest>);
}

SurfacePacing::~SurfacePacing() {
	if (synced_ok_) wlr_surface_synced_finish(&synced_);
}

std::unique_ptr<Pacing> Pacing::create(pixelport_plugin *plugin) {
	std::unique_ptr<Pacing> p(new Pacing());
	p->plugin_ = plugin;
	p->timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (p->timer_fd_ < 0) return nullptr;
	p->timer_source_ = wl_event_loop_add_fd(
		wl_display_get_event_loop(plugin->display), p->timer_fd_, WL_EVENT_READABLE, timer_fired, p.get());
	if (p->timer_source_ == nullptr) return nullptr;
	// A held commit superseded or released before a later one that waits: that one's turn may
	// have come (decided at the next idle, as a change may come from inside wlroots).
	plugin->holds->set_on_change(
		[](void *data, SurfaceState *s) {
			if (s->pacing != nullptr && !s->pacing->waiting.empty())
				static_cast<Pacing *>(data)->decide(s, false);
		},
		p.get());
	return p;
}

Pacing::~Pacing() {
	plugin_->holds->set_on_change(nullptr, nullptr);
	barriers_.for_each([this](SurfacePacing *p) { barriers_.remove(p); });
	if (timer_source_ != nullptr) wl_event_source_remove(timer_source_);
	if (timer_fd_ >= 0) close(timer_fd_);
}

SurfacePacing *Pacing::pacing_of(SurfaceState *s) {
	if (s->pacing != nullptr) return s->pacing.get();
	auto p = std::make_unique<SurfacePacing>(this, s);
	p->synced_ok_ = wlr_surface_synced_init(
		&p->synced_, s->surface, &kRequestImpl, &p->pending_request, &p->current_request);
	if (!p->synced_ok_) return nullptr;
	s->pacing = std::move(p);
	return s->pacing.get();
}

// ---- decisions --------------------------------------------------------------------------------

int64_t Pacing::least_delay(SurfaceState *s) const {
	int64_t least = -1;
	wlr_surface_output *so;
	wl_list_for_each(so, &s->surface->current_outputs, link) {
		for (const auto &o : plugin_->outputs) {
			if (o->output != so->output || o->pacing == nullptr) continue;
			const auto delay = static_cast<int64_t>(o->pacing->delay_bound());
			least = least < 0 ? delay : std::min(least, delay);
		}
	}
	return least;
}

bool Pacing::barrier_in_force(SurfacePacing *p) {
	if (!p->barrier) return false;
	// A surface on no output the plugin follows is not being updated: its barrier would only
	// stall its client (docs/design.md, "Frame pacing").
	if (least_delay(p->state) < 0) {
		clear_barrier(p);
		return false;
	}
	return true;
}

void Pacing::client_commit(SurfaceState *s) {
	SurfacePacing *p = s->pacing.get();
	if (p == nullptr) return;
	const PacingRequest &request = p->pending_request;
	if (request.set_barrier) p->sets.push_back(s->commits);
	// A synchronized subsurface's state applies with its parent's: its wait_barrier is ignored
	// (the protocol says so), and so is its target (its parent's commit, and its target, decide
	// when both apply; held here, it would wait for an apply that waits for it).
	if (!request.wait_barrier && !request.has_target) return;
	if (synchronized(s->surface)) return;
	bool fifo = request.wait_barrier;
	bool timed = request.has_target;
	if (!fifo && !timed) return;
	const uint64_t now = monotonic_ns();
	// Decided now only if it would apply now: nothing of the surface's older is still to apply.
	const bool turn =
		p->waiting.empty() && s->applied_commit() + 1 == s->commits && wl_list_empty(&s->surface->cached);
	if (turn) {
		fifo = fifo && barrier_in_force(p);
		timed = timed && !target_ready(s, request.target_ns, now);
		if (!fifo && !timed) return;
	}
	// Not held (a surface without a role, an unmap): it applies now, and what it asked is ignored.
	HoldLedger &ledger = *plugin_->holds;
	if (fifo && !ledger.hold(s, HoldReason::FifoBarrier)) return;
	if (timed && !ledger.hold(s, HoldReason::TargetTime)) {
		if (fifo) ledger.clear(s, s->commits, HoldReason::FifoBarrier, Release::Idle);
		return;
	}
	plugin_->stats.add(Stat::PacedCommits);
	p->waiting.push_back({.commit = s->commits,
		.fifo = fifo,
		.timed = timed,
		.target_ns = request.target_ns,
		.turn_ns = turn ? now : 0});
	if (turn && timed) wake_for_target(p, request.target_ns);
}

bool Pacing::target_ready(SurfaceState *s, uint64_t target_ns, uint64_t now) const {
	// Released now, it is latched by the next frame and presented no sooner than its outputs'
	// delay bound after now. A surface on no output is not being updated: nothing presents it
	// early, and held, it would pace its client a target at a time for frames nobody sees (Mesa
	// sets each FIFO frame's target a refresh after the last one's): it applies at once.
	const int64_t delay = least_delay(s);
	return delay < 0 || now + static_cast<uint64_t>(delay) >= target_ns;
}

void Pacing::wake_for_target(SurfacePacing *p, uint64_t target_ns) {
	const auto delay = static_cast<uint64_t>(std::max<int64_t>(least_delay(p->state), 0));
	set_deadline(p, true, target_ns > delay ? target_ns - delay : 0);
}

void Pacing::decide(SurfaceState *s, bool now) {
	SurfacePacing *p = s->pacing.get();
	if (p == nullptr) return;
	if (p->deciding) {
		// A release applied commits, whose apply asks again: the running decide() goes on.
		p->decide_again = true;
		return;
	}
	p->deciding = true;
	const SurfaceRef ref = s->ref();
	do {
		p->decide_again = false;
		// Applied already (let go by the ledger: an unmap, a role's destroy, too many commits
		// behind): nothing to decide.
		while (!p->waiting.empty() && p->waiting.front().commit <= s->applied_commit()) {
			p->waiting.pop_front();
			drop_deadline(p, true);
		}
		if (p->waiting.empty()) break;
		SurfacePacing::Waiting &w = p->waiting.front();
		// An older commit that sets a barrier applies first, and this one waits for that
		// barrier: decided once it applied. Superseded commits up to it may wait for their
		// successor, perhaps this very one: they go without it, and it waits for its frame.
		uint64_t sets_before = 0;
		for (uint64_t c : p->sets) {
			if (c > s->applied_commit() && c < w.commit) sets_before = c;
		}
		if (sets_before != 0) {
			const Release when = now ? Release::Now : Release::Idle;
			if (plugin_->holds->successors_only_between(s, s->applied_commit(), sets_before + 1) &&
				plugin_->holds->release_successors(s, sets_before, when) && now) {
				if (ref.get() == nullptr) return; // never: no apply destroys its surface
				continue; // applied: what it set is decided on (decide_again, from applied())
			}
			break;
		}
		// Its turn: every older commit applied, or waiting only to apply with it.
		if (!plugin_->holds->successors_only_between(s, s->applied_commit(), w.commit)) break;
		const uint64_t t = monotonic_ns();
		if (w.turn_ns == 0) w.turn_ns = t;
		const bool clear_fifo = w.fifo && !barrier_in_force(p);
		const bool clear_time = w.timed && target_ready(s, w.target_ns, t);
		if (w.timed && !clear_time) {
			wake_for_target(p, w.target_ns);
		} else {
			drop_deadline(p, true);
		}
		if (!clear_fifo && !clear_time) break;
		const uint64_t commit = w.commit;
		if (clear_fifo) {
			w.fifo = false;
			p->released_commit = commit;
			p->released_wait_ns = t - w.turn_ns;
		}
		if (clear_time) w.timed = false;
		// Off the list before the release: it may apply at once and ask again.
		if (!w.fifo && !w.timed) p->waiting.pop_front();
		const Release when = now ? Release::Now : Release::Idle;
		if (clear_fifo) plugin_->holds->clear(s, commit, HoldReason::FifoBarrier, when);
		if (clear_time) plugin_->holds->clear(s, commit, HoldReason::TargetTime, when);
		if (ref.get() == nullptr) return; // never: no apply destroys its surface
		// The next one's turn may have come too: this one, released, may wait only for it.
		p->decide_again = true;
	} while (p->decide_again);
	p->deciding = false;
}

void Pacing::applied(SurfaceState *s) {
	SurfacePacing *p = s->pacing.get();
	if (p == nullptr) return;
	const PacingRequest &request = p->current_request;
	const uint64_t commit = s->applied_commit();
	// The commit's timing record (one is made for commits that attach a buffer).
	if (timing::CommitSample *r = plugin_->timing->applying(s); r != nullptr && r->seq == commit) {
		r->t_target = request.has_target ? request.target_ns : 0;
		r->barrier_wait = p->released_commit == commit ? p->released_wait_ns : 0;
		r->fifo = static_cast<uint8_t>((request.set_barrier ? timing::kFifoSetBarrier : 0) |
			(request.wait_barrier ? timing::kFifoWaitBarrier : 0));
	}
	while (!p->sets.empty() && p->sets.front() <= commit) p->sets.pop_front();
	if (request.set_barrier) set_barrier(p);
	decide(s, false);
}

// ---- the barrier ------------------------------------------------------------------------------

// Set whatever outputs the surface is on now: a surface mapped by this very commit enters its
// outputs only after it applied. Whether the barrier holds anything is decided with each commit
// that waits for it (barrier_in_force): a surface then on no output clears it.
void Pacing::set_barrier(SurfacePacing *p) {
	wlr_surface *surface = p->state->surface;
	p->barrier = true;
	p->latched_on = nullptr;
	barriers_.push_back(p);
	set_deadline(p, false, monotonic_ns() + kBarrierTimeoutNs);
	// A frame latches it even if this commit damaged nothing.
	wlr_surface_output *so;
	wl_list_for_each(so, &surface->current_outputs, link) wlr_output_schedule_frame(so->output);
}

void Pacing::clear_barrier(SurfacePacing *p) {
	p->barrier = false;
	p->latched_on = nullptr;
	barriers_.remove(p);
	drop_deadline(p, false);
}

void Pacing::surface_destroyed(SurfaceState *s) {
	SurfacePacing *p = s->pacing.get();
	if (p == nullptr) return;
	clear_barrier(p);
	drop_deadline(p, true);
	p->waiting.clear();
	p->sets.clear();
	// Its protocol objects stay (inert: their requests post surface_destroyed).
	if (p->fifo != nullptr) wl_resource_set_user_data(p->fifo, nullptr);
	if (p->timer != nullptr) wl_resource_set_user_data(p->timer, nullptr);
}

// ---- outputs ----------------------------------------------------------------------------------

uint64_t Pacing::OutputPacing::delay_bound() const { return presentation_delay_bound(delays, delay_count); }

std::unique_ptr<Pacing::OutputPacing> Pacing::attach_output(wlr_output *output) {
	auto state = std::make_unique<OutputPacing>();
	OutputPacing *o = state.get();
	o->pacing = this;
	o->output = output;
	o->frame.connect(&output->events.frame, [o](void *) { o->frame_ns = monotonic_ns(); });
	o->commit.connect(&output->events.commit, [o](void *data) {
		auto *event = static_cast<wlr_output_event_commit *>(data);
		if (event->state->committed & WLR_OUTPUT_STATE_BUFFER) o->pacing->output_committed(o);
	});
	o->present.connect(&output->events.present, [o](void *data) {
		auto *event = static_cast<wlr_output_event_present *>(data);
		// A backend that presents with refresh 0 ("unknown": wlroots' headless) while its mode has
		// one: the listeners after this one (wp_presentation's, timing's) report the mode's, so
		// that clients pacing by it (Mesa's commit-timing targets) can.
		if (event->refresh == 0 && o->output->refresh > 0) {
			event->refresh = static_cast<int>(int64_t{1000000000000} / o->output->refresh);
		}
		o->pacing->output_presented(o, event);
	});
	return state;
}

void Pacing::detach_output(OutputPacing &o) {
	std::vector<SurfaceRef> cleared;
	barriers_.for_each([&](SurfacePacing *p) {
		if (p->latched_on == o.output) cleared.push_back(p->state->ref());
	});
	for (const SurfaceRef &ref : cleared) {
		if (SurfaceState *s = ref.get()) {
			clear_barrier(s->pacing.get());
			decide(s, false); // inside wlroots' output destroy: released at the next idle
		}
	}
}

// A frame with the surfaces on this output was committed: their barriers are latched by it.
void Pacing::output_committed(OutputPacing *o) {
	wlr_output *output = o->output;
	o->committed.emplace_back(output->commit_seq, o->frame_ns);
	if (o->committed.size() > 16) o->committed.pop_front(); // presents that never came
	barriers_.for_each([output](SurfacePacing *p) {
		if (p->latched_on == nullptr && on_output(p->state->surface, output)) {
			p->latched_on = output;
			p->latched_seq = output->commit_seq;
		}
	});
}

// The frame was presented (or not): barriers it latched clear, and so do those of surfaces that
// left every followed output; their surfaces' next held commits are decided now.
void Pacing::output_presented(OutputPacing *o, const wlr_output_event_present *event) {
	while (!o->committed.empty() && o->committed.front().first <= event->commit_seq) {
		const auto [seq, frame_ns] = o->committed.front();
		o->committed.pop_front();
		const timespec *when = wlr_compat::present_when(event);
		if (seq != event->commit_seq || !event->presented || when == nullptr || frame_ns == 0) continue;
		const uint64_t at =
			static_cast<uint64_t>(when->tv_sec) * 1000000000u + static_cast<uint64_t>(when->tv_nsec);
		o->delays[o->delay_next] = at > frame_ns ? at - frame_ns : 0;
		o->delay_next = (o->delay_next + 1) % std::size(o->delays);
		o->delay_count = std::min(o->delay_count + 1, std::size(o->delays));
	}
	std::vector<SurfaceRef> cleared;
	barriers_.for_each([&](SurfacePacing *p) {
		const bool latched = p->latched_on == o->output && p->latched_seq <= event->commit_seq;
		if (latched || least_delay(p->state) < 0) cleared.push_back(p->state->ref());
	});
	for (const SurfaceRef &ref : cleared) {
		SurfaceState *s = ref.get();
		if (s == nullptr || s->pacing == nullptr) continue;
		clear_barrier(s->pacing.get());
		decide(s, true);
	}
}

// ---- deadlines: one timerfd -------------------------------------------------------------------

void Pacing::set_deadline(SurfacePacing *p, bool target, uint64_t at) {
	drop_deadline(p, target);
	auto it = deadlines_.emplace(at, p);
	if (target) {
		p->target_deadline = it;
		p->has_target_deadline = true;
	} else {
		p->barrier_deadline = it;
		p->has_barrier_deadline = true;
	}
	arm_timer();
}

void Pacing::drop_deadline(SurfacePacing *p, bool target) {
	bool &has = target ? p->has_target_deadline : p->has_barrier_deadline;
	if (!has) return;
	deadlines_.erase(target ? p->target_deadline : p->barrier_deadline);
	has = false;
	// The timer stays armed for a deadline that went: it finds nothing due and arms again.
}

void Pacing::arm_timer() {
	if (deadlines_.empty()) return;
	const uint64_t first = std::max<uint64_t>(deadlines_.begin()->first, 1);
	if (armed_at_ != 0 && armed_at_ <= first) return;
	itimerspec spec{};
	spec.it_value.tv_sec = static_cast<time_t>(first / 1000000000u);
	spec.it_value.tv_nsec = static_cast<long>(first % 1000000000u);
	timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
	armed_at_ = first;
}

int Pacing::timer_fired(int fd, uint32_t, void *data) {
	auto *pacing = static_cast<Pacing *>(data);
	uint64_t expirations = 0;
	if (read(fd, &expirations, sizeof expirations) < 0) {
		// EAGAIN: a deadline moved since; nothing to read.
	}
	pacing->armed_at_ = 0;
	const uint64_t now = monotonic_ns();
	std::vector<std::pair<SurfaceRef, bool>> due;
	while (!pacing->deadlines_.empty() && pacing->deadlines_.begin()->first <= now) {
		SurfacePacing *p = pacing->deadlines_.begin()->second;
		const bool target = p->has_target_deadline && p->target_deadline == pacing->deadlines_.begin();
		pacing->drop_deadline(p, target);
		due.emplace_back(p->state->ref(), target);
	}
	for (const auto &[ref, target] : due) {
		SurfaceState *s = ref.get();
		if (s == nullptr || s->pacing == nullptr) continue;
		// A barrier no frame cleared in time (an output that stopped presenting).
		if (!target && s->pacing->barrier) {
			pacing->plugin_->stats.add(Stat::BarrierTimeouts);
			pacing->clear_barrier(s->pacing.get());
		}
		pacing->decide(s, true);
	}
	pacing->arm_timer();
	return 0;
}

} // namespace pixelport
