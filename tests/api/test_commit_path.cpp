// The commit path's invariants (docs/design.md, "The commit path"), checked in-process where
// the server's state can be read after every dispatch: what each surface shows is a complete
// conversion of a commit its client made (never an image being written, never a cancelled one),
// what wlroots caches for a surface stays bounded however fast its client commits, the images a
// client is charged for are those it shows, converts and waits for, timing reports keep commit
// order, a small surface is not queued behind its own client's large one, and teardown in any
// order frees everything once. A seeded random sequence of legal requests (the commit-path
// fuzzer) drives the same checks; PIXELPORT_COMMIT_FUZZ_SEED replays one seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "api_host.hpp"
#include "hold.hpp" // kMaxCommitsBehind

namespace {

using namespace pixelport::test;

// What wlroots may cache for a surface between dispatches: its oldest held commit and the
// commits behind it until its client makes one too many (the ledger lets them all go then, at
// the next idle).
constexpr int kMaxCached = static_cast<int>(pixelport::kMaxCommitsBehind) + 1;

// RGB888 (converted to XRGB8888 on pixman): bytes B, G, R per pixel.
constexpr uint32_t kStoredBpp = 3;

// A wl_shm buffer of one solid colour in its own memfd pool.
struct Buffer {
	wl_buffer *buffer = nullptr;
	int32_t width = 0, height = 0;
	uint32_t format = WL_SHM_FORMAT_RGB888;
	uint8_t *map = nullptr;
	size_t size = 0;
	int32_t stride = 0;
	bool busy = false;
};

const wl_buffer_listener kBufferListener = {
	.release = [](void *data, wl_buffer *) { static_cast<Buffer *>(data)->busy = false; },
};

// The server with what the commit path needs: wlr_compositor and wl_subcompositor (roles
// without a shell), wl_shm of the plugin, and its timing log.
class PathHost : public Host {
public:
	explicit PathHost(uint32_t threads = 1, const char *log = nullptr, bool compositor_first = false) {
		if (compositor_first) compositor = wlr_compositor_create(display, 6, renderer);
		pixelport_options options{};
		options.struct_size = sizeof options;
		options.convert_threads = threads;
		options.timing_log_path = log;
		pp = pixelport_create(display, renderer, &options);
		if (pp == nullptr) return;
		pixelport_shm_create(pp, 2);
		if (!compositor_first) compositor = wlr_compositor_create(display, 6, renderer);
		wlr_subcompositor_create(display);
		pixelport_attach_compositor(pp, compositor);
		listen();
	}

	// One turn of each side, waiting up to `ms` for the server's sources (workers' hand-backs).
	void pump(int ms = 0) { turn(ms, 0); }

	// Until the server answered everything sent so far, without waiting on timeouts.
	void sync() { Host::sync(100000, 0); }

