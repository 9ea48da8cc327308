// Converted images: allocated against the client's and the plugin's budgets, each surface's
// image (SurfaceConversion), and the conversion of a buffer's pixels into one.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "conversion_internal.hpp"
#include "pixelport/core/format.hpp"
#include "timing.hpp"
#include "unmap.hpp"

namespace pixelport {

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

size_t page_size() {
	static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	return size;
}

} // namespace

ConvertedImage::~ConvertedImage() {
	unmap_later(data, mapped);
	uncharge();
}

void ConvertedImage::uncharge() {
	if (client_budget) client_budget->bytes -= mapped;
	if (total_budget) total_budget->bytes -= mapped;
	client_budget.reset();
	total_budget.reset();
	slot = {};
}

namespace {

struct ImageSize {
	size_t stride, size, mapped;
};

ImageSize image_size(uint32_t fourcc, int32_t width, int32_t height) {
	const core::FormatInfo *info = core::format_info(fourcc);
	size_t bpp = info != nullptr ? info->planes[0].unit_bytes : 4;
	size_t stride = (static_cast<size_t>(width) * bpp + 3) & ~size_t{3};
	size_t size = stride * static_cast<size_t>(height);
	return {stride, size, (size + page_size() - 1) & ~(page_size() - 1)};
}

// An anonymous private mapping for a `width` x `height` image in `fourcc` (zero pages until
// written), charged to nobody yet. Null if it cannot be mapped.
std::shared_ptr<ConvertedImage> map_image(uint32_t fourcc, int32_t width, int32_t height, int prot, int flags) {
	auto [stride, size, mapped] = image_size(fourcc, width, height);
	void *data = mmap(nullptr, mapped, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (data == MAP_FAILED) return nullptr;
	auto image = std::make_shared<ConvertedImage>();
	image->fourcc = fourcc;
	image->width = width;
	image->height = height;
	image->stride = stride;
	image->size = size;
	image->mapped = mapped;
	image->data = static_cast<uint8_t *>(data);
	return image;
}

} // namespace

// ---- SurfaceConversion -------------------------------------------------------------------

SurfaceConversion::SurfaceConversion() {
	pixman_region32_init(&damage_);
	wl_list_init(&held_frames_);
}

SurfaceConversion::~SurfaceConversion() {
	drop_images();
	pixman_region32_fini(&damage_);
	// Released into the surface's state before it goes (forget_surface); should one be left,
	// it is unlinked so that its resource's destroy finds no freed list.
	wl_resource *resource, *tmp;
	wl_resource_for_each_safe(resource, tmp, &held_frames_) {
		wl_list_remove(wl_resource_get_link(resource));
		wl_list_init(wl_resource_get_link(resource));
	}
}

void SurfaceConversion::hold_frames(wl_list *current) {
	if (wl_list_empty(current)) return;
	held_frame_count_ += static_cast<size_t>(wl_list_length(current));
	wl_list_insert_list(held_frames_.prev, current);
	wl_list_init(current);
}

void SurfaceConversion::send_frames_done(uint32_t time_ms, size_t keep) {
	// Oldest first: hold_frames() appends.
	auto n = static_cast<size_t>(wl_list_length(&held_frames_));
	wl_resource *resource, *tmp;
	wl_resource_for_each_safe(resource, tmp, &held_frames_) {
		if (n <= keep) break;
		wl_callback_send_done(resource, time_ms);
		wl_resource_destroy(resource); // its destroy unlinks it
		n--;
	}
	held_frame_count_ = n;
}

bool SurfaceConversion::release_frames(wl_list *current) {
	held_frame_count_ = 0;
	if (wl_list_empty(&held_frames_)) return false;
	wl_list_insert_list(current, &held_frames_);
	wl_list_init(&held_frames_);
	return true;
}

void SurfaceConversion::show(
	std::shared_ptr<ConvertedImage> image, bool valid, uint32_t source_format, const ColorState &color) {
	if (image != image_) {
		if (image_ != nullptr) image_->surfaces--;
		image_ = std::move(image);
		if (image_ != nullptr) image_->surfaces++;
	}
	valid_ = valid;
	source_format_ = source_format;
	source_color_ = color;
	pixman_region32_clear(&damage_);
}

void SurfaceConversion::keep_spare(const std::shared_ptr<ConvertedImage> &next) {
	if (image_ != nullptr && image_ != next && image_->surfaces == 1) spare_ = image_;
}

bool SurfaceConversion::has_spare(uint32_t fourcc, int32_t width, int32_t height) const {
	return spare_ != nullptr && spare_->fourcc == fourcc && spare_->width == width && spare_->height == height &&
		spare_.use_count() == 1;
}

std::shared_ptr<ConvertedImage> SurfaceConversion::take_spare(uint32_t fourcc, int32_t width, int32_t height) {
	if (spare_ == nullptr || spare_->fourcc != fourcc || spare_->width != width || spare_->height != height ||
		spare_.use_count() != 1) {
		return nullptr;
	}
	return std::move(spare_);
}

void SurfaceConversion::drop_images() {
	show(nullptr, false, 0);
	spare_ = nullptr;
	blank_ = nullptr;
}

const std::shared_ptr<ConvertedImage> &SurfaceConversion::blank(int32_t width, int32_t height) {
	if (blank_ != nullptr && blank_->width == width && blank_->height == height) return blank_;
	// Never written: every page reads as the kernel's zero page.
	blank_ = map_image(core::fourcc::ARGB8888, width, height, PROT_READ, MAP_NORESERVE);
	if (blank_ != nullptr) blank_->filled = true;
	return blank_;
}

void SurfaceConversion::add_damage(const pixman_region32_t *damage) {
	if (valid_) pixman_region32_union(&damage_, &damage_, damage);
}

void SurfaceConversion::forget_view(ConvertedView *view) {
	if (pending_ == view) pending_ = nullptr;
	if (job_view_ == view) job_view_ = nullptr;
	if (waiting_ == view) waiting_ = nullptr;
}

// ---- per-client budget -------------------------------------------------------------------

std::shared_ptr<ImageBudget> Conversions::Impl::client_budget(wl_client *client) {
	std::shared_ptr<ClientAccount> account = client_account(client);
	if (account == nullptr) return std::make_shared<ImageBudget>(); // out of memory: counted nowhere
	if (account->images == nullptr) account->images = std::make_shared<ImageBudget>();
	return account->images;
}

uint64_t Conversions::client_budget() const {
	if (plugin_->options.image_budget_client_bytes != 0) return plugin_->options.image_budget_client_bytes;
	uint64_t outputs = 0;
	for (const auto &o : plugin_->outputs) {
		outputs += static_cast<uint64_t>(o->output->width) * static_cast<uint64_t>(o->output->height) * 4;
	}
	return std::max(kClientBudgetFloor, kClientOutputsFactor * outputs);
}

uint64_t Conversions::total_budget() const {
	if (plugin_->options.image_budget_total_bytes != 0) return plugin_->options.image_budget_total_bytes;
	return std::max(kTotalBudgetFloor, kTotalClientsFactor * client_budget());
}

uint64_t Conversions::total_bytes() const { return impl_->total->bytes; }

bool Conversions::Impl::affordable(wl_client *client, uint32_t fourcc, int32_t width, int32_t height) {
	size_t mapped = image_size(fourcc, width, height).mapped;
	return client_budget(client)->bytes + mapped <= owner->client_budget() &&
		total->bytes + mapped <= owner->total_budget();
}

std::shared_ptr<ConvertedImage> Conversions::Impl::allocate(
	wl_client *client, uint32_t fourcc, int32_t width, int32_t height) {
	auto [stride, size, mapped] = image_size(fourcc, width, height);
	std::shared_ptr<ImageBudget> mine = client_budget(client);
	uint64_t client_limit = owner->client_budget(), total_limit = owner->total_budget();
	if (mine->bytes + mapped > client_limit || total->bytes + mapped > total_limit) {
		bool own = mine->bytes + mapped > client_limit;
		wl_resource *display = wl_client_get_object(client, 1);
		if (display != nullptr) {
			wl_resource_post_error(display, WL_DISPLAY_ERROR_NO_MEMORY,
				"pixelport: a %dx%d converted image (%zu bytes) would exceed the %s budget of %llu "
				"bytes "
				"(%llu in use)",
				width, height, mapped, own ? "client's" : "compositor's",
				static_cast<unsigned long long>(own ? client_limit : total_limit),
				static_cast<unsigned long long>(own ? mine->bytes : total->bytes));
		}
		owner->plugin()->stats.add(Stat::BudgetRefusals);
		return nullptr;
	}
	AccountSlot slot = client_account_take(&owner->plugin()->options, client, ClientObject::ConvertedImage);
	if (!slot) {
		owner->plugin()->stats.add(Stat::BudgetRefusals);
		return nullptr;
	}
	std::shared_ptr<ConvertedImage> image = map_image(fourcc, width, height, PROT_READ | PROT_WRITE, 0);
	if (image == nullptr) {
		wl_client_post_no_memory(client);
		return nullptr;
	}
	image->slot = std::move(slot);
	image->client_budget = mine;
	image->total_budget = total;
	mine->bytes += mapped;
	total->bytes += mapped;
	return image;
}

// ---- converting a buffer's pixels into an image --------------------------------------------

bool convert_buffer(PixelBuffer *buffer, ConvertedImage *image, const pixman_region32_t *damage,
	const ColorState &color, timing::CommitSample *record) {
	core::SrcImage src;
	if (!buffer->source(&src)) {
		return false;
	}
	core::DstImage dst;
	dst.fourcc = image->fourcc;
	dst.width = buffer->width();
	dst.height = buffer->height();
	dst.data = image->data;
	dst.stride = image->stride;
	dst.size = image->stride * static_cast<size_t>(dst.height);

	std::vector<core::Rect> rects;
	if (damage != nullptr) {
		int n = 0;
		const pixman_box32_t *boxes = pixman_region32_rectangles(const_cast<pixman_region32_t *>(damage), &n);
		rects.reserve(static_cast<size_t>(n));
		for (int i = 0; i < n; i++) {
			// Clamp: damage_buffer may name pixels outside the buffer.
			int32_t x1 = std::clamp(boxes[i].x1, 0, dst.width), x2 = std::clamp(boxes[i].x2, 0, dst.width);
			int32_t y1 = std::clamp(boxes[i].y1, 0, dst.height),
				y2 = std::clamp(boxes[i].y2, 0, dst.height);
			if (x2 > x1 && y2 > y1) {
				rects.push_back({x1, y1, x2 - x1, y2 - y1});
			}
		}
	} else {
		rects.push_back({0, 0, dst.width, dst.height});
	}
	if (record != nullptr) record->t_convert_start = monotonic_ns();
	core::ConvertOptions options = color_state_options(
		color, buffer->stored_format, dst.width, dst.height, buffer->plugin->convert_options);
	core::Status status = core::convert_rects(src, dst, rects, options);
	if (record != nullptr) record->t_convert_end = monotonic_ns();
	buffer->after_read();
	if (status != core::Status::Ok) {
		wlr_log(WLR_ERROR, "pixelport: converting %s %dx%d failed: %s",
			core::format_name(buffer->stored_format), dst.width, dst.height, core::status_str(status));
		return false;
	}
	Stats &stats = buffer->plugin->stats;
	stats.add(Stat::ConvertedUploads);
	for (const core::Rect &r : rects) {
		stats.add(Stat::ConvertedPixels, static_cast<uint64_t>(r.width) * static_cast<uint64_t>(r.height));
	}
	return true;
}

std::shared_ptr<ConvertedImage> Conversions::convert_whole(PixelBuffer *buffer) {
	if (buffer->resource == nullptr) return nullptr; // its client's budget is gone with it
	std::shared_ptr<ConvertedImage> image = impl_->allocate(
		wl_resource_get_client(buffer->resource), buffer->renderer_format, buffer->width(), buffer->height());
	if (image == nullptr || !convert_buffer(buffer, image.get(), nullptr, buffer->color, nullptr)) return nullptr;
	return image;
}

} // namespace pixelport
