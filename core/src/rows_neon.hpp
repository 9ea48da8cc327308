// Internal: hand-written NEON (arm64 ASIMD) rows, the arm64 counterpart of rows_simd.hpp.
// Each specialises Fast<S, D> from rows_impl.hpp, does the same integer / exactly
// representable float arithmetic as the template, lane for lane, and finishes the row
// with the template (widths that are not a multiple of the step). Loads never reach
// beyond the bytes of the row's own pixels. Structured loads (vld2/vld3/vld4) split
// interleaved channels and vst4 writes B G R A, so no shuffles are needed.
#if defined(__aarch64__)

// Rows of 16- and 32-bit words may start at any byte (strides and x are not aligned):
// byte loads, reinterpreted. The 16-bit structured loads and stores (vld2q_u16, vst4q_u16)
// take such addresses too: AArch64 has no alignment requirement for them on normal memory,
// and the intrinsics only pass the pointer on.
inline uint16x8_t load_u16x8(const uint8_t *p) { return vreinterpretq_u16_u8(vld1q_u8(p)); }
inline uint32x4_t load_u32x4(const uint8_t *p) { return vreinterpretq_u32_u8(vld1q_u8(p)); }

// ---- straight alpha: premultiply a finished destination row in place ----------------------
// The fast rows write the straight colour and the stored alpha exactly as the template does
// before it premultiplies; this pass applies premul<D::amax>() of rows_impl.hpp to them.
// 8 bits: round(c * a / 255) == (t + (t >> 8)) >> 8 with t = c * a + 128 (c * a / 255 is
// never a tie): with x = c * a that is vrshrn(x + vrshr(x, 8), 8), and vrsra adds the inner
// term in one instruction (x + ((x + 128) >> 8) < 2^16; vrshrn rounds without overflow).
// 10-bit colour, 2-bit alpha: (2ca + 3) / 6 == ((2ca + 3) * 10923) >> 16 for 2ca + 3 <= 6141.
template <class D>
void premultiply_row(uint8_t *d, int32_t w) {
	static_assert(D::alpha);
	int32_t i = 0;
	if constexpr (D::cb == 8) {
		auto div255 = [](uint16x8_t x) { return vrsraq_n_u16(x, x, 8); }; // before vrshrn by 8
		for (; i + 16 <= w; i += 16) {
			uint8_t *p = d + 4 * int64_t(i);
			uint8x16x4_t x = vld4q_u8(p); // B G R A
			const uint8x16_t a = x.val[3];
			for (int k = 0; k < 3; ++k)
				x.val[k] = vrshrn_high_n_u16(
					vrshrn_n_u16(div255(vmull_u8(vget_low_u8(x.val[k]), vget_low_u8(a))), 8),
					div255(vmull_high_u8(x.val[k], a)), 8);
			vst4q_u8(p, x);
		}
	} else {
		static_assert(D::cb == 10 && D::ab == 2);
		const uint32x4_t ten = vdupq_n_u32(1023), three = vdupq_n_u32(3), k = vdupq_n_u32(10923);
		for (; i + 4 <= w; i += 4) {
			uint8_t *p = d + 4 * int64_t(i);
			const uint32x4_t x = vreinterpretq_u32_u8(vld1q_u8(p)), a = vshrq_n_u32(x, 30);
			auto ch = [&](uint32x4_t c) {
				const uint32x4_t n = vaddq_u32(vshlq_n_u32(vmulq_u32(vandq_u32(c, ten), a), 1), three);
				return vshrq_n_u32(vmulq_u32(n, k), 16);
			};
			const uint32x4_t o =
				vorrq_u32(vorrq_u32(vshlq_n_u32(a, 30), vshlq_n_u32(ch(vshrq_n_u32(x, 20)), 20)),
					vorrq_u32(vshlq_n_u32(ch(vshrq_n_u32(x, 10)), 10), ch(x)));
			vst1q_u8(p, vreinterpretq_u8_u32(o));
		}
	}
	for (; i < w; ++i) {
		const uint32_t v = ld32(d + 4 * int64_t(i)), m = (1u << D::cb) - 1, a = v >> (3 * D::cb);
		uint32_t o = a << (3 * D::cb);
		for (int k = 0; k < 3; ++k) o |= premul<D::amax>(v >> (k * D::cb) & m, a) << (k * D::cb);
		st32(d + 4 * int64_t(i), o);
	}
}