	Buffer *buffer(int32_t w, int32_t h, uint32_t format = WL_SHM_FORMAT_RGB888) {
		auto b = std::make_unique<Buffer>();
		b->width = w;
		b->height = h;
		b->format = format;
		if (format == WL_SHM_FORMAT_NV12) {
			b->stride = w;
			b->size = static_cast<size_t>(w) * h * 3 / 2;
		} else {
			b->stride = (w * static_cast<int32_t>(kStoredBpp) + 3) & ~3;
			b->size = static_cast<size_t>(b->stride) * h;
		}
		int fd = memfd_create("buffer", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, static_cast<off_t>(b->size)) != 0) return nullptr;
		b->map = static_cast<uint8_t *>(mmap(nullptr, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
		wl_shm_pool *pool = wl_shm_create_pool(registry.shm, fd, static_cast<int32_t>(b->size));
		::close(fd);
		b->buffer = wl_shm_pool_create_buffer(pool, 0, w, h, b->stride, format);
		wl_shm_pool_destroy(pool); // the buffer keeps the pool's memory
		wl_buffer_add_listener(b->buffer, &kBufferListener, b.get());
		buffers.push_back(std::move(b));
		return buffers.back().get();
	}

	void destroy_buffer(Buffer *b) {
		wl_buffer_destroy(b->buffer);
		munmap(b->map, b->size);
		std::erase_if(buffers, [b](const auto &p) { return p.get() == b; });
	}

	// The server's wlr_surface of a client wl_surface.
	wlr_surface *server_surface(wl_surface *surface) {
		wl_resource *r = wl_client_get_object(client, wl_proxy_get_id(reinterpret_cast<wl_proxy *>(surface)));
		return r != nullptr ? wlr_surface_from_resource(r) : nullptr;
	}

	pixelport_stats stats() {
		pixelport_stats s{};
		s.struct_size = sizeof s;
		pixelport_get_stats(pp, &s);
		return s;
	}

	// Client objects the test made: their proxies go before the client disconnects.
	template <typename T>
	T *own(T *proxy) {
		owned.push_back(reinterpret_cast<wl_proxy *>(proxy));
		return proxy;
	}
	// The test destroys it itself.
	void forget(void *proxy) { std::erase(owned, static_cast<wl_proxy *>(proxy)); }

	// The client goes, its proxies freed first.
	void close() {
		if (conn == nullptr) return;
		for (auto it = owned.rbegin(); it != owned.rend(); ++it) wl_proxy_destroy(*it);
		owned.clear();
		for (auto &b : buffers) {
			wl_buffer_destroy(b->buffer);
			munmap(b->map, b->size);
		}
		buffers.clear();
		disconnect();
	}

	~PathHost() { close(); }

	pixelport_plugin *pp = nullptr;
	wlr_compositor *compositor = nullptr;
	std::vector<std::unique_ptr<Buffer>> buffers;
	std::vector<wl_proxy *> owned;
};

// Fills a buffer with one colour (0xRRGGBB).
void paint(Buffer *b, uint32_t rgb) {
	const uint8_t r = rgb >> 16, g = rgb >> 8, bl = rgb;
	if (b->format == WL_SHM_FORMAT_NV12) {
		// Full-range-free check values: grey levels only (Y = U = V midpoints survive any matrix).
		memset(b->map, r, static_cast<size_t>(b->stride) * b->height);
		memset(b->map + static_cast<size_t>(b->stride) * b->height, 128,
			b->size - static_cast<size_t>(b->stride) * b->height);
		return;
	}
	for (int32_t y = 0; y < b->height; y++) {
		uint8_t *row = b->map + static_cast<size_t>(y) * b->stride;
		for (int32_t x = 0; x < b->width; x++) {
			row[x * 3] = bl;
			row[x * 3 + 1] = g;
			row[x * 3 + 2] = r;
		}
	}
}

void commit(wl_surface *surface, Buffer *b) {
	wl_surface_attach(surface, b->buffer, 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, b->width, b->height);
	wl_surface_commit(surface);
	b->busy = true;
}

// What the surface shows now, read as a renderer would: {shows something, uniform, 0xRRGGBB,
// blank (transparent: nothing shown)}.
struct Shown {
	bool any = false;
	bool uniform = true;
	uint32_t rgb = 0;
	bool blank = false;
};

// A desynchronized subsurface (a role: its commits can be held) of a surface without one.
wl_surface *desync_child(PathHost &host) {
	wl_surface *parent = host.own(wl_compositor_create_surface(host.registry.compositor));
	wl_surface *surface = host.own(wl_compositor_create_surface(host.registry.compositor));
	wl_subsurface *sub = host.own(wl_subcompositor_get_subsurface(host.registry.subcompositor, surface, parent));
	wl_subsurface_set_desync(sub);
	host.pump(0);
	return surface;
}

// A frame callback on the surface's next commit that counts its done event.
void frame_counted(PathHost &host, wl_surface *surface, int *done) {
	static const wl_callback_listener listener = {
		.done = [](void *data, wl_callback *, uint32_t) { ++*static_cast<int *>(data); },
	};
	wl_callback_add_listener(host.own(wl_surface_frame(surface)), &listener, done);
}

Shown read_shown(wlr_surface *surface) {
	Shown out;
	// wlroots keeps the applied buffer as its texture's source (pixman reads it at render).
	wlr_buffer *buffer = surface != nullptr && surface->buffer != nullptr ? surface->buffer->source : nullptr;
	if (buffer == nullptr) return out;
	void *data = nullptr;
	uint32_t format = 0;
	size_t stride = 0;
	if (!wlr_buffer_begin_data_ptr_access(buffer, WLR_BUFFER_DATA_PTR_ACCESS_READ, &data, &format, &stride)) {
		return out;
	}
	out.any = true;
	auto at = [&](int x, int y) {
		return *reinterpret_cast<const uint32_t *>(static_cast<const uint8_t *>(data) +
			static_cast<size_t>(y) * stride + static_cast<size_t>(x) * 4);
	};
	const int w = buffer->width, h = buffer->height;
	const uint32_t first = at(0, 0);
	for (int i = 0; i < 5; i++) {
		for (int j = 0; j < 5; j++) {
			if (at((w - 1) * i / 4, (h - 1) * j / 4) != first) out.uniform = false;
		}
	}
	out.blank = format == DRM_FORMAT_ARGB8888 && first == 0;
	out.rgb = first & 0xffffff;
	wlr_buffer_end_data_ptr_access(buffer);
	return out;
}

// ---- the commit-path fuzzer ----------------------------------------------------------------

// One client surface of the fuzzer: its role, buffers and every colour committed to it.
struct FuzzSurface {
	wl_surface *surface = nullptr;
	wl_subsurface *sub = nullptr; // null: no role
	bool sync = false;
	std::vector<Buffer *> buffers;
	std::set<uint32_t> committed; // colours of every commit made so far
	uint32_t last = 0; // the last commit's colour
	bool attached = false; // the last buffer commit attached a buffer (not null)
};

class CommitFuzz {
public:
	CommitFuzz(PathHost &host, uint32_t seed) : host_(host), rng_(seed), seed_(seed) {}

	void run(std::chrono::milliseconds length, int max_ops) {
		parent_ = host_.own(wl_compositor_create_surface(host_.registry.compositor));
		for (int i = 0; i < 4; i++) {
			auto s = std::make_unique<FuzzSurface>();
			s->surface = host_.own(wl_compositor_create_surface(host_.registry.compositor));
			if (i < 3) give_role(s.get());
			surfaces_.push_back(std::move(s));
		}
		const auto end = std::chrono::steady_clock::now() + length;
		for (ops_ = 0; ops_ < max_ops && std::chrono::steady_clock::now() < end && !failed(); ops_++) {
			step();
			check();
		}
		// Quiescent: every job handed back, every held commit applied.
		wl_surface_commit(parent_);
		for (int i = 0; i < 400 && !failed(); i++) host_.pump(i < 200 ? 1 : 5);
		check();
		for (auto &s : surfaces_) {
			if (!s->attached || s->last == 0 || failed()) continue;
			Shown now = read_shown(host_.server_surface(s->surface));
			EXPECT_TRUE(now.any && now.uniform && now.rgb == s->last)
				<< where() << ": at rest the surface shows " << std::hex << now.rgb
				<< ", not its last commit " << s->last << (now.blank ? " (blank)" : "");
		}
	}

