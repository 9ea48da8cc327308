#include "conversion.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "buffer.hpp"
#include "pixelport/core/format.h"
#include "timing.hpp"

namespace pixelport {

/** Bytes of converted images charged to one client, or to the whole plugin. */
struct ImageBudget {
	uint64_t bytes = 0;
};

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
// Floors of the default budgets: an 8192x8192 image is 256 MiB, so a client may show two of
// the largest textures common GPUs take, whatever the outputs (docs/design.md, "Limits").
constexpr uint64_t kClientBudgetFloor = 512 * kMiB;
constexpr uint64_t kTotalBudgetFloor = 2048 * kMiB;
// Defaults above the floors: a client may hold 8 output-sized images per output (windows
// larger than the output, several windows, one being replaced), the plugin 4 such clients.
constexpr uint64_t kClientOutputsFactor = 8;
constexpr uint64_t kTotalClientsFactor = 4;
// One idle pass converts until this much time is spent, then yields to other clients for
// kResumeMs; a render that needs a surface converts it at once regardless.
constexpr uint64_t kIdleBudgetNs = 4'000'000;
constexpr int kResumeMs = 1;

size_t page_size() {
	static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	return size;
}

} // namespace

// A view: the wlr_buffer a surface's state holds instead of a converted-format PixelBuffer.
struct ConvertedView {
	wlr_buffer base; // first: the wlr_buffer pointer is cast back
	Conversions *conversions = nullptr;
	/** The client's buffer, locked until this commit was converted, superseded or dropped. */
	PixelBuffer *source = nullptr;
	uint64_t generation = 0; // source->generation at the commit
	uint32_t target = 0;
	wlr_surface *surface = nullptr;
	uint64_t surface_id = 0;
	/** What this view shows: bound when its commit is applied. */
	std::shared_ptr<ConvertedImage> image;
	bool bound = false;
	/** Timing record of the apply in progress, between begin and end of data access. */
	timing::CommitRecord *timing_record = nullptr;
};

struct Conversions::Impl {
	Conversions *owner = nullptr;
	std::shared_ptr<ImageBudget> total = std::make_shared<ImageBudget>();
	/** Surfaces with a conversion due (lazy mode), in apply order; by id (they may go). */
	struct Due {
		wlr_surface *surface;
		uint64_t id;
	};
	std::vector<Due> due;
	wl_event_source *idle = nullptr;
	wl_event_source *timer = nullptr;
	struct Output {
		wlr_output *output;
		Listener destroy;
	};
	std::vector<std::unique_ptr<Output>> outputs;

	std::shared_ptr<ImageBudget> client_budget(wl_client *client);
	std::shared_ptr<ConvertedImage> allocate(wl_client *client, uint32_t fourcc, int32_t width, int32_t height);
	void schedule(SurfaceState *surface);
	void run_due(uint64_t budget_ns);
	bool flush(SurfaceState *surface, timing::CommitRecord *record);
	void bind(SurfaceState *surface, ConvertedView *view);
	void release_source(ConvertedView *view);
};

ConvertedImage::~ConvertedImage() {
	if (data != nullptr) munmap(data, mapped);
	if (client_budget) client_budget->bytes -= mapped;
	if (total_budget) total_budget->bytes -= mapped;
}

SurfaceConversion::SurfaceConversion() { pixman_region32_init(&damage); }
SurfaceConversion::~SurfaceConversion() {
	set_image(nullptr);
	pixman_region32_fini(&damage);
}

void SurfaceConversion::set_image(std::shared_ptr<ConvertedImage> next) {
	if (next == image) return;
	if (image != nullptr) image->surfaces--;
	image = std::move(next);
	if (image != nullptr) image->surfaces++;
}

// ---- per-client budget -------------------------------------------------------------------

namespace {

struct BudgetLink {
	wl_listener destroy;
	std::shared_ptr<ImageBudget> budget;
};

void budget_client_destroyed(wl_listener *listener, void *) {
	BudgetLink *link = wl_container_of(listener, link, destroy);
	wl_list_remove(&link->destroy.link);
	delete link;
}

} // namespace

std::shared_ptr<ImageBudget> Conversions::Impl::client_budget(wl_client *client) {
	if (wl_listener *l = wl_client_get_destroy_listener(client, budget_client_destroyed)) {
		BudgetLink *link = wl_container_of(l, link, destroy);
		return link->budget;
	}
	auto *link = new BudgetLink();
	link->budget = std::make_shared<ImageBudget>();
	link->destroy.notify = budget_client_destroyed;
	wl_client_add_destroy_listener(client, &link->destroy);
	return link->budget;
}

