#include "shm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "buffer.hpp"
#include "client_account.hpp"
#include "format_policy.hpp"
#include "pixelport/core/format.hpp"
#include "plugin.hpp"
#include "sigbus.hpp"
#include "unmap.hpp"

namespace pixelport {

namespace {

// One mmap of a pool's file, made at the first read after the pool was made or resized (a
// storm of resizes maps nothing). The file keeps only its newest one; an older one lives on only
// while a buffer that gave its pointer to a reader still pins it.
struct Mapping {
	uint8_t *data = nullptr;
	size_t size = 0;
	SigbusGuard guard;
	bool guarded = false;
	bool writable = false; // PROT_WRITE: what a writer may be given
	bool fault_logged = false;
	bool committed = false; // a buffer of this mapping was committed (timing: pool reused)
	AccountSlot slot; // the client's ShmMapping count

	~Mapping() {
		if (guarded) sigbus_guard_remove(&guard);
		unmap_later(data, size);
	}
};

// The client's file, shared by its pool and every buffer made from it.
struct PoolFile {
	int fd = -1;
	bool sealed_shrink = false; // F_SEAL_SHRINK: the file cannot shrink, no SIGBUS possible
	// Mapped read-write while the fd allows it: screencopy clients (grim) let the compositor
	// render into their wl_shm buffers. A write seal added later makes the next mapping
	// read-only; each mapping says what it is.
	bool try_writable = true;
	size_t size = 0; // the pool's size in bytes, as the client last set it
	/** The newest mapping, `size` bytes, or null until the next read maps it. */
	std::shared_ptr<Mapping> current;
	/** The ShmMapping slot the next mapping takes while `current` is null. */
	AccountSlot next_slot;
	bool map_failure_logged = false;
	~PoolFile() { close_later(fd); } // the last close of a memfd frees its pages
};

// Maps the pool's `size` bytes of `file`, counted by `slot` (taken on success, kept for the
// next try on failure), read-write unless the fd refuses writing (a read-only fd, a write
// seal). Null when mmap fails.
std::shared_ptr<Mapping> map_file(PoolFile &file, AccountSlot &slot) {
	void *data = MAP_FAILED;
	bool writable = false;
	if (file.try_writable) {
		data = mmap(nullptr, file.size, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd, 0);
		writable = data != MAP_FAILED;
		// Refused for good (a read-only fd, a write seal); another failure may pass next time.
		if (!writable && (errno == EACCES || errno == EPERM)) file.try_writable = false;
	}
	if (data == MAP_FAILED) data = mmap(nullptr, file.size, PROT_READ, MAP_SHARED, file.fd, 0);
	if (data == MAP_FAILED) {
		return nullptr;
	}
	auto mapping = std::make_shared<Mapping>();
	mapping->data = static_cast<uint8_t *>(data);
	mapping->size = file.size;
	mapping->writable = writable;
	mapping->slot = std::move(slot);
	if (!file.sealed_shrink) {
		mapping->guard.addr = data;
		mapping->guard.size = file.size;
		mapping->guarded = sigbus_guard_add(&mapping->guard);
	}
	return mapping;
}

// The pool's newest mapping, made now if a resize dropped it; null when mmap fails.
Mapping *current_mapping(PoolFile &file) {
	if (file.current == nullptr) {
		file.current = map_file(file, file.next_slot);
		if (file.current == nullptr && !file.map_failure_logged) {
			file.map_failure_logged = true;
			wlr_log(WLR_ERROR, "pixelport: cannot map a wl_shm pool of %zu bytes; its buffers show nothing",
				file.size);
		}
	}
	return file.current.get();
}

struct ShmPool {
	pixelport_plugin *plugin = nullptr;
	Shm *shm = nullptr;
	wl_resource *resource = nullptr;
	std::shared_ptr<PoolFile> file;
	AccountSlot slot; // the client's ShmPool count
};

class ShmBuffer : public PixelBuffer {
public:
	ShmBuffer(pixelport_plugin *plugin, uint32_t format, uint32_t renderer_format) :
		PixelBuffer(plugin, format, renderer_format) {}

	std::shared_ptr<PoolFile> file;
	core::ShmPlanes layout; // relative to `offset`
	int32_t stride = 0;
	int32_t offset = 0;
	AccountSlot slot; // the client's ShmBuffer count

