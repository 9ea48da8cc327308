// Internal: hand-written SIMD rows for the pairs the compiler does not vectorise well
// (YUV, 24/32-bit byte RGB, 16-bit RGB words, 2101010 to 8 bits, half float). Each specialises Fast<S, D> from rows_impl.hpp, does
// the same integer / exactly representable float arithmetic as the template, and
// finishes the row with the template (the tail: widths that are not a multiple of
// the vector, and the last pixels where a full vector load would read past the row).
// Loads never reach beyond the bytes of the row's own pixels.

// ---- straight alpha: premultiply a finished destination row in place (SSE2) -------------
// The fast rows write the straight colour and the stored alpha exactly as the template does
// before it premultiplies; this pass then applies premul<D::amax>() of rows_impl.hpp to them.
// 8 bits: round(c * a / 255) == (t + (t >> 8)) >> 8 with t = c * a + 128 (c * a / 255 is
// never a tie), which is (t * 257) >> 16 (t + (t >> 8) never carries past a multiple of 256):
// one pmulhuw. 10-bit colour, 2-bit alpha: (2ca + 3) / 6 == ((2ca + 3) * 10923) >> 16 for
// 2ca + 3 <= 6141 (the error, < 0.032, never reaches the next integer).
// Reads the row at src (d itself, or a source laid out as D already), writes d.
template <class D>
void premultiply_row(const uint8_t *src, uint8_t *d, int32_t w) {
	static_assert(D::alpha);
	int32_t i = 0;
#if PP_ISA_LEVEL >= 3
	if constexpr (D::cb == 8) { // the same in 256-bit registers, 8 pixels per step
		const __m256i zero = _mm256_setzero_si256(), r128 = _mm256_set1_epi16(128),
			      k257 = _mm256_set1_epi16(257);
		const __m256i abcast = _mm256_setr_epi8(6, 7, 6, 7, 6, 7, 6, 7, 14, 15, 14, 15, 14, 15, 14, 15, 6, 7, 6,
			7, 6, 7, 6, 7, 14, 15, 14, 15, 14, 15, 14, 15);
		const __m256i amask = _mm256_set1_epi32(static_cast<int32_t>(0xff000000u));
		auto two = [&](__m256i v) {
			const __m256i t = _mm256_add_epi16(_mm256_mullo_epi16(v, _mm256_shuffle_epi8(v, abcast)), r128);
			return _mm256_mulhi_epu16(t, k257);
		};
		for (; i + 8 <= w; i += 8) {
			const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + 4 * int64_t(i)));
			const __m256i c = _mm256_packus_epi16(two(_mm256_unpacklo_epi8(x, zero)),
				two(_mm256_unpackhi_epi8(x, zero))); // lane order kept
			_mm256_storeu_si256(
				reinterpret_cast<__m256i *>(d + 4 * int64_t(i)), _mm256_blendv_epi8(c, x, amask));
		}
	}
#endif
	for (; i + 4 <= w; i += 4) {
		__m128i *p = reinterpret_cast<__m128i *>(d + 4 * int64_t(i));
		const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 4 * int64_t(i)));
		__m128i out;
		if constexpr (D::cb == 8) {
			const __m128i zero = _mm_setzero_si128(), r128 = _mm_set1_epi16(128);
			auto two = [&](__m128i v) { // 2 pixels, 16-bit B G R A
				const __m128i a = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xff), 0xff);
				const __m128i t = _mm_add_epi16(_mm_mullo_epi16(v, a), r128);
				return _mm_mulhi_epu16(t, _mm_set1_epi16(257));
			};
			const __m128i c =
				_mm_packus_epi16(two(_mm_unpacklo_epi8(x, zero)), two(_mm_unpackhi_epi8(x, zero)));
			const __m128i amask = _mm_set1_epi32(static_cast<int32_t>(0xff000000u));
			out = _mm_or_si128(_mm_andnot_si128(amask, c), _mm_and_si128(x, amask));
		} else {
			static_assert(D::cb == 10 && D::ab == 2);
			// 32-bit lanes whose high 16 bits stay zero, so 16-bit multiplies suffice.
			const __m128i a = _mm_srli_epi32(x, 30), ten = _mm_set1_epi32(1023);
			auto ch = [&](int shift) {
				const __m128i c = _mm_and_si128(_mm_srli_epi32(x, shift), ten);
				const __m128i n =
					_mm_add_epi32(_mm_slli_epi32(_mm_mullo_epi16(c, a), 1), _mm_set1_epi32(3));
				return _mm_mulhi_epu16(n, _mm_set1_epi32(10923));
			};
			out = _mm_or_si128(_mm_or_si128(_mm_slli_epi32(a, 30), _mm_slli_epi32(ch(20), 20)),
				_mm_or_si128(_mm_slli_epi32(ch(10), 10), ch(0)));
		}
		_mm_storeu_si128(p, out);
	}
	for (; i < w; ++i) {
		const uint32_t v = ld32(src + 4 * int64_t(i)), m = (1u << D::cb) - 1, a = v >> (3 * D::cb);
		uint32_t o = a << (3 * D::cb);
		for (int k = 0; k < 3; ++k) o |= premul<D::amax>(v >> (k * D::cb) & m, a) << (k * D::cb);
		st32(d + 4 * int64_t(i), o);
	}
}