	int ops() const { return ops_; }
	std::vector<std::unique_ptr<FuzzSurface>> &surfaces() { return surfaces_; }
	wl_surface *parent() { return parent_; }

private:
	std::string where() const {
		std::ostringstream o;
		o << "seed " << seed_ << " op " << ops_;
		return o.str();
	}
	bool failed() const { return testing::Test::HasFailure() || wl_display_get_error(host_.conn) != 0; }
	int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

	void give_role(FuzzSurface *s) {
		s->sub = host_.own(wl_subcompositor_get_subsurface(host_.registry.subcompositor, s->surface, parent_));
		s->sync = pick(2) == 0;
		if (!s->sync) wl_subsurface_set_desync(s->sub);
	}

	uint32_t next_colour() {
		// Distinct, never 0 (a blank reads as 0).
		colour_ = (colour_ + 0x3b9d17) & 0xffffff;
		if (colour_ == 0) colour_ = 1;
		return colour_;
	}

	// A buffer of the surface of this size that its client may write (released), or a new one.
	Buffer *free_buffer(FuzzSurface *s, int32_t w, int32_t h) {
		for (Buffer *b : s->buffers) {
			if (!b->busy && b->width == w && b->height == h) return b;
		}
		if (s->buffers.size() >= 4) {
			Buffer *old = s->buffers[static_cast<size_t>(pick(static_cast<int>(s->buffers.size())))];
			if (old->busy) return nullptr; // a correct client waits for a release
			std::erase(s->buffers, old);
			host_.destroy_buffer(old);
		}
		Buffer *b = host_.buffer(w, h);
		if (b != nullptr) s->buffers.push_back(b);
		return b;
	}

	void commit_colour(FuzzSurface *s) {
		// Small (converted when applied), worker-sized, and sizes that change.
		static const int32_t kSizes[][2] = {{64, 48}, {200, 150}, {320, 240}, {512, 384}, {640, 360}};
		const auto &size = kSizes[pick(5)];
		Buffer *b = free_buffer(s, size[0], size[1]);
		if (b == nullptr) return;
		const uint32_t rgb = next_colour();
		paint(b, rgb);
		commit(s->surface, b);
		s->committed.insert(rgb);
		s->last = rgb;
		s->attached = true;
	}

	void step() {
		FuzzSurface *s = surfaces_[static_cast<size_t>(pick(static_cast<int>(surfaces_.size())))].get();
		switch (pick(12)) {
		case 0:
		case 1:
		case 2: commit_colour(s); break;
		case 3: {
			// A burst: commits as fast as the client can make them, no dispatch between.
			int n = 2 + pick(40);
			for (int i = 0; i < n; i++) {
				if (pick(3) == 0 && s->attached) {
					wl_surface_commit(s->surface); // a commit that attaches nothing
				} else {
					commit_colour(s);
				}
			}
			break;
		}
		case 4:
			wl_surface_commit(parent_); // applies synchronized children
			break;
		case 5:
			if (s->sub != nullptr) {
				s->sync = !s->sync;
				s->sync ? wl_subsurface_set_sync(s->sub) : wl_subsurface_set_desync(s->sub);
			}
			break;
		case 6:
			// The role object destroyed (and perhaps made again later): its held commits apply.
			if (s->sub != nullptr) {
				host_.forget(s->sub);
				wl_subsurface_destroy(s->sub);
				s->sub = nullptr;
			} else {
				give_role(s);
			}
			break;
		case 7:
			// An unmap.
			wl_surface_attach(s->surface, nullptr, 0, 0);
			wl_surface_commit(s->surface);
			s->attached = false;
			s->last = 0;
			break;
		case 8:
			// A released buffer destroyed.
			for (Buffer *b : s->buffers) {
				if (!b->busy) {
					std::erase(s->buffers, b);
					host_.destroy_buffer(b);
					break;
				}
			}
			break;
		default:
			for (int i = pick(3); i >= 0; i--) host_.pump(pick(3));
			break;
		}
		host_.pump(0);
	}

	// After every dispatch: what each surface shows, what wlroots caches, what is charged.
	void check() {
		if (wl_display_get_error(host_.conn) != 0) {
			ADD_FAILURE() << where() << ": the client was disconnected (error "
				      << wl_display_get_error(host_.conn) << ")";
			return;
		}
		for (auto &s : surfaces_) {
			wlr_surface *surface = host_.server_surface(s->surface);
			if (surface == nullptr) continue;
			Shown now = read_shown(surface);
			// Never nothing where a buffer is attached: a commit that applied before its
			// conversion ended shows a complete image (its own, or the last one of its size).
			EXPECT_FALSE(now.any && now.blank && s->attached)
				<< where() << ": a surface shows a blank instead of a commit's image";
			if (now.any && !now.blank) {
				EXPECT_TRUE(now.uniform)
					<< where() << ": a surface shows an image not completely converted";
				EXPECT_TRUE(s->committed.count(now.rgb) == 1)
					<< where() << ": a surface shows " << std::hex << now.rgb
					<< ", a colour never committed to it";
			}
			// A synchronized child waits for its parent in wlroots itself, as with stock.
			// Past kMaxCommitsBehind, what a client commits while a conversion it must wait for
			// runs stays cached (CommitPath.PastTheLimitInANewSizeTheHeldCommitsWaitForTheir-
			// Conversion), up to kMaxCommitsHeld.
			if (!s->sync || s->sub == nullptr) {
				EXPECT_LE(wl_list_length(&surface->cached),
					static_cast<int>(pixelport::kMaxCommitsHeld) + 1)
					<< where() << ": commits pile up in wlroots' cache";
			}
		}
		// Each surface's shown, converting and spare images at most (and the shared ones).
		const uint64_t largest = 640 * 384 * 4 + 4096;
		EXPECT_LE(host_.stats().image_bytes, surfaces_.size() * 4 * largest) << where();
	}

