// Which thread converts a commit, and when: admission against the main thread's allowance, the
// workers' jobs, held commits and synchronized subsurfaces' roots, the idle queue of due views,
// and the calls conversion.hpp lists (docs/design.md, "When it is written, and by which thread").
#include <algorithm>
#include <cmath>

#include "conversion_internal.hpp"
#include "timing.hpp"
#include "wlr_compat.hpp"

namespace pixelport {

namespace {

// One idle pass converts until this much time is spent, then yields to other clients for
// kResumeMs; a render that needs a surface converts it at once regardless.
constexpr uint64_t kIdleBudgetNs = 4'000'000;
constexpr int kResumeMs = 1;
// The main thread converts a commit itself only when it updates the surface's own image (its
// pages faulted in already) with at most this many pixels: handing a commit to a worker and
// applying it when handed back costs the main thread about what converting this many pixels
// does (docs/design.md, "Why 64 Ki pixels"). Everything else is converted on a worker.
constexpr uint64_t kInlinePixels = uint64_t{1} << 16;
// The same limit in bytes of the client's rows (stride x rows): a narrow buffer with a huge
// stride has few pixels but a page per row to fault in, which costs more than its pixels.
constexpr uint64_t kInlineSpanBytes = kInlinePixels * 4;
// A worker's band: about 1 ms of converting (less on warm pages), the longest another
// client's frame waits for a worker (workers.hpp).
constexpr uint64_t kBandPixels = uint64_t{1} << 18;
constexpr uint64_t kBandSpanBytes = kBandPixels * 4;
// What commits converted on the main thread may leave to be converted in one go (at an apply,
// in an idle pass or in a render), counted from their admission until the next idle pass
// after their conversion: a client one small commit's worth, all clients together two.
// Commits beyond go to the workers, so 40 surfaces committing at once cost the main thread no
// more than two small conversions.
constexpr uint64_t kDueClientPixels = kInlinePixels;
constexpr uint64_t kDueTotalPixels = 2 * kInlinePixels;

// Bytes per row of the client's buffer when it lives in a wl_shm pool (its first plane); 0 when
// not (stream buffers are the plugin's own memory).
uint64_t shm_stride(PixelBuffer *buffer) {
	wlr_shm_attributes attrs;
	return buffer->get_shm(&attrs) && attrs.stride > 0 ? static_cast<uint64_t>(attrs.stride) : 0;
}

// Upper bounds on the buffer damage wlroots computes from a finalized pending state when it
// applies (wlroots' surface_update_damage: the surface damage through the viewport's dst-to-src
// scale and src offset, the buffer scale and the inverse transform, united with the buffer
// damage), clipped to the buffer. Pixels and rows: a tall, narrow damage on a wide-stride buffer
// has few pixels but a row of the pool per row. Computed in doubles: no overflow whatever the
// scale or viewport.
struct DamageBound {
	uint64_t pixels = 0;
	uint64_t rows = 0;
};

DamageBound pending_damage_bound(const wlr_surface_state &st, int32_t width, int32_t height) {
	const double w = width, h = height;
	const pixman_box32_t *b = pixman_region32_extents(&st.buffer_damage);
	double bw = std::clamp<double>(static_cast<double>(b->x2) - b->x1, 0, w);
	double bh = std::clamp<double>(static_cast<double>(b->y2) - b->y1, 0, h);
	double pixels = bw * bh, rows = bh;
	const pixman_box32_t *d = pixman_region32_extents(&st.surface_damage);
	double dw = std::max<double>(0, static_cast<double>(d->x2) - d->x1),
	       dh = std::max<double>(0, static_cast<double>(d->y2) - d->y1);
	if (dw > 0 && dh > 0) {
		const bool swapped = (st.transform & 1) != 0; // 90 and 270, flipped or not
		const double scale = std::max(1, st.scale);
		if (st.viewport.has_dst) {
			// The viewport's source size in surface coordinates (wlroots' surface_state_viewport_src_size).
			double src_w =
				st.viewport.has_src ? st.viewport.src.width : std::floor((swapped ? h : w) / scale);
			double src_h =
				st.viewport.has_src ? st.viewport.src.height : std::floor((swapped ? w : h) / scale);
			dw *= src_w / std::max(1, st.viewport.dst_width);
			dh *= src_h / std::max(1, st.viewport.dst_height);
		}
		dw *= scale;
		dh *= scale;
		if (swapped) std::swap(dw, dh);
		// Each scaling step rounds outwards: a pixel more on each side.
		dw = std::isfinite(dw) ? std::min(w, std::ceil(dw) + 2) : w;
		dh = std::isfinite(dh) ? std::min(h, std::ceil(dh) + 2) : h;
		pixels += dw * dh;
		rows += dh;
	}
	return {static_cast<uint64_t>(pixels), static_cast<uint64_t>(std::min(rows, h))};
}

// Counts of a pass before `epoch` are of a pass that is over.
void refresh(ImageBudget &budget, uint64_t epoch) {
	if (budget.epoch != epoch) {
		budget.epoch = epoch;
		budget.spent_pixels = 0;
	}
}

// The surface whose apply applies `s`'s cached state: through synchronized subsurfaces up to the
// first surface that is not one (wlroots applies a synchronized child's cache at its parent's
// apply). Null when `s` is not a synchronized subsurface.
SurfaceState *sync_root(pixelport_plugin *plugin, SurfaceState *s) {
	wlr_surface *surface = s->surface;
	for (wlr_subsurface *sub = wlr_subsurface_try_from_wlr_surface(surface);
		sub != nullptr && sub->synchronized && sub->parent != nullptr;
		sub = wlr_subsurface_try_from_wlr_surface(surface)) {
		surface = sub->parent;
	}
	return surface == s->surface ? nullptr : plugin->surface_state(surface);
}

} // namespace

void Conversions::Impl::release_source(ConvertedView *view) {
	stop_job(view);
	settle(view, false);
	if (view->source == nullptr) return;
	PixelBuffer *source = view->source;
	view->source = nullptr;
	wlr_buffer_unlock(source->base()); // the last lock releases the wl_buffer to the client
}

bool Conversions::Impl::admit(wl_client *client, ConvertedView *view, uint64_t pixels) {
	std::shared_ptr<ImageBudget> mine = client_budget(client);
	refresh(*mine, epoch);
	refresh(*total, epoch);
	const uint64_t client_used = mine->due_pixels + mine->spent_pixels;
	const uint64_t total_used = total->due_pixels + total->spent_pixels;
	// The first always fits: a small commit alone is converted in one go.
	if (pixels > 0 &&
		((client_used > 0 && client_used + pixels > kDueClientPixels) ||
			(total_used > 0 && total_used + pixels > kDueTotalPixels))) {
		return false;
	}
	mine->due_pixels += pixels;
	total->due_pixels += pixels;
	view->due_pixels = pixels;
	view->due_budget = std::move(mine);
	return true;
}

void Conversions::Impl::settle(ConvertedView *view, bool converted) {
	if (view->due_budget == nullptr) return;
	std::shared_ptr<ImageBudget> mine = std::move(view->due_budget);
	const uint64_t pixels = std::exchange(view->due_pixels, 0);
	mine->due_pixels -= pixels;
	total->due_pixels -= pixels;
	if (converted && pixels > 0) {
		// Spent in this pass: the next idle pass starts a new one.
		refresh(*mine, epoch);
		refresh(*total, epoch);
		mine->spent_pixels += pixels;
		total->spent_pixels += pixels;
		kick();
	}
}

void Conversions::Impl::root_view(SurfaceState *root, ConvertedView *view) {
	view->rooted = true;
	view->root_surface = root->surface;
	view->root_id = root->id;
	root->conversion.add_sync_wait();
	Listener &listener = root->conversion.root_commit();
	if (listener.connected()) return;
	pixelport_plugin *plugin = owner->plugin();
	listener.connect(&root->surface->events.client_commit, [plugin, root](void *) {
		SurfaceConversion &c = root->conversion;
		wlr_surface *surface = root->surface;
		if (c.sync_waits() == 0 || surface->role == nullptr) return;
		// Not an unmap: the role checks the commits after it against it (see surface.cpp).
		if ((surface->pending.committed & WLR_SURFACE_STATE_BUFFER) && surface->pending.buffer == nullptr) {
			return;
		}
		c.add_root_lock(wlr_surface_lock_pending(surface));
		plugin->note_holding(root);
	});
}

void Conversions::Impl::unroot(Due key, bool now) {
	SurfaceState *root = owner->plugin()->surface_state(key.surface, key.id);
	if (root == nullptr || root->conversion.remove_sync_wait() > 0 || root->conversion.root_locks().empty()) {
		return;
	}
	if (now) {
		unlock_root(root);
	} else {
		root_releases.push_back({root->surface, root->id});
		kick();
	}
}

// Applies the root's held commits, and with them its synchronized descendants' cached states.
void Conversions::Impl::unlock_root(SurfaceState *root) {
	wlr_surface *surface = root->surface;
	uint64_t id = root->id;
	for (uint32_t seq : root->conversion.take_root_locks()) {
		if (owner->plugin()->surface_state(surface, id) == nullptr) break;
		wlr_surface_unlock_cached(surface, seq);
	}
}

void Conversions::Impl::schedule(SurfaceState *s) {
	if (!s->conversion.enqueue()) return;
	due.push_back({s->surface, s->id});
	kick();
}

void Conversions::Impl::kick() {
	if (idle == nullptr) {
		wl_event_loop *loop = wl_display_get_event_loop(owner->plugin()->display);
		idle = wl_event_loop_add_idle(
			loop,
			[](void *data) {
				auto *impl = static_cast<Impl *>(data);
				impl->idle = nullptr;
				impl->run_due(kIdleBudgetNs);
			},
			this);
	}
}

bool Conversions::Impl::start_job(SurfaceState *s, ConvertedView *view, PixelBuffer *buffer) {
	if (workers == nullptr) return false;
	ConvertedImage *image = view->image.get();
	auto job = std::make_shared<ViewJob>();
	if (!buffer->source(&job->src)) return false;
	job->dst.fourcc = image->fourcc;
	job->dst.width = image->width;
	job->dst.height = image->height;
	job->dst.data = image->data;
	job->dst.stride = image->stride;
	job->dst.size = image->size;
	job->options = color_state_options(
		view->color, buffer->stored_format, image->width, image->height, owner->plugin()->convert_options);
	job->client = client_of(s);
	uint64_t band_rows = kBandPixels / static_cast<uint64_t>(std::max(1, image->width));
	if (uint64_t stride = shm_stride(buffer); stride > 0) band_rows = std::min(band_rows, kBandSpanBytes / stride);
	job->band_rows = static_cast<int32_t>(std::min<uint64_t>(band_rows, INT32_MAX - 3));
	job->source = buffer;
	wlr_buffer_lock(buffer->base());
	job->image = view->image;
	image->converting = true;
	image->writer = job;
	join_job(view, job);
	workers->submit(job);
	return true;
}

void Conversions::Impl::join_job(ConvertedView *view, const std::shared_ptr<ConvertJob> &job) {
	auto *j = static_cast<ViewJob *>(job.get());
	view->job = job;
	view->job_slot = j->views.size();
	j->views.push_back(view);
	j->live++;
}

bool Conversions::Impl::stop_job(ConvertedView *view, bool unless_started) {
	if (view->job == nullptr) return true;
	auto *j = static_cast<ViewJob *>(view->job.get());
	if (j->live == 1) {
		if (!unless_started) {
			workers->cancel(view->job);
		} else if (!workers->cancel_unstarted(view->job)) {
			return false;
		}
	} else if (unless_started && workers->started(view->job)) {
		return false;
	}
	j->views[view->job_slot] = nullptr;
	j->live--;
	view->job = nullptr;
	return true;
}

void Conversions::Impl::job_done(const std::shared_ptr<ConvertJob> &done) {
	auto *job = static_cast<ViewJob *>(done.get());
	PixelBuffer *source = job->source;
	ConvertedImage *image = job->image.get();
	pixelport_plugin *plugin = owner->plugin();
	source->after_read(); // a shrunk pool read as zeroes: say so
	image->converting = false;
	if (job->ok) {
		plugin->stats.converted_uploads++;
		plugin->stats.converted_pixels +=
			static_cast<uint64_t>(image->width) * static_cast<uint64_t>(image->height);
	} else if (!job->cancelled) {
		wlr_log(WLR_ERROR, "pixelport: converting %s %dx%d failed", core::format_name(source->stored_format),
			image->width, image->height);
	}
	if (!job->ok) image->pure_source = nullptr; // not this content: nobody shares it
	image->writer.reset();
	std::vector<Due> surfaces;
	for (ConvertedView *view : std::exchange(job->views, {})) {
		if (view == nullptr) continue;
		view->job = nullptr;
		if (job->ok && image->pure_source == view->source && image->pure_generation == view->generation &&
			image->pure_color == view->color) {
			image->filled = true;
		}
		view->convert_start_ns = job->start_ns;
		view->convert_end_ns = job->end_ns;
		view->converted = true;
		surfaces.push_back({view->surface, view->surface_id});
		release_source(view);
	}
	job->live = 0;
	// These commits and the superseded ones before them apply now.
	for (const Due &d : surfaces) {
		if (SurfaceState *s = plugin->surface_state(d.surface, d.id)) release_ready(s);
	}
	wlr_buffer_unlock(source->base()); // the job's lock, last: it may free the buffer
}

// Unlocks the surface's held commits that may apply now, oldest first: those converted, and
// superseded ones together with the converted one after them (or, when no commit after them is
// still converting, with the newer unheld commit wlroots cached behind them). wlroots applies
// them in order, so no output shows a superseded one.
void Conversions::Impl::release_ready(SurfaceState *s) {
	const std::vector<ConvertedView *> &held = s->conversion.held();
	size_t pending = 0;
	while (pending < held.size() && (held[pending]->converted || held[pending]->superseded)) pending++;
	size_t n = pending;
	if (pending < held.size()) {
		while (n > 0 && !held[n - 1]->converted) n--; // superseded ones wait for the next converted
	}
	if (n == 0) return;
	std::vector<uint32_t> seqs;
	std::vector<Due> roots; // taken now: the unlocks may destroy the views
	for (size_t i = 0; i < n; i++) {
		if (held[i]->held) seqs.push_back(held[i]->lock_seq);
		if (std::exchange(held[i]->rooted, false)) roots.push_back({held[i]->root_surface, held[i]->root_id});
	}
	s->conversion.remove_first_held(n);
	wlr_surface *surface = s->surface;
	uint64_t id = s->id;
	for (uint32_t seq : seqs) {
		if (owner->plugin()->surface_state(surface, id) == nullptr) break;
		wlr_surface_unlock_cached(surface, seq);
	}
	// Then the roots whose commits waited for these: they apply with them.
	for (const Due &root : roots) unroot(root, true);
}

// A newer buffer commit (`newer`, a held or early view, or null for any other buffer)
// replaces the surface's held commits whose conversion has not started: they stay locked until
// the newer one may apply, and share its image where it fits, so they cost no memory
// meanwhile. One being converted is finished and shown (a client sending frames faster than
// they convert still sees every other one shown, not none).
void Conversions::Impl::supersede_held(SurfaceState *s, ConvertedView *newer) {
	for (ConvertedView *old : s->conversion.held()) {
		if (old->superseded || old->converted) continue;
		// One whose conversion is under way is shown, unless the newer one waits for the same.
		const bool same_job = newer != nullptr && newer->job != nullptr && newer->job == old->job;
		if (!stop_job(old, !same_job)) continue;
		old->superseded = true;
		owner->plugin()->stats.skipped_conversions++;
		release_source(old);
		if (newer != nullptr && newer->image != nullptr && old->image != nullptr &&
			old->image->fourcc == newer->image->fourcc && old->image->width == newer->image->width &&
			old->image->height == newer->image->height) {
			old->image = newer->image;
		}
	}
}

// An unheld buffer commit (`newer`, or null for a buffer that needs no conversion) follows
// the surface's held ones: supersede them and unlock what may apply after this dispatch.
void Conversions::Impl::replace_held(SurfaceState *s, ConvertedView *newer) {
	supersede_held(s, newer);
	releases.push_back({s->surface, s->id});
	kick();
}

void Conversions::Impl::run_due(uint64_t budget_ns) {
	pixelport_plugin *plugin = owner->plugin();
	uint64_t start = monotonic_ns();
	for (const Due &d : std::exchange(releases, {})) {
		if (SurfaceState *s = plugin->surface_state(d.surface, d.id)) release_ready(s);
	}
	for (const Due &d : std::exchange(root_releases, {})) {
		SurfaceState *root = plugin->surface_state(d.surface, d.id);
		if (root != nullptr && root->conversion.sync_waits() == 0) unlock_root(root);
	}
	// Each due conversion is bounded (kInlinePixels): a pass does one at least.
	size_t i = 0;
	for (; i < due.size(); i++) {
		if (budget_ns != 0 && i > 0 && monotonic_ns() - start >= budget_ns) break;
		SurfaceState *s = plugin->surface_state(due[i].surface, due[i].id);
		if (s == nullptr) continue;
		s->conversion.dequeued();
		if (s->conversion.pending() != nullptr) flush(s, plugin->timing->converting(s));
	}
	due.erase(due.begin(), due.begin() + static_cast<std::ptrdiff_t>(i));
	// What unheld commits spent until now is over: the next dispatch starts afresh.
	epoch++;
	if (!due.empty()) {
		// Let other clients' requests run, then go on.
		if (timer == nullptr) {
			timer = wl_event_loop_add_timer(
				wl_display_get_event_loop(plugin->display),
				[](void *data) {
					auto *impl = static_cast<Impl *>(data);
					impl->run_due(kIdleBudgetNs);
					return 0;
				},
				this);
		}
		if (timer != nullptr) wl_event_source_timer_update(timer, kResumeMs);
	}
}

// ---- Conversions ------------------------------------------------------------------------

std::unique_ptr<Conversions> Conversions::create(pixelport_plugin *plugin) {
	std::unique_ptr<Conversions> c(new Conversions());
	c->plugin_ = plugin;
	c->lazy_ = wlr_renderer_is_pixman(plugin->renderer);
	c->impl_ = std::make_unique<Impl>();
	c->impl_->owner = c.get();
	const uint32_t threads = plugin->options.convert_threads;
	Impl *impl = c->impl_.get();
	c->impl_->workers = ConvertWorkers::create(wl_display_get_event_loop(plugin->display),
		threads != 0 ? threads : ConvertWorkers::default_threads(),
		[impl](const std::shared_ptr<ConvertJob> &job) { impl->job_done(job); });
	if (c->impl_->workers == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: no conversion worker could start; converting on the main thread");
	}
	return c;
}

Conversions::~Conversions() {
	impl_->workers.reset(); // hands back what is under way (its views are gone with the clients)
	if (impl_->idle != nullptr) wl_event_source_remove(impl_->idle);
	if (impl_->timer != nullptr) wl_event_source_remove(impl_->timer);
}

void Conversions::surface_client_commit(SurfaceState *s, PixelBuffer *buffer, uint32_t renderer_format) {
	wlr_surface *surface = s->surface;
	bool had_held = !s->conversion.held().empty();
	if (buffer == nullptr) {
		// Another buffer replaces the held commits: they apply with it, unconverted.
		if (had_held) impl_->replace_held(s, nullptr);
		return;
	}
	auto *view = new ConvertedView();
	view->conversions = this;
	view->source = buffer; // takes over the pending state's lock
	view->generation = buffer->generation;
	view->renderer_format = renderer_format;
	view->surface = surface;
	view->surface_id = s->id;
	view->source_format = buffer->stored_format;
	view->color = s->color;
	wlr_buffer_init(&view->base, &kConvertedViewImpl, buffer->width(), buffer->height());
	surface->pending.buffer = wlr_buffer_lock(&view->base);
	wlr_buffer_drop(&view->base); // freed with its last lock
	impl_->hold(s, view, buffer);
	if (had_held &&
		std::find(s->conversion.held().begin(), s->conversion.held().end(), view) ==
			s->conversion.held().end()) {
		impl_->replace_held(s, view);
	}
}

// A large commit, or a small one beyond what may be left to one go: choose its image now and
// hold the commit until it is converted (see conversion.hpp). Small ones, and damage-only
// updates of a large surface's own image, are left to the apply within that allowance.
void Conversions::Impl::hold(SurfaceState *s, ConvertedView *view, PixelBuffer *buffer) {
	SurfaceConversion &c = s->conversion;
	int32_t w = buffer->width(), h = buffer->height();
	const uint64_t stride = shm_stride(buffer);
	// Stream bytes still to come (straight alpha on a stream buffer): the stream holds the
	// commit until they are in, and it is converted in one go when applied. Without workers,
	// every commit is converted so.
	if (buffer->incomplete() || workers == nullptr) return;
	// Cheap enough to convert in one go when applied: few pixels in few bytes of the pool.
	auto small = [&](uint64_t pixels, uint64_t rows) {
		return pixels <= kInlinePixels && stride * rows <= kInlineSpanBytes;
	};
	auto fits = [&](const std::shared_ptr<ConvertedImage> &image) {
		return image != nullptr && image->fourcc == view->renderer_format && image->width == w &&
			image->height == h;
	};
	std::shared_ptr<ConvertedImage> shared = buffer->pure_image.lock();
	// Converted already, or being converted by a job others still wait for: this one waits too.
	std::shared_ptr<ConvertJob> writer = shared != nullptr ? shared->writer.lock() : nullptr;
	const bool shares = fits(shared) && shared->pure_source == buffer &&
		shared->pure_generation == view->generation && shared->pure_color == view->color &&
		(shared->filled || (writer != nullptr && static_cast<ViewJob *>(writer.get())->live > 0));
	// Older content of this buffer is often the surface's spare: no reference of ours may keep
	// take_spare() from handing it over.
	if (!shares) shared.reset();
	const uint64_t pixels = static_cast<uint64_t>(w) * static_cast<uint64_t>(h);
	bool cheap = false;
	uint64_t cost = pixels;
	if (c.held().empty() && c.pending() == nullptr && fits(c.image()) && c.image()->surfaces == 1 &&
		!c.image()->converting) {
		// The surface's own image, its pages faulted in already: a small update of it is
		// converted on the main thread when applied (a fresh image's page faults never are).
		if (c.up_to_date(buffer->stored_format, view->color)) {
			// Bounded by the damage, in pixels and in rows of the pool.
			DamageBound damage = pending_damage_bound(s->surface->pending, w, h);
			cheap = small(damage.pixels, damage.rows);
			cost = std::min(cost, damage.pixels);
		} else {
			cheap = small(pixels, static_cast<uint64_t>(h));
		}
	}
	// A surface without a role cannot be held (below): a small commit of one is converted when
	// applied, whatever image it needs, so a renderer that copies at the apply gets its pixels.
	const bool lock = s->surface->role != nullptr;
	if (!lock && !cheap && small(pixels, static_cast<uint64_t>(h))) cheap = true;
	if (!shares && cheap && admit(client_of(s), view, cost)) return;
	// A synchronized subsurface's state applies with its root's: held, and so is the root's
	// next commit until this one is converted, so both still apply together.
	SurfaceState *root = sync_root(owner->plugin(), s);
	// A surface without a role shows nothing, and a state held across an xdg role's initial
	// commit would apply as that role's first commit, which wlroots aborts on: its commit
	// applies at once and is converted on a worker all the same.
	if (shares) {
		view->image = shared; // this commit content, converted (or being converted) for another surface
	} else {
		if (std::shared_ptr<ConvertedImage> spare = c.take_spare(view->renderer_format, w, h)) {
			view->image = std::move(spare); // nobody shows it any more
			view->image->filled = false;
		} else if (fits(c.image()) && c.image()->surfaces == 1 && c.held().empty() &&
			!affordable(client_of(s), view->renderer_format, w, h)) {
			// A second image of this size would cross a budget: not held, the commit is
			// converted into the surface's own image when it applies (in one go, as small
			// ones are). Slower to show, but a client that shows one such frame may show the
			// next.
			return;
		} else {
			view->image = allocate(client_of(s), view->renderer_format, w, h);
			if (view->image == nullptr) {
				// Over budget: the client has its error; nothing of this commit will show.
				view->early = true;
				release_source(view);
				return;
			}
		}
		view->image->pure_source = buffer;
		view->image->pure_generation = view->generation;
		view->image->pure_color = view->color;
		buffer->pure_image = view->image;
	}
	view->early = true;
	if (view->image->filled) {
		view->converted = true;
		release_source(view);
		return;
	}
	if (writer != nullptr && shares) {
		join_job(view, writer);
	} else if (!start_job(s, view, buffer)) {
		// The client's pixels cannot be read: nothing of this commit to show.
		view->image->pure_source = nullptr;
		view->converted = true;
		release_source(view);
		supersede_held(s, view);
		return;
	}
	// After joining: older commits of this surface may wait for the same job.
	supersede_held(s, view);
	if (lock) {
		view->held = true;
		view->lock_seq = wlr_surface_lock_pending(s->surface);
		owner->plugin()->stats.held_commits++;
	}
	c.add_held(view);
	if (lock && root != nullptr) root_view(root, view);
}

void Conversions::release_held(SurfaceState *s) {
	std::vector<uint32_t> seqs;
	std::vector<Impl::Due> roots;
	s->conversion.remove_held_if([&](ConvertedView *view) {
		if (!view->held) return false; // already applied (no role when committed)
		if (std::exchange(view->rooted, false)) roots.push_back({view->root_surface, view->root_id});
		if (!view->converted && !view->superseded) {
			// Unmapped right after it applies: nothing will show it.
			view->superseded = true;
			plugin_->stats.skipped_conversions++;
			impl_->release_source(view);
		}
		seqs.push_back(view->lock_seq);
		return true;
	});
	wlr_surface *surface = s->surface;
	uint64_t id = s->id;
	for (uint32_t seq : seqs) {
		if (plugin_->surface_state(surface, id) == nullptr) break;
		wlr_surface_unlock_cached(surface, seq);
	}
	// Commits of its own held for synchronized descendants apply now too; theirs when converted.
	if (plugin_->surface_state(surface, id) != nullptr) impl_->unlock_root(s);
	for (const Impl::Due &root : roots) impl_->unroot(root, false);
}

void Conversions::surface_committed(SurfaceState *s) {
	SurfaceConversion &c = s->conversion;
	bool view_applied = c.take_view_applied();
	if ((s->surface->current.committed & WLR_SURFACE_STATE_BUFFER) && !view_applied) {
		// A native buffer or a null attach: the image is nobody's content any more.
		if (c.pending() != nullptr) impl_->release_source(c.take_pending());
		c.drop_images();
	}
	if (view_applied && c.pending() != nullptr && lazy_) {
		impl_->schedule(s);
	}
}

void Conversions::surface_destroyed(SurfaceState *s) {
	SurfaceConversion &c = s->conversion;
	for (ConvertedView *view : c.held()) impl_->unroot_view(view, false);
	c.forget_held();
	c.take_root_locks(); // wlroots drops the cached states
	c.root_commit().disconnect();
	if (c.pending() != nullptr) impl_->release_source(c.take_pending());
	c.drop_images();
}

} // namespace pixelport
