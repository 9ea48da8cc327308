// Internal: scalar row kernels as templates, one per (source, destination) pair.
//
// Included by each kernels_<isa>.cpp inside an anonymous namespace, so every
// instruction set gets its own copy compiled with its own flags (no ODR sharing of
// AVX2 code with the scalar file). The scalar file builds these with
// -fno-tree-vectorize and they are the reference; the SIMD files let the compiler
// vectorise them and add hand-written rows for the hot pairs. Because every file
// does the same integer (and exactly representable float) arithmetic, results are
// bit-identical across instruction sets.
//
// No standard library calls here: inline std functions would be merged across
// files compiled with different -m flags.

inline uint16_t ld16(const uint8_t *p) {
	uint16_t v;
	__builtin_memcpy(&v, p, 2);
	return v;
}
inline uint32_t ld32(const uint8_t *p) {
	uint32_t v;
	__builtin_memcpy(&v, p, 4);
	return v;
}
inline void st32(uint8_t *p, uint32_t v) { __builtin_memcpy(p, &v, 4); }

// ---- channel conversions ---------------------------------------------------------------
inline uint32_t c5to8(uint32_t v) { return v << 3 | v >> 2; } // bit replication: 31 -> 255
inline uint32_t c6to8(uint32_t v) { return v << 2 | v >> 4; }
inline uint32_t c4to8(uint32_t v) { return v * 17; }
inline uint32_t c2to8(uint32_t v) { return v * 85; }
inline uint32_t c1to8(uint32_t v) { return v * 255; }
// round(v * 255 / 1023) for v in [0, 1023], exactly (checked over all v in the tests).
inline uint32_t c10to8(uint32_t v) { return (v * 1021 + 2041) >> 12; }
inline uint32_t c2to2(uint32_t v) { return v; }

// IEEE half -> float, exact for every finite half. Normal halves by rebiasing the
// exponent, subnormal ones as mantissa * 2^-24: no float subnormal is ever formed
// (those cost ~100 cycles each on x86). Exponent 31 (Inf/NaN) becomes a finite
// value >= 2^16, which clamps to 1.
inline float half_to_float(uint32_t h) {
	const float normal = __builtin_bit_cast(float, ((h & 0x7fffu) << 13) + (112u << 23));
	const float sub = static_cast<float>(static_cast<int32_t>(h & 0x3ffu)) * 0x1p-24f;
	const float mag = (h & 0x7c00u) ? normal : sub;
	return (h & 0x8000u) ? 0.0f : mag; // negatives only ever clamp to 0
}
// Clamp to [0, 1] then round(v * max), ties up. f * max is exact in float for
// max <= 1023 and 11-bit half mantissas, so every ISA gets the same result.
template <int Bits>
inline uint32_t half_to_n(uint32_t h) {
	float f = half_to_float(h);
	f = f > 0.0f ? f : 0.0f;
	f = f < 1.0f ? f : 1.0f;
	return static_cast<uint32_t>(f * static_cast<float>((1 << Bits) - 1) + 0.5f);
}

inline int32_t clampi(int32_t v, int32_t hi) { return v < 0 ? 0 : (v > hi ? hi : v); }

// ---- destinations -------------------------------------------------------------------------
template <uint32_t Code, int CB, bool Alpha, bool Bgr>
struct Dst {
	static constexpr uint32_t fourcc = Code;
	static constexpr int cb = CB; // colour bits
	static constexpr int ab = CB == 8 ? 8 : 2; // alpha bits
	static constexpr uint32_t amax = (1u << ab) - 1;
	static constexpr bool alpha = Alpha;
	static constexpr bool bgr = Bgr; // red in the low bits
	static void put(uint8_t *d, int32_t i, uint32_t r, uint32_t g, uint32_t b, uint32_t a) {
		const uint32_t lo = Bgr ? r : b, hi = Bgr ? b : r;
		st32(d + 4 * static_cast<int64_t>(i), (Alpha ? a : amax) << (3 * CB) | hi << (2 * CB) | g << CB | lo);
	}
};
using DArgb8888 = Dst<fourcc::ARGB8888, 8, true, false>;
using DXrgb8888 = Dst<fourcc::XRGB8888, 8, false, false>;
using DAbgr2101010 = Dst<fourcc::ABGR2101010, 10, true, true>;
using DXbgr2101010 = Dst<fourcc::XBGR2101010, 10, false, true>;

// ---- packed RGB sources ------------------------------------------------------------------
struct Px {
	uint32_t r, g, b, a;
};

