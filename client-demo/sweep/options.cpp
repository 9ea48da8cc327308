#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli.hpp"

namespace pixelport::sweep {

CLI::Option *add_options(CLI::App &app, Options *o) {
	CLI::Option *sizes_opt = app.add_option("--sizes", o->sizes_arg,
		"explicit sizes, comma-separated: WxH (pixels, each 1..32767, the same for every format) or bytes "
		"(1 to 2G: 4K, 1M, 1.5M; shape 4:3 per format)");
	app.add_option("--min-size", o->min_size, "smallest frame, bytes of pixel data (K, M, G suffixes; 1 to 2G)")
		->capture_default_str();
	app.add_option("--max-size", o->max_size, "largest frame")->capture_default_str();
	app.add_option("--steps", o->steps, "number of sizes, log-spaced from --min-size to --max-size")
		->capture_default_str()
		->transform(cli::Range(1, 64));
	app.add_option("--transports", o->transports, "comma-separated: shm, shm-new, socket, pipe")
		->capture_default_str();
	app.add_option("--formats", o->formats, "comma-separated DRM format names")->capture_default_str();
	app.add_option("--warmup", o->warmup, "unmeasured frames per point")
		->capture_default_str()
		->transform(cli::Range(0, 1000));
	app.add_option("--frames", o->frames, "measured frames per point (at most)")
		->capture_default_str()
		->transform(cli::Range(1, 100000));
	app.add_option("--min-frames", o->min_frames, "measured frames per point at least, even past --point-seconds")
		->capture_default_str()
		->transform(cli::Range(1, 100000));
	app.add_option("--point-seconds", o->point_seconds,
		   "stop measuring a point after this long (once --min-frames are in)")
		->capture_default_str()
		->transform(cli::Range(0.0, 3600.0));
	app.add_option("--image", o->image,
		"JPEG, PNG or WebP to scale to every size (a regular file of at most 256 MiB and 2^28 pixels; default: "
		"a Debian "
		"wallpaper photo if installed)");
	app.add_flag("--pattern", o->pattern, "synthetic pattern instead of an image");
	app.add_option("-o,--output", o->output, "output folder (default: pixelport-sweep-DATE-TIME here)");
	app.add_flag("--no-plot", o->no_plot, "no PNG plot (no gnuplot run)");
	app.add_option("--timeout-ms", o->timeout_ms, "longest wait for any one event (presentation, buffer, stream)")
		->capture_default_str()
		->transform(cli::Range(100, 600000));
	app.add_option("--instances", o->instances, "pressure mode: N concurrent clients each putting one huge image")
		->transform(cli::Range(1, 64));
	app.add_option("--pressure-size", o->pressure_size, "pressure mode: frame WxH (each 1..32767)")
		->capture_default_str();
	app.add_option("--pressure-frames", o->pressure_frames, "pressure mode: frames each instance puts")
		->capture_default_str()
		->transform(cli::Range(1, 10000));
	app.add_option("--pressure-transport", o->pressure_transport, "pressure mode: shm, shm-new, socket or pipe")
		->capture_default_str();
	app.add_option("--pressure-timeout", o->pressure_timeout_s,
		   "pressure mode: seconds before unfinished instances are killed")
		->capture_default_str()
		->transform(cli::Range(1, 86400));
	app.add_option("--peer", o->peer, "also run the shm transports through a peer: waypipe")
		->check(CLI::IsMember({"waypipe"}));
	app.add_option("--peer-compress", o->peer_compress, "waypipe compressions to run, comma-separated")
		->capture_default_str();
	app.add_option("--peer-timeout", o->peer_timeout_s, "seconds for each peer run")
		->capture_default_str()
		->transform(cli::Range(1, 86400));
	// 4194304: Linux's largest pid_max.
	app.add_option("--compositor-pid", o->compositor_pid,
		   "compositor process for memory figures (default: the socket's peer)")
		->transform(cli::Range(0, 4194304));
	app.add_option("--seed", o->seed, "pattern seed")->capture_default_str()->transform(cli::Range(0u, UINT32_MAX));
	app.add_flag("--peer-child", o->peer_child, "internal: a run under a peer, results only in --output")
		->group("");
	app.add_option("--source", o->source, "internal: the peer run's name in window titles")->group("");
	app.add_option("--verify-display", o->verify_display, "internal: Wayland display for the pixel check")
		->group("");
	app.add_flag("--test-wrong-reference", o->test_wrong_reference,
		   "testing aid: check the pixels against an inverted reference (every point must come out invalid)")
		->group("");
	app.add_flag(
		"--no-verify", o->no_verify, "do not check the shown pixels (grim screenshots) against what was sent");
	app.add_option("--confirm-rounds", o->confirm_rounds,
		   "extra alternating rounds near each candidate crossover for the verdict (0: none)")
		->capture_default_str()
		->transform(cli::Range(0, 50));
	app.add_option("--confirm-seconds", o->confirm_seconds, "measuring time per point in a confirming round")
		->capture_default_str()
		->transform(cli::Range(0.0, 60.0));
	app.add_option("--confirm-compositor", o->confirm_compositor,
		"start each confirming round's own compositor with this shell command line, plus --socket NAME "
		"(e.g. pixelport-compositor --log-level error); default: the rounds run in the sweep's compositor");
	app.set_version_flag("--version", std::string("pixelport-sweep ") + PIXELPORT_VERSION);
	return sizes_opt;
}

[[noreturn]] void die(int code, const std::string &msg) {
	fprintf(stderr, "pixelport-sweep: error: %s\n", msg.c_str());
	exit(code);
}

std::vector<std::string> split(const std::string &s, char sep) {
	std::vector<std::string> out;
	std::stringstream in(s);
	std::string item;
	while (std::getline(in, item, sep)) {
		if (!item.empty()) out.push_back(item);
	}
	return out;
}

// A frame size in bytes: "4096", "4K", "1.5M", "2G" (binary units), 1 byte to a wl_shm pool's 2 GiB.
constexpr uint64_t kMaxFrameBytes = INT32_MAX;
const char *const kBytesRange = "bytes 1..2G (4096, 64K, 1.5M)";
bool parse_bytes(const std::string &s, double *out) {
	uint64_t v = 0;
	if (!cli::parse_bytes(s, 1, kMaxFrameBytes, &v)) return false;
	*out = static_cast<double>(v);
	return true;
}

// "WxH", each 1..32767 (wl_surface coordinates are 16-bit in practice).
bool parse_wxh(const std::string &s, int *w, int *h) { return cli::parse_wxh(s, 1, 32767, w, h); }

// Every item of a comma-separated list, empty ones included ("a,,b" has three).
std::vector<std::string> split_all(const std::string &s) {
	std::vector<std::string> out;
	size_t start = 0;
	for (size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1) {
		out.push_back(s.substr(start, comma - start));
	}
	out.push_back(s.substr(start));
	return out;
}

} // namespace pixelport::sweep
