#include "procfs.hpp"

#include <sys/socket.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace pixelport::client;
namespace fs = std::filesystem;

namespace pixelport::sweep {

uint64_t mem_available() {
	std::ifstream in("/proc/meminfo");
	std::string key;
	uint64_t kb = 0;
	std::string unit;
	while (in >> key >> kb >> unit) {
		if (key == "MemAvailable:") return kb * 1024;
	}
	return 0;
}

// VmHWM / VmRSS of a process in bytes (0 if unreadable).
void proc_rss(int pid, uint64_t *hwm, uint64_t *rss) {
	*hwm = *rss = 0;
	if (pid <= 0) return;
	std::ifstream in("/proc/" + std::to_string(pid) + "/status");
	std::string line;
	while (std::getline(in, line)) {
		unsigned long long kb = 0;
		if (sscanf(line.c_str(), "VmHWM: %llu", &kb) == 1) *hwm = kb * 1024;
		if (sscanf(line.c_str(), "VmRSS: %llu", &kb) == 1) *rss = kb * 1024;
	}
}

int peer_pid(Connection &conn) {
	ucred cred{};
	socklen_t len = sizeof(cred);
	if (getsockopt(wl_display_get_fd(conn.display), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) return cred.pid;
	return 0;
}

std::string proc_comm(int pid) {
	std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
	std::string s;
	std::getline(in, s);
	return s;
}

std::string self_exe() {
	std::error_code ec;
	return fs::read_symlink("/proc/self/exe", ec).string();
}

} // namespace pixelport::sweep
