// pixelport-fuzz-client: fds of every kind a client can pass.
#include <arpa/inet.h>
#include <drm_fourcc.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "pixelport-timing-v1-client-protocol.h"
#include "pixelport/core/format.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

#include "fuzz_client.hpp"

namespace pixelport::fuzz_client {

int g_connection_fd = -1;

const char *fd_kind_name(FdKind k) {
	static const char *names[] = {"memfd", "sealed-memfd", "pipe-read", "pipe-write", "socket-stream",
		"socket-dgram", "socket-seqpacket", "dev-null", "directory", "eventfd", "fifo-read", "fifo-rdwr", "udp",
		"listening", "own-connection", "display-socket", "carrying-own-connection"};
	return names[static_cast<int>(k)];
}

// Kinds pixelport-stream-v1 documents (and ones it refuses today); the rest are "odd".
bool odd_stream_kind(FdKind k) {
	return k == FdKind::SocketDgram || k == FdKind::SocketSeqpacket || k == FdKind::FifoReadWrite ||
		k == FdKind::UdpSocket || k == FdKind::ListeningSocket || k == FdKind::OwnConnection ||
		k == FdKind::DisplaySocket || k == FdKind::CarryingOwnConnection;
}

std::string fifo_dir() {
	const char *d = getenv("XDG_RUNTIME_DIR");
	return d && *d ? d : "/tmp";
}

MadeFd make_fd(FdKind k, size_t memfd_size) {
	MadeFd m;
	int p[2];
	switch (k) {
	case FdKind::Memfd:
	case FdKind::SealedMemfd: {
		bool sealed = k == FdKind::SealedMemfd;
		m.pass = memfd_create("pp-fuzz", MFD_CLOEXEC | (sealed ? MFD_ALLOW_SEALING : 0));
		if (m.pass >= 0 && ftruncate(m.pass, static_cast<off_t>(memfd_size)) == 0) m.size = memfd_size;
		if (sealed) fcntl(m.pass, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
		break;
	}
	case FdKind::PipeRead:
	case FdKind::PipeWrite:
		if (pipe2(p, O_CLOEXEC) == 0) {
			bool read_end = k == FdKind::PipeRead;
			m.pass = read_end ? p[0] : p[1];
			m.peer = read_end ? p[1] : p[0];
		}
		break;
	case FdKind::SocketStream:
	case FdKind::SocketDgram:
	case FdKind::SocketSeqpacket: {
		int type = k == FdKind::SocketStream ? SOCK_STREAM
			: k == FdKind::SocketDgram   ? SOCK_DGRAM
						     : SOCK_SEQPACKET;
		if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, p) == 0) {
			m.pass = p[0];
			m.peer = p[1];
		}
		break;
	}
	case FdKind::DevNull: m.pass = open("/dev/null", O_RDWR | O_CLOEXEC); break;
	case FdKind::Directory: m.pass = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC); break;
	case FdKind::Eventfd: m.pass = eventfd(1, EFD_CLOEXEC); break;
	case FdKind::FifoRead:
	case FdKind::FifoReadWrite: {
		static int counter = 0;
		std::string path =
			fifo_dir() + "/pp-fuzz-fifo-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
		if (mkfifo(path.c_str(), 0600) == 0) {
			m.pass = open(
				path.c_str(), (k == FdKind::FifoRead ? O_RDONLY : O_RDWR) | O_NONBLOCK | O_CLOEXEC);
			m.peer = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
			unlink(path.c_str());
		}
		break;
	}
	case FdKind::UdpSocket: m.pass = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); break;
	case FdKind::ListeningSocket: {
		m.pass = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sockaddr_un addr = {};
		addr.sun_family = AF_UNIX;
		// An address of only the family autobinds to a free abstract name.
		if (m.pass >= 0 && bind(m.pass, reinterpret_cast<sockaddr *>(&addr), sizeof(sa_family_t)) == 0) {
			listen(m.pass, 4);
		}
		break;
	}
	case FdKind::OwnConnection: m.pass = fcntl(g_connection_fd, F_DUPFD_CLOEXEC, 0); break;
	case FdKind::DisplaySocket: {
		const char *name = getenv("WAYLAND_DISPLAY");
		m.pass = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sockaddr_un addr = {};
		addr.sun_family = AF_UNIX;
		snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%s", fifo_dir().c_str(), name ? name : "wayland-0");
		if (m.pass >= 0) connect(m.pass, reinterpret_cast<sockaddr *>(&addr), sizeof(addr));
		break;
	}
	case FdKind::CarryingOwnConnection:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == 0) {
			m.pass = p[0];
			m.peer = p[1];
			client::send_fd(m.peer, g_connection_fd);
		}
		break;
	case FdKind::Count: break;
	}
	if (m.peer >= 0) fcntl(m.peer, F_SETFL, fcntl(m.peer, F_GETFL) | O_NONBLOCK);
	return m;
}

} // namespace pixelport::fuzz_client