// Straight alpha through a hand-written row: the row as for premultiplied input, then
// premultiply_row(); X targets (alpha not stored) take the template. False: not straight.
template <class S, class D, RowFn Row>
inline bool straight_alpha(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (!(S::alpha && c.premultiply)) return false;
	if constexpr (D::alpha) {
		RowParams plain = c;
		plain.premultiply = false;
		Row(s, d, w, plain);
		premultiply_row<D>(d, w);
	} else {
		rgb_span<S, D>(s, d, 0, w, true);
	}
	return true;
}

// ---- 24/32-bit byte RGB, 16 pixels per step -----------------------------------------------
// vld3/vld4 split the channels, vst4 writes them as B G R A.
template <class S, class D>
void bytes_row_neon(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (straight_alpha<S, D, &bytes_row_neon<S, D>>(s, d, w, c)) return;
	constexpr bool keep_a = S::a >= 0 && D::alpha;
	const uint8_t *p = s.p[0];
	const int32_t n = w & ~15;
	for (int32_t i = 0; i < n; i += 16) {
		const uint8_t *q = p + S::bpp * int64_t(i);
		uint8x16x4_t px;
		if constexpr (S::bpp == 3) {
			const uint8x16x3_t x = vld3q_u8(q);
			px.val[0] = x.val[S::b];
			px.val[1] = x.val[S::g];
			px.val[2] = x.val[S::r];
			px.val[3] = vdupq_n_u8(0xff);
		} else {
			const uint8x16x4_t x = vld4q_u8(q);
			px.val[0] = x.val[S::b];
			px.val[1] = x.val[S::g];
			px.val[2] = x.val[S::r];
			px.val[3] = keep_a ? x.val[S::a < 0 ? 0 : S::a] : vdupq_n_u8(0xff);
		}
		vst4q_u8(d + 4 * int64_t(i), px);
	}
	rgb_span<S, D>(s, d, n, w, false);
}

template <uint32_t Code, int Bpp, int R, int G, int B, int A, class D>
struct Fast<SBytes<Code, Bpp, R, G, B, A>, D> {
	static constexpr RowFn fn = &bytes_row_neon<SBytes<Code, Bpp, R, G, B, A>, D>;
};

// ---- 16-bit RGB words -> 8 bits, 16 pixels per step ----------------------------------------
// Each field is narrowed to a byte with its top bit at bit 7 (vshrn, or vmovn and a shift for
// fields low in the word), then expand() of the template is one instruction: vsri puts the
// byte's own top bits below the field (v << (8 - n) | v >> (2n - 8) for n = 5, 6 and v * 17
// for n = 4 are that bit replication), and a 1-bit field is spread by an arithmetic shift.
template <int Shift, int Bits>
inline uint8x16_t field8(uint16x8_t v0, uint16x8_t v1) {
	constexpr int top = Shift + Bits - 8; // right shift that puts the field's top bit at bit 7
	uint8x16_t x;
	if constexpr (top > 0)
		x = vshrn_high_n_u16(vshrn_n_u16(v0, top > 0 ? top : 1), v1, top > 0 ? top : 1);
	else
		x = vmovn_high_u16(vmovn_u16(v0), v1);
	if constexpr (top < 0) x = vshlq_n_u8(x, top < 0 ? -top : 0);
	if constexpr (Bits == 1)
		return vreinterpretq_u8_s8(vshrq_n_s8(vreinterpretq_s8_u8(x), 7));
	else
		return vsriq_n_u8(x, x, Bits);
}

template <class S, class D, int RS, int RB, int GS, int GB, int BS, int BB, int AS, int AB>
void word16_row_neon(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (straight_alpha<S, D, &word16_row_neon<S, D, RS, RB, GS, GB, BS, BB, AS, AB>>(s, d, w, c)) return;
	constexpr bool keep_a = D::alpha && AB > 0;
	const uint8_t *p = s.p[0];
	const uint8x16_t opaque = vdupq_n_u8(0xff);
	const int32_t n = w & ~15;
	for (int32_t i = 0; i < n; i += 16) {
		const uint8x16x2_t x = vld1q_u8_x2(p + 2 * int64_t(i));
		const uint16x8_t v0 = vreinterpretq_u16_u8(x.val[0]), v1 = vreinterpretq_u16_u8(x.val[1]);
		uint8x16x4_t px;
		px.val[0] = field8<BS, BB>(v0, v1);
		px.val[1] = field8<GS, GB>(v0, v1);
		px.val[2] = field8<RS, RB>(v0, v1);
		if constexpr (keep_a)
			px.val[3] = field8<AS, (AB > 0 ? AB : 1)>(v0, v1);
		else
			px.val[3] = opaque;
		vst4q_u8(d + 4 * int64_t(i), px);
	}
	rgb_span<S, D>(s, d, n, w, false);
}

