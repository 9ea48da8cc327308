// Shared by the test clients (hostile_client, stream_client): how they tell the test what the
// compositor answered, and how they stay connected until the test is done with them.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "wayland_client.hpp"

namespace pixelport::test {

/** Flushes, waits one roundtrip, prints "error CODE INTERFACE", "disconnected WHY" or "ok". */
inline int report(client::Connection &conn) {
	conn.roundtrip();
	int err = wl_display_get_error(conn.display);
	if (err == EPROTO) {
		const wl_interface *interface = nullptr;
		uint32_t id = 0;
		uint32_t code = wl_display_get_protocol_error(conn.display, &interface, &id);
		printf("error %u %s\n", code, interface ? interface->name : "?");
	} else if (err != 0) {
		printf("disconnected %s\n", strerror(err));
	} else {
		printf("ok\n");
	}
	fflush(stdout);
	return 0;
}

/** Prints "holding" and answers the compositor until the connection ends (or we are killed). */
inline void hold(client::Connection &conn) {
	printf("holding\n");
	fflush(stdout);
	while (conn.dispatch_timeout(100) || wl_display_get_error(conn.display) == 0) {
	}
}

} // namespace pixelport::test
