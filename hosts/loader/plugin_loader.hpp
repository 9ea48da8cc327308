// Loads libpixelport.so with dlopen and checks its ABI version before anything is called.
// Used by pixelport-compositor and by the preload module (hosts/preload/).
#pragma once

#include <string>

#include "pixelport/pixelport.h"

namespace pixelport {

struct PluginApi {
	void *handle = nullptr;
	decltype(&pixelport_create) create = nullptr;
	decltype(&pixelport_shm_create) shm_create = nullptr;
	decltype(&pixelport_stream_manager_create) stream_manager_create = nullptr;
	decltype(&pixelport_timing_manager_create) timing_manager_create = nullptr;
	decltype(&pixelport_color_representation_manager_create) color_representation_manager_create = nullptr;
	decltype(&pixelport_attach_compositor) attach_compositor = nullptr;
	decltype(&pixelport_add_destroy_listener) add_destroy_listener = nullptr;
	decltype(&pixelport_destroy) destroy = nullptr;
	decltype(&pixelport_get_stats) get_stats = nullptr; // optional
	decltype(&pixelport_attach_output) attach_output = nullptr; // optional
	decltype(&pixelport_timing_summary) timing_summary = nullptr; // optional
	decltype(&pixelport_fifo_manager_create) fifo_manager_create = nullptr; // optional
	decltype(&pixelport_commit_timing_manager_create) commit_timing_manager_create = nullptr; // optional
};

/** The plugin built or installed beside this executable, or "" if none is found. */
std::string default_plugin_path();

/**
 * dlopen()s `path`, reads `pixelport_abi_version` and resolves the API. On failure returns
 * false with a one-line reason in `error` and nothing left loaded.
 */
bool load_plugin(const std::string &path, PluginApi *api, std::string *error);

void unload_plugin(PluginApi *api);

/** The plugin's counters as one line of JSON (no newline), as hosts print or write them. */
std::string stats_json(const pixelport_stats &stats);

} // namespace pixelport