// Straight alpha through a hand-written row: the row as for premultiplied input, then
// premultiply_row(); X targets (alpha not stored) take the template. False: not straight.
// A source laid out as D (ARGB8888 -> ARGB8888) is premultiplied in one pass, as libyuv's
// ARGBAttenuate does, without the copy first.
template <class S, class D>
constexpr bool same_layout() {
	if constexpr (requires { S::bpp; })
		return D::cb == 8 && S::bpp == 4 && S::b == 0 && S::g == 1 && S::r == 2 && S::a == 3;
	else
		return false;
}
template <class S, class D, RowFn Row>
inline bool straight_alpha(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (!(S::alpha && c.premultiply)) return false;
	if constexpr (D::alpha && same_layout<S, D>()) {
		premultiply_row<D>(s.p[0], d, w);
	} else if constexpr (D::alpha) {
		RowParams plain = c;
		plain.premultiply = false;
		Row(s, d, w, plain);
		premultiply_row<D>(d, d, w);
	} else {
		rgb_span<S, D>(s, d, 0, w, true);
	}
	return true;
}

#if PP_ISA_LEVEL >= 2
// ---- 24/32-bit byte RGB: one pshufb per 4 pixels ------------------------------------------

// Byte shuffle for 4 pixels of S into B G R A order; alpha lanes zero (0x80) when
// alpha is not kept (S has none or D is X...), then OR-ed with 0xff.
template <class S, class D>
struct ByteShuffle {
	static constexpr bool keep_a = S::a >= 0 && D::alpha;
	alignas(16) static constexpr int8_t mask[16] = {
#define PP_PX(j)                                                                                                       \
	int8_t(j *S::bpp + S::b), int8_t(j *S::bpp + S::g), int8_t(j *S::bpp + S::r),                                  \
		int8_t(keep_a ? j *S::bpp + S::a : 0x80)
		PP_PX(0), PP_PX(1), PP_PX(2), PP_PX(3)
#undef PP_PX
	};
	static constexpr uint32_t alpha = keep_a ? 0u : 0xff000000u;
};

template <class S, class D>
void bytes_row_ssse3(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (straight_alpha<S, D, &bytes_row_ssse3<S, D>>(s, d, w, c)) return;
	const uint8_t *p = s.p[0];
	const __m128i shuf = _mm_load_si128(reinterpret_cast<const __m128i *>(ByteShuffle<S, D>::mask));
	const __m128i alpha = _mm_set1_epi32(static_cast<int32_t>(ByteShuffle<S, D>::alpha));
	// A 16-byte load covers 4 pixels but reads 16 bytes: stop while it stays in the row.
	const int32_t stop = w - (16 + S::bpp - 1) / S::bpp;
	int32_t i = 0;
	for (; i <= stop; i += 4) {
		const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + S::bpp * int64_t(i)));
		_mm_storeu_si128(reinterpret_cast<__m128i *>(d + 4 * int64_t(i)),
			_mm_or_si128(_mm_shuffle_epi8(x, shuf), alpha));
	}
	rgb_span<S, D>(s, d, i, w, false);
}

#if PP_ISA_LEVEL >= 3
template <class S, class D>
void bytes_row_avx2(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (straight_alpha<S, D, &bytes_row_avx2<S, D>>(s, d, w, c)) return;
	const uint8_t *p = s.p[0];
	const __m256i shuf =
		_mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i *>(ByteShuffle<S, D>::mask)));
	const __m256i alpha = _mm256_set1_epi32(static_cast<int32_t>(ByteShuffle<S, D>::alpha));
	// 16 pixels per step as four 4-pixel loads; the last load ends at byte
	// 12 * bpp + 16 of the step.
	const int32_t stop = w - (12 * S::bpp + 16 + S::bpp - 1) / S::bpp;
	int32_t i = 0;
	for (; i <= stop; i += 16) {
		const uint8_t *q = p + S::bpp * int64_t(i);
		uint8_t *o = d + 4 * int64_t(i);
		for (int h = 0; h < 2; ++h) {
			const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i *>(q + 8 * h * S::bpp));
			const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i *>(q + (8 * h + 4) * S::bpp));
			const __m256i x = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
			_mm256_storeu_si256(reinterpret_cast<__m256i *>(o + 32 * h),
				_mm256_or_si256(_mm256_shuffle_epi8(x, shuf), alpha));
		}
	}
	if (i < w) bytes_row_ssse3<S, D>({{s.p[0] + S::bpp * int64_t(i)}}, d + 4 * int64_t(i), w - i, c);
}
#endif

template <uint32_t Code, int Bpp, int R, int G, int B, int A, class D>
struct Fast<SBytes<Code, Bpp, R, G, B, A>, D> {
#if PP_ISA_LEVEL >= 3
	static constexpr RowFn fn = &bytes_row_avx2<SBytes<Code, Bpp, R, G, B, A>, D>;
#else
	static constexpr RowFn fn = &bytes_row_ssse3<SBytes<Code, Bpp, R, G, B, A>, D>;
#endif
};
#endif // PP_ISA_LEVEL >= 2

inline __m128i load64(const uint8_t *p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)); }
inline __m128i load128(const uint8_t *p) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)); }
#if PP_ISA_LEVEL >= 3
inline __m256i load256(const uint8_t *p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)); }
#endif