	// The mapping this buffer reads: pinned from the first read until nobody locks the buffer
	// (a renderer may keep the pointer it was given until then), else the pool's newest. So a
	// pool resized many times keeps one mapping, plus those its locked buffers read. Null when
	// the pool cannot be mapped.
	Mapping *mapping() {
		if (pinned_ == nullptr && current_mapping(*file) != nullptr) pinned_ = file->current;
		return pinned_.get();
	}

	void unlocked() override { pinned_.reset(); }

	// A shrunk file reads as zeroes (sigbus.hpp); say so once per mapping.
	void after_read() override {
		if (pinned_ == nullptr) return;
		Mapping &m = *pinned_;
		if (m.guard.faulted.load(std::memory_order_relaxed) && !m.fault_logged) {
			m.fault_logged = true;
			plugin->stats.add(Stat::SigbusFaults);
			wlr_log(WLR_ERROR, "pixelport: a client shrank its wl_shm pool under a buffer; reading zeroes");
		}
	}

	bool source(core::SrcImage *out) override {
		after_read(); // faults from the renderer's own reads, since the last call
		const core::FormatInfo *info = core::format_info(stored_format);
		Mapping *m = mapping();
		if (m == nullptr) return false;
		uint8_t *base = m->data + static_cast<uint64_t>(offset);
		out->fourcc = stored_format;
		out->width = width();
		out->height = height();
		for (int p = 0; p < info->num_planes; p++) {
			out->planes[p].data = base + layout.offset[p];
			out->planes[p].stride = layout.stride[p];
			out->planes[p].size = layout.stride[p] * layout.rows[p];
		}
		return true;
	}

	// The mapping a read pinned: a writer reads (source()) first, so a resize since the last
	// read cannot leave a read-only mapping behind a yes.
	bool writable() const override { return pinned_ != nullptr && pinned_->writable; }

	void describe(timing::CommitSample *record) override {
		Mapping *m = mapping();
		record->format = stored_format;
		record->transport =
			m != nullptr && m->committed ? timing::Transport::ShmReused : timing::Transport::ShmNewPool;
		if (m != nullptr) m->committed = true;
		record->bytes = layout.size;
	}