uint64_t Conversions::client_budget() const {
	if (plugin_->options.image_budget_client_bytes != 0) return plugin_->options.image_budget_client_bytes;
	uint64_t outputs = 0;
	for (const auto &o : impl_->outputs) {
		outputs += static_cast<uint64_t>(o->output->width) * static_cast<uint64_t>(o->output->height) * 4;
	}
	return std::max(kClientBudgetFloor, kClientOutputsFactor * outputs);
}

uint64_t Conversions::total_budget() const {
	if (plugin_->options.image_budget_total_bytes != 0) return plugin_->options.image_budget_total_bytes;
	return std::max(kTotalBudgetFloor, kTotalClientsFactor * client_budget());
}

uint64_t Conversions::total_bytes() const { return impl_->total->bytes; }

void Conversions::attach_output(wlr_output *output) {
	auto o = std::make_unique<Impl::Output>();
	Impl::Output *raw = o.get();
	raw->output = output;
	Impl *impl = impl_.get();
	raw->destroy.connect(&output->events.destroy,
		[impl, raw](void *) { std::erase_if(impl->outputs, [raw](const auto &p) { return p.get() == raw; }); });
	impl_->outputs.push_back(std::move(o));
}

std::shared_ptr<ConvertedImage> Conversions::Impl::allocate(wl_client *client, uint32_t fourcc, int32_t width,
		int32_t height) {
	const core::FormatInfo *info = core::format_info(fourcc);
	size_t bpp = info != nullptr ? info->planes[0].unit_bytes : 4;
	size_t stride = (static_cast<size_t>(width) * bpp + 3) & ~size_t{3};
	size_t size = stride * static_cast<size_t>(height);
	size_t mapped = (size + page_size() - 1) & ~(page_size() - 1);
	std::shared_ptr<ImageBudget> mine = client_budget(client);
	uint64_t client_limit = owner->client_budget(), total_limit = owner->total_budget();
	if (mine->bytes + mapped > client_limit || total->bytes + mapped > total_limit) {
		bool own = mine->bytes + mapped > client_limit;
		wl_resource *display = wl_client_get_object(client, 1);
		if (display != nullptr) {
			wl_resource_post_error(display, WL_DISPLAY_ERROR_NO_MEMORY,
				"pixelport: a %dx%d converted image (%zu bytes) would exceed the %s budget of %llu bytes "
				"(%llu in use)", width, height, mapped, own ? "client's" : "compositor's",
				static_cast<unsigned long long>(own ? client_limit : total_limit),
				static_cast<unsigned long long>(own ? mine->bytes : total->bytes));
		}
		owner->plugin()->stats.budget_refusals++;
		return nullptr;
	}
	void *data = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED) {
		wl_client_post_no_memory(client);
		return nullptr;
	}
	auto image = std::make_shared<ConvertedImage>();
	image->fourcc = fourcc;
	image->width = width;
	image->height = height;
	image->stride = stride;
	image->size = size;
	image->mapped = mapped;
	image->data = static_cast<uint8_t *>(data);
	image->client_budget = mine;
	image->total_budget = total;
	mine->bytes += mapped;
	total->bytes += mapped;
	return image;
}

// ---- the view's wlr_buffer ---------------------------------------------------------------

namespace {

ConvertedView *view_from_base(wlr_buffer *base) { return reinterpret_cast<ConvertedView *>(base); }

wl_client *client_of(SurfaceState *s) { return wl_resource_get_client(s->surface->resource); }

} // namespace

void Conversions::Impl::release_source(ConvertedView *view) {
	if (view->source == nullptr) return;
	PixelBuffer *source = view->source;
	view->source = nullptr;
	wlr_buffer_unlock(&source->base); // the last lock releases the wl_buffer to the client
}

// The view's commit is being applied: choose the image it will be converted into.
void Conversions::Impl::bind(SurfaceState *s, ConvertedView *view) {
	SurfaceConversion &c = s->conversion;
	view->bound = true;
	c.view_applied = true;
	if (c.pending != nullptr && c.pending != view) {
		// Replaced before it was converted: nothing will ever show it.
		release_source(c.pending);
		c.pending = nullptr;
		owner->plugin()->stats.skipped_conversions++;
	}
	PixelBuffer *source = view->source;
	if (source == nullptr) return;
	int32_t w = view->base.width, h = view->base.height;
	auto fits = [&](const std::shared_ptr<ConvertedImage> &image) {
		return image != nullptr && image->fourcc == view->target && image->width == w && image->height == h;
	};
	std::shared_ptr<ConvertedImage> shared = source->pure_image.lock();
	if (fits(shared) && shared->pure_source == source && shared->pure_generation == view->generation) {
		// The same commit content on another surface: share its image.
		c.set_image(shared);
		c.valid = false;
		pixman_region32_clear(&c.damage);
	} else if (fits(c.image) && c.image->surfaces == 1) {
		// This surface's own image: updated with the damage (or in full) when due. It stops
		// being any other commit's content now, so nobody starts sharing it.
		c.image->pure_source = nullptr;
		c.image->filled = false;
		if (c.valid) pixman_region32_union(&c.damage, &c.damage, &s->surface->buffer_damage);
	} else {
		// No image, another size or format, or one another surface shows too.
		std::shared_ptr<ConvertedImage> fresh = allocate(client_of(s), view->target, w, h);
		if (fresh == nullptr) {
			release_source(view);
			return;
		}
		c.set_image(std::move(fresh));
		c.valid = false;
		pixman_region32_clear(&c.damage);
	}
	if (!c.valid && c.image->pure_source != source) {
		// It will be converted in full from this commit: other surfaces showing the same
		// commit content may share it from now on.
		c.image->pure_source = source;
		c.image->pure_generation = view->generation;
		c.image->filled = false;
		source->pure_image = c.image;
	}
	c.pending = view;
}

