// The pixelport stream's wire layout (protocols/pixelport-stream-v1.xml, pp_stream_v1.write)
// and the receiver's assembler. No Wayland, no wlroots, no file descriptors: the caller reads
// or writes the bytes, this module says where they go and converts them.
//
// Wire order of a rectangle: row groups from the top. A group is the format's vsub rows (2 for
// 4:2:0, 1 otherwise; the last group of a rectangle reaching an odd bottom edge has fewer):
// the group's rows of plane 0, then its rows of each further plane in plane order (one row
// each: a chroma plane's vsub is the format's). Every plane row is tightly packed:
// ceil(width / hsub) units of unit_bytes (min_stride()). No padding anywhere, so every group
// but the last has the same size and starts at group index x group size.
//
// Units: sizes and offsets in bytes (uint64_t, overflow checked), widths, heights and
// coordinates in pixels. Nothing here keeps a pointer after a call returns, except
// StreamAssembler, which keeps the destination and window given to it (see there).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "pixelport/core/convert.hpp"
#include "pixelport/core/format.hpp"

namespace pixelport::core {

// The packed size of a width x height rectangle of one format.
struct PackedLayout {
	const FormatInfo *format = nullptr;
	int32_t width = 0, height = 0; // pixels
	int32_t group_rows = 1; // rows of plane 0 in a full group (the format's vsub)
	int64_t groups = 0; // ceil(height / group_rows)
	uint64_t row_bytes[kMaxPlanes] = {}; // one packed row of each plane
	uint64_t group_bytes = 0; // one full group
	uint64_t total_bytes = 0; // the rectangle: what pp_stream_v1.write's length must be

	// Rows of plane 0 in group g (group_rows, fewer for a short last group).
	int32_t group_luma_rows(int64_t g) const;
	// Rows of `plane` in group g: ceil(group_luma_rows(g) / the plane's vsub).
	int32_t group_plane_rows(int64_t g, int plane) const;
	// Bytes of group g; it starts at wire offset g * group_bytes.
	uint64_t group_size(int64_t g) const;
};

// Fills `out` for a width x height rectangle of `fourcc`. Errors: UnknownFormat,
// InvalidSize (width or height <= 0), Overflow (a size does not fit in 64 bits).
Status packed_layout(uint32_t fourcc, int32_t width, int32_t height, PackedLayout *out);

// Whether rectangle r of an image_width x image_height image of format `info` can be written
// on the stream: Ok; InvalidSize (width or height <= 0); RectOutOfBounds (not inside the
// image); BadRowRange (x or y off the chroma grid, or width / height off it without reaching
// the image's right / bottom edge).
Status check_stream_rect(const FormatInfo &info, const Rect &r, int32_t image_width, int32_t image_height);

// One plane of an image in memory: its row 0, pixel 0 at `data`, `stride` bytes between rows.
struct PlaneRef {
	uint8_t *data = nullptr;
	size_t stride = 0;
};

// Where the wire bytes [offset, offset + max_bytes) of the rectangle `layout` at (x, y) of an
// image lie in that image's memory (`planes`: layout.format->num_planes planes, in that
// format). Fills at most max_spans iovecs in wire order, merging ranges adjacent in memory
// (full-width rows of a tight plane become one range). Returns the number filled; *covered
// (if not null) is the bytes they cover: max_bytes, or less when the rectangle ends or
// max_spans runs out. The caller guarantees that the planes hold the rectangle and that x and
// y are on the chroma grid (check_stream_rect()); nothing is checked here.
size_t packed_spans(const PackedLayout &layout, int32_t x, int32_t y, const PlaneRef *planes, uint64_t offset,
	uint64_t max_bytes, iovec *out, size_t max_spans, uint64_t *covered);

// What a StreamAssembler says about a rectangle.
enum class AssemblyStatus : uint8_t {
	Complete = 0, // every byte of the rectangle arrived and is in the destination
	NeedMore, // every byte so far is in (converted up to the last complete group)
	NotReady, // init() failed or no rectangle was begun
	TooManyBytes, // more bytes than the rectangle packs to, or than writable() offered
	InvalidRect, // begin(): check_stream_rect() refused the rectangle
	WindowTooSmall, // begin(): the window cannot hold one row group
};

// Short English text for logs, e.g. "more bytes than announced".
const char *assembly_status_str(AssemblyStatus s);

namespace detail {
struct PreparedConversion;
}

// Receives the packed bytes of rectangles of one destination image, in any split, and puts
// them in place: straight into the destination when the wire format is the destination's
// (writable() then points into it, for readv), else through a caller-owned window in which
// every row group is converted into the destination as soon as it is complete. The kernel,
// ISA and colour coefficients are chosen once, by init(); nothing is allocated after init().
//
//   StreamAssembler a;
//   if (a.init(fourcc::NV12, storage, opts) != Status::Ok) ...;        // once per image
//   a.begin(rect, window);                                               // per rectangle
//   while (a.status() == AssemblyStatus::NeedMore) {
//           iovec iov[64];
//           int n = a.writable(iov, 64, budget);
//           ssize_t got = readv(fd, iov, n);                             // or feed(bytes)
//           if (got > 0 && a.arrived(got) > AssemblyStatus::NeedMore) error(...);
//   }
class StreamAssembler {
public:
	StreamAssembler();
	~StreamAssembler();
	StreamAssembler(StreamAssembler &&) noexcept;
	StreamAssembler &operator=(StreamAssembler &&) noexcept;