template <uint32_t Code, int RS, int RB, int GS, int GB, int BS, int BB, int AS, int AB, class D>
struct Fast<SWord16<Code, RS, RB, GS, GB, BS, BB, AS, AB>, D> {
	static constexpr RowFn fn =
		&word16_row_neon<SWord16<Code, RS, RB, GS, GB, BS, BB, AS, AB>, D, RS, RB, GS, GB, BS, BB, AS, AB>;
};

// ---- 8-bit YUV -> RGB in 16-bit lanes, 16 pixels per step ----------------------------------
// yuv16_chroma / yuv16_luma / yuv16_out of rows_impl.hpp: vqrdmulh is pmulhrsw's
// (a * b + 2^14) >> 15 (it saturates only for -32768 * -32768, and no coefficient is
// -32768), vqadd is paddsw, vqshrun is the shift and the clamp to 0..255 in one.
// Loaders give 16 luma bytes in pixel order and the 8 pairs' chroma as 16-bit lanes of
// (C - 128) << 8, which is C << 8 with the top bit flipped (mod 2^16); the chroma terms are
// then doubled by zip for the pairs' two pixels.
template <class S>
struct Yuv16NeonLoad;

inline int16x8_t chroma16(uint16x8_t c_shl8) { return vreinterpretq_s16_u16(veorq_u16(c_shl8, vdupq_n_u16(0x8000))); }

// Lanes of two chroma bytes (the low byte first in memory) -> each byte << 8.
template <int Byte>
inline int16x8_t chroma_of_pair(uint16x8_t pairs) {
	return chroma16(Byte == 0 ? vshlq_n_u16(pairs, 8) : vandq_u16(pairs, vdupq_n_u16(0xff00)));
}

template <uint32_t Code, int U, int V>
struct Yuv16NeonLoad<SSemi<Code, U, V>> {
	static void load(const RowSrc &s, int32_t i, uint8x16_t &y, int16x8_t &u, int16x8_t &v) {
		y = vld1q_u8(s.p[0] + i);
		const uint16x8_t c = vreinterpretq_u16_u8(vld1q_u8(s.p[1] + i));
		u = chroma_of_pair<U>(c);
		v = chroma_of_pair<V>(c);
	}
};

template <uint32_t Code, int UP, int VP>
struct Yuv16NeonLoad<SPlanar<Code, UP, VP>> {
	static void load(const RowSrc &s, int32_t i, uint8x16_t &y, int16x8_t &u, int16x8_t &v) {
		y = vld1q_u8(s.p[0] + i);
		u = chroma16(vshll_n_u8(vld1_u8(s.p[UP] + i / 2), 8));
		v = chroma16(vshll_n_u8(vld1_u8(s.p[VP] + i / 2), 8));
	}
};

// vld2 splits the 4-byte groups' even and odd bytes: one of them is the luma in pixel order,
// the other the pairs' Cb and Cr.
template <uint32_t Code, int Y0, int U, int Y1, int V>
struct Yuv16NeonLoad<SPacked422<Code, Y0, U, Y1, V>> {
	static_assert(Y1 == Y0 + 2 && V == (U ^ 2));
	static void load(const RowSrc &s, int32_t i, uint8x16_t &y, int16x8_t &u, int16x8_t &v) {
		const uint8x16x2_t x = vld2q_u8(s.p[0] + 2 * int64_t(i));
		y = x.val[Y0 & 1];
		const uint16x8_t c = vreinterpretq_u16_u8(x.val[U & 1]);
		u = chroma_of_pair<(U >> 1)>(c);
		v = chroma_of_pair<(V >> 1)>(c);
	}
};