// Byte-per-channel sources (RGB888, BGR888, ABGR8888, XBGR8888, ARGB8888): byte offsets.
template <uint32_t Code, int Bpp, int R, int G, int B, int A>
struct SBytes {
	static constexpr uint32_t fourcc = Code;
	static constexpr int bpp = Bpp, r = R, g = G, b = B, a = A;
	static constexpr bool alpha = A >= 0;
	template <int CB, int AB>
	static Px get(const uint8_t *p, int32_t i) {
		const uint8_t *q = p + Bpp * static_cast<int64_t>(i);
		return {q[R], q[G], q[B], A >= 0 ? q[A < 0 ? 0 : A] : 255u};
	}
};
using SRgb888 = SBytes<fourcc::RGB888, 3, 2, 1, 0, -1>;
using SBgr888 = SBytes<fourcc::BGR888, 3, 0, 1, 2, -1>;
using SAbgr8888 = SBytes<fourcc::ABGR8888, 4, 0, 1, 2, 3>;
using SXbgr8888 = SBytes<fourcc::XBGR8888, 4, 0, 1, 2, -1>;
// ARGB8888 -> ARGB8888: a copy, or with straight alpha the premultiplying conversion.
using SArgb8888 = SBytes<fourcc::ARGB8888, 4, 2, 1, 0, 3>;

// 16-bit words: field shifts and widths; alpha width 0 = none. Expansion by bit
// replication.
inline uint32_t expand(uint32_t v, int bits) {
	switch (bits) {
	case 1: return c1to8(v);
	case 4: return c4to8(v);
	case 5: return c5to8(v);
	default: return c6to8(v);
	}
}
template <uint32_t Code, int RS, int RB, int GS, int GB, int BS, int BB, int AS, int AB_>
struct SWord16 {
	static constexpr uint32_t fourcc = Code;
	static constexpr bool alpha = AB_ > 0;
	template <int CB, int AB>
	static Px get(const uint8_t *p, int32_t i) {
		const uint32_t v = ld16(p + 2 * static_cast<int64_t>(i));
		return {expand(v >> RS & ((1u << RB) - 1), RB), expand(v >> GS & ((1u << GB) - 1), GB),
			expand(v >> BS & ((1u << BB) - 1), BB),
			AB_ > 0 ? expand(v >> AS & ((1u << AB_) - 1), AB_ > 0 ? AB_ : 1) : 255u};
	}
};
using SRgb565 = SWord16<fourcc::RGB565, 11, 5, 5, 6, 0, 5, 0, 0>;
using SBgr565 = SWord16<fourcc::BGR565, 0, 5, 5, 6, 11, 5, 0, 0>;
using SXrgb1555 = SWord16<fourcc::XRGB1555, 10, 5, 5, 5, 0, 5, 0, 0>;
using SArgb1555 = SWord16<fourcc::ARGB1555, 10, 5, 5, 5, 0, 5, 15, 1>;
using SXrgb4444 = SWord16<fourcc::XRGB4444, 8, 4, 4, 4, 0, 4, 0, 0>;
using SArgb4444 = SWord16<fourcc::ARGB4444, 8, 4, 4, 4, 0, 4, 12, 4>;

// 2:10:10:10 words. Bgr: R in the low bits.
template <uint32_t Code, bool Bgr, bool Alpha>
struct S2101010 {
	static constexpr uint32_t fourcc = Code;
	static constexpr bool bgr = Bgr;
	static constexpr bool alpha = Alpha;
	template <int CB, int AB>
	static Px get(const uint8_t *p, int32_t i) {
		const uint32_t v = ld32(p + 4 * static_cast<int64_t>(i));
		const uint32_t hi = v >> 20 & 1023, g = v >> 10 & 1023, lo = v & 1023, a = v >> 30;
		const uint32_t r = Bgr ? lo : hi, b = Bgr ? hi : lo;
		if constexpr (CB == 8)
			return {c10to8(r), c10to8(g), c10to8(b), c2to8(a)};
		else
			return {r, g, b, c2to2(a)};
	}
};
using SXrgb2101010 = S2101010<fourcc::XRGB2101010, false, false>;
using SArgb2101010 = S2101010<fourcc::ARGB2101010, false, true>;
using SXbgr2101010 = S2101010<fourcc::XBGR2101010, true, false>;
using SAbgr2101010 = S2101010<fourcc::ABGR2101010, true, true>;

// Half float R, G, B, A at bytes 0, 2, 4, 6.
template <uint32_t Code, bool Alpha>
struct SHalf {
	static constexpr uint32_t fourcc = Code;
	static constexpr bool alpha = Alpha;
	template <int CB, int AB>
	static Px get(const uint8_t *p, int32_t i) {
		const uint8_t *q = p + 8 * static_cast<int64_t>(i);
		return {half_to_n<CB>(ld16(q)), half_to_n<CB>(ld16(q + 2)), half_to_n<CB>(ld16(q + 4)),
			Alpha ? half_to_n<AB>(ld16(q + 6)) : 0u};
	}
};
using SXbgr16f = SHalf<fourcc::XBGR16161616F, false>;
using SAbgr16f = SHalf<fourcc::ABGR16161616F, true>;

