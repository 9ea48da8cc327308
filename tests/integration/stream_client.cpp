// pixelport-stream-client: exercises pixelport-stream-v1 the ways a test needs, well-behaved
// or not, and reports: "error CODE INTERFACE" for a protocol error, "ok" otherwise, and
// "holding" when it then stays connected until killed.
// Usage: pixelport-stream-client MODE [ARG...]
//
// Attack modes (each prints "attacking" once the attack is in place, or a verdict):
//   block-pipe HOLD_MS, block-socket HOLD_MS: keeps its own copy of the data fd, clears
//     O_NONBLOCK on it (the flag belongs to the shared open file description), announces 16384
//     bytes on a 64x64 XRGB8888 buffer, sends 100, prints "attacking", holds HOLD_MS, exits.
//   dgram-socket, udp-socket, listening-socket, fifo-read-write, seqpacket-socket,
//     unconnected-socket: create_stream with an fd of that kind (must get invalid_fd).
//   fifo-frame FIFO_PATH: a 32x32 frame through a FIFO opened read-only (must be shown).
//   many-streams N: N streams with an announced, never-sent write each (our ends stay open),
//     then "ok" and "holding".
//   too-many-streams: streams until the compositor's cap (limit_exceeded on the manager).
//   orphan-cycles CYCLES STREAMS GO_FILE: each cycle a child process connects, creates STREAMS
//     streams on pipes whose write ends this (parent) process keeps, announces a 1024x512
//     XRGB8888 frame on each, destroys them and exits without a goodbye. Prints "connected"
//     first (its own connection is up) and starts the cycles once GO_FILE exists, then prints
//     "ok" and "holding".
//   big-buffers N [small]: one stream, N buffers of the largest size the limits event allows
//     (small: 64x64), one roundtrip: prints "created N in US" (the roundtrip's time) then the
//     verdict.
//   buffer-over-limit: one buffer one row over max_buffer_bytes (limit_exceeded).
//   role-after-held-commit [shm]: commits a stream buffer whose bytes are not sent (or a
//     wl_shm buffer, for comparison) on a surface with no role yet, then makes it an
//     xdg_toplevel (initial commit), sends the bytes, and shows a 32x32 frame (seed 7) on it:
//     the fuzzer's sequence that made wlroots abort.
//   unmap-behind-held-commit [shm|large]: on a configured toplevel, commits a stream buffer
//     whose bytes are not sent (a small wl_shm buffer for comparison, or a 1280x1024 NV12 one
//     the plugin converts in bands), then at once a null attach, a wl_shm buffer (stock wlroots:
//     xdg_surface error 3, unconfigured after the unmap) and a null attach; then sends the
//     bytes: the fuzzer's sequence (seed 1796096318) that made wlroots abort.
//   role-destroyed-behind-held-commit [shm|large] toplevel|xdg-surface: the same held commit,
//     then the toplevel is destroyed and a new one made of the same xdg_surface, committed with
//     a null attach ("configured" once its first configure comes), or the xdg_surface is
//     destroyed too and a new one made (stock wlroots: xdg_wm_base error 3, the surface has a
//     buffer); then the bytes are sent.
//   orphan-behind-held-commit SENT: on a configured toplevel, a 16x16 stream commit whose bytes
//     are not sent; the stream destroyed ("held" if its commit still waits), SENT of its 1024
//     bytes sent and the pipe closed ("held commit presented"), then a 32x32 wl_shm frame
//     (seed 7, "next presented"); the verdict, then "holding".
//   burst-frames N W H: N W x H NV12 frames on one socket stream, each once the last was
//     presented, as much of each as the socket holds queued before its write is announced (all
//     of it with CAP_NET_ADMIN): prints "burst BYTES presented K", then the verdict.
// The other modes: one function each in stream_client_*.cpp, named after the mode.
#include <string>

#include "client_modes.hpp"
#include "stream_client.hpp"

using namespace pixelport;
using namespace pixelport::stream_client;
using pixelport::test::ModeArgs;
using pixelport::test::ModeTable;

namespace {

const ModeTable kModes = {
	{"block-pipe", mode_block_pipe},
	{"block-socket", mode_block_socket},
	{"dgram-socket", mode_dgram_socket},
	{"seqpacket-socket", mode_seqpacket_socket},
	{"udp-socket", mode_udp_socket},
	{"unconnected-socket", mode_unconnected_socket},
	{"listening-socket", mode_listening_socket},
	{"fifo-read-write", mode_fifo_read_write},
	{"fifo-frame", mode_fifo_frame},
	{"many-streams", mode_many_streams},
	{"too-many-streams", mode_too_many_streams},
	{"orphan-cycles", mode_orphan_cycles},
	{"big-buffers", mode_big_buffers},
	{"role-after-held-commit", mode_role_after_held_commit},
	{"unmap-behind-held-commit", mode_unmap_behind_held_commit},
	{"role-destroyed-behind-held-commit", mode_role_destroyed_behind_held_commit},
	{"orphan-behind-held-commit", mode_orphan_behind_held_commit},
	{"buffer-over-limit", mode_buffer_over_limit},
	{"not-a-socket", mode_not_a_socket},
	{"write-end-of-pipe", mode_write_end_of_pipe},
	{"unknown-format", mode_unknown_format},
	{"zero-size", mode_zero_size},
	{"negative-size", mode_negative_size},
	{"huge-size", mode_huge_size},
	{"rect-outside", mode_rect_outside},
	{"rect-overflowing", mode_rect_overflowing},
	{"rect-off-chroma-grid", mode_rect_off_chroma_grid},
	{"bad-length", mode_bad_length},
	{"foreign-buffer", mode_foreign_buffer},
	{"too-many-buffers", mode_too_many_buffers},
	{"too-many-bytes-in-flight", mode_too_many_bytes_in_flight},
	{"eof-mid-write", mode_eof_mid_write},
	{"extra-bytes", mode_extra_bytes},
	{"destroy-in-flight", mode_destroy_in_flight},
	{"stall", mode_stall},
	{"disconnect-mid-frame", mode_disconnect_mid_frame},
	{"held-order", mode_held_order},
	{"interleave", mode_interleave},
	{"churn", mode_churn},
	{"burst-frames", mode_burst_frames},
};

// "shm" comparison runs need no stream global: they also run against stock wlroots.
bool connect(const std::string &mode, const ModeArgs &args, std::string *error) {
	bool shm_only = args.is(0, "shm") && mode.find("-behind-held-commit") != std::string::npos;
	if (!conn.connect(error)) return false;
	if (conn.stream_manager == nullptr && !shm_only) *error = "no pixelport stream global";
	return conn.stream_manager != nullptr || shm_only;
}

} // namespace

int main(int argc, char *argv[]) { return test::run_mode(argc, argv, kModes, connect); }
