#include "plugin_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>

namespace pixelport {

std::string default_plugin_path() {
	std::error_code ec;
	auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
	if (ec) {
		return "";
	}
	auto dir = exe.parent_path();
	// Build tree first (hosts/compositor/ and plugin/ in one build directory), then an
	// installed layout.
	const std::array<std::filesystem::path, 3> candidates = {
		dir / "../../plugin/libpixelport.so",
		dir / "libpixelport.so",
		std::filesystem::path(PIXELPORT_INSTALLED_PLUGIN),
	};
	for (const auto &candidate : candidates) {
		if (std::filesystem::exists(candidate, ec)) {
			return std::filesystem::weakly_canonical(candidate, ec).string();
		}
	}
	return "";
}

template <typename T>
static bool resolve(void *handle, const char *name, T *out, std::string *error) {
	*out = reinterpret_cast<T>(dlsym(handle, name));
	if (*out == nullptr) {
		*error = std::string("symbol ") + name + " missing";
		return false;
	}
	return true;
}

bool load_plugin(const std::string &path, PluginApi *api, std::string *error) {
	*api = {};
	void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (handle == nullptr) {
		const char *why = dlerror();
		*error = "cannot load plugin " + path + ": " + (why != nullptr ? why : "unknown error");
		return false;
	}
	const auto *version = static_cast<const uint32_t *>(dlsym(handle, "pixelport_abi_version"));
	if (version == nullptr) {
		*error = path + " is not a pixelport plugin (no pixelport_abi_version symbol)";
		dlclose(handle);
		return false;
	}
	if (*version != PIXELPORT_ABI_VERSION) {
		*error = "plugin " + path + " has ABI version " + std::to_string(*version) +
			", this compositor needs ABI version " + std::to_string(PIXELPORT_ABI_VERSION);
		dlclose(handle);
		return false;
	}
	std::string missing;
	if (!resolve(handle, "pixelport_create", &api->create, &missing) ||
		!resolve(handle, "pixelport_shm_create", &api->shm_create, &missing) ||
		!resolve(handle, "pixelport_stream_manager_create", &api->stream_manager_create, &missing) ||
		!resolve(handle, "pixelport_timing_manager_create", &api->timing_manager_create, &missing) ||
		!resolve(handle, "pixelport_color_representation_manager_create",
			&api->color_representation_manager_create, &missing) ||
		!resolve(handle, "pixelport_attach_compositor", &api->attach_compositor, &missing) ||
		!resolve(handle, "pixelport_add_destroy_listener", &api->add_destroy_listener, &missing) ||
		!resolve(handle, "pixelport_destroy", &api->destroy, &missing)) {
		*error = "plugin " + path + ": " + missing;
		dlclose(handle);
		*api = {};
		return false;
	}
	api->get_stats = reinterpret_cast<decltype(api->get_stats)>(dlsym(handle, "pixelport_get_stats"));
	api->attach_output = reinterpret_cast<decltype(api->attach_output)>(dlsym(handle, "pixelport_attach_output"));
	api->timing_summary =
		reinterpret_cast<decltype(api->timing_summary)>(dlsym(handle, "pixelport_timing_summary"));
	api->fifo_manager_create =
		reinterpret_cast<decltype(api->fifo_manager_create)>(dlsym(handle, "pixelport_fifo_manager_create"));
	api->commit_timing_manager_create = reinterpret_cast<decltype(api->commit_timing_manager_create)>(
		dlsym(handle, "pixelport_commit_timing_manager_create"));
	api->handle = handle;
	return true;
}

// RTLD_NODELETE: the plugin registers process-global wlroots interfaces (wlr_buffer
// resource interfaces have no unregister), so its code must stay mapped after dlclose.
void unload_plugin(PluginApi *api) {
	if (api->handle != nullptr) {
		dlclose(api->handle);
	}
	*api = {};
}

std::string stats_json(const pixelport_stats &stats) {
	char line[768];
	snprintf(line, sizeof(line),
		"{\"native_uploads\":%llu,\"converted_uploads\":%llu,\"converted_pixels\":%llu,"
		"\"shm_buffers\":%llu,\"sigbus_faults\":%llu,\"stream_bytes\":%llu,\"stream_writes\":%llu,"
		"\"held_commits\":%llu,\"skipped_conversions\":%llu,\"budget_refusals\":%llu,\"image_bytes\":%llu,"
		"\"early_releases\":%llu,\"redraws\":%llu,\"main_thread_completions\":%llu,\"paced_commits\":%llu,"
		"\"barrier_timeouts\":%llu}",
		static_cast<unsigned long long>(stats.native_uploads),
		static_cast<unsigned long long>(stats.converted_uploads),
		static_cast<unsigned long long>(stats.converted_pixels),
		static_cast<unsigned long long>(stats.shm_buffers),
		static_cast<unsigned long long>(stats.sigbus_faults),
		static_cast<unsigned long long>(stats.stream_bytes),
		static_cast<unsigned long long>(stats.stream_writes),
		static_cast<unsigned long long>(stats.held_commits),
		static_cast<unsigned long long>(stats.skipped_conversions),
		static_cast<unsigned long long>(stats.budget_refusals),
		static_cast<unsigned long long>(stats.image_bytes),
		static_cast<unsigned long long>(stats.early_releases), static_cast<unsigned long long>(stats.redraws),
		static_cast<unsigned long long>(stats.main_thread_completions),
		static_cast<unsigned long long>(stats.paced_commits),
		static_cast<unsigned long long>(stats.barrier_timeouts));
	return line;
}

} // namespace pixelport
