// The pixelport stream (protocols/pixelport-stream-v1.xml): pixel rows through a socket or a
// pipe instead of shared memory. Reads never block and never go past what was announced;
// renderer formats land straight in the buffer's storage, other formats pass through a
// bounded receive window and are converted band by band as they arrive. A commit of a buffer
// whose bytes are still in flight is held (the hold ledger, hold.hpp) until they are in.
// The wire layout and the placing and converting of the bytes are the core's
// (pixelport/core/stream_layout.hpp); this file keeps the fds, budgets and protocol.
#pragma once

#include <cstdint>
#include <list>
#include <memory>

#include "wlr.hpp"

struct pixelport_plugin;

namespace pixelport {

class PixelBuffer;
struct ColorState;
struct Stream;
struct SurfaceState;

class StreamManager {
public:
	static std::unique_ptr<StreamManager> create(pixelport_plugin *plugin);
	/** A pp_stream_manager_v1 global (version 1); its owner destroys it (pixelport.cpp). */
	wl_global *create_global(uint32_t version);
	~StreamManager();

	/** From the surface's client_commit: holds the commit if `buffer`'s bytes are in flight. */
	void handle_client_commit(SurfaceState *surface, PixelBuffer *buffer);
	/** From every commit: the colour representation its client committed last (stream writes). */
	void note_color(wl_client *client, const ColorState &color);

	pixelport_plugin *plugin() const { return plugin_; }

	// Internal (stream.cpp).
	uint64_t next_stream_id = 1;
	/**
	 * Every stream alive, to end those still draining when the plugin goes. A list: a stream
	 * goes in constant time however many other clients have streams.
	 */
	std::list<Stream *> live_streams;
	/**
	 * Shared by FIFO streams: bytes go fd -> relay -> storage within one call, so it is empty
	 * between calls. Non-blocking at both ends; created on first use.
	 */
	int relay[2] = {-1, -1};

private:
	StreamManager() = default;
	static void bind(wl_client *client, void *data, uint32_t version, uint32_t id);
	pixelport_plugin *plugin_ = nullptr;
};

} // namespace pixelport
