// A reader of a wl_shm buffer (wlr_buffer_begin_data_ptr_access), in-process: what it is given is
// the pool's current bytes, and a writer (screencopy into a client's buffer) is given only a
// mapping that may be written, also when a resize since the last read left the pool unmapped
// and the client sealed its file against writing meanwhile (a read-only pointer handed to a
// writer is a SIGSEGV in the compositor).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "../integration/wait_until.hpp"
#include "api_host.hpp"

namespace {

using namespace pixelport::test;

constexpr int32_t kW = 16, kH = 8, kStride = kW * 4;
constexpr int32_t kBytes = kStride * kH;

// The plugin's wlr_buffer behind the client's wl_buffer, locked; null when the server has none.
wlr_buffer *server_buffer(Host &host, wl_buffer *buffer) {
	wl_resource *resource =
		wl_client_get_object(host.client, wl_proxy_get_id(reinterpret_cast<wl_proxy *>(buffer)));
	return resource != nullptr ? wlr_buffer_try_from_resource(resource) : nullptr;
}

struct Access {
	bool granted = false;
	uint32_t first = 0; // the first pixel read through the pointer
};

Access access(wlr_buffer *buffer, uint32_t flags, uint32_t write = 0) {
	Access out;
	void *data = nullptr;
	uint32_t format = 0;
	size_t stride = 0;
	if (!wlr_buffer_begin_data_ptr_access(buffer, flags, &data, &format, &stride)) return out;
	out.granted = true;
	if (flags & WLR_BUFFER_DATA_PTR_ACCESS_WRITE) std::memcpy(data, &write, sizeof write);
	std::memcpy(&out.first, data, sizeof out.first);
	wlr_buffer_end_data_ptr_access(buffer);
	return out;
}

// The plugin with its wl_shm on the host, the client's registry listened to.
void serve_shm(Host &host) {
	pixelport_plugin *pp = host.plugin();
	ASSERT_NE(pp, nullptr);
	ASSERT_NE(pixelport_shm_create(pp, 1), nullptr);
	host.listen();
}

// A pool of one buffer's bytes from a sealable memfd twice that size, grown to the whole file
// after the server mapped it, with a buffer in the grown half; `seals` added between the two.
struct GrownPool {
	int fd = -1;
	uint8_t *map = nullptr; // the client's own mapping of the whole file
	wl_shm_pool *pool = nullptr;
	wl_buffer *buffer = nullptr;

	bool make(Host &host, int seals) {
		fd = memfd_create("pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (fd < 0 || ftruncate(fd, 2 * kBytes) != 0) return false;
		void *m = mmap(nullptr, 2 * kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) return false;
		map = static_cast<uint8_t *>(m);
		const uint32_t pixel = 0xff204060;
		for (int32_t i = 0; i < 2 * kBytes / 4; i++) std::memcpy(map + 4 * i, &pixel, 4);
		pool = wl_shm_create_pool(host.registry.shm, fd, kBytes);
		host.roundtrip(); // the server maps the first half, read-write
		if (seals != 0 && fcntl(fd, F_ADD_SEALS, seals) != 0) return false;
		wl_shm_pool_resize(pool, 2 * kBytes);
		buffer = wl_shm_pool_create_buffer(pool, kBytes, kW, kH, kStride, WL_SHM_FORMAT_XRGB8888);
		host.roundtrip();
		return wl_display_get_error(host.conn) == 0;
	}
	~GrownPool() {
		if (buffer != nullptr) wl_buffer_destroy(buffer);
		if (pool != nullptr) wl_shm_pool_destroy(pool);
		if (map != nullptr) munmap(map, 2 * kBytes);
		if (fd >= 0) close(fd);
	}
};

// The first access after the resize is a writer's: with the file sealed against writes since the
// server's first mapping, it is refused; a reader then gets the client's bytes.
TEST(ApiShmAccess, AWriterIsRefusedAPoolSealedAgainstWritesSinceItsLastMapping) {
	for (int seal : {F_SEAL_FUTURE_WRITE, F_SEAL_WRITE}) {
		SCOPED_TRACE(seal == F_SEAL_WRITE ? "F_SEAL_WRITE" : "F_SEAL_FUTURE_WRITE");
		Host host;
		ASSERT_NO_FATAL_FAILURE(serve_shm(host));
		GrownPool p;
		// F_SEAL_WRITE needs no writable mapping of the file: it is added after the resize, which
		// dropped the server's, and after the client's own is gone.
		if (seal == F_SEAL_WRITE) {
			ASSERT_TRUE(p.make(host, 0));
			munmap(p.map, 2 * kBytes);
			p.map = nullptr;
			// The server's old mapping is unmapped on its unmapper thread, soon after the resize.
			ASSERT_TRUE(wait_until(
				[&] { return fcntl(p.fd, F_ADD_SEALS, F_SEAL_WRITE) == 0; }, std::chrono::seconds(10)))
				<< "the server still maps the file writable";
		} else {
			ASSERT_TRUE(p.make(host, seal));
		}
		wlr_buffer *buffer = server_buffer(host, p.buffer);
		ASSERT_NE(buffer, nullptr);
		EXPECT_FALSE(
			access(buffer, WLR_BUFFER_DATA_PTR_ACCESS_READ | WLR_BUFFER_DATA_PTR_ACCESS_WRITE, 0xff00ff00)
				.granted);
		Access read = access(buffer, WLR_BUFFER_DATA_PTR_ACCESS_READ);
		EXPECT_TRUE(read.granted);
		EXPECT_EQ(read.first, 0xff204060u);
		wlr_buffer_unlock(buffer);
		host.roundtrip();
		EXPECT_EQ(wl_display_get_error(host.conn), 0);
	}
}

// Unsealed, the same first access writes into the client's file at the buffer's offset.
TEST(ApiShmAccess, AWriterOfAGrownPoolWritesTheClientsFile) {
	Host host;
	ASSERT_NO_FATAL_FAILURE(serve_shm(host));
	GrownPool p;
	ASSERT_TRUE(p.make(host, 0));
	wlr_buffer *buffer = server_buffer(host, p.buffer);
	ASSERT_NE(buffer, nullptr);
	Access write = access(buffer, WLR_BUFFER_DATA_PTR_ACCESS_READ | WLR_BUFFER_DATA_PTR_ACCESS_WRITE, 0xff00ff00);
	EXPECT_TRUE(write.granted);
	uint32_t seen = 0;
	std::memcpy(&seen, p.map + kBytes, sizeof seen);
	EXPECT_EQ(seen, 0xff00ff00u);
	std::memcpy(&seen, p.map, sizeof seen);
	EXPECT_EQ(seen, 0xff204060u); // the first half, outside the buffer, untouched
	wlr_buffer_unlock(buffer);
}

} // namespace
