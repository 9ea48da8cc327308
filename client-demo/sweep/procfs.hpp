// What /proc tells about this machine and the compositor: free memory, resident memory, names.
#pragma once

#include <cstdint>
#include <string>

#include "wayland_client.hpp"

namespace pixelport::sweep {

/** MemAvailable from /proc/meminfo in bytes (0 if unreadable). */
uint64_t mem_available();
/** VmHWM / VmRSS of a process in bytes (0 if unreadable). */
void proc_rss(int pid, uint64_t *hwm, uint64_t *rss);
/** The pid of the compositor at the other end of the connection (SO_PEERCRED), 0 if unknown. */
int peer_pid(client::Connection &conn);
/** /proc/PID/comm, "" if unreadable. */
std::string proc_comm(int pid);
/** This program's path (/proc/self/exe). */
std::string self_exe();

} // namespace pixelport::sweep