// ---- 8-bit YUV -> RGB in 16-bit lanes (SSE2/SSSE3: 16 pixels per step, AVX2: 32) ---------
// The arithmetic of yuv16_chroma / yuv16_luma / yuv16_out in rows_impl.hpp, lane for lane.
// Loaders give luma as two vectors of 16-bit values and Cb, Cr as 16-bit values of
// consecutive pixel pairs, arranged so that punpck{l,h}wd(t, t) of a chroma term lines
// up with luma vector 0 and 1. V wraps the few instructions whose names differ by width.
struct V128 {
	using T = __m128i;
	static constexpr int px = 16;
	static T set16(int32_t v) { return _mm_set1_epi16(static_cast<int16_t>(v)); }
	static T sub16(T a, T b) { return _mm_sub_epi16(a, b); }
	static T add16(T a, T b) { return _mm_add_epi16(a, b); }
	static T adds16(T a, T b) { return _mm_adds_epi16(a, b); }
	static T mulhrs(T a, T b) {
#if PP_ISA_LEVEL >= 2
		return _mm_mulhrs_epi16(a, b);
#else
		// SSE2 has no pmulhrsw: (a*b + 2^14) >> 15 from the product's halves hi:lo is
		// 2 * (hi + carry) + (t >> 15), t = lo + 0x4000 mod 2^16, carry iff lo >= 0xc000.
		const T hi = _mm_mulhi_epi16(a, b), lo = _mm_mullo_epi16(a, b);
		const T t = _mm_add_epi16(lo, _mm_set1_epi16(0x4000));
		const T carry = _mm_cmpgt_epi16(_mm_xor_si128(lo, _mm_set1_epi16(-32768)), _mm_set1_epi16(0x3fff));
		return _mm_sub_epi16(
			_mm_add_epi16(_mm_slli_epi16(hi, 1), _mm_srli_epi16(t, 15)), _mm_slli_epi16(carry, 1));
#endif
	}
	template <int N>
	static T slli16(T a) {
		return _mm_slli_epi16(a, N);
	}
	template <int N>
	static T srai16(T a) {
		return _mm_srai_epi16(a, N);
	}
	static T lo16(T a, T b) { return _mm_unpacklo_epi16(a, b); }
	static T hi16(T a, T b) { return _mm_unpackhi_epi16(a, b); }
	static T lo8(T a, T b) { return _mm_unpacklo_epi8(a, b); }
	static T hi8(T a, T b) { return _mm_unpackhi_epi8(a, b); }
	static T packus16(T a, T b) { return _mm_packus_epi16(a, b); }
	static T load(const uint8_t *p) { return _mm_loadu_si128(reinterpret_cast<const T *>(p)); }
	static void store(uint8_t *p, T a) { _mm_storeu_si128(reinterpret_cast<T *>(p), a); }
	static T and_(T a, T b) { return _mm_and_si128(a, b); }
	static T xor_(T a, T b) { return _mm_xor_si128(a, b); }
	template <int N>
	static T srli16(T a) {
		return _mm_srli_epi16(a, N);
	}
#if PP_ISA_LEVEL >= 2
	static T shuf8(T a, T m) { return _mm_shuffle_epi8(a, m); }
#endif
	static T bytes16(const int8_t *m) { return _mm_load_si128(reinterpret_cast<const T *>(m)); }
	static T set32(int32_t v) { return _mm_set1_epi32(v); }
	static T add32(T a, T b) { return _mm_add_epi32(a, b); }
	static T madd(T a, T b) { return _mm_madd_epi16(a, b); }
	static T max16(T a, T b) { return _mm_max_epi16(a, b); }
	static T min16(T a, T b) { return _mm_min_epi16(a, b); }
	static T or_(T a, T b) { return _mm_or_si128(a, b); }
	// The high 16 bits of each 32-bit lane of a into its low half, of b into its high half.
	static T high_halves(T a, T b) {
		return _mm_or_si128(
			_mm_srli_epi32(a, 16), _mm_and_si128(b, _mm_set1_epi32(static_cast<int32_t>(0xffff0000u))));
	}
	// Pixels 0-3 and 4-7 (V256: 0-3 | 8-11 and 4-7 | 12-15, in-lane unpacks' order).
	static void store_halves(uint8_t *d, T a, T b) {
		store(d, a);
		store(d + 16, b);
	}
#if PP_ISA_LEVEL >= 2
	static T maddubs(T a, T b) { return _mm_maddubs_epi16(a, b); }
#endif
	// q0..q3: pixels 0-3, 4-7, 8-11, 12-15
	static void store4(uint8_t *d, T q0, T q1, T q2, T q3) {
		T *o = reinterpret_cast<T *>(d);
		_mm_storeu_si128(o, q0);
		_mm_storeu_si128(o + 1, q1);
		_mm_storeu_si128(o + 2, q2);
		_mm_storeu_si128(o + 3, q3);
	}
};

template <class V, class S>
struct Yuv16Load;

// 16 pairs of bytes (a, b) -> 16-bit a, b vectors; used for SSE2's YUYV, UYVY.
inline void split_pairs(__m128i x, __m128i &a, __m128i &b) {
	a = _mm_and_si128(x, _mm_set1_epi16(0xff));
	b = _mm_srli_epi16(x, 8);
}

// Chroma as yuv16_row takes it, (C - 128) * 256: C ^ 0x80 is C - 128 as a signed byte, and in
// a lane's high byte, with a zero low byte, it is that times 256. Pairs of bytes (a, b):
// a into the high byte by a shift, b kept there by a mask.
template <class V>
inline void chroma_pairs(typename V::T x, typename V::T &a, typename V::T &b) {
	x = V::xor_(x, V::set16(0x8080));
	a = V::template slli16<8>(x);
	b = V::and_(x, V::set16(0xff00));
}

template <uint32_t Code, int U, int V>
struct Yuv16Load<V128, SSemi<Code, U, V>> {
	static void load(const RowSrc &s, int32_t i, __m128i y[2], __m128i &u, __m128i &v) {
		const __m128i yy = load128(s.p[0] + i);
		y[0] = _mm_unpacklo_epi8(yy, _mm_setzero_si128());
		y[1] = _mm_unpackhi_epi8(yy, _mm_setzero_si128());
		__m128i a, b;
		chroma_pairs<V128>(load128(s.p[1] + i), a, b);
		u = U == 0 ? a : b;
		v = U == 0 ? b : a;
	}
};

