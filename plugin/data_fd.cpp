// The stream's data fd, vetted before the plugin keeps it: what kind it is, and that it ends.
#include "data_fd.hpp"

#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace pixelport {

namespace {

#ifdef SO_PASSRIGHTS
constexpr int kSoPassRights = SO_PASSRIGHTS;
#else
constexpr int kSoPassRights = 83; // include/uapi/asm-generic/socket.h, Linux 6.16
#endif

// Whether the socket's queued bytes carry SCM_RIGHTS. Peeking hands us copies of them, closed
// at once; stream reads stop at the first message with fds, so a peek of all queued bytes
// finds the first.
bool queued_fds(int fd) {
	int queued = 0;
	if (ioctl(fd, FIONREAD, &queued) != 0 || queued <= 0) return false;
	std::vector<uint8_t> bytes(static_cast<size_t>(queued));
	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 253)]; // SCM_MAX_FD
	iovec iov = {bytes.data(), bytes.size()};
	msghdr msg = {};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);
	if (recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0) return false;
	bool found = (msg.msg_flags & MSG_CTRUNC) != 0;
	for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
		found = true;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int passed;
			memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(passed);
		}
	}
	return found;
}

// The inode of the other end of the AF_UNIX socket with inode `ino`, 0 if unknown: asked of
// the kernel's sock_diag (what `ss -x` shows as the peer).
ino_t unix_peer_inode(ino_t ino) {
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0) return 0;
	struct {
		nlmsghdr header;
		unix_diag_req request;
	} ask = {};
	ask.header.nlmsg_len = sizeof(ask);
	ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	ask.header.nlmsg_flags = NLM_F_REQUEST;
	ask.request.sdiag_family = AF_UNIX;
	ask.request.udiag_ino = static_cast<uint32_t>(ino);
	ask.request.udiag_show = UDIAG_SHOW_PEER;
	ask.request.udiag_cookie[0] = ask.request.udiag_cookie[1] = ~0u; // INET_DIAG_NOCOOKIE: by inode
	ino_t peer = 0;
	alignas(nlmsghdr) char answer[1024];
	ssize_t n = -1;
	if (send(nl, &ask, sizeof(ask), 0) == static_cast<ssize_t>(sizeof(ask)))
		n = recv(nl, answer, sizeof(answer), 0);
	for (auto *h = reinterpret_cast<nlmsghdr *>(answer); n > 0 && NLMSG_OK(h, static_cast<size_t>(n));
		h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY) break;
		auto *msg = static_cast<unix_diag_msg *>(NLMSG_DATA(h));
		int len = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof(*msg)));
		for (auto *a = reinterpret_cast<rtattr *>(msg + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
			if (a->rta_type == UNIX_DIAG_PEER) peer = *static_cast<uint32_t *>(RTA_DATA(a));
		}
	}
	close(nl);
	return peer;
}

// Whether `fd` (a connected AF_UNIX socket whose peer is this process) is the other end of a
// connection the compositor keeps: bound to a name (it reached a socket the compositor
// listens on: the display's, or any other), or the peer of a client of the display (made
// from a socket pair, as WAYLAND_SOCKET clients are). A socket pair the compositor's own
// threads use in process is neither.
bool holds_a_connection(wl_display *display, int fd, bool named_peer) {
	if (named_peer) return true; // a path or an abstract name
	struct stat st;
	if (fstat(fd, &st) != 0) return true;
	ino_t other = unix_peer_inode(st.st_ino);
	if (other == 0) return true; // cannot tell: refuse
	wl_list *clients = wl_display_get_client_list(display);
	wl_client *client;
	wl_client_for_each(client, clients) {
		struct stat cst;
		if (fstat(wl_client_get_fd(client), &cst) == 0 && cst.st_ino == other) return true;
	}
	return false;
}

} // namespace

// Only fds that end: a connected AF_UNIX stream socket, or the read end of a pipe or FIFO
// opened read-only. Datagram and listening sockets, UDP, a FIFO opened read-write (the
// compositor would be a writer itself) never hang up. Returns "" if `fd` is fine, else why not.
const char *vet_data_fd(wl_display *display, int fd, DataFdKind *kind) {
	struct stat st;
	if (fstat(fd, &st) != 0) return "fstat failed";
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0) return "fcntl failed";
	if (S_ISFIFO(st.st_mode)) {
		if ((flags & O_ACCMODE) != O_RDONLY) return "a pipe or FIFO must be a read end opened read-only";
		*kind = DataFdKind::Pipe;
		return "";
	}
	if (!S_ISSOCK(st.st_mode)) return "the data fd must be a socket or a pipe";
	int domain = 0, type = 0, listening = 0;
	socklen_t len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX)
		return "not an AF_UNIX socket";
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
		return "not a SOCK_STREAM socket";
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening) return "a listening socket";
	sockaddr_storage peer = {};
	socklen_t peer_len = sizeof(peer);
	if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &peer_len) != 0) return "the socket is not connected";
	// A socket whose other end is this process (a client's own Wayland connection, a new
	// connection to the display's socket, or to any socket the compositor listens on) would
	// keep that connection open while the plugin holds it: libwayland would never see the
	// client hang up, and the client and all it made would stay forever.
	ucred peer_cred = {};
	len = sizeof(peer_cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer_cred, &len) != 0) return "SO_PEERCRED failed";
	if (peer_cred.pid == getpid() && holds_a_connection(display, fd, peer_len > offsetof(sockaddr_un, sun_path))) {
		return "the socket's other end is a connection of the compositor's";
	}
	// Fds in flight on the socket live while it does: a client's own connection sent over it
	// would keep that client alive the same way. Refuse them from now on (Linux 6.16's
	// SO_PASSRIGHTS; the sender's sendmsg fails) and refuse a socket that has some queued.
	int zero = 0;
	setsockopt(fd, SOL_SOCKET, kSoPassRights, &zero, sizeof(zero)); // older kernels: ENOPROTOOPT
	if (queued_fds(fd)) return "file descriptors were sent over it";
	*kind = DataFdKind::Socket;
	return "";
}

} // namespace pixelport