	// Sets the destination image (one plane; its memory is the caller's and must stay valid
	// while rectangles are assembled into it) and the wire format. With wire_fourcc ==
	// dst.fourcc the bytes are copied in place; otherwise the conversion wire -> dst.fourcc
	// with `opt` is prepared now (PIXELPORT_FORCE_SCALAR is read here, not per group).
	// Errors as convert_rows(): UnknownFormat, UnsupportedConversion, InvalidSize,
	// NullPointer, StrideTooSmall, BufferTooSmall, Overflow, InvalidOption.
	Status init(uint32_t wire_fourcc, const DstImage &dst, const ConvertOptions &opt = {});

	// Starts rectangle r (image coordinates) of the destination; any rectangle before it is
	// abandoned. `window` (only used when converting; at least one row group, layout().
	// group_bytes) is the caller's scratch: it must stay valid and untouched until the
	// rectangle is complete or abandoned. Returns NeedMore, or NotReady / InvalidRect /
	// WindowTooSmall (the rectangle is then not begun).
	AssemblyStatus begin(const Rect &r, std::span<uint8_t> window = {});

	// Where the next bytes of the rectangle go: at most max_iov iovecs covering at most
	// max_bytes bytes, never past the rectangle's last byte (into the destination, or into
	// the window's free part). Returns how many were filled; 0 when there is nothing to
	// receive (complete, not begun, max_bytes 0).
	int writable(iovec *iov, int max_iov, uint64_t max_bytes);
	// `n` bytes were written to the start of what the last writable() returned. Places or
	// converts every row group now complete. NeedMore, Complete, or TooManyBytes (n larger
	// than that offer; nothing is taken and the rectangle is abandoned).
	AssemblyStatus arrived(uint64_t n);
	// Copies `bytes` in and converts every complete row group. NeedMore, Complete, or
	// TooManyBytes (more bytes than the rectangle still needs: none is taken and the
	// rectangle is abandoned).
	AssemblyStatus feed(std::span<const uint8_t> bytes);

	// NeedMore while a rectangle is under way, Complete after its last byte, else the error.
	AssemblyStatus status() const { return status_; }
	const PackedLayout &layout() const { return layout_; }
	uint64_t received() const { return received_; } // bytes of the rectangle so far
	int32_t rows_done() const { return rows_done_; } // its rows in the destination so far
	bool converts() const { return conv_ != nullptr; }

private:
	void take_groups();

	DstImage dst_{};
	uint32_t wire_ = 0;
	int dst_bpp_ = 0;
	std::unique_ptr<detail::PreparedConversion> conv_;
	PackedLayout layout_{};
	Rect rect_{};
	std::span<uint8_t> window_;
	size_t fill_ = 0; // bytes in the window not yet converted
	uint64_t received_ = 0;
	uint64_t offered_ = 0; // what the last writable() covered
	int64_t groups_done_ = 0;
	int32_t rows_done_ = 0;
	AssemblyStatus status_ = AssemblyStatus::NotReady;
};

} // namespace pixelport::core