// Converts the surface's due commit into its image. Returns false if it could not.
bool Conversions::Impl::flush(SurfaceState *s, timing::CommitRecord *record) {
	SurfaceConversion &c = s->conversion;
	ConvertedView *view = c.pending;
	if (view == nullptr) return true;
	c.pending = nullptr;
	PixelBuffer *source = view->source;
	std::shared_ptr<ConvertedImage> image = c.image;
	if (source == nullptr || image == nullptr) return false;

	bool pure = image->pure_source == source && image->pure_generation == view->generation;
	// Holders other than the surfaces that want this content (and our local reference) are
	// converted views of older content: never overwrite what they show.
	bool exclusive = image.use_count() == 1 + static_cast<long>(image->surfaces) && (pure || image->surfaces == 1);
	bool ok = true;
	if (pure && image->filled) {
		// Shared content of this very commit, already converted for another surface.
	} else {
		bool full = !c.valid || c.source_format != source->fourcc || pure;
		if (!exclusive) {
			// Copy on write: a fresh image, converted in full.
			std::shared_ptr<ConvertedImage> fresh = allocate(client_of(s), image->fourcc, image->width, image->height);
			if (fresh == nullptr) {
				release_source(view);
				return false;
			}
			c.set_image(fresh);
			image = std::move(fresh);
			full = true;
		}
		if (!full) {
			pixman_box32_t *e = pixman_region32_extents(&c.damage);
			full = pixman_region32_n_rects(&c.damage) == 1 && e->x1 <= 0 && e->y1 <= 0 && e->x2 >= image->width &&
				e->y2 >= image->height;
		}
		ok = pixel_buffer_convert(source, image->data, image->stride, image->fourcc, full ? nullptr : &c.damage, record);
		if (full) {
			image->pure_source = source;
			image->pure_generation = view->generation;
			source->pure_image = image;
		} else {
			image->pure_source = nullptr;
		}
		image->filled = ok;
	}
	view->image = image; // what this view shows from now on
	c.valid = ok;
	c.source_format = source->fourcc;
	pixman_region32_clear(&c.damage);
	release_source(view);
	return ok;
}

void Conversions::Impl::schedule(SurfaceState *s) {
	if (s->conversion.queued) return;
	s->conversion.queued = true;
	due.push_back({s->surface, s->id});
	if (idle == nullptr) {
		wl_event_loop *loop = wl_display_get_event_loop(owner->plugin()->display);
		idle = wl_event_loop_add_idle(loop, [](void *data) {
			auto *impl = static_cast<Impl *>(data);
			impl->idle = nullptr;
			impl->run_due(kIdleBudgetNs);
		}, this);
	}
}

void Conversions::Impl::run_due(uint64_t budget_ns) {
	pixelport_plugin *plugin = owner->plugin();
	uint64_t start = monotonic_ns();
	size_t i = 0;
	for (; i < due.size(); i++) {
		if (budget_ns != 0 && i > 0 && monotonic_ns() - start >= budget_ns) break;
		SurfaceState *s = plugin->surface_state(due[i].surface, due[i].id);
		if (s == nullptr) continue;
		s->conversion.queued = false;
		if (s->conversion.pending != nullptr) flush(s, plugin->timing->converting(s));
	}
	due.erase(due.begin(), due.begin() + static_cast<std::ptrdiff_t>(i));
	if (!due.empty()) {
		// Let other clients' requests run, then go on.
		if (timer == nullptr) {
			timer = wl_event_loop_add_timer(wl_display_get_event_loop(plugin->display), [](void *data) {
				auto *impl = static_cast<Impl *>(data);
				impl->run_due(kIdleBudgetNs);
				return 0;
			}, this);
		}
		if (timer != nullptr) wl_event_source_timer_update(timer, kResumeMs);
	}
}