	PathHost &host_;
	std::mt19937 rng_;
	uint32_t seed_;
	wl_surface *parent_ = nullptr;
	std::vector<std::unique_ptr<FuzzSurface>> surfaces_;
	uint32_t colour_ = 0x102030;
	int ops_ = 0;
};

// Every record of the timing log, per surface, in the order written: the seqs.
std::map<uint64_t, std::vector<uint64_t>> logged_seqs(const std::string &path) {
	std::map<uint64_t, std::vector<uint64_t>> seqs;
	std::ifstream in(path);
	std::string line;
	const std::regex commit(R"re("type":"commit","surface":(\d+).*?"seq":(\d+))re");
	std::smatch m;
	while (std::getline(in, line)) {
		if (std::regex_search(line, m, commit)) seqs[std::stoull(m[1])].push_back(std::stoull(m[2]));
	}
	return seqs;
}

std::string temp_path(const char *name) {
	return (std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(getpid()))).string();
}

TEST(CommitPath, FuzzedLegalSequencesKeepEveryInvariant) {
	const char *env_seed = getenv("PIXELPORT_COMMIT_FUZZ_SEED");
	const char *env_ms = getenv("PIXELPORT_COMMIT_FUZZ_MS");
	const char *env_ops = getenv("PIXELPORT_COMMIT_FUZZ_OPS");
	std::vector<uint32_t> seeds;
	if (env_seed != nullptr) {
		seeds.push_back(static_cast<uint32_t>(strtoul(env_seed, nullptr, 10)));
	} else {
		const uint32_t base =
			static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
		for (uint32_t i = 0; i < 6; i++) seeds.push_back(base + i);
	}
	const auto length = std::chrono::milliseconds(env_ms != nullptr ? atoi(env_ms) : 2500);
	for (uint32_t seed : seeds) {
		std::string log = temp_path("commit-fuzz-log");
		{
			PathHost host(1 + seed % 2, log.c_str());
			ASSERT_NE(host.pp, nullptr);
			CommitFuzz fuzz(host, seed);
			fuzz.run(env_ops != nullptr ? std::chrono::hours(1) : length,
				env_ops != nullptr ? atoi(env_ops) : 1000000);
			std::cout << "commit fuzz seed " << seed << ": " << fuzz.ops()
				  << " ops (replay: PIXELPORT_COMMIT_FUZZ_SEED=" << seed << ")\n";
			if (HasFailure()) {
				std::cout << "replay: PIXELPORT_COMMIT_FUZZ_SEED=" << seed
					  << " PIXELPORT_COMMIT_FUZZ_OPS=" << fuzz.ops()
					  << " build/tests/api/pixelport-api-test --gtest_filter=CommitPath.Fuzz*\n";
				return;
			}
			// The client goes: what it made is gone with it.
			host.close();
			for (int i = 0; i < 50 && host.stats().image_bytes != 0; i++) host.pump(2);
			EXPECT_EQ(host.stats().image_bytes, 0u) << "seed " << seed;
		} // the display and the plugin go: the log is complete
		for (const auto &[surface, seqs] : logged_seqs(log)) {
			EXPECT_TRUE(std::is_sorted(seqs.begin(), seqs.end()) &&
				std::adjacent_find(seqs.begin(), seqs.end()) == seqs.end())
				<< "seed " << seed << ": surface " << surface << "'s reports leave commit order";
		}
		std::filesystem::remove(log);
	}
}

// One buffer committed again and again, as fast as the client can: wlroots' cache stays
// bounded, the client is never disconnected, the images charged stay those it shows and
// converts, and the last commit is shown once the storm ends.
TEST(CommitPath, ACommitStormOfOneBufferIsBoundedAndEndsOnItsLastCommit) {
	for (const bool two : {false, true}) {
		PathHost host(2);
		ASSERT_NE(host.pp, nullptr);
		wl_surface *parent = host.own(wl_compositor_create_surface(host.registry.compositor));
		wl_surface *surface = host.own(wl_compositor_create_surface(host.registry.compositor));
		wl_subsurface *sub =
			host.own(wl_subcompositor_get_subsurface(host.registry.subcompositor, surface, parent));
		wl_subsurface_set_desync(sub);
		const int32_t w = 1920, h = 1080;
		Buffer *buffers[2] = {host.buffer(w, h), host.buffer(w, h)};
		paint(buffers[0], 0x204060);
		paint(buffers[1], 0x604020);
		uint32_t last = 0;
		size_t peak_cached = 0, peak_settled = 0;
		uint64_t peak_bytes = 0;
		for (int i = 0; i < 3000 && wl_display_get_error(host.conn) == 0; i++) {
			// Two buffers: the other one once it is released, else the last one again (its
			// content unchanged, as the client may).
			static Buffer *previous = nullptr;
			if (i == 0) previous = buffers[0];
			Buffer *other = previous == buffers[0] ? buffers[1] : buffers[0];
			Buffer *b = two && !other->busy ? other : previous;
			previous = b;
			commit(surface, b);
			last = b == buffers[0] ? 0x204060 : 0x604020;
			if (i % 16 == 15) {
				host.pump(0);
				wlr_surface *ws = host.server_surface(surface);
				const size_t cached = static_cast<size_t>(wl_list_length(&ws->cached));
				peak_cached = std::max(peak_cached, cached);
				// Once the surface has a complete image of this size, held commits past the
				// limit are let go at the next idle: the cache stays small.
				if (host.stats().converted_uploads > 0) peak_settled = std::max(peak_settled, cached);
				peak_bytes = std::max(peak_bytes, host.stats().image_bytes);
				Shown now = read_shown(ws);
				EXPECT_FALSE(now.any && now.blank) << "a blank instead of a commit's image";
				if (now.any && !now.blank) {
					EXPECT_TRUE(now.uniform && (now.rgb == 0x204060 || now.rgb == 0x604020))
						<< std::hex << now.rgb;
				}
			}
		}
		EXPECT_EQ(wl_display_get_error(host.conn), 0);
		for (int i = 0; i < 300; i++) host.pump(2);
		Shown now = read_shown(host.server_surface(surface));
		EXPECT_TRUE(now.any && now.uniform && now.rgb == last) << std::hex << now.rgb << " vs " << last;
		// 16 commits between dispatches: once there is an image of this size, the cache never
		// holds more than those and the ones kept waiting. Before (the first conversion runs),
		// what the client commits meanwhile, and never more than kMaxCommitsHeld.
		EXPECT_LE(peak_settled, static_cast<size_t>(16 + kMaxCached));
		EXPECT_LE(peak_cached, static_cast<size_t>(16 + pixelport::kMaxCommitsHeld + 1));
		// Shown, converting and spare: three images of this size at most.
		const uint64_t image = (static_cast<uint64_t>(w) * h * 4 + 4095) & ~uint64_t{4095};
		EXPECT_LE(peak_bytes, 3 * image) << (two ? "two buffers" : "one buffer");
		pixelport_stats stats = host.stats();
		EXPECT_GT(stats.converted_uploads, 0u);
		std::cout << (two ? "two buffers" : "one buffer") << ": 3000 commits, " << stats.converted_uploads
			  << " converted, " << stats.skipped_conversions << " superseded, " << stats.early_releases
			  << " released early, peak cache " << peak_cached << " (" << peak_settled
			  << " once converted), peak images " << peak_bytes << " bytes\n";
		host.close();
		for (int i = 0; i < 50 && host.stats().image_bytes != 0; i++) host.pump(2);
		EXPECT_EQ(host.stats().image_bytes, 0u);
	}
}

// A held commit released before its conversion was done (here: its client made more commits
// behind it than the plugin keeps waiting) shows what the surface showed (nothing yet: a blank)
// until its job ends; then the surface is redrawn, as wlroots does when a commit applies: the
// commit signal again, with the whole buffer damaged, and the view shows its own image.
// Counts the surface's commit signals (applies and redraws), and whether the last one damaged
// the whole w x h buffer.
struct CommitSignals {
	wl_listener listener{};
	int calls = 0;
	bool whole = false;
	int32_t w = 0, h = 0;