template <uint32_t Code, int UP, int VP>
struct Yuv16Load<V128, SPlanar<Code, UP, VP>> {
	static void load(const RowSrc &s, int32_t i, __m128i y[2], __m128i &u, __m128i &v) {
		const __m128i yy = load128(s.p[0] + i);
		y[0] = _mm_unpacklo_epi8(yy, _mm_setzero_si128());
		y[1] = _mm_unpackhi_epi8(yy, _mm_setzero_si128());
		// Cb and Cr bytes in one register, ^ 0x80, into the lanes' high bytes (chroma_pairs)
		const __m128i c = _mm_xor_si128(
			_mm_unpacklo_epi64(load64(s.p[UP] + i / 2), load64(s.p[VP] + i / 2)), _mm_set1_epi8(-128));
		u = _mm_unpacklo_epi8(_mm_setzero_si128(), c);
		v = _mm_unpackhi_epi8(_mm_setzero_si128(), c);
	}
};

#if PP_ISA_LEVEL < 2
// SSE2 only; with pshufb, packed422_row below takes YUYV and UYVY.
template <uint32_t Code, int Y0, int U, int Y1, int V>
struct Yuv16Load<V128, SPacked422<Code, Y0, U, Y1, V>> {
	static void load(const RowSrc &s, int32_t i, __m128i y[2], __m128i &u, __m128i &v) {
		__m128i c[2];
		for (int h = 0; h < 2; ++h) // pixels 8h .. 8h+7
			split_pairs(load128(s.p[0] + 2 * (int64_t(i) + 8 * h)), Y0 == 0 ? y[h] : c[h],
				Y0 == 0 ? c[h] : y[h]);
		// c: 16-bit Cb, Cr, Cb, Cr ... of pairs 0-3 and 4-7
		const __m128i lo = _mm_set1_epi32(0xffff);
		u = _mm_packs_epi32(_mm_and_si128(c[0], lo), _mm_and_si128(c[1], lo));
		v = _mm_packs_epi32(_mm_srli_epi32(c[0], 16), _mm_srli_epi32(c[1], 16));
		u = _mm_slli_epi16(_mm_sub_epi16(u, _mm_set1_epi16(128)), 8);
		v = _mm_slli_epi16(_mm_sub_epi16(v, _mm_set1_epi16(128)), 8);
	}
};
#endif

#if PP_ISA_LEVEL >= 3
struct V256 {
	using T = __m256i;
	static constexpr int px = 32;
	static T set16(int32_t v) { return _mm256_set1_epi16(static_cast<int16_t>(v)); }
	static T sub16(T a, T b) { return _mm256_sub_epi16(a, b); }
	static T add16(T a, T b) { return _mm256_add_epi16(a, b); }
	static T adds16(T a, T b) { return _mm256_adds_epi16(a, b); }
	static T mulhrs(T a, T b) { return _mm256_mulhrs_epi16(a, b); }
	template <int N>
	static T slli16(T a) {
		return _mm256_slli_epi16(a, N);
	}
	template <int N>
	static T srai16(T a) {
		return _mm256_srai_epi16(a, N);
	}
	static T lo16(T a, T b) { return _mm256_unpacklo_epi16(a, b); }
	static T hi16(T a, T b) { return _mm256_unpackhi_epi16(a, b); }
	static T lo8(T a, T b) { return _mm256_unpacklo_epi8(a, b); }
	static T hi8(T a, T b) { return _mm256_unpackhi_epi8(a, b); }
	static T packus16(T a, T b) { return _mm256_packus_epi16(a, b); }
	static T load(const uint8_t *p) { return _mm256_loadu_si256(reinterpret_cast<const T *>(p)); }
	static void store(uint8_t *p, T a) { _mm256_storeu_si256(reinterpret_cast<T *>(p), a); }
	static T and_(T a, T b) { return _mm256_and_si256(a, b); }
	static T xor_(T a, T b) { return _mm256_xor_si256(a, b); }
	template <int N>
	static T srli16(T a) {
		return _mm256_srli_epi16(a, N);
	}
	static T shuf8(T a, T m) { return _mm256_shuffle_epi8(a, m); }
	static T bytes16(const int8_t *m) {
		return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i *>(m)));
	}
	static T maddubs(T a, T b) { return _mm256_maddubs_epi16(a, b); }
	static T set32(int32_t v) { return _mm256_set1_epi32(v); }
	static T add32(T a, T b) { return _mm256_add_epi32(a, b); }
	static T madd(T a, T b) { return _mm256_madd_epi16(a, b); }
	static T max16(T a, T b) { return _mm256_max_epi16(a, b); }
	static T min16(T a, T b) { return _mm256_min_epi16(a, b); }
	static T or_(T a, T b) { return _mm256_or_si256(a, b); }
	static T high_halves(T a, T b) { return _mm256_blend_epi16(_mm256_srli_epi32(a, 16), b, 0xaa); }
	// 128-bit stores instead of lane permutes: a store of the high lane needs no shuffle.
	static void store_halves(uint8_t *d, T a, T b) {
		_mm_storeu_si128(reinterpret_cast<__m128i *>(d), _mm256_castsi256_si128(a));
		_mm_storeu_si128(reinterpret_cast<__m128i *>(d + 16), _mm256_castsi256_si128(b));
		_mm_storeu_si128(reinterpret_cast<__m128i *>(d + 32), _mm256_extracti128_si256(a, 1));
		_mm_storeu_si128(reinterpret_cast<__m128i *>(d + 48), _mm256_extracti128_si256(b, 1));
	}
	// Unpacks work per 128-bit lane: q0..q3 hold pixels 0-3|16-19, 4-7|20-23,
	// 8-11|24-27, 12-15|28-31.
	static void store4(uint8_t *d, T q0, T q1, T q2, T q3) {
		T *o = reinterpret_cast<T *>(d);
		_mm256_storeu_si256(o, _mm256_permute2x128_si256(q0, q1, 0x20));
		_mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(q2, q3, 0x20));
		_mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(q0, q1, 0x31));
		_mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(q2, q3, 0x31));
	}
};