	bool get_shm(wlr_shm_attributes *attrs) override {
		*attrs = {};
		attrs->fd = file->fd;
		attrs->format = stored_format;
		attrs->width = width();
		attrs->height = height();
		attrs->stride = stride;
		attrs->offset = offset;
		return true;
	}

private:
	std::shared_ptr<Mapping> pinned_;
};

// ---- wl_shm_pool --------------------------------------------------------------------------

ShmPool *pool_from_resource(wl_resource *resource) {
	return static_cast<ShmPool *>(wl_resource_get_user_data(resource));
}

bool file_holds(int fd, int64_t size) {
	struct stat st;
	if (fstat(fd, &st) != 0) return false;
	// Regular files and memfds must already be as large as what they back.
	return !S_ISREG(st.st_mode) || st.st_size >= size;
}

void pool_create_buffer(wl_client *client, wl_resource *resource, uint32_t id, int32_t offset, int32_t width,
	int32_t height, int32_t stride, uint32_t format) {
	ShmPool *pool = pool_from_resource(resource);
	uint32_t drm = core::fourcc_from_shm_format(format);
	const FormatPolicy &policy = *pool->plugin->formats;
	if (policy.target_for(drm) == 0) {
		wl_resource_post_error(resource, WL_SHM_ERROR_INVALID_FORMAT, "unsupported format 0x%08x", format);
		return;
	}
	uint32_t renderer_format = policy.target_for_stride(drm, static_cast<uint64_t>(stride));
	if (renderer_format == 0) {
		wl_resource_post_error(resource, WL_SHM_ERROR_INVALID_STRIDE, "stride %d of %s is not a multiple of 4",
			stride, core::format_name(drm));
		return;
	}
	const core::FormatInfo *info = core::format_info(drm); // served formats all have one
	core::ShmPlanes layout;
	if (offset < 0 || width <= 0 || height <= 0 || stride <= 0 ||
		!core::shm_planes(*info, static_cast<uint32_t>(width), static_cast<uint32_t>(height),
			static_cast<uint64_t>(stride), &layout)) {
		wl_resource_post_error(resource, WL_SHM_ERROR_INVALID_STRIDE,
			"invalid buffer: offset %d, %dx%d, stride %d for %s", offset, width, height, stride,
			core::format_name(drm));
		return;
	}
	const uint64_t end = static_cast<uint64_t>(offset) + layout.size;
	const size_t pool_size = pool->file->size;
	if (end > pool_size) {
		wl_resource_post_error(resource, WL_SHM_ERROR_INVALID_STRIDE,
			"buffer (offset %d, stride %d, height %d) ends at byte %llu, beyond the pool's %zu", offset,
			stride, height, static_cast<unsigned long long>(end), pool_size);
		return;
	}

	if (!file_holds(pool->file->fd, static_cast<int64_t>(end))) {
		// The pool may outgrow its file (mmap allows it), but no buffer may: name the buffer,
		// as libwayland does and the conformance suite (wlcs BadBufferTest) checks.
		wl_resource *bad = wl_resource_create(client, &wl_buffer_interface, 1, id);
		if (bad == nullptr) {
			wl_client_post_no_memory(client);
			return;
		}
		wl_resource_post_error(bad, WL_SHM_ERROR_INVALID_FD,
			"buffer ends at byte %llu, beyond the end of the file", static_cast<unsigned long long>(end));
		return;
	}

	AccountSlot slot = client_account_take(&pool->plugin->options, client, ClientObject::ShmBuffer);
	if (!slot) return;
	auto *buffer = new ShmBuffer(pool->plugin, drm, renderer_format);
	buffer->file = pool->file;
	buffer->slot = std::move(slot);
	buffer->layout = layout;
	buffer->stride = stride;
	buffer->offset = offset;
	if (!pixel_buffer_create(buffer, client, id, width, height)) {
		delete buffer;
		return;
	}
	pool->plugin->stats.add(Stat::ShmBuffers);
}

void pool_destroy(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

void pool_resize(wl_client *client, wl_resource *resource, int32_t size) {
	ShmPool *pool = pool_from_resource(resource);
	PoolFile &file = *pool->file;
	const size_t old_size = file.size;
	if (size <= 0 || static_cast<size_t>(size) < old_size) {
		wl_resource_post_error(resource, WL_SHM_ERROR_INVALID_STRIDE, "pools can only grow (size %d, was %zu)",
			size, old_size);
		return;
	}
	if (static_cast<size_t>(size) == old_size) {
		return;
	}
	if (!file_holds(file.fd, size)) {
		wl_resource_post_error(
			resource, WL_SHM_ERROR_INVALID_FD, "resize to %d beyond the end of the file", size);
		return;
	}
	// The next read maps the new size. The old mapping goes now unless a locked buffer pins
	// it; then the next one is one more mapping of the client's.
	if (file.current != nullptr) {
		if (file.current.use_count() == 1) {
			file.next_slot = std::move(file.current->slot);
		} else {
			file.next_slot = client_account_take(&pool->plugin->options, client, ClientObject::ShmMapping);
			if (!file.next_slot) return; // at the cap: the error is posted
		}
		file.current.reset();
	}
	file.size = static_cast<size_t>(size);
}

const struct wl_shm_pool_interface kPoolImpl = {
	.create_buffer = pool_create_buffer,
	.destroy = pool_destroy,
	.resize = pool_resize,
};

void pool_resource_destroy(wl_resource *resource) { delete pool_from_resource(resource); }

// ---- wl_shm -------------------------------------------------------------------------------

void shm_create_pool(wl_client *client, wl_resource *resource, uint32_t id, int32_t fd, int32_t size) {
	auto *shm = static_cast<Shm *>(wl_resource_get_user_data(resource));
	auto file = std::make_shared<PoolFile>();
	file->fd = fd; // ours now: closed with the last buffer or pool that holds the file
	if (size <= 0) {
		wl_resource_post_error(resource, WL_SHM_ERROR_INVALID_STRIDE, "invalid pool size %d", size);
		return;
	}
	// A memfd, shm_open or tmpfs file: the client's memory. Anything else mapped shared (a
	// socket, /dev/zero, a device) is not the client's pixels or costs the compositor memory.
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		wl_resource_post_error(
			resource, WL_SHM_ERROR_INVALID_FD, "the pool's fd is not a memfd or regular file");
		return;
	}
	AccountSlot pool_slot = client_account_take(&shm->plugin()->options, client, ClientObject::ShmPool);
	if (!pool_slot) return;
	AccountSlot mapping_slot = client_account_take(&shm->plugin()->options, client, ClientObject::ShmMapping);
	if (!mapping_slot) return;
	int seals = fcntl(fd, F_GET_SEALS);
	file->sealed_shrink = seals >= 0 && (seals & F_SEAL_SHRINK);
	file->size = static_cast<size_t>(size);
	// Mapped now, so that an fd that cannot be mapped is the client's error at once.
	file->current = map_file(*file, mapping_slot);
	if (file->current == nullptr) {
		wl_resource_post_error(resource, WL_SHM_ERROR_INVALID_FD, "cannot map the pool's fd");
		return;
	}
	auto *pool = new ShmPool();
	pool->plugin = shm->plugin();
	pool->shm = shm;
	pool->file = std::move(file);
	pool->slot = std::move(pool_slot);
	pool->resource = wl_resource_create(client, &wl_shm_pool_interface, wl_resource_get_version(resource), id);
	if (pool->resource == nullptr) {
		delete pool;
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(pool->resource, &kPoolImpl, pool, pool_resource_destroy);
}

void shm_release(wl_client *, wl_resource *resource) { wl_resource_destroy(resource); }

const struct wl_shm_interface kShmImpl = {
	.create_pool = shm_create_pool,
	.release = shm_release,
};

// ---- formats withheld from a client -------------------------------------------------------

} // namespace

// What wl_shm knows of a client that bound it: whether its process maps GStreamer's Wayland
// code, and so which formats its format list leaves out. Kept in the client's record
// (ClientAccount::shm).
struct ShmClient {
	std::vector<WithheldFormat> withheld;
	GstWayland gst;
	uint8_t scans = 0;
	bool logged = false;
};

namespace {

// A client's process is read again at a later bind while GStreamer was not found in it (a
// toolkit binds wl_shm before the application loads GStreamer on the same connection), at
// most this many times: a client binding without end costs one read each, not more.
constexpr uint8_t kMaxScans = 4;
// /proc/PID/maps is read up to this much (a GStreamer player's is 15-200 KiB); beyond it the
// process counts as having no GStreamer. Its read takes the client's mmap lock for reading.
constexpr size_t kMaxMapsBytes = size_t{1} << 20;

// The client's wl_shm record, made on first use; null when out of memory.
ShmClient *shm_client(wl_client *client) {
	std::shared_ptr<ClientAccount> account = client_account(client);
	if (account == nullptr) return nullptr;
	if (account->shm == nullptr) account->shm = std::make_shared<ShmClient>();
	return account->shm.get();
}

// The client's process's memory map, at most kMaxMapsBytes; "" when it cannot be read (the
// process is gone, belongs to another user, or lives in a PID namespace we cannot see).
std::string read_maps(pid_t pid) {
	std::string text;
	if (pid <= 0) return text;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", static_cast<int>(pid));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return text;
	text.resize(kMaxMapsBytes);
	size_t have = 0;
	while (have < text.size()) {
		ssize_t n = read(fd, text.data() + have, text.size() - have);
		if (n <= 0) break;
		have += static_cast<size_t>(n);
	}
	close(fd);
	text.resize(have == kMaxMapsBytes ? 0 : have);
	return text;
}

std::string process_name(pid_t pid) {
	char path[64], name[32] = {};
	snprintf(path, sizeof path, "/proc/%d/comm", static_cast<int>(pid));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return "?";
	ssize_t n = read(fd, name, sizeof name - 1);
	close(fd);
	std::string s(name, n > 0 ? static_cast<size_t>(n) : 0);
	while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
	return s.empty() ? "?" : s;
}

// Once per client that has formats withheld: which, and why.
void log_withheld(wl_client *client, const ShmClient &c) {
	pid_t pid = 0;
	wl_client_get_credentials(client, &pid, nullptr, nullptr);
	std::string text;
	for (size_t i = 0; i < c.withheld.size(); i++) {
		const WithheldFormat &w = c.withheld[i];
		text += core::format_name(w.fourcc);
		bool last_of_reason = i + 1 == c.withheld.size() || std::string(c.withheld[i + 1].why) != w.why;
		text += last_of_reason ? std::string(" (") + w.why + ")" + (i + 1 < c.withheld.size() ? "; " : "")
				       : ", ";
	}
	char version[32] = "unknown version";
	if (c.gst.minor != 0) snprintf(version, sizeof version, "1.%u.%u", c.gst.minor, c.gst.micro);
	wlr_log(WLR_INFO,
		"pixelport: client %d (%s) maps GStreamer's Wayland library (%s): wl_shm formats withheld from it: %s; "
		"PIXELPORT_GSTREAMER_WITHHOLD changes this",
		static_cast<int>(pid), process_name(pid).c_str(), version, text.c_str());
}

} // namespace

std::vector<WithheldFormat> Shm::withheld_for(wl_client *client) {
	if (!withheld_.can_withhold()) return {};
	ShmClient *c = shm_client(client);
	if (c == nullptr) return {};
	if (!c->gst.found && c->scans < kMaxScans) {
		c->scans++;
		pid_t pid = 0;
		wl_client_get_credentials(client, &pid, nullptr, nullptr);
		c->gst = find_gst_wayland(read_maps(pid));
		if (c->gst.found) c->withheld = withheld_.for_client(c->gst);
	}
	if (!c->logged && !c->withheld.empty()) {
		c->logged = true;
		log_withheld(client, *c);
	}
	return c->withheld;
}

std::unique_ptr<Shm> Shm::create(pixelport_plugin *plugin) {
	std::unique_ptr<Shm> shm(new Shm());
	shm->plugin_ = plugin;
	// ARGB8888 and XRGB8888 are required by wl_shm.
	if (!plugin->formats->serves_required()) {
		wlr_log(WLR_ERROR, "pixelport: the renderer cannot show ARGB8888 and XRGB8888 from CPU memory");
		return nullptr;
	}
	for (uint32_t fourcc : plugin->formats->served()) {
		shm->formats_.push_back(core::shm_format_from_fourcc(fourcc));
	}
	// The host's option is the host's word: a bad one stops the plugin. The environment's is
	// the user's, read by whatever compositor runs us: a bad one is ignored, as the preload
	// module ignores its bad variables, so that a typo does not cost the compositor wl_shm.
	std::string error;
	if (const char *option = plugin->options.gstreamer_withhold; option != nullptr) {
		if (!WithheldFormats::parse(option, &shm->withheld_, &error)) {
			wlr_log(WLR_ERROR, "pixelport: pixelport_options.gstreamer_withhold: %s", error.c_str());
			return nullptr;
		}
	} else if (const char *env = getenv("PIXELPORT_GSTREAMER_WITHHOLD"); env != nullptr) {
		if (!WithheldFormats::parse(env, &shm->withheld_, &error)) {
			wlr_log(WLR_ERROR, "pixelport: PIXELPORT_GSTREAMER_WITHHOLD ignored (auto instead): %s",
				error.c_str());
			WithheldFormats::parse("", &shm->withheld_, &error);
		}
	} else {
		WithheldFormats::parse("", &shm->withheld_, &error);
	}
	return shm;
}

wl_global *Shm::create_global(uint32_t version) {
	return wl_global_create(plugin_->display, &wl_shm_interface, static_cast<int>(version), this, bind);
}

void Shm::bind(wl_client *client, void *data, uint32_t version, uint32_t id) {
	auto *shm = static_cast<Shm *>(data);
	wl_resource *resource = shm->plugin_->bind_resource(client, &wl_shm_interface, version, id);
	if (resource == nullptr) return;
	wl_resource_set_implementation(resource, &kShmImpl, shm, nullptr);
	std::vector<WithheldFormat> withheld = shm->withheld_for(client);
	for (uint32_t format : shm->formats_) {
		uint32_t fourcc = core::fourcc_from_shm_format(format);
		auto same = [fourcc](const WithheldFormat &w) { return w.fourcc == fourcc; };
		if (std::find_if(withheld.begin(), withheld.end(), same) != withheld.end()) continue;
		wl_shm_send_format(resource, format);
	}
}

} // namespace pixelport