	void watch(wlr_surface *surface, int32_t width, int32_t height) {
		w = width;
		h = height;
		listener.notify = [](wl_listener *l, void *data) {
			CommitSignals *c = wl_container_of(l, c, listener);
			auto *s = static_cast<wlr_surface *>(data);
			c->calls++;
			const pixman_box32_t *e = pixman_region32_extents(&s->buffer_damage);
			c->whole = e->x1 <= 0 && e->y1 <= 0 && e->x2 >= c->w && e->y2 >= c->h;
		};
		wl_signal_add(&surface->events.commit, &listener);
	}
	~CommitSignals() {
		if (listener.notify != nullptr) wl_list_remove(&listener.link);
	}
};

// A commit let go before its conversion ended in a size the surface has no complete image of
// (its client more than kMaxCommitsHeld commits ahead of it): it is never shown blank nor
// partly converted. Whatever reads it first (a render) gets it completed on the main thread, and
// its frame callback goes with that read.
TEST(CommitPath, ACommitLetGoInANewSizeIsCompletedWhenFirstRead) {
	PathHost host(1);
	ASSERT_NE(host.pp, nullptr);
	wl_surface *surface = desync_child(host);
	wlr_surface *ws = host.server_surface(surface);
	ASSERT_NE(ws, nullptr);
	CommitSignals commits;
	commits.watch(ws, 4096, 2048);
	Buffer *b = host.buffer(4096, 2048);
	paint(b, 0x4488cc);
	commit(surface, b);
	// Nothing attached: more than any client is let keep waiting. The last one asks for a
	// frame callback.
	int frames_done = 0;
	const int behind = static_cast<int>(pixelport::kMaxCommitsHeld) + 1;
	for (int i = 0; i < behind; i++) {
		if (i == behind - 1) frame_counted(host, surface, &frames_done);
		wl_surface_commit(surface);
	}
	host.pump(0);
	const pixelport_stats before = host.stats();
	if (before.converted_uploads != 0)
		GTEST_SKIP() << "the worker converted 4096x2048 before the let-go: nothing to see";
	EXPECT_EQ(before.early_releases, 1u);
	EXPECT_EQ(commits.calls, behind + 1); // every commit applied
	// Its frame callback waits for the pixels: the commit's own are not shown yet.
	EXPECT_EQ(wl_list_length(&ws->current.frame_callback_list), 0);
	const Shown now = read_shown(ws); // as a render reads it
	EXPECT_TRUE(now.any && !now.blank && now.uniform && now.rgb == 0x4488cc) << std::hex << now.rgb;
	EXPECT_EQ(host.stats().main_thread_completions, 1u);
	// Released into the surface's list: the render that read the pixels sends it.
	EXPECT_EQ(wl_list_length(&ws->current.frame_callback_list), 1);
	// The job is handed back as usual; the surface shows the same, and needs no redraw.
	for (int i = 0; i < 2000 && host.stats().converted_uploads == 0; i++) host.pump(5);
	host.pump(0);
	EXPECT_EQ(host.stats().redraws, 0u);
	EXPECT_EQ(host.stats().main_thread_completions, 1u);
	const Shown after = read_shown(ws);
	EXPECT_TRUE(after.any && after.uniform && after.rgb == 0x4488cc) << std::hex << after.rgb;
	EXPECT_EQ(frames_done, 0); // nobody renders in this host: the callback waits in the list
}

// A client a few commits past kMaxCommitsBehind whose newest commit has a size the surface
// has no complete image of: its held commits are not let go to be converted on the main
// thread; they wait for the running conversion, then all apply, showing that commit.
TEST(CommitPath, PastTheLimitInANewSizeTheHeldCommitsWaitForTheirConversion) {
	PathHost host(1);
	ASSERT_NE(host.pp, nullptr);
	wl_surface *surface = desync_child(host);
	wlr_surface *ws = host.server_surface(surface);
	ASSERT_NE(ws, nullptr);
	CommitSignals commits;
	commits.watch(ws, 4096, 2048);
	Buffer *b = host.buffer(4096, 2048);
	paint(b, 0x6644cc);
	commit(surface, b);
	const int behind = static_cast<int>(pixelport::kMaxCommitsBehind) + 3;
	for (int i = 0; i < behind; i++) wl_surface_commit(surface);
	host.pump(0);
	if (host.stats().converted_uploads != 0)
		GTEST_SKIP() << "the worker converted 4096x2048 at once: nothing to see";
	EXPECT_EQ(host.stats().early_releases, 0u);
	EXPECT_EQ(commits.calls, 0); // all held, in wlroots' cache
	EXPECT_EQ(wl_list_length(&ws->cached), behind + 1);
	for (int i = 0; i < 2000 && host.stats().converted_uploads == 0; i++) host.pump(5);
	host.pump(0);
	EXPECT_EQ(commits.calls, behind + 1);
	EXPECT_EQ(wl_list_length(&ws->cached), 0);
	const Shown now = read_shown(ws);
	EXPECT_TRUE(now.any && !now.blank && now.uniform && now.rgb == 0x6644cc) << std::hex << now.rgb;
	EXPECT_EQ(host.stats().main_thread_completions, 0u);
	EXPECT_EQ(host.stats().redraws, 0u);
}

// Past kMaxCommitsBehind in the size the surface shows already: its held commits apply at once,
// it shows its last complete image (never a partial one) and is redrawn when its job ends, its
// frame callback done then.
TEST(CommitPath, ACommitLetGoInItsShownSizeShowsTheLastImageAndIsRedrawnWhenItsJobEnds) {
	PathHost host(1);
	ASSERT_NE(host.pp, nullptr);
	wl_surface *surface = desync_child(host);
	wlr_surface *ws = host.server_surface(surface);
	ASSERT_NE(ws, nullptr);
	Buffer *first = host.buffer(4096, 2048);
	paint(first, 0x224466);
	commit(surface, first);
	for (int i = 0; i < 2000 && host.stats().converted_uploads == 0; i++) host.pump(5);
	host.sync();
	ASSERT_EQ(read_shown(ws).rgb, 0x224466u);
	CommitSignals commits;
	commits.watch(ws, 4096, 2048);
	Buffer *b = host.buffer(4096, 2048);
	paint(b, 0x4488cc);
	commit(surface, b);
	int frames_done = 0;
	for (uint64_t i = 0; i <= pixelport::kMaxCommitsBehind; i++) {
		if (i == pixelport::kMaxCommitsBehind) frame_counted(host, surface, &frames_done);
		wl_surface_commit(surface);
	}
	host.pump(0);
	const pixelport_stats before = host.stats();
	EXPECT_EQ(before.early_releases, 1u);
	if (before.converted_uploads != 1)
		GTEST_SKIP() << "the worker converted 4096x2048 before the let-go: nothing to see";
	EXPECT_EQ(commits.calls, static_cast<int>(pixelport::kMaxCommitsBehind) + 2);
	Shown now = read_shown(ws);
	EXPECT_TRUE(now.any && !now.blank && now.uniform && now.rgb == 0x224466) << std::hex << now.rgb;
	EXPECT_EQ(host.stats().main_thread_completions, 0u);
	EXPECT_EQ(frames_done, 0);
	for (int i = 0; i < 2000 && host.stats().converted_uploads == 1; i++) host.pump(5);
	host.pump(0);
	EXPECT_EQ(host.stats().redraws, 1u);
	EXPECT_EQ(commits.calls, static_cast<int>(pixelport::kMaxCommitsBehind) + 3);
	EXPECT_TRUE(commits.whole);
	now = read_shown(ws);
	EXPECT_TRUE(now.any && !now.blank && now.uniform && now.rgb == 0x4488cc) << std::hex << now.rgb;
	host.sync();
	EXPECT_EQ(frames_done, 1); // done with the redraw
	// The next commit damages 8x8 pixels, relative to a commit the surface never showed in
	// full before it was redrawn: what changes on screen is the whole buffer.
	Buffer *next = host.buffer(4096, 2048);
	paint(next, 0x88cc44);
	wl_surface_attach(surface, next->buffer, 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, 8, 8);
	wl_surface_commit(surface);
	next->busy = true;
	commits.whole = false;
	const int calls = commits.calls;
	for (int i = 0; i < 2000 && commits.calls == calls; i++) host.pump(5);
	EXPECT_EQ(commits.calls, calls + 1);
	EXPECT_TRUE(commits.whole);
	now = read_shown(ws);
	EXPECT_TRUE(now.any && now.uniform && now.rgb == 0x88cc44) << std::hex << now.rgb;
}

// A client that does not wait for its frames, in the size its surface shows: past
// kMaxCommitsBehind its held commits apply before their conversion ends, and the frame
// callbacks held for them stay few (64); the rest go out as they would without the plugin, and
// all once the image shows.
// A superseded commit that applies without the commit that replaced it (a synchronized
// subsurface's lock, which is wlroots', keeps that one back) shows its own pixels, completed on
// the main thread, even where the last complete image has its size and would fit in its place.
TEST(CommitPath, ASupersededCommitThatAppliesAloneShowsItsOwnPixels) {
	PathHost host(1);
	ASSERT_NE(host.pp, nullptr);
	wl_surface *parent = host.own(wl_compositor_create_surface(host.registry.compositor));
	wl_surface *surface = host.own(wl_compositor_create_surface(host.registry.compositor));
	host.own(wl_subcompositor_get_subsurface(host.registry.subcompositor, surface, parent)); // synchronized
	wl_surface_commit(parent);
	host.sync();
	wlr_surface *ws = host.server_surface(surface);
	ASSERT_NE(ws, nullptr);
	Buffer *first = host.buffer(1920, 1080), *replaced = host.buffer(1920, 1080), *last = host.buffer(1920, 1080);
	paint(first, 0x112233);
	paint(replaced, 0x445566);
	paint(last, 0x778899);
	// The first converts on the worker, the second waits behind it; the parent's commit takes
	// wlroots' lock off them, and the third, locked by wlroots until the parent's next commit,
	// replaces the second.
	commit(surface, first);
	commit(surface, replaced);
	wl_surface_commit(parent);
	commit(surface, last);
	for (int i = 0; i < 4000 && host.stats().converted_uploads < 2; i++) host.pump(5);
	host.sync();
	ASSERT_EQ(host.stats().converted_uploads, 2u);
	// The second applied alone: its own pixels, not the first's.
	Shown now = read_shown(ws);
	EXPECT_TRUE(now.any && now.uniform && now.rgb == 0x445566) << std::hex << now.rgb;
	EXPECT_EQ(host.stats().main_thread_completions, 1u);
	wl_surface_commit(parent);
	host.sync();
	now = read_shown(ws);
	EXPECT_TRUE(now.any && now.uniform && now.rgb == 0x778899) << std::hex << now.rgb;
}

TEST(CommitPath, FrameCallbacksHeldForLateCommitsStayFew) {
	PathHost host(1);
	ASSERT_NE(host.pp, nullptr);
	wl_surface *surface = desync_child(host);
	wlr_surface *ws = host.server_surface(surface);
	ASSERT_NE(ws, nullptr);
	Buffer *first = host.buffer(8192, 4096);
	paint(first, 0x112233);
	commit(surface, first);
	for (int i = 0; i < 4000 && host.stats().converted_uploads == 0; i++) host.pump(5);
	host.sync();
	ASSERT_EQ(read_shown(ws).rgb, 0x112233u);
	Buffer *b = host.buffer(8192, 4096);
	paint(b, 0x336699);
	commit(surface, b);
	constexpr int kFrames = 100;
	int frames_done = 0, newest_done = 0;
	for (int i = 0; i < kFrames; i++) {
		frame_counted(host, surface, i == kFrames - 1 ? &newest_done : &frames_done);
		wl_surface_commit(surface);
	}
	host.sync();
	if (host.stats().converted_uploads == 1) {
		// 64 held; from then on each apply sends the oldest one done: those of the newest 64
		// commits (the last one's among them) wait for the image their commit shows.
		EXPECT_EQ(frames_done, kFrames - 64);
		EXPECT_EQ(newest_done, 0);
		EXPECT_EQ(wl_list_length(&ws->current.frame_callback_list), 0);
		EXPECT_EQ(read_shown(ws).rgb, 0x112233u); // the last complete image, meanwhile
	}
	for (int i = 0; i < 4000 && host.stats().converted_uploads == 1; i++) host.pump(5);
	host.sync();
	EXPECT_EQ(frames_done, kFrames - 1);
	EXPECT_EQ(newest_done, 1);
	const Shown now = read_shown(ws);
	EXPECT_TRUE(now.any && now.uniform && now.rgb == 0x336699) << std::hex << now.rgb;
	EXPECT_EQ(host.stats().main_thread_completions, 0u);
}

// Fair inside a client: a small surface's frame, committed after the same client's 8K frame,
// is converted (and shown) before that one is done.
TEST(CommitPath, ASmallSurfaceIsNotQueuedBehindItsOwnClientsLargeFrame) {
	PathHost host(1);
	ASSERT_NE(host.pp, nullptr);
	wl_surface *parent = host.own(wl_compositor_create_surface(host.registry.compositor));
	wl_surface *large = host.own(wl_compositor_create_surface(host.registry.compositor));
	wl_surface *small = host.own(wl_compositor_create_surface(host.registry.compositor));
	wl_subsurface *subs[2] = {host.own(wl_subcompositor_get_subsurface(host.registry.subcompositor, large, parent)),
		host.own(wl_subcompositor_get_subsurface(host.registry.subcompositor, small, parent))};
	for (wl_subsurface *sub : subs) wl_subsurface_set_desync(sub);
	Buffer *big = host.buffer(8192, 8192, WL_SHM_FORMAT_NV12);
	Buffer *little = host.buffer(320, 240);
	ASSERT_TRUE(big != nullptr && little != nullptr);
	paint(big, 0x808080);
	paint(little, 0x336699);
	commit(large, big);
	commit(small, little);
	host.pump(0);
	bool small_shown = false;
	uint64_t converted_then = 0;
	for (int i = 0; i < 20000 && !small_shown; i++) {
		host.pump(1);
		Shown now = read_shown(host.server_surface(small));
		if (now.any && !now.blank && now.rgb == 0x336699) {
			small_shown = true;
			converted_then = host.stats().converted_uploads;
		}
	}
	EXPECT_TRUE(small_shown);
	// Only the small frame was done when it showed: the large one's 256 bands were still going.
	EXPECT_EQ(converted_then, 1u);
	// Then the large one (64 Mi pixels: a minute at most under ThreadSanitizer on 2 cores).
	for (int i = 0; i < 12000 && host.stats().converted_uploads < 2; i++) host.pump(5);
	EXPECT_EQ(host.stats().converted_uploads, 2u);
}

// No request costs time that grows with other surfaces' held commits: 20,000 wl_region
// create+destroy pairs (each "destroy" is looked at for role objects whose surface holds
// commits) take about as long beside 1,000 surfaces that held commits as beside none.
TEST(CommitPath, ADestroyRequestCostsTheSameWhateverTheHeldCommitsOfOtherSurfaces) {
	PathHost host(1);
	ASSERT_NE(host.pp, nullptr);
	auto regions = [&] {
		const auto t0 = std::chrono::steady_clock::now();
		for (int round = 0; round < 20; round++) {
			for (int i = 0; i < 1000; i++)
				wl_region_destroy(wl_compositor_create_region(host.registry.compositor));
			host.roundtrip();
		}
		return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	};
	regions(); // warm
	const double alone = std::min(regions(), regions());
	wl_surface *parent = host.own(wl_compositor_create_surface(host.registry.compositor));
	Buffer *b = host.buffer(320, 240); // a worker's job: each commit is held
	paint(b, 0x224466);
	for (int i = 0; i < 1000; i++) {
		wl_surface *surface = host.own(wl_compositor_create_surface(host.registry.compositor));
		wl_subsurface_set_desync(
			host.own(wl_subcompositor_get_subsurface(host.registry.subcompositor, surface, parent)));
		commit(surface, b);
		if (i % 100 == 99) host.sync();
	}
	host.sync();
	EXPECT_GE(host.stats().held_commits, 1000u);
	const double beside = std::min(regions(), regions());
	std::cout << "20,000 wl_region create+destroy: " << alone * 1e3 << " ms alone, " << beside * 1e3
		  << " ms beside 1,000 surfaces that held commits\n";
	EXPECT_LT(beside, 1.8 * alone + 0.02);
	EXPECT_EQ(wl_display_get_error(host.conn), 0);
}

// A host that makes its wlr_compositor before the plugin (the preload module supports it): at
// display destroy the compositor goes first, with surfaces whose timing records still wait for
// presentation; each surface's state is torn down once, off every list (AddressSanitizer would
// see the freed record walked by Timing), and the plugin goes once.
TEST(CommitPath, TeardownWithTheCompositorMadeFirstFreesEachSurfaceOnce) {
	std::string log = temp_path("teardown-log");
	Counter gone;
	{
		PathHost host(1, log.c_str(), true);
		ASSERT_NE(host.pp, nullptr);
		pixelport_add_destroy_listener(host.pp, &gone.listener);
		wl_surface *parent = host.own(wl_compositor_create_surface(host.registry.compositor));
		wl_surface *child = host.own(wl_compositor_create_surface(host.registry.compositor));
		wl_subsurface *sub =
			host.own(wl_subcompositor_get_subsurface(host.registry.subcompositor, child, parent));
		wl_subsurface_set_desync(sub);
		Buffer *b = host.buffer(640, 480);
		paint(b, 0x123456);
		commit(child, b); // held for its conversion
		commit(parent, host.buffer(32, 32)); // converted when applied; its record waits
		host.pump(0);
		host.destroy_display(); // the compositor, then the plugin, with the client connected
	}
	EXPECT_EQ(gone.calls, 1);
	std::filesystem::remove(log);
}

} // namespace
