// Shared fixtures for the timing tests: a scratch directory, file reading, sample records.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pixelport/timing/records.hpp"

namespace pixelport::timing::test {

// A fresh directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
protected:
	void SetUp() override {
		const char *tmp = std::getenv("TMPDIR");
		std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/pixelport-timing-XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
		dir_ = tmpl;
	}
	void TearDown() override {
		std::error_code ec;
		std::filesystem::remove_all(dir_, ec);
	}
	std::string path(const std::string &name) const { return (dir_ / name).string(); }

	std::filesystem::path dir_;
};

inline std::string read_file(const std::string &path) {
	std::ifstream in(path, std::ios::binary);
	std::stringstream ss;
	ss << in.rdbuf();
	return ss.str();
}

inline std::vector<std::string> read_lines(const std::string &path) {
	std::vector<std::string> lines;
	std::ifstream in(path);
	for (std::string line; std::getline(in, line);) lines.push_back(line);
	return lines;
}

inline void write_file(const std::string &path, const std::string &text) {
	std::ofstream(path, std::ios::binary) << text;
}

// A fully timed shm commit: convert takes convert_ns, upload 50 µs, present 8 ms.
inline CommitRecord sample_commit(std::uint64_t seq, std::uint64_t t0, std::uint64_t convert_ns = 1000) {
	CommitRecord r;
	r.surface_id = 12;
	r.pid = 4242;
	r.app_id = "foot";
	r.title = "~ — shell";
	r.seq = seq;
	r.transport = Transport::ShmReused;
	r.format = fourcc('X', 'R', '2', '4');
	r.width = 800;
	r.height = 600;
	r.bytes = 800u * 600u * 4u;
	r.damage_bytes = 4096;
	r.t_commit = t0;
	r.t_convert_start = t0 + 100;
	r.t_convert_end = t0 + 100 + convert_ns;
	r.t_upload_start = t0 + 2000;
	r.t_upload_end = t0 + 52000;
	r.t_present = t0 + 8'000'000;
	r.output = "HEADLESS-1";
	return r;
}

inline FrameRecord sample_frame(std::uint64_t seq, std::uint64_t t0, std::uint64_t render_ns = 300'000) {
	FrameRecord f;
	f.output = "HEADLESS-1";
	f.seq = seq;
	f.t_render_start = t0;
	f.t_render_end = t0 + render_ns;
	f.t_present = t0 + 4'000'000;
	f.refresh_ns = 16'666'666;
	return f;
}

} // namespace pixelport::timing::test