template <class S, class D>
void yuv16_row_neon(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	static_assert(D::cb == 8 && !D::bgr);
	// (Y - off) << 7 fits 16 bits for Y, off in 0..255, so Y << 7 - off << 7 wraps to it.
	const int16x8_t yoff = vdupq_n_s16(static_cast<int16_t>(c.y_off * 128));
	const int16x8_t cy = vdupq_n_s16(static_cast<int16_t>(c.y_mul14)), r32 = vdupq_n_s16(32);
	const int16x8_t krv = vdupq_n_s16(static_cast<int16_t>(c.rv)), kgu = vdupq_n_s16(static_cast<int16_t>(-c.gu));
	const int16x8_t kgv = vdupq_n_s16(static_cast<int16_t>(-c.gv)), kbu = vdupq_n_s16(static_cast<int16_t>(c.bu));
	const uint8x16_t opaque = vdupq_n_u8(0xff);
	auto luma = [&](uint16x8_t y_shl7) {
		return vaddq_s16(vqrdmulhq_s16(vsubq_s16(vreinterpretq_s16_u16(y_shl7), yoff), cy), r32);
	};
	auto out = [](int16x8_t y0, int16x8_t y1, int16x8_t t0, int16x8_t t1) {
		return vqshrun_high_n_s16(vqshrun_n_s16(vqaddq_s16(y0, t0), 6), vqaddq_s16(y1, t1), 6);
	};
	const int32_t n = w & ~15;
	for (int32_t i = 0; i < n; i += 16) {
		uint8x16_t y8;
		int16x8_t u, v;
		Yuv16NeonLoad<S>::load(s, i, y8, u, v);
		const int16x8_t tr = vqrdmulhq_s16(v, krv);
		const int16x8_t tg = vqaddq_s16(vqrdmulhq_s16(u, kgu), vqrdmulhq_s16(v, kgv));
		const int16x8_t tb = vqrdmulhq_s16(u, kbu);
		const int16x8_t y0 = luma(vshll_n_u8(vget_low_u8(y8), 7)), y1 = luma(vshll_high_n_u8(y8, 7));
		uint8x16x4_t px;
		px.val[0] = out(y0, y1, vzip1q_s16(tb, tb), vzip2q_s16(tb, tb));
		px.val[1] = out(y0, y1, vzip1q_s16(tg, tg), vzip2q_s16(tg, tg));
		px.val[2] = out(y0, y1, vzip1q_s16(tr, tr), vzip2q_s16(tr, tr));
		px.val[3] = opaque;
		vst4q_u8(d + 4 * int64_t(i), px);
	}
	yuv_span<S, D>(s, d, n, w, c);
}

template <class S, class D>
	requires requires { &Yuv16NeonLoad<S>::load; }
struct Fast<S, D> {
	static constexpr RowFn fn = &yuv16_row_neon<S, D>;
};

// ---- 2:10:10:10 -> 8 bits, 8 pixels per step -----------------------------------------------
// c10to8() in 32-bit lanes, narrowed to bytes for vst4.
template <class S, class D>
void w2101010_row_neon(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (straight_alpha<S, D, &w2101010_row_neon<S, D>>(s, d, w, c)) return;
	constexpr bool keep_a = D::alpha && S::alpha;
	const uint32x4_t ten = vdupq_n_u32(1023), k = vdupq_n_u32(1021), rnd = vdupq_n_u32(2041);
	auto c10 = [&](uint32x4_t v) { return vmovn_u32(vshrq_n_u32(vmlaq_u32(rnd, vandq_u32(v, ten), k), 12)); };
	auto bytes = [](uint16x4_t a, uint16x4_t b) { return vmovn_u16(vcombine_u16(a, b)); };
	const int32_t n = w & ~7;
	for (int32_t i = 0; i < n; i += 8) {
		const uint8_t *q = s.p[0] + 4 * int64_t(i);
		const uint32x4_t x[2] = {load_u32x4(q), load_u32x4(q + 16)};
		uint16x4_t hi[2], g[2], lo[2], a[2];
		for (int h = 0; h < 2; ++h) {
			hi[h] = c10(vshrq_n_u32(x[h], 20));
			g[h] = c10(vshrq_n_u32(x[h], 10));
			lo[h] = c10(x[h]);
			a[h] = vmovn_u32(vmulq_n_u32(vshrq_n_u32(x[h], 30), 85));
		}
		uint8x8x4_t px;
		px.val[0] = S::bgr ? bytes(hi[0], hi[1]) : bytes(lo[0], lo[1]);
		px.val[1] = bytes(g[0], g[1]);
		px.val[2] = S::bgr ? bytes(lo[0], lo[1]) : bytes(hi[0], hi[1]);
		px.val[3] = keep_a ? bytes(a[0], a[1]) : vdup_n_u8(0xff);
		vst4_u8(d + 4 * int64_t(i), px);
	}
	rgb_span<S, D>(s, d, n, w, false);
}

template <uint32_t Code, bool Bgr, bool Alpha, class D>
	requires(D::cb == 8)
