// pixelport-conversion-attack's shared parts. The program is split by concern:
// conversion_attack.cpp (the usage, main), conversion_attack_common.cpp (the helpers below),
// and the attacks: conversion_attack_single.cpp, conversion_attack_children.cpp,
// conversion_attack_frames.cpp, conversion_attack_storms.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "wayland_client.hpp"

namespace pixelport::conversion_attack {

using namespace pixelport::client;

/** The client's one connection. */
extern Connection conn;

/** Rounds of the children attacks. */
constexpr int kRounds = 8;

/** A buffer of one uniform byte `value` in a pool of its own (NV12, or XRGB8888 without it). */
wl_buffer *uniform_buffer(ShmPool *pool, int w, int h, uint32_t format, uint8_t value, std::string *error);

// ---- the attacks (each MODE N WIDTH HEIGHT; exit status as main's) ----
// conversion_attack_single.cpp
int single_buffer_attack(const std::string &mode, int n, int w, int h);
// conversion_attack_children.cpp
int children_attack(const std::string &mode, int n, int w, int h);
// conversion_attack_frames.cpp
int resize_attack(int n, int w, int h);
int frames_attack(const std::string &mode, int n, int w, int h);
int beside_video_attack(int n, int w, int h);
// conversion_attack_storms.cpp
int storm_attack(const std::string &mode, int n, int w, int h);

} // namespace pixelport::conversion_attack