namespace {

void view_destroy(wlr_buffer *base) {
	ConvertedView *view = view_from_base(base);
	Conversions::Impl *impl = view->conversions->impl();
	if (SurfaceState *s = view->conversions->plugin()->surface_state(view->surface, view->surface_id)) {
		if (s->conversion.pending == view) s->conversion.pending = nullptr;
	}
	impl->release_source(view);
	delete view;
}

bool view_begin_data_ptr_access(wlr_buffer *base, uint32_t flags, void **data, uint32_t *format, size_t *stride) {
	ConvertedView *view = view_from_base(base);
	if (flags & WLR_BUFFER_DATA_PTR_ACCESS_WRITE) return false;
	Conversions *conversions = view->conversions;
	pixelport_plugin *plugin = conversions->plugin();
	SurfaceState *s = plugin->surface_state(view->surface, view->surface_id);
	bool applying = s != nullptr && s->surface->current.buffer == base;
	timing::CommitRecord *record = nullptr;
	if (applying) {
		record = plugin->timing->applying(s);
		// The first access of the apply is the upload; later ones are not timed.
		if (record != nullptr && record->t_upload_start != 0) record = nullptr;
		if (record != nullptr) record->t_upload_start = monotonic_ns();
		view->timing_record = record;
		if (!view->bound) conversions->impl()->bind(s, view);
	}
	bool due = s != nullptr && s->conversion.pending == view;
	if (due && (!conversions->lazy() || !applying)) {
		// Renderers that copy at upload need it now; a render reading it needs it now.
		conversions->impl()->flush(s, conversions->lazy() ? plugin->timing->converting(s) : record);
		due = false;
	}
	// A due view is about to be converted into its surface's image (lazy mode, while
	// wlroots makes the texture): hand out that image; the render will convert first.
	ConvertedImage *image = due ? s->conversion.image.get() : view->image.get();
	if (image == nullptr) return false;
	*data = image->data;
	*format = image->fourcc;
	*stride = image->stride;
	return true;
}

void view_end_data_ptr_access(wlr_buffer *base) {
	ConvertedView *view = view_from_base(base);
	if (view->timing_record != nullptr) {
		view->timing_record->t_upload_end = monotonic_ns();
		view->timing_record = nullptr;
	}
}

const wlr_buffer_impl kViewImpl = {
	.destroy = view_destroy,
	.get_dmabuf = nullptr,
	.get_shm = nullptr,
	.begin_data_ptr_access = view_begin_data_ptr_access,
	.end_data_ptr_access = view_end_data_ptr_access,
};

} // namespace

// ---- Conversions ------------------------------------------------------------------------

std::unique_ptr<Conversions> Conversions::create(pixelport_plugin *plugin) {
	std::unique_ptr<Conversions> c(new Conversions());
	c->plugin_ = plugin;
	c->lazy_ = wlr_renderer_is_pixman(plugin->renderer);
	c->impl_ = std::make_unique<Impl>();
	c->impl_->owner = c.get();
	return c;
}

Conversions::~Conversions() {
	if (impl_->idle != nullptr) wl_event_source_remove(impl_->idle);
	if (impl_->timer != nullptr) wl_event_source_remove(impl_->timer);
}

void Conversions::surface_client_commit(SurfaceState *s, PixelBuffer *buffer) {
	wlr_surface *surface = s->surface;
	auto *view = new ConvertedView();
	view->conversions = this;
	view->source = buffer; // takes over the pending state's lock
	view->generation = buffer->generation;
	view->target = buffer->target;
	view->surface = surface;
	view->surface_id = s->id;
	wlr_buffer_init(&view->base, &kViewImpl, buffer->base.width, buffer->base.height);
	surface->pending.buffer = wlr_buffer_lock(&view->base);
	wlr_buffer_drop(&view->base); // freed with its last lock
}

void Conversions::surface_committed(SurfaceState *s) {
	SurfaceConversion &c = s->conversion;
	if ((s->surface->current.committed & WLR_SURFACE_STATE_BUFFER) && !c.view_applied) {
		// A native buffer or a null attach: the image is nobody's content any more.
		if (c.pending != nullptr) {
			impl_->release_source(c.pending);
			c.pending = nullptr;
		}
		c.set_image(nullptr);
		c.valid = false;
		pixman_region32_clear(&c.damage);
	}
	if (c.view_applied && c.pending != nullptr && lazy_) {
		impl_->schedule(s);
	}
	c.view_applied = false;
}

void Conversions::surface_destroyed(SurfaceState *s) {
	SurfaceConversion &c = s->conversion;
	if (c.pending != nullptr) {
		impl_->release_source(c.pending);
		c.pending = nullptr;
	}
	c.set_image(nullptr);
}

} // namespace pixelport
