// The stream's data fd (protocols/pixelport-stream-v1.xml, create_stream): what the plugin
// accepts before it keeps the fd, and how it reads each kind without ever blocking.
#pragma once

#include <wayland-server-core.h>

namespace pixelport {

/**
 * How the data fd is read: each way returns at once whatever the file's O_NONBLOCK says (the
 * client shares the open file description and may clear the flag at any time).
 */
enum class DataFdKind {
	Socket, // recvmsg(MSG_DONTWAIT)
	Pipe, // preadv2(RWF_NOWAIT)
	Fifo, // a named FIFO (no RWF_NOWAIT there): splice(SPLICE_F_NONBLOCK) into a relay pipe
};

/**
 * Whether the plugin may keep `fd` as a stream's data fd: only fds that end (a connected
 * AF_UNIX stream socket whose other end is not a connection the compositor keeps and that
 * carries no fds, or the read end of a pipe or FIFO opened read-only). Returns "" and sets
 * `kind` if so, else why not (a static string). The fd stays the caller's.
 */
const char *vet_data_fd(wl_display *display, int fd, DataFdKind *kind);

} // namespace pixelport