struct Fast<S2101010<Code, Bgr, Alpha>, D> {
	static constexpr RowFn fn = &w2101010_row_neon<S2101010<Code, Bgr, Alpha>, D>;
};

// ---- 10-bit YUV (P010) -> RGB, 16 pixels per step ------------------------------------------
// yuv_pixel() of rows_impl.hpp with 16-bit inputs: 10-bit samples fit 16 bits, and so does
// every coefficient (at most about 2.2 * 2^13; checked, else the template), so each product is
// one widening multiply into the same int32 sums. The offsets' products are constants folded
// into each channel's rounding term: (Y - yoff) * ym + rnd + (V - coff) * rv is
// Y * ym + V * rv + (rnd - yoff * ym - coff * rv). vqshrun shifts and clamps at 0 (and 65535).
// vld2 splits luma into even and odd pixels and chroma into Cb and Cr, so each pixel meets its
// pair's terms without copies. 8-bit targets: vqmovn clamps at 255, zip restores pixel order,
// vst4 writes B G R A. 10-bit targets: each word's low and high 16 bits are built by vsli in
// 16-bit lanes, and vst4 of (even low, even high, odd low, odd high) writes the words in order.
template <class S, class D>
void p010_row_neon(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	static_assert((D::cb == 8 && !D::bgr) || D::cb == 10);
	using M = YuvMath<S, D>;
	auto fits16 = [](int32_t k) { return k >= -32768 && k <= 32767; };
	if (!(fits16(c.y_mul) && fits16(c.rv) && fits16(c.gu) && fits16(c.gv) && fits16(c.bu))) {
		yuv_span<S, D>(s, d, 0, w, c);
		return;
	}
	const int16_t ym = int16_t(c.y_mul), rv = int16_t(c.rv), gu = int16_t(c.gu), gv = int16_t(c.gv),
		      bu = int16_t(c.bu);
	const int32_t ky = M::rnd - (c.y_off << (S::bits - 8)) * c.y_mul;
	const int32x4_t kr = vdupq_n_s32(ky - M::coff * c.rv), kb = vdupq_n_s32(ky - M::coff * c.bu);
	const int32x4_t kg = vdupq_n_s32(ky + M::coff * (c.gu + c.gv));
	auto s10 = [](uint16x8_t x) { return vreinterpretq_s16_u16(vshrq_n_u16(x, 6)); };
	// One channel of 8 pixels from their luma products (two halves) and their pairs' terms.
	auto half = [](const int32x4_t(&y)[2], const int32x4_t(&t)[2]) {
		return vqshrun_high_n_s32(
			vqshrun_n_s32(vaddq_s32(y[0], t[0]), M::shift), vaddq_s32(y[1], t[1]), M::shift);
	};
	const uint8_t *py = s.p[0], *pc = s.p[1];
	const int32_t n = w & ~15;
	for (int32_t i = 0; i < n; i += 16) {
		const uint16x8x2_t y = vld2q_u16(reinterpret_cast<const uint16_t *>(py + 2 * int64_t(i)));
		const uint16x8x2_t uv = vld2q_u16(reinterpret_cast<const uint16_t *>(pc + 2 * int64_t(i)));
		const int16x8_t ye = s10(y.val[0]), yo = s10(y.val[1]), u = s10(uv.val[0]), v = s10(uv.val[1]);
		const int32x4_t e[2] = {vmull_n_s16(vget_low_s16(ye), ym), vmull_high_n_s16(ye, ym)};
		const int32x4_t o[2] = {vmull_n_s16(vget_low_s16(yo), ym), vmull_high_n_s16(yo, ym)};
		const int32x4_t tr[2] = {vmlal_n_s16(kr, vget_low_s16(v), rv), vmlal_high_n_s16(kr, v, rv)};
		const int32x4_t tg[2] = {vmlsl_n_s16(vmlsl_n_s16(kg, vget_low_s16(u), gu), vget_low_s16(v), gv),
			vmlsl_high_n_s16(vmlsl_high_n_s16(kg, u, gu), v, gv)};
		const int32x4_t tb[2] = {vmlal_n_s16(kb, vget_low_s16(u), bu), vmlal_high_n_s16(kb, u, bu)};
		if constexpr (D::cb == 8) {
			auto channel = [&](const int32x4_t(&t)[2]) {
				const uint16x8_t ev = half(e, t), od = half(o, t);
				return vqmovn_high_u16(vqmovn_u16(vzip1q_u16(ev, od)), vzip2q_u16(ev, od));
			};
			uint8x16x4_t px;
			px.val[0] = channel(tb);
			px.val[1] = channel(tg);
			px.val[2] = channel(tr);
			px.val[3] = vdupq_n_u8(0xff);
			vst4q_u8(d + 4 * int64_t(i), px);
		} else {
			const uint16x8_t maxv = vdupq_n_u16(1023), alpha = vdupq_n_u16(uint16_t(D::amax << 14));
			auto words = [&](const int32x4_t(&y)[2], uint16x8_t &lo16, uint16x8_t &hi16) {
				const uint16x8_t r = vminq_u16(half(y, tr), maxv), g = vminq_u16(half(y, tg), maxv),
						 b = vminq_u16(half(y, tb), maxv);
				lo16 = vsliq_n_u16(D::bgr ? r : b, g, 10);
				hi16 = vorrq_u16(vsliq_n_u16(vshrq_n_u16(g, 6), D::bgr ? b : r, 4), alpha);
			};
			uint16x8x4_t px;
			words(e, px.val[0], px.val[1]);
			words(o, px.val[2], px.val[3]);
			vst4q_u16(reinterpret_cast<uint16_t *>(d + 4 * int64_t(i)), px);
		}
	}
	yuv_span<S, D>(s, d, n, w, c);
}

