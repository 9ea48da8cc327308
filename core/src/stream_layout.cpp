// The stream's packed wire layout and the assembler that puts received bytes in place.
#include "pixelport/core/stream_layout.hpp"

#include <algorithm>
#include <cstring>

#include "prepared.hpp"

namespace pixelport::core {

int32_t PackedLayout::group_luma_rows(int64_t g) const {
	const int64_t first = g * group_rows;
	return static_cast<int32_t>(std::min<int64_t>(group_rows, height - first));
}

int32_t PackedLayout::group_plane_rows(int64_t g, int plane) const {
	const int32_t vsub = format->planes[plane].vsub;
	return (group_luma_rows(g) + vsub - 1) / vsub;
}

uint64_t PackedLayout::group_size(int64_t g) const {
	if (g + 1 < groups) return group_bytes;
	uint64_t bytes = 0;
	for (int p = 0; p < format->num_planes; ++p)
		bytes += row_bytes[p] * static_cast<uint64_t>(group_plane_rows(g, p));
	return bytes;
}

Status packed_layout(uint32_t fourcc, int32_t width, int32_t height, PackedLayout *out) {
	const FormatInfo *fi = format_info(fourcc);
	if (!fi) return Status::UnknownFormat;
	if (width <= 0 || height <= 0) return Status::InvalidSize;
	PackedLayout l;
	l.format = fi;
	l.width = width;
	l.height = height;
	l.group_rows = fi->vsub;
	l.groups = (int64_t{height} + fi->vsub - 1) / fi->vsub;
	// Rows of each plane in a full group; every plane's vsub divides the format's.
	for (int p = 0; p < fi->num_planes; ++p) {
		l.row_bytes[p] = min_stride(*fi, p, static_cast<uint32_t>(width));
		const uint64_t rows = (uint64_t{fi->vsub} + fi->planes[p].vsub - 1) / fi->planes[p].vsub;
		uint64_t bytes;
		if (__builtin_mul_overflow(l.row_bytes[p], rows, &bytes) ||
			__builtin_add_overflow(l.group_bytes, bytes, &l.group_bytes))
			return Status::Overflow;
	}
	uint64_t full;
	if (__builtin_mul_overflow(l.group_bytes, static_cast<uint64_t>(l.groups - 1), &full) ||
		__builtin_add_overflow(full, l.group_size(l.groups - 1), &l.total_bytes))
		return Status::Overflow;
	*out = l;
	return Status::Ok;
}

Status check_stream_rect(const FormatInfo &fi, const Rect &r, int32_t image_width, int32_t image_height) {
	if (r.width <= 0 || r.height <= 0) return Status::InvalidSize;
	if (r.x < 0 || r.y < 0 || int64_t{r.x} + r.width > image_width || int64_t{r.y} + r.height > image_height)
		return Status::RectOutOfBounds;
	const bool on_grid = r.x % fi.hsub == 0 && r.y % fi.vsub == 0 &&
		(r.width % fi.hsub == 0 || r.x + r.width == image_width) &&
		(r.height % fi.vsub == 0 || r.y + r.height == image_height);
	return on_grid ? Status::Ok : Status::BadRowRange;
}

size_t packed_spans(const PackedLayout &l, int32_t x, int32_t y, const PlaneRef *planes, uint64_t offset,
	uint64_t max_bytes, iovec *out, size_t max_spans, uint64_t *covered) {
	const FormatInfo &fi = *l.format;
	uint64_t left = offset < l.total_bytes ? std::min(max_bytes, l.total_bytes - offset) : 0;
	size_t n = 0;
	uint64_t done = 0;
	if (left > 0 && max_spans > 0 && fi.num_planes == 1 && l.group_rows == 1 &&
		planes[0].stride == l.row_bytes[0]) {
		// Whole rows of a tight plane: one contiguous range.
		out[n++] = {planes[0].data + uint64_t(y) * planes[0].stride +
				uint64_t(x / fi.planes[0].hsub) * fi.planes[0].unit_bytes + offset,
			left};
		done = left;
		left = 0;
	}
	// Position of `offset`: group g, plane p, row `row` of the plane in the group, byte `in_row`.
	int64_t g = l.group_bytes ? static_cast<int64_t>(offset / l.group_bytes) : 0;
	uint64_t rem = offset - uint64_t(g) * l.group_bytes;
	int p = 0;
	while (left > 0 && p < fi.num_planes) {
		const uint64_t seg = l.row_bytes[p] * uint64_t(l.group_plane_rows(g, p));
		if (rem < seg) break;
		rem -= seg;
		++p;
	}
	int32_t row = left > 0 ? static_cast<int32_t>(rem / l.row_bytes[p]) : 0;
	uint64_t in_row = left > 0 ? rem % l.row_bytes[p] : 0;
	while (left > 0) {
		const PlaneInfo &pi = fi.planes[p];
		const int64_t plane_row = (int64_t{y} + g * l.group_rows) / pi.vsub + row;
		uint8_t *addr = planes[p].data + uint64_t(plane_row) * planes[p].stride +
			uint64_t(x / pi.hsub) * pi.unit_bytes + in_row;
		const uint64_t len = std::min(l.row_bytes[p] - in_row, left);
		if (n > 0 && static_cast<uint8_t *>(out[n - 1].iov_base) + out[n - 1].iov_len == addr) {
			out[n - 1].iov_len += len;
		} else {
			if (n == max_spans) break;
			out[n++] = {addr, len};
		}
		done += len;
		left -= len;
		in_row = 0;
		if (++row == l.group_plane_rows(g, p)) {
			row = 0;
			if (++p == fi.num_planes) {
				p = 0;
				++g;
			}
		}
	}
	if (covered) *covered = done;
	return n;
}

const char *assembly_status_str(AssemblyStatus s) {
	switch (s) {
	case AssemblyStatus::Complete: return "complete";
	case AssemblyStatus::NeedMore: return "more bytes expected";
	case AssemblyStatus::NotReady: return "no rectangle begun";
	case AssemblyStatus::TooManyBytes: return "more bytes than announced";
	case AssemblyStatus::InvalidRect: return "rectangle outside the image or off the chroma grid";
	case AssemblyStatus::WindowTooSmall: return "window smaller than a row group";
	}
	return "unknown status";
}

StreamAssembler::StreamAssembler() = default;
StreamAssembler::~StreamAssembler() = default;
StreamAssembler::StreamAssembler(StreamAssembler &&) noexcept = default;
StreamAssembler &StreamAssembler::operator=(StreamAssembler &&) noexcept = default;

Status StreamAssembler::init(uint32_t wire_fourcc, const DstImage &dst, const ConvertOptions &opt) {
	status_ = AssemblyStatus::NotReady;
	conv_.reset();
	dst_ = {};
	const FormatInfo *wi = format_info(wire_fourcc);
	const FormatInfo *di = format_info(dst.fourcc);
	if (!wi || !di) return Status::UnknownFormat;
	if (wire_fourcc == dst.fourcc && di->num_planes != 1)
		return Status::UnsupportedConversion; // in place only into one plane
	if (wire_fourcc != dst.fourcc) {
		auto pc = std::make_unique<detail::PreparedConversion>();
		if (Status s = detail::prepare_conversion(wire_fourcc, dst.fourcc, opt, pc.get()); s != Status::Ok)
			return s;
		conv_ = std::move(pc);
	}
	// The destination as convert_rows() checks it, once.
	if (dst.width <= 0 || dst.height <= 0) return Status::InvalidSize;
	if (!dst.data) return Status::NullPointer;
	const uint64_t row = min_stride(*di, 0, static_cast<uint32_t>(dst.width));
	if (dst.stride < row) return Status::StrideTooSmall;
	uint64_t need;
	if (__builtin_mul_overflow(uint64_t{dst.stride}, uint64_t(dst.height - 1), &need) ||
		__builtin_add_overflow(need, row, &need))
		return Status::Overflow;
	if (need > dst.size) return Status::BufferTooSmall;
	dst_ = dst;
	wire_ = wire_fourcc;
	dst_bpp_ = di->planes[0].unit_bytes;
	return Status::Ok;
}

AssemblyStatus StreamAssembler::begin(const Rect &r, std::span<uint8_t> window) {
	status_ = AssemblyStatus::NotReady;
	if (!dst_.data) return status_;
	const FormatInfo &wi = *format_info(wire_);
	PackedLayout l;
	if (check_stream_rect(wi, r, dst_.width, dst_.height) != Status::Ok ||
		packed_layout(wire_, r.width, r.height, &l) != Status::Ok)
		return AssemblyStatus::InvalidRect;
	if (conv_ && window.size() < l.group_bytes) return AssemblyStatus::WindowTooSmall;
	layout_ = l;
	rect_ = r;
	window_ = window;
	fill_ = 0;
	received_ = 0;
	offered_ = 0;
	groups_done_ = 0;
	rows_done_ = 0;
	status_ = AssemblyStatus::NeedMore;
	return status_;
}

int StreamAssembler::writable(iovec *iov, int max_iov, uint64_t max_bytes) {
	offered_ = 0;
	if (status_ != AssemblyStatus::NeedMore || max_iov <= 0) return 0;
	const uint64_t want = std::min(max_bytes, layout_.total_bytes - received_);
	if (want == 0) return 0;
	if (conv_) {
		iov[0] = {window_.data() + fill_, std::min<uint64_t>(want, window_.size() - fill_)};
		offered_ = iov[0].iov_len;
		return offered_ > 0 ? 1 : 0;
	}
	const PlaneRef plane{dst_.data, dst_.stride};
	const size_t n = packed_spans(
		layout_, rect_.x, rect_.y, &plane, received_, want, iov, static_cast<size_t>(max_iov), &offered_);
	return static_cast<int>(n);
}

AssemblyStatus StreamAssembler::arrived(uint64_t n) {
	if (status_ != AssemblyStatus::NeedMore) return status_;
	if (n > offered_) {
		status_ = AssemblyStatus::TooManyBytes;
		return status_;
	}
	offered_ = 0;
	received_ += n;
	if (conv_) {
		fill_ += n;
		take_groups();
	} else {
		// In place: rows are done once their last byte is (every group is one row).
		rows_done_ = static_cast<int32_t>(std::min<uint64_t>(
			received_ / layout_.group_bytes * uint64_t(layout_.group_rows), uint64_t(layout_.height)));
	}
	if (received_ == layout_.total_bytes) status_ = AssemblyStatus::Complete;
	return status_;
}

AssemblyStatus StreamAssembler::feed(std::span<const uint8_t> bytes) {
	if (status_ != AssemblyStatus::NeedMore) return status_;
	if (bytes.size() > layout_.total_bytes - received_) {
		status_ = AssemblyStatus::TooManyBytes;
		return status_;
	}
	while (!bytes.empty()) {
		iovec iov[16];
		const int n = writable(iov, 16, bytes.size());
		if (n == 0) break; // cannot happen: the window always has room for the next group
		uint64_t taken = 0;
		for (int i = 0; i < n; ++i) {
			std::memcpy(iov[i].iov_base, bytes.data() + taken, iov[i].iov_len);
			taken += iov[i].iov_len;
		}
		arrived(taken);
		bytes = bytes.subspan(taken);
	}
	return status_;
}

// Converts every complete group in the window into the destination and keeps the rest.
void StreamAssembler::take_groups() {
	const PackedLayout &l = layout_;
	const FormatInfo &fi = *l.format;
	uint8_t *const win = window_.data();
	size_t off = 0;
	SrcImage src;
	src.fourcc = wire_;
	src.width = l.width;
	DstImage dst;
	dst.fourcc = dst_.fourcc;
	dst.width = l.width;
	dst.stride = dst_.stride;
	const uint64_t dst_row = uint64_t(l.width) * dst_bpp_;
	auto dst_rows = [&](int32_t rows) {
		dst.height = rows;
		dst.data = dst_.data + uint64_t(rect_.y + rows_done_) * dst_.stride + uint64_t(rect_.x) * dst_bpp_;
		dst.size = dst_.stride * size_t(rows - 1) + dst_row;
	};
	if (fi.num_planes == 1 && l.group_rows == 1) {
		// Packed rows: every complete row in the window in one call.
		const uint64_t row = l.row_bytes[0];
		const auto rows = static_cast<int32_t>(fill_ / row);
		if (rows > 0) {
			src.height = rows;
			src.planes[0] = {win, row, row * uint64_t(rows)};
			dst_rows(rows);
			detail::convert_rows_prepared(*conv_, src, dst, 0, rows);
			off = row * uint64_t(rows);
			rows_done_ += rows;
			groups_done_ += rows;
		}
	} else {
		// Planar or subsampled: one call per group (its luma rows, then its chroma rows).
		while (groups_done_ < l.groups) {
			const uint64_t gb = l.group_size(groups_done_);
			if (fill_ - off < gb) break;
			const int32_t rows = l.group_luma_rows(groups_done_);
			src.height = rows;
			const uint8_t *p = win + off;
			for (int i = 0; i < fi.num_planes; ++i) {
				const uint64_t n = l.row_bytes[i] * uint64_t(l.group_plane_rows(groups_done_, i));
				src.planes[i] = {p, l.row_bytes[i], n};
				p += n;
			}
			dst_rows(rows);
			detail::convert_rows_prepared(*conv_, src, dst, 0, rows);
			off += gb;
			rows_done_ += rows;
			++groups_done_;
		}
	}
	if (off > 0) {
		std::memmove(win, win + off, fill_ - off); // the partial group, for the next bytes
		fill_ -= off;
	}
}

} // namespace pixelport::core
