// Giving mappings and files back without stalling the main loop.
//
// munmap of a mapping whose pages were touched frees its pages and page tables in the call:
// about 40 ms for a 256 MiB converted image and 18 ms for a 96 MiB pool read in full on this
// machine kind (strace -T); closing the last fd of a client's memfd frees the file's pages the
// same way. A client that leaves with such mappings, or with thousands of small ones, would
// hold every other client that long, so all of them are given back on a thread of their own.
#pragma once

#include <cstddef>

namespace pixelport {

/**
 * munmap(data, size) soon, on the process's unmapper thread (started at the first use,
 * joined at exit after doing everything queued). The caller must not touch the range after
 * this call. Constant time on the calling thread.
 */
void unmap_later(void *data, size_t size);

/** close(fd) soon, on the same thread, after the mappings queued before it. */
void close_later(int fd);

/**
 * malloc_trim(0) soon, on the same thread: gives the heap's free pages back to the kernel (a
 * client that made many small objects leaves them interleaved with live ones, so the heap's top
 * rarely shrinks by itself).
 */
void trim_later();

/** Starts the thread now (the plugin's creation), so its stack is not a mapping a client made. */
void unmapper_start();

} // namespace pixelport