template <class D>
struct Fast<SP010, D> {
	static constexpr RowFn fn = &p010_row_neon<SP010, D>;
};

// ---- half float RGBA, 4 pixels per step ----------------------------------------------------
// fcvtl is exact for every half. Matching half_to_n(): any sign bit (the half's own, so
// NaN signs cannot be lost) gives 0; fminnm gives 1 for NaN and Inf, as the template's finite
// stand-in does; then f * max + 0.5 in the same two float operations and truncation.
// Each pixel's R G B A lanes are shifted to their places and added pairwise into one word.
template <class S, class D>
void half_row_neon(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (straight_alpha<S, D, &half_row_neon<S, D>>(s, d, w, c)) return;
	constexpr int cb = D::cb;
	constexpr bool keep_a = D::alpha && S::alpha;
	const float mc = static_cast<float>((1 << cb) - 1), ma = static_cast<float>(D::amax);
	const float32x4_t scale = {mc, mc, mc, ma}, one = vdupq_n_f32(1.0f), half = vdupq_n_f32(0.5f);
	const int32x4_t place = {D::bgr ? 0 : 2 * cb, cb, D::bgr ? 2 * cb : 0, 3 * cb};
	const uint32x4_t amask = {~0u, ~0u, ~0u, keep_a ? ~0u : 0u};
	const uint32x4_t aset = vdupq_n_u32(keep_a ? 0u : D::amax << (3 * cb));
	auto pixel = [&](uint16x4_t h) { // R G B A halves -> the pixel's fields, in place
		const uint32x4_t neg = vreinterpretq_u32_s32(vmovl_s16(vshr_n_s16(vreinterpret_s16_u16(h), 15)));
		float32x4_t f = vcvt_f32_f16(vreinterpret_f16_u16(h));
		f = vminnmq_f32(vbslq_f32(neg, vdupq_n_f32(0.0f), f), one);
		const uint32x4_t v = vcvtq_u32_f32(vaddq_f32(vmulq_f32(f, scale), half));
		return vshlq_u32(vandq_u32(v, amask), place);
	};
	const int32_t n = w & ~3;
	for (int32_t i = 0; i < n; i += 4) {
		const uint8_t *q = s.p[0] + 8 * int64_t(i);
		const uint16x8_t h0 = load_u16x8(q), h1 = load_u16x8(q + 16);
		const uint32x4_t p01 = vpaddq_u32(pixel(vget_low_u16(h0)), pixel(vget_high_u16(h0)));
		const uint32x4_t p23 = vpaddq_u32(pixel(vget_low_u16(h1)), pixel(vget_high_u16(h1)));
		vst1q_u8(d + 4 * int64_t(i), vreinterpretq_u8_u32(vorrq_u32(vpaddq_u32(p01, p23), aset)));
	}
	rgb_span<S, D>(s, d, n, w, false);
}

template <uint32_t Code, bool Alpha, class D>
struct Fast<SHalf<Code, Alpha>, D> {
	static constexpr RowFn fn = &half_row_neon<SHalf<Code, Alpha>, D>;
};

#endif // __aarch64__