// AVX2 luma: 32 bytes -> pixels 0-7|16-23 and 8-15|24-31 (per-lane unpack), matching
// punpck{l,h}wd of chroma terms whose lanes hold pairs 0-7 | 8-15.
inline void luma32(const uint8_t *p, __m256i y[2]) {
	const __m256i yy = load256(p);
	y[0] = _mm256_unpacklo_epi8(yy, _mm256_setzero_si256());
	y[1] = _mm256_unpackhi_epi8(yy, _mm256_setzero_si256());
}

template <uint32_t Code, int U, int V>
struct Yuv16Load<V256, SSemi<Code, U, V>> {
	static void load(const RowSrc &s, int32_t i, __m256i y[2], __m256i &u, __m256i &v) {
		luma32(s.p[0] + i, y);
		__m256i a, b;
		chroma_pairs<V256>(load256(s.p[1] + i), a, b);
		u = U == 0 ? a : b;
		v = U == 0 ? b : a;
	}
};

template <uint32_t Code, int UP, int VP>
struct Yuv16Load<V256, SPlanar<Code, UP, VP>> {
	static void load(const RowSrc &s, int32_t i, __m256i y[2], __m256i &u, __m256i &v) {
		luma32(s.p[0] + i, y);
		// 16 bytes in both lanes by a broadcast load, then pshufb puts bytes 0-7 | 8-15 into the
		// lanes' high bytes (chroma_pairs' form after the ^ 0x8000): no lane-crossing shuffle.
		const __m256i high = _mm256_setr_epi8(-128, 0, -128, 1, -128, 2, -128, 3, -128, 4, -128, 5, -128, 6,
			-128, 7, -128, 8, -128, 9, -128, 10, -128, 11, -128, 12, -128, 13, -128, 14, -128, 15);
		auto chroma = [&](const uint8_t *p) {
			return _mm256_xor_si256(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(load128(p)), high),
				_mm256_set1_epi16(-32768));
		};
		u = chroma(s.p[UP] + i / 2);
		v = chroma(s.p[VP] + i / 2);
	}
};

using VYuv = V256;
#else
using VYuv = V128;
#endif

// Every 32-bit lane (first, second) as two 16-bit halves.
template <class V>
inline typename V::T pair16(int32_t first, int32_t second) {
	return V::set32(static_cast<int32_t>(static_cast<uint16_t>(first) | static_cast<uint32_t>(second) << 16));
}

template <class V, class S, class D>
void yuv16_row(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	static_assert(D::cb == 8 && !D::bgr);
	using T = typename V::T;
	const T yoff = V::set16(c.y_off), cy = V::set16(c.y_mul14);
	const T rnd = V::set16(PP_ISA_LEVEL >= 2 ? 512 : 32); // the final rounding, see below
	const T krv = V::set16(c.rv), kgu = V::set16(-c.gu), kgv = V::set16(-c.gv), kbu = V::set16(c.bu);
	const T alpha = V::set16(-1);
	const int32_t n = w - w % V::px;
	for (int32_t i = 0; i < n; i += V::px) {
		T y[2], u, v;
		Yuv16Load<V, S>::load(s, i, y, u, v); // u, v: (C - 128) * 256
		const T term[3] = {
			V::mulhrs(v, krv), V::adds16(V::mulhrs(u, kgu), V::mulhrs(v, kgv)), V::mulhrs(u, kbu)};
		T out[3]; // R, G, B bytes of all pixels, in order
		T half[3][2];
		for (int h = 0; h < 2; ++h) {
			const T yy = V::mulhrs(V::template slli16<7>(V::sub16(y[h], yoff)), cy);
			for (int k = 0; k < 3; ++k) {
				const T t = h ? V::hi16(term[k], term[k]) : V::lo16(term[k], term[k]);
#if PP_ISA_LEVEL >= 2
				// (z + 32) >> 6 in one pmulhrsw, as packed422_row (same results)
				half[k][h] = V::mulhrs(V::adds16(yy, t), rnd);
#else
				half[k][h] = V::template srai16<6>(V::adds16(V::add16(yy, rnd), t));
#endif
			}
		}
		for (int k = 0; k < 3; ++k) out[k] = V::packus16(half[k][0], half[k][1]); // clamps to 0..255
		const T bg0 = V::lo8(out[2], out[1]), bg1 = V::hi8(out[2], out[1]);
		const T ra0 = V::lo8(out[0], alpha), ra1 = V::hi8(out[0], alpha);
		V::store4(
			d + 4 * int64_t(i), V::lo16(bg0, ra0), V::hi16(bg0, ra0), V::lo16(bg1, ra1), V::hi16(bg1, ra1));
	}
	yuv_span<S, D>(s, d, n, w, c);
}

template <class S, class D>
	requires requires { &Yuv16Load<VYuv, S>::load; }
struct Fast<S, D> {
	static constexpr RowFn fn = &yuv16_row<VYuv, S, D>;
};

#if PP_ISA_LEVEL >= 2
// ---- YUYV, UYVY -> RGB: libyuv's row model (YUY2ToARGBRow) ----------------------------------
// yuv16_row's arithmetic with the loaded pixels as the lanes. With every byte ^ 0x80 (C - 128
// and Y - 128 as signed bytes), each pixel's lane holds its luma and one chroma byte: Cb for
// the first pixel of a pair, Cr for the second. pmaddubsw by 128 makes (Y - 128) * 128, which
// minus (off - 128) * 128 is yuv16_luma()'s (Y - off) * 128; the chroma byte moved to (or
// kept in) the high byte alone is yuv16_chroma()'s (C - 128) * 256, so one pmulhrsw by
// (bu, rv) gives the pair's B term in the first lane and its R term in the second, and one by
// (-gu, -gv) the two G products, which their sum with the lane-swapped copy adds in both
// lanes; pshufb copies the B and R terms to the pair's other lane. Every step is exact in 16
// bits. pmulhrsw by 512 is (z + 32) >> 6: yuv16_out()'s + 32 and >> 6, the + 32 after the
// saturating add instead of before it, which differs only where the sum saturates, and that
// clamps to the same 0 or 255 either way.
struct PairLanes { // 16-bit lanes of each 32-bit lane: first into both, second into both, swapped
	alignas(16) static constexpr int8_t first[16] = {0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13};
	alignas(16) static constexpr int8_t second[16] = {2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15};
	alignas(16) static constexpr int8_t swap[16] = {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13};
};