// round(c * a / Max), ties up: straight colour times alpha, both already in the
// destination's bits (c: D::cb, a: D::ab, so Max = D::amax). Exact integer division by a
// constant, so every ISA gets the same result.
template <uint32_t Max>
inline uint32_t premul(uint32_t c, uint32_t a) {
	return (2 * c * a + Max) / (2 * Max);
}

// Pixels [i0, w) of the row; SIMD rows use it for their tails, and for whole rows of
// straight alpha (premultiply set, S has alpha).
template <class S, class D>
void rgb_span(const RowSrc &s, uint8_t *d, int32_t i0, int32_t w, bool premultiply) {
	const uint8_t *p = s.p[0];
	if (S::alpha && premultiply) {
		// Colour times the alpha as stored at the destination's precision, so the result
		// is a valid premultiplied pixel (colour <= alpha). X targets keep the colour
		// composited over black, as a premultiplied source gives.
		for (int32_t i = i0; i < w; ++i) {
			const Px px = S::template get<D::cb, D::ab>(p, i);
			D::put(d, i, premul<D::amax>(px.r, px.a), premul<D::amax>(px.g, px.a),
				premul<D::amax>(px.b, px.a), px.a);
		}
		return;
	}
	for (int32_t i = i0; i < w; ++i) {
		const Px px = S::template get<D::cb, D::ab>(p, i);
		D::put(d, i, px.r, px.g, px.b, S::alpha ? px.a : D::amax);
	}
}

template <class S, class D>
void rgb_row(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	rgb_span<S, D>(s, d, 0, w, c.premultiply);
}

// ---- YUV sources -------------------------------------------------------------------------
// y(i): luma of pixel i; u(k), v(k): chroma of pixel pair k (pixels 2k, 2k+1).
template <uint32_t Code, int Y0, int U, int Y1, int V>
struct SPacked422 { // YUYV, UYVY: one 4-byte unit per pixel pair
	static constexpr uint32_t fourcc = Code;
	static constexpr int bits = 8;
	static uint32_t y(const RowSrc &s, int64_t i) { return s.p[0][(i >> 1) * 4 + ((i & 1) ? Y1 : Y0)]; }
	static uint32_t u(const RowSrc &s, int64_t k) { return s.p[0][k * 4 + U]; }
	static uint32_t v(const RowSrc &s, int64_t k) { return s.p[0][k * 4 + V]; }
};
using SYuyv = SPacked422<fourcc::YUYV, 0, 1, 2, 3>;
using SUyvy = SPacked422<fourcc::UYVY, 1, 0, 3, 2>;

template <uint32_t Code, int U, int V>
struct SSemi { // NV12, NV21, NV16: Y plane + interleaved chroma plane
	static constexpr uint32_t fourcc = Code;
	static constexpr int bits = 8;
	static uint32_t y(const RowSrc &s, int64_t i) { return s.p[0][i]; }
	static uint32_t u(const RowSrc &s, int64_t k) { return s.p[1][2 * k + U]; }
	static uint32_t v(const RowSrc &s, int64_t k) { return s.p[1][2 * k + V]; }
};
using SNv12 = SSemi<fourcc::NV12, 0, 1>;
using SNv21 = SSemi<fourcc::NV21, 1, 0>;
using SNv16 = SSemi<fourcc::NV16, 0, 1>;

template <uint32_t Code, int UPlane, int VPlane>
struct SPlanar { // YUV420, YVU420
	static constexpr uint32_t fourcc = Code;
	static constexpr int bits = 8;
	static uint32_t y(const RowSrc &s, int64_t i) { return s.p[0][i]; }
	static uint32_t u(const RowSrc &s, int64_t k) { return s.p[UPlane][k]; }
	static uint32_t v(const RowSrc &s, int64_t k) { return s.p[VPlane][k]; }
};
using SYuv420 = SPlanar<fourcc::YUV420, 1, 2>;
using SYvu420 = SPlanar<fourcc::YVU420, 2, 1>;

struct SP010 { // 10 significant bits at the top of little-endian 16-bit words
	static constexpr uint32_t fourcc = fourcc::P010;
	static constexpr int bits = 10;
	static uint32_t y(const RowSrc &s, int64_t i) { return ld16(s.p[0] + 2 * i) >> 6; }
	static uint32_t u(const RowSrc &s, int64_t k) { return ld16(s.p[1] + 4 * k) >> 6; }
	static uint32_t v(const RowSrc &s, int64_t k) { return ld16(s.p[1] + 4 * k + 2) >> 6; }
};

template <class S, class D>
struct YuvMath {
	static constexpr int shift = kYuvShift + S::bits - D::cb;
	static constexpr int32_t rnd = 1 << (shift - 1);
	static constexpr int32_t maxv = (1 << D::cb) - 1;
	static constexpr int32_t coff = 128 << (S::bits - 8);
};

