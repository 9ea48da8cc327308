// pixelport-compositor: command-line front end of the reference compositor (server.cpp).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "server.hpp"

namespace cli = pixelport::cli;

int main(int argc, char *argv[]) {
	pixelport::ServerOptions options;
	std::string output_mode;
	std::string log_level = "info";
	bool print_stats = false;

	CLI::App app{"pixelport-compositor: headless wlroots (0.18, 0.19 or 0.20) compositor that hosts the pixelport "
		     "plugin"};
	app.add_option("--plugin", options.plugin_path,
		"plugin to load (default: libpixelport.so built or installed beside this binary)");
	app.add_flag("--no-plugin", options.no_plugin, "stock wlroots behaviour: wlroots' own wl_shm, no plugin");
	app.add_option("--without", options.without_globals,
		   "leave out one of the plugin's globals (repeatable): pp_stream_manager_v1, pp_timing_manager_v1, "
		   "wp_color_representation_manager_v1, wp_fifo_manager_v1 or wp_commit_timing_manager_v1")
		->check(CLI::IsMember({"pp_stream_manager_v1", "pp_timing_manager_v1",
			"wp_color_representation_manager_v1", "wp_fifo_manager_v1", "wp_commit_timing_manager_v1"}));
	app.add_option("-s,--startup", options.startup_command,
		"command run with WAYLAND_DISPLAY set; the compositor exits with its status when it ends");
	app.add_option("--socket", options.socket_name, "socket name under $XDG_RUNTIME_DIR (default: wayland-N)");
	app.add_option("--output", output_mode, "headless output mode WIDTHxHEIGHT[@HZ] (default 1280x720@60)");
	app.add_option("--outputs", options.outputs, "number of headless outputs")->transform(cli::Range(1, 16));
	app.add_option("--log-level", log_level, "silent, error, info or debug")
		->check(CLI::IsMember({"silent", "error", "info", "debug"}));
	app.add_option("--convert-threads", options.convert_threads,
		   "worker threads that convert commits off the main thread (default: half the hardware threads, 1 to "
		   "8)")
		->transform(cli::Range(1u, 64u));
	app.add_option("--image-budget-client", options.image_budget_client,
		   "bytes of converted images one client may hold (default: max(512 MiB, 8 x the outputs' bytes))")
		->transform(cli::Range(uint64_t{1} << 20, uint64_t{1} << 46));
	app.add_option("--image-budget-total", options.image_budget_total,
		   "bytes of converted images all clients may hold (default: max(2 GiB, 4 x the client budget))")
		->transform(cli::Range(uint64_t{1} << 20, uint64_t{1} << 46));
	// Stream budgets: 0 is the plugin's default (as in pixelport_options and the preload's variables).
	app.add_option("--stream-max-buffer-bytes", options.stream_max_buffer_bytes,
		   "largest stream buffer in bytes (default: 4 x the largest output, at least 256 MiB)")
		->transform(cli::Range(uint64_t{0}, uint64_t{1} << 46));
	app.add_option(
		   "--stream-max-buffers", options.stream_max_buffers, "stream buffers alive per client (default 64)")
		->transform(cli::Range(0u, 1u << 20));
	app.add_option("--stream-max-inflight-bytes", options.stream_max_inflight_bytes,
		   "stream bytes announced and not yet read, per client (default 512 MiB)")
		->transform(cli::Range(uint64_t{0}, uint64_t{1} << 46));
	app.add_option("--stream-max-streams", options.stream_max_streams, "streams alive per client (default 16)")
		->transform(cli::Range(0u, 1u << 16));
	app.add_option("--stream-max-client-bytes", options.stream_max_client_bytes,
		   "storage of a client's stream buffers in bytes (default: 16 x the largest output, at least 1 GiB)")
		->transform(cli::Range(uint64_t{0}, uint64_t{1} << 46));
	// Per-client object caps: 0 is the plugin's default (docs/design.md, "Limits and fairness").
	app.add_option("--client-max-pools", options.client_max_pools, "wl_shm_pool objects per client (default 1024)")
		->transform(cli::Range(0u, 1u << 20));
	app.add_option("--client-max-mappings", options.client_max_mappings,
		   "mappings of wl_shm pools per client (default 2048)")
		->transform(cli::Range(0u, 1u << 20));
	app.add_option("--client-max-shm-buffers", options.client_max_shm_buffers,
		   "wl_shm wl_buffer objects per client (default 65536)")
		->transform(cli::Range(0u, 1u << 20));
	app.add_option("--client-max-subscriptions", options.client_max_subscriptions,
		   "pp_surface_timing_v1 objects per client (default 1024)")
		->transform(cli::Range(0u, 1u << 20));
	app.add_option("--client-max-color-surfaces", options.client_max_color_surfaces,
		   "wp_color_representation_surface_v1 objects per client (default 4096)")
		->transform(cli::Range(0u, 1u << 20));
	app.add_option("--client-max-images", options.client_max_images, "converted images per client (default 4096)")
		->transform(cli::Range(0u, 1u << 20));
	app.add_option("--gstreamer-withhold", options.gstreamer_withhold,
		"wl_shm formats left out for clients that map GStreamer's Wayland library: auto (default), none, or "
		"DRM format names (RGB888,-NV12)");
	app.add_option("--timing-log", options.timing_log,
		"write every commit's and frame's timing as JSON Lines (docs/timing.md); summary at exit");
	app.add_option("--timing-trace", options.timing_trace, "write a Chrome trace-event JSON (Perfetto UI)");
	app.add_flag("--print-stats", print_stats,
		"at exit, print the plugin's counters as one JSON line on stdout, after 'pixelport-stats '");
	app.set_version_flag("--version", std::string("pixelport-compositor ") + PIXELPORT_VERSION);
	if (int rc = cli::parse(app, argc, argv, "pixelport-compositor"); rc >= 0) return rc;

	if (!output_mode.empty()) {
		double hz = 60.0;
		const std::string_view mode = output_mode;
		const size_t at = mode.find('@');
		if (!cli::parse_wxh(mode.substr(0, at), 1, 16384, &options.output_width, &options.output_height) ||
			(at != std::string_view::npos && !cli::parse_real(mode.substr(at + 1), 0.001, 1000, &hz))) {
			return cli::usage_error("pixelport-compositor",
				"--output '" + output_mode +
					"': want WIDTHxHEIGHT[@HZ], width and height 1..16384, HZ 0.001..1000 (e.g. "
					"1920x1080@60)");
		}
		options.refresh_mhz = static_cast<int>(hz * 1000.0 + 0.5);
	}

	wlr_log_importance importance = WLR_INFO;
	if (log_level == "silent") {
		importance = WLR_SILENT;
	} else if (log_level == "error") {
		importance = WLR_ERROR;
	} else if (log_level == "debug") {
		importance = WLR_DEBUG;
	}
	wlr_log_init(importance, nullptr);

	// Without XDG_RUNTIME_DIR (a plain ssh or su shell), a private one for this run: the socket
	// and the startup command's clients find each other there; removed at exit.
	std::string own_runtime;
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	if (runtime == nullptr || *runtime == '\0') {
		char tmpl[] = "/tmp/pixelport-runtime-XXXXXX"; // mkdtemp: mode 0700
		if (mkdtemp(tmpl) == nullptr) {
			fprintf(stderr,
				"pixelport-compositor: XDG_RUNTIME_DIR is not set and no private one can be made in "
				"/tmp\n");
			return 1;
		}
		own_runtime = tmpl;
		setenv("XDG_RUNTIME_DIR", tmpl, 1);
		fprintf(stderr, "pixelport-compositor: XDG_RUNTIME_DIR was not set: using %s for this run\n", tmpl);
	}
	struct RemoveRuntime {
		std::string dir;
		~RemoveRuntime() {
			std::error_code ec;
			if (!dir.empty()) std::filesystem::remove_all(dir, ec);
		}
	} remove_runtime{own_runtime};

	std::string error;
	auto server = pixelport::Server::create(options, &error);
	if (!server || !server->start(&error)) {
		fprintf(stderr, "pixelport-compositor: %s\n", error.c_str());
		return 1;
	}
	server->run();
	int code = server->exit_code();
	if (!options.timing_log.empty() || !options.timing_trace.empty()) {
		fprintf(stderr, "%s", server->timing_summary().c_str());
	}
	pixelport_stats stats{};
	if (print_stats && server->plugin_stats(&stats)) {
		printf("pixelport-stats %s\n", pixelport::stats_json(stats).c_str());
		fflush(stdout);
	}
	server.reset();
	return code;
}