template <class V, class S, int Y0, int U, int Cr, class D>
void packed422_row(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	static_assert(D::cb == 8 && !D::bgr);
	static_assert(U / 2 == 0 && Cr / 2 == 1); // Cb in the pair's first lane, Cr in its second
	using T = typename V::T;
	constexpr int px = V::px / 2; // pixels of one load
	const T yoff = V::set16((c.y_off - 128) * 128), cy = V::set16(c.y_mul14), r512 = V::set16(512);
	const T kbr = pair16<V>(c.bu, c.rv), kg = pair16<V>(-c.gu, -c.gv);
	const T alpha = V::set16(0xff), sign = V::set16(0x8080), y128 = V::set16(Y0 == 0 ? 128 : 128 << 8);
	const T first = V::bytes16(PairLanes::first), second = V::bytes16(PairLanes::second),
		swap = V::bytes16(PairLanes::swap);
	const uint8_t *p = s.p[0];
	auto step = [&](int32_t i) {
		const T xs = V::xor_(V::load(p + 2 * int64_t(i)), sign);
		const T yy = V::mulhrs(V::sub16(V::maddubs(y128, xs), yoff), cy);
		const T cc = Y0 == 0 ? V::and_(xs, V::set16(0xff00)) : V::template slli16<8>(xs);
		const T br = V::mulhrs(cc, kbr), gg = V::mulhrs(cc, kg);
		auto out = [&](T t) { return V::mulhrs(V::adds16(yy, t), r512); };
		const T r = out(V::shuf8(br, second)), g = out(V::adds16(gg, V::shuf8(gg, swap))),
			b = out(V::shuf8(br, first));
		// Per lane: B G bytes and R A bytes (packus clamps to 0..255), B R / G A pairs, pixels.
		const T bg = V::packus16(b, g), ra = V::packus16(r, alpha);
		const T bra = V::lo8(bg, ra), ga = V::hi8(bg, ra);
		V::store_halves(d + 4 * int64_t(i), V::lo8(bra, ga), V::hi8(bra, ga));
	};
	int32_t i = 0;
	for (; i + px <= w; i += px) step(i);
	yuv_span<S, D>(s, d, i, w, c);
}

template <uint32_t Code, int Y0, int U, int Y1, int Cr, class D>
struct Fast<SPacked422<Code, Y0, U, Y1, Cr>, D> {
	static constexpr RowFn fn = &packed422_row<VYuv, SPacked422<Code, Y0, U, Y1, Cr>, Y0, U, Cr, D>;
};
#endif

// ---- P010 -> RGB: libyuv's row model (P210ToARGBRow), exact ---------------------------------
// yuv_pixel()'s sum Y * y_mul + Z, Z = u * cu + v * cv + rnd - yoff * y_mul (u, v: chroma
// minus 512), >> S (15 to 8 bits, 13 to 10 bits), ending in 16-bit lanes, one per pixel, as
// yuv16_row. 32-bit lane j of a load holds pixels 2j, 2j+1 (luma) or pair j (chroma), so
// pmaddwd with (y_mul, 0) and (0, y_mul) gives the even and the odd pixels' luma products in
// the lanes of their pair's chroma pmaddwd: no chroma is spread to pixels. Everything is
// scaled by 2^k, k = 16 - S (inputs 2^k * sample <= 8184, coefficients < 2^15, sums < 2^31),
// so each 32-bit sum's high 16 bits are the exact result (>> 16 == floor(sum / 2^16)).
template <class V, class D>
void p010_row(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	using T = typename V::T;
	using M = YuvMath<SP010, D>;
	constexpr int k = 16 - M::shift;
	constexpr int px = V::px / 2; // one load of 16-bit luma
	const T top10 = V::set16(0xffc0); // the sample; the low 6 bits are not part of it
	// 2^k * Y * y_mul: for k = 1 the scale goes into y_mul (2 * y_mul < 2^15), saving the mask.
	const int32_t ym = k == 1 ? 2 * c.y_mul : c.y_mul;
	const T ye = pair16<V>(ym, 0), yo = pair16<V>(0, ym);
	const int32_t yoff = c.y_off << 2;
	struct Chroma {
		T coeff, add; // pmaddwd (cu, cv) and the constant of 2^k * Z
	};
	auto chroma = [&](int32_t cu, int32_t cv) {
		return Chroma{pair16<V>(cu, cv), V::set32((M::rnd - M::coff * (cu + cv) - yoff * c.y_mul) * (1 << k))};
	};
	const Chroma cr = chroma(0, c.rv), cg = chroma(-c.gu, -c.gv), cb = chroma(c.bu, 0);
	const uint8_t *py = s.p[0], *pc = s.p[1];
	const int32_t n = w - w % px;
	for (int32_t i = 0; i < n; i += px) {
		const T yraw = V::load(py + 2 * int64_t(i));
		const T yk = k == 1 ? V::template srli16<6>(yraw) : V::template srli16<6 - k>(V::and_(yraw, top10));
		const T ck = V::template srli16<6 - k>(V::and_(V::load(pc + 2 * int64_t(i)), top10));
		const T leven = V::madd(yk, ye), lodd = V::madd(yk, yo);
		auto channel = [&](const Chroma &ch) {
			const T z = V::add32(V::madd(ck, ch.coeff), ch.add);
			return V::high_halves(V::add32(leven, z), V::add32(lodd, z));
		};
		const T r = channel(cr), g = channel(cg), b = channel(cb);
		uint8_t *o = d + 4 * int64_t(i);
		if constexpr (D::cb == 8) {
			static_assert(!D::bgr);
			// packus clamps to 0..255; bytes B R / G A, then the pixels.
			const T bg = V::packus16(b, g), ra = V::packus16(r, V::set16(0xff));
			const T br = V::lo8(bg, ra), ga = V::hi8(bg, ra);
			V::store_halves(o, V::lo8(br, ga), V::hi8(br, ga));
		} else {
			static_assert(D::cb == 10);
			const T zero = V::set16(0), maxv = V::set16(M::maxv);
			auto clamp = [&](T x) { return V::min16(V::max16(x, zero), maxv); };
			const T lo = clamp(D::bgr ? r : b), gg = clamp(g), hi = clamp(D::bgr ? b : r);
			// 32-bit pixel amax << 30 | hi << 20 | g << 10 | lo, as its two 16-bit halves.
			const T w0 = V::or_(lo, V::template slli16<10>(gg)),
				w1 = V::or_(V::or_(V::template srli16<6>(gg), V::template slli16<4>(hi)),
					V::set16(static_cast<int32_t>(D::amax << 14)));
			V::store_halves(o, V::lo16(w0, w1), V::hi16(w0, w1));
		}
	}
	yuv_span<SP010, D>(s, d, n, w, c);
}