// One pixel from its luma and the chroma terms of its pair.
template <class S, class D>
inline void yuv_put(uint8_t *d, int32_t i, int32_t y, int32_t rc, int32_t gc, int32_t bc) {
	using M = YuvMath<S, D>;
	D::put(d, i, clampi((y + rc) >> M::shift, M::maxv), clampi((y + gc) >> M::shift, M::maxv),
		clampi((y + bc) >> M::shift, M::maxv), D::amax);
}

// Chroma terms of pair k, then its luma term for pixel i (2k or 2k+1).
template <class S, class D>
inline void yuv_pixel(const RowSrc &s, uint8_t *d, int32_t k, int32_t i, int32_t yoff, const RowParams &c) {
	using M = YuvMath<S, D>;
	const int32_t u = static_cast<int32_t>(S::u(s, k)) - M::coff;
	const int32_t v = static_cast<int32_t>(S::v(s, k)) - M::coff;
	const int32_t y = (static_cast<int32_t>(S::y(s, i)) - yoff) * c.y_mul;
	yuv_put<S, D>(d, i, y, M::rnd + v * c.rv, M::rnd - u * c.gu - v * c.gv, M::rnd + u * c.bu);
}

// 8-bit sources use 16-bit arithmetic, so that SIMD rows do 16 lanes per register
// (pmulhrsw, paddsw, packuswb) instead of 8 int32 lanes. Terms carry 6 fractional
// bits; each product is rounded once, so the sum is within 3/128 of the exact
// equation and the result within +-1 of it (equal except next to a .5).
// Saturation only happens when the true result is outside 0..255 anyway: no single
// term exceeds 239 * 1.164 * 64 = 17.8k, so a saturated sum is >= 511 or <= -512.
inline int32_t mulhrs(int32_t a, int32_t b) { return (a * b + 0x4000) >> 15; } // pmulhrsw
inline int32_t adds16(int32_t a, int32_t b) // paddsw
{
	const int32_t v = a + b;
	return v < -32768 ? -32768 : (v > 32767 ? 32767 : v);
}
struct Yuv16Terms {
	int32_t r, g, b;
};
// Chroma terms of one pixel pair: (C - 128) * 256 times the coefficient at 13 bits.
inline Yuv16Terms yuv16_chroma(uint32_t u, uint32_t v, const RowParams &c) {
	const int32_t u8 = (static_cast<int32_t>(u) - 128) * 256, v8 = (static_cast<int32_t>(v) - 128) * 256;
	return {mulhrs(v8, c.rv), adds16(mulhrs(u8, -c.gu), mulhrs(v8, -c.gv)), mulhrs(u8, c.bu)};
}
// Luma term with the final rounding (+32) folded in: (Y - off) * 128 times y at 14 bits.
inline int32_t yuv16_luma(uint32_t y, const RowParams &c) {
	return mulhrs((static_cast<int32_t>(y) - c.y_off) * 128, c.y_mul14) + 32;
}
inline int32_t yuv16_out(int32_t y, int32_t t) { return clampi(adds16(y, t) >> 6, 255); }

// Pixels [i0, w) of the row, i0 even.
template <class S, class D>
void yuv_span(const RowSrc &s, uint8_t *d, int32_t i0, int32_t w, const RowParams &c) {
	if constexpr (S::bits == 8) {
		for (int32_t i = i0; i < w; ++i) {
			const Yuv16Terms t = yuv16_chroma(S::u(s, i >> 1), S::v(s, i >> 1), c);
			const int32_t y = yuv16_luma(S::y(s, i), c);
			D::put(d, i, yuv16_out(y, t.r), yuv16_out(y, t.g), yuv16_out(y, t.b), D::amax);
		}
	} else {
		const int32_t yoff = c.y_off << (S::bits - 8);
		for (int32_t i = i0; i < w; ++i) yuv_pixel<S, D>(s, d, i >> 1, i, yoff, c);
	}
}

template <class S, class D>
void yuv_row(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	yuv_span<S, D>(s, d, 0, w, c);
}

// Hand-written rows (rows_simd.hpp) specialise Fast with a member `fn` for the pairs
// they cover.
template <class S, class D>
struct Fast {};

template <class S, class D>
constexpr RowFn fast_or(RowFn generic) {
	if constexpr (requires { Fast<S, D>::fn; })
		return Fast<S, D>::fn;
	else
		return generic;
}
template <class S, class D>
constexpr KernelEntry rgb_entry() {
	return {S::fourcc, D::fourcc, fast_or<S, D>(&rgb_row<S, D>)};
}
template <class S, class D>
constexpr KernelEntry yuv_entry() {
	return {S::fourcc, D::fourcc, fast_or<S, D>(&yuv_row<S, D>)};
}
