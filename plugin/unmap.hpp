// Giving large mappings back without stalling the main loop.
//
// munmap of a mapping whose pages were touched frees its pages and page tables in the call:
// about 40 ms for a 256 MiB converted image and 18 ms for a 96 MiB pool read in full on this
// machine kind (strace -T). A client that leaves with such mappings would hold every other
// client that long, so large ones are unmapped on a thread of their own.
#pragma once

#include <cstddef>

namespace pixelport {

/** Mappings of at least this many bytes go to the unmapper thread. */
inline constexpr size_t kUnmapLaterBytes = size_t{4} << 20;

/**
 * munmap(data, size): at once when the mapping is smaller than kUnmapLaterBytes, else soon, on
 * the process's unmapper thread (started at the first use, joined at exit after unmapping
 * everything queued). The caller must not touch the range after this call.
 */
void unmap_later(void *data, size_t size);

} // namespace pixelport