template <class D>
struct Fast<SP010, D> {
	static constexpr RowFn fn = &p010_row<VYuv, D>;
};

#if PP_ISA_LEVEL >= 3
// ---- 16-bit RGB words -> 8 bits, 16 pixels per step ----------------------------------------
// Fields are extracted and bit-replicated in 16-bit lanes (expand() of the template),
// then B|G<<8 and R|A<<8 are interleaved into 32-bit pixels.
template <int Shift, int Bits>
inline __m256i field8(__m256i v) {
	const __m256i f = _mm256_and_si256(_mm256_srli_epi16(v, Shift), _mm256_set1_epi16((1 << Bits) - 1));
	if constexpr (Bits == 1)
		return _mm256_mullo_epi16(f, _mm256_set1_epi16(255));
	else if constexpr (Bits == 4)
		return _mm256_or_si256(_mm256_slli_epi16(f, 4), f);
	else // 5 or 6: v << (8 - Bits) | v >> (2 * Bits - 8)
		return _mm256_or_si256(_mm256_slli_epi16(f, 8 - Bits), _mm256_srli_epi16(f, 2 * Bits - 8));
}

template <class S, class D, int RS, int RB, int GS, int GB, int BS, int BB, int AS, int AB>
void word16_row_avx2(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (straight_alpha<S, D, &word16_row_avx2<S, D, RS, RB, GS, GB, BS, BB, AS, AB>>(s, d, w, c)) return;
	constexpr bool keep_a = D::alpha && AB > 0;
	const int32_t n = w & ~15;
	for (int32_t i = 0; i < n; i += 16) {
		const __m256i v = load256(s.p[0] + 2 * int64_t(i));
		const __m256i a = keep_a ? field8<AS, (AB > 0 ? AB : 1)>(v) : _mm256_set1_epi16(0xff);
		const __m256i bg = _mm256_or_si256(field8<BS, BB>(v), _mm256_slli_epi16(field8<GS, GB>(v), 8));
		const __m256i ra = _mm256_or_si256(field8<RS, RB>(v), _mm256_slli_epi16(a, 8));
		// unpack works per 128-bit lane: lo = pixels 0-3 | 8-11, hi = 4-7 | 12-15
		const __m256i lo = _mm256_unpacklo_epi16(bg, ra), hi = _mm256_unpackhi_epi16(bg, ra);
		uint8_t *o = d + 4 * int64_t(i);
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(o), _mm256_permute2x128_si256(lo, hi, 0x20));
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(o + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
	}
	rgb_span<S, D>(s, d, n, w, false);
}

template <uint32_t Code, int RS, int RB, int GS, int GB, int BS, int BB, int AS, int AB, class D>
struct Fast<SWord16<Code, RS, RB, GS, GB, BS, BB, AS, AB>, D> {
	static constexpr RowFn fn =
		&word16_row_avx2<SWord16<Code, RS, RB, GS, GB, BS, BB, AS, AB>, D, RS, RB, GS, GB, BS, BB, AS, AB>;
};

// ---- 2:10:10:10 -> 8 bits, 8 pixels per step -----------------------------------------------
// round(v * 255 / 1023) == (((v * 32672) >> 16) + 1) >> 1 for every v in [0, 1023]
// (exhaustively checked), so one pmulhuw does two channels in 16-bit halves.
inline __m256i c10to8_x16(__m256i x) {
	const __m256i m = _mm256_mulhi_epu16(x, _mm256_set1_epi16(32672));
	return _mm256_srli_epi16(_mm256_add_epi16(m, _mm256_set1_epi16(1)), 1);
}

