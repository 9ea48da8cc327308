// pixelport-sweep's options, their parsing, and the small string helpers the checks share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace pixelport::sweep {

struct Options {
	std::string sizes_arg, min_size = "4K", max_size = "256M";
	int steps = 9;
	std::string transports = "shm,shm-new,socket,pipe";
	std::string formats = "XRGB8888,RGB888,NV12";
	int warmup = 2, frames = 30, min_frames = 5;
	double point_seconds = 1.0;
	std::string image;
	bool pattern = false;
	std::string output;
	bool no_plot = false;
	int timeout_ms = 10000;
	int instances = 0;
	std::string pressure_size = "5785x8429";
	int pressure_frames = 3;
	std::string pressure_transport = "shm";
	int pressure_timeout_s = 300;
	std::string peer;
	std::string peer_compress = "none,lz4";
	int peer_timeout_s = 900;
	int compositor_pid = 0;
	bool peer_child = false;
	uint32_t seed = 1;
	bool no_verify = false;
	std::string verify_display; // peer child: the compositor's own display, for the screenshots
	std::string source; // peer child: "waypipe-lz4", in window titles
	bool test_wrong_reference = false; // testing aid: compare against inverted pixels
	int confirm_rounds = 3;
	double confirm_seconds = 0.25;
	// A shell command line starting a compositor (pixelport-compositor's options: " --socket
	// NAME" is appended) for each confirming round; empty: the rounds use the sweep's compositor.
	std::string confirm_compositor;
};

/** Adds every option of pixelport-sweep to `app`, stored in *o; returns --sizes (given even when empty). */
CLI::Option *add_options(CLI::App &app, Options *o);

/** "pixelport-sweep: error: MSG" on stderr, then exit(code). */
[[noreturn]] void die(int code, const std::string &msg);
/** The non-empty items of `s` split at `sep`. */
std::vector<std::string> split(const std::string &s, char sep);
/** Every item of a comma-separated list, empty ones included ("a,,b" has three). */
std::vector<std::string> split_all(const std::string &s);

/** What a byte size may be, for error messages. */
extern const char *const kBytesRange;
/** A frame size in bytes: "4096", "4K", "1.5M", "2G" (binary units), 1 byte to a wl_shm pool's 2 GiB. */
bool parse_bytes(const std::string &s, double *out);
/** "WxH", each 1..32767 (wl_surface coordinates are 16-bit in practice). */
bool parse_wxh(const std::string &s, int *w, int *h);

} // namespace pixelport::sweep