template <class S, class D>
void w2101010_row_avx2(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (straight_alpha<S, D, &w2101010_row_avx2<S, D>>(s, d, w, c)) return;
	constexpr bool keep_a = D::alpha && S::alpha;
	const __m256i ten = _mm256_set1_epi32(0x3ff);
	const int32_t n = w & ~7;
	for (int32_t i = 0; i < n; i += 8) {
		const __m256i v = load256(s.p[0] + 4 * int64_t(i));
		const __m256i lo = _mm256_and_si256(v, ten), hi = _mm256_and_si256(_mm256_srli_epi32(v, 20), ten);
		// blue in the low half, red in the high half: B and R bytes of ARGB8888
		const __m256i br = S::bgr ? _mm256_or_si256(hi, _mm256_slli_epi32(lo, 16))
					  : _mm256_or_si256(lo, _mm256_slli_epi32(hi, 16));
		const __m256i g = c10to8_x16(_mm256_and_si256(_mm256_srli_epi32(v, 10), ten));
		const __m256i a = keep_a
			? _mm256_slli_epi32(_mm256_mullo_epi16(_mm256_srli_epi32(v, 30), _mm256_set1_epi32(85)), 24)
			: _mm256_set1_epi32(static_cast<int32_t>(0xff000000u));
		const __m256i px = _mm256_or_si256(_mm256_or_si256(c10to8_x16(br), _mm256_slli_epi32(g, 8)), a);
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + 4 * int64_t(i)), px);
	}
	rgb_span<S, D>(s, d, n, w, false);
}

template <uint32_t Code, bool Bgr, bool Alpha, class D>
	requires(D::cb == 8)
struct Fast<S2101010<Code, Bgr, Alpha>, D> {
	static constexpr RowFn fn = &w2101010_row_avx2<S2101010<Code, Bgr, Alpha>, D>;
};

// ---- half float RGBA, 8 pixels per step ----------------------------------------------------
// vcvtph2ps (F16C, required with AVX2 by best_isa) is exact for every half. Matching the
// template's clamping: negatives (any sign bit) -> 0, and minps returns 1 for NaN,
// as the template's finite stand-in for Inf/NaN does.
template <class S, class D>
inline __m256i half_channels(const uint8_t *q, __m256 scale) {
	__m256 f = _mm256_cvtph_ps(load128(q)); // 2 pixels: r g b a r g b a
	f = _mm256_blendv_ps(f, _mm256_setzero_ps(), f);
	f = _mm256_min_ps(f, _mm256_set1_ps(1.0f));
	return _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(f, scale), _mm256_set1_ps(0.5f)));
}

template <class S, class D>
void half_row_avx2(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	if (straight_alpha<S, D, &half_row_avx2<S, D>>(s, d, w, c)) return;
	constexpr int cb = D::cb;
	constexpr bool keep_a = D::alpha && S::alpha;
	const float mc = static_cast<float>((1 << cb) - 1), ma = static_cast<float>(D::amax);
	const __m256 scale = _mm256_setr_ps(mc, mc, mc, ma, mc, mc, mc, ma);
	const __m256i aset = _mm256_set1_epi32(keep_a ? 0 : static_cast<int32_t>(D::amax << 3 * cb));
	// After the packs or hadds below, lane 0 holds pixels 0 2 4 6 and lane 1 pixels 1 3 5 7.
	const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	const uint8_t *p = s.p[0];
	const int32_t n = w & ~7;
	for (int32_t i = 0; i < n; i += 8) {
		const uint8_t *q = p + 8 * int64_t(i);
		// The hardware prefetcher does not keep up with 2 source bytes per destination
		// byte once the image is out of cache (3840x2160: 2.3 -> 3.9-5.1 GB/s measured
		// in isolation). Prefetches never fault, so running past the row is harmless.
		_mm_prefetch(reinterpret_cast<const char *>(q + 1024), _MM_HINT_T0);
		__m256i v[4];
		for (int j = 0; j < 4; ++j) v[j] = half_channels<S, D>(q + 16 * j, scale);
		__m256i px;
		if constexpr (cb == 8) {
			// Values are 0..255: saturating packs are exact; then R G B A -> B G R A.
			const __m256i b =
				_mm256_packus_epi16(_mm256_packus_epi32(v[0], v[1]), _mm256_packus_epi32(v[2], v[3]));
			const int8_t a0 = keep_a ? 3 : -128, a1 = keep_a ? 7 : -128, a2 = keep_a ? 11 : -128,
				     a3 = keep_a ? 15 : -128;
			const __m256i bgra = _mm256_setr_epi8(2, 1, 0, a0, 6, 5, 4, a1, 10, 9, 8, a2, 14, 13, 12, a3, 2,
				1, 0, a0, 6, 5, 4, a1, 10, 9, 8, a2, 14, 13, 12, a3);
			px = _mm256_shuffle_epi8(b, bgra);
		} else {
			// 10-bit targets are [31:0] A:B:G:R: pmaddwd makes R + G<<10 and B + A<<10,
			// the second is moved up by 20 and phaddd joins them.
			static_assert(D::bgr);
			const int16_t am = keep_a ? 1 << 10 : 0;
			const __m256i mult = _mm256_setr_epi16(
				1, 1 << 10, 1, am, 1, 1 << 10, 1, am, 1, 1 << 10, 1, am, 1, 1 << 10, 1, am);
			const __m256i up = _mm256_setr_epi32(0, 20, 0, 20, 0, 20, 0, 20);
			auto pair = [&](__m256i a, __m256i b) {
				return _mm256_sllv_epi32(_mm256_madd_epi16(_mm256_packus_epi32(a, b), mult), up);
			};
			px = _mm256_hadd_epi32(pair(v[0], v[1]), pair(v[2], v[3]));
		}
		px = _mm256_or_si256(_mm256_permutevar8x32_epi32(px, order), aset);
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + 4 * int64_t(i)), px);
	}
	rgb_span<S, D>(s, d, n, w, false);
}

template <uint32_t Code, bool Alpha, class D>
struct Fast<SHalf<Code, Alpha>, D> {
	static constexpr RowFn fn = &half_row_avx2<SHalf<Code, Alpha>, D>;
};
#endif
