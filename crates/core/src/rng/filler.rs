//! The value filler: printable random bytes for the values a workload
//! writes, sixteen xorshift lanes at a time.
use super::Rng;
use std::mem::MaybeUninit;

/// Fills value buffers with printable ASCII (0x20..=0x5F), like YCSB's
/// RandomByteIterator. Sixteen independent xorshift64 lanes (Marsaglia
/// 2003, shifts 13, 7, 17), seeded once from a stream's RNG, write 128 bytes
/// per round with shifts and xors only: twice the speed of multiplying
/// lanes (a 1 KB value per update is a visible share of a pipelined SET's
/// client CPU). Values need to be varied and printable, not unpredictable.
/// A round is six dependent steps per lane; sixteen lanes are at least two
/// registers at every width, so two chains overlap (eight lanes in one
/// 512-bit register were one chain: a 1 KB value 46 -> 34 ns; ten 100-byte
/// fields, bound by the lanes' trip through memory between fills, alike).
///
/// On x86_64 the lanes live in eight SSE2 registers, stored and loaded as
/// whole registers between fills: kept as `u64`s they were stored 8 bytes
/// at a time and loaded 16 at a time at the next field (a store-forwarding
/// stall per field: ten 100-byte fields 15% slower). Where the CPU has AVX2
/// they run in four 256-bit registers; where it has AVX-512BW and VBMI2
/// (see `wide_vectors`) in two 512-bit registers. One process uses one
/// width, so stores and loads match. Elsewhere the same lanes run as
/// scalars; all give the same bytes.
///
/// The lanes are aligned to a cache line: the 64-byte loads and stores of
/// the widest filler then never split across two lines.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub(crate) struct Filler {
    lanes: Lanes,
}

#[cfg(target_arch = "x86_64")]
type Lanes = [std::arch::x86_64::__m128i; LANES / 2];
#[cfg(not(target_arch = "x86_64"))]
type Lanes = [u64; LANES];

const LANES: usize = 16;
/// Bytes a round writes: one step of every lane.
const ROUND: usize = 8 * LANES;

const SYMBOLS: u64 = 0x3F3F_3F3F_3F3F_3F3F;
const FIRST: u64 = 0x2020_2020_2020_2020;

impl Filler {
    pub(crate) fn new(rng: &mut Rng) -> Self {
        // a zero lane would stay zero
        let seeds: [u64; LANES] = std::array::from_fn(|_| rng.next_u64() | 1);
        Filler {
            lanes: lanes_of(seeds),
        }
    }

    /// Fills `buf`.
    #[inline]
    pub(crate) fn fill(&mut self, buf: &mut [u8]) {
        self.fill_all(std::iter::once(buf));
    }

    /// Fills `buf`, which may be uninitialised (a connection's output past
    /// its end), with the bytes [`Self::fill`] would, leaving this filler
    /// as it was and `next` as the fill would leave it.
    #[inline]
    pub(crate) fn fill_uninit_into(&self, next: &mut Filler, buf: &mut [MaybeUninit<u8>]) {
        next.lanes = self.lanes;
        next.fill_any(std::iter::once(buf));
    }

    /// Fills every buffer of `bufs` in turn, as that many [`Self::fill`]s
    /// do (the same bytes), in one call: the lanes are loaded and stored
    /// once and the CPU's answers asked once for a record's fields, where a
    /// call per field paid all of it per field (ten 100-byte fields:
    /// ~17 ns a field over one 1,000-byte value on a Zen 1 core).
    #[inline]
    pub(crate) fn fill_all<'b>(&mut self, bufs: impl Iterator<Item = &'b mut [u8]>) {
        self.fill_any(bufs.map(as_uninit));
    }

    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn fill_any<'b>(&mut self, bufs: impl Iterator<Item = &'b mut [MaybeUninit<u8>]>) {
        // the CPU's answers are cached: a load and a test or two per call
        if wide_vectors() {
            // SAFETY: the CPU has AVX-512F and BW (checked above).
            unsafe { fill_avx512(&mut self.lanes, bufs) }
        } else if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked above).
            unsafe { fill_avx2(&mut self.lanes, bufs) }
        } else {
            // SAFETY: SSE2 is part of x86_64's baseline: every x86_64 CPU has it.
            unsafe { fill_sse2(&mut self.lanes, bufs) }
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline]
    fn fill_any<'b>(&mut self, bufs: impl Iterator<Item = &'b mut [MaybeUninit<u8>]>) {
        fill_scalar(&mut self.lanes, bufs);
    }
}

/// Copies `src` into `dst` (its length), which may be uninitialised (what
/// std's `write_copy_of_slice` does, newer than the crate's Rust).
#[inline(always)]
pub(crate) fn write_bytes(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    // SAFETY: `MaybeUninit<u8>` has `u8`'s layout and every `u8` is a
    // valid one; the result is only read from.
    let src = unsafe { &*(src as *const [u8] as *const [MaybeUninit<u8>]) };
    dst.copy_from_slice(src);
}

/// `buf` as bytes that may be uninitialised, for the fillers, which write
/// every byte they are given and read none.
#[inline(always)]
fn as_uninit(buf: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: `MaybeUninit<u8>` has `u8`'s layout, and what is written
    // through the result is initialised bytes only (the fillers store
    // initialised vectors and copy from initialised scratch), so `buf`
    // holds initialised bytes afterwards.
    unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) }
}

/// Whether the CPU has AVX-512 (F and BW) and VBMI2, for the widest
/// filler. VBMI2 marks the CPUs (Ice Lake and later, Zen 4) whose clock
/// does not drop for 512-bit integer work, as Skylake-SP's and Cascade
/// Lake's does: there the 256-bit filler runs. The answer is kept in one
/// byte: a load and a compare per fill, where std's cache is a load and a
/// test per feature.
#[cfg(target_arch = "x86_64")]
#[inline]
fn wide_vectors() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    // 0: not asked yet, 1: no, 2: yes
    static WIDE: AtomicU8 = AtomicU8::new(0);
    match WIDE.load(Ordering::Relaxed) {
        0 => {
            let wide = std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vbmi2");
            WIDE.store(1 + u8::from(wide), Ordering::Relaxed);
            wide
        }
        known => known == 2,
    }
}

#[cfg(target_arch = "x86_64")]
fn lanes_of(s: [u64; LANES]) -> Lanes {
    use std::arch::x86_64::_mm_set_epi64x;
    // lane 2i is the low half of register i: the bytes come out in the
    // scalar lanes' order
    // SAFETY: SSE2 is part of x86_64's baseline.
    std::array::from_fn(|i| unsafe { _mm_set_epi64x(s[2 * i + 1] as i64, s[2 * i] as i64) })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn fill_sse2<'b>(lanes: &mut Lanes, bufs: impl Iterator<Item = &'b mut [MaybeUninit<u8>]>) {
    use std::arch::x86_64::*;
    let symbols = _mm_set1_epi64x(SYMBOLS as i64);
    let first = _mm_set1_epi64x(FIRST as i64);
    let mut held = *lanes;
    let step = |l: &mut __m128i| {
        let x = _mm_xor_si128(*l, _mm_slli_epi64::<13>(*l));
        let x = _mm_xor_si128(x, _mm_srli_epi64::<7>(x));
        *l = _mm_xor_si128(x, _mm_slli_epi64::<17>(x));
        _mm_add_epi8(_mm_and_si128(*l, symbols), first)
    };
    // SAFETY: `by_vectors` gives a pointer with 16 bytes to write; the
    // store is unaligned.
    by_vectors::<_, 16, { LANES / 2 }>(bufs, &mut held, step, |at, v| unsafe {
        _mm_storeu_si128(at.cast(), v)
    });
    *lanes = held;
}

/// The same lanes four to a 256-bit register: half the instructions of the
/// SSE2 filler (a 1 KB value: ~900 -> ~450). Register i holds lanes
/// 4i..4i+3, so its 32-byte store writes the bytes in the scalar lanes'
/// order, as the SSE2 pairs do.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_avx2<'b>(lanes: &mut Lanes, bufs: impl Iterator<Item = &'b mut [MaybeUninit<u8>]>) {
    use std::arch::x86_64::*;
    let symbols = _mm256_set1_epi64x(SYMBOLS as i64);
    let first = _mm256_set1_epi64x(FIRST as i64);
    let at = lanes.as_mut_ptr().cast::<__m256i>();
    // SAFETY: `lanes` is 8 * LANES bytes: LANES / 4 unaligned 32-byte loads.
    let mut held: [__m256i; LANES / 4] =
        std::array::from_fn(|i| unsafe { _mm256_loadu_si256(at.add(i)) });
    let step = |l: &mut __m256i| {
        let x = _mm256_xor_si256(*l, _mm256_slli_epi64::<13>(*l));
        let x = _mm256_xor_si256(x, _mm256_srli_epi64::<7>(x));
        *l = _mm256_xor_si256(x, _mm256_slli_epi64::<17>(x));
        _mm256_add_epi8(_mm256_and_si256(*l, symbols), first)
    };
    // SAFETY: `by_vectors` gives a pointer with 32 bytes to write; the
    // store is unaligned.
    by_vectors::<_, 32, { LANES / 4 }>(bufs, &mut held, step, |at, v| unsafe {
        _mm256_storeu_si256(at.cast(), v)
    });
    for (i, l) in held.iter().enumerate() {
        // SAFETY: as the loads.
        unsafe { _mm256_storeu_si256(at.add(i), *l) };
    }
}

/// The same lanes eight to a 512-bit register: half the AVX2 filler's
/// instructions again (a 1 KB value: ~300 -> ~150), and a partial last
/// round stored straight into the buffer under byte masks, where the
/// narrower fillers fill a scratch block and copy its head (a call to
/// memcpy per 100-byte field). Register i holds lanes 8i..8i+7 in order,
/// so its store writes the scalar lanes' bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn fill_avx512<'b>(lanes: &mut Lanes, bufs: impl Iterator<Item = &'b mut [MaybeUninit<u8>]>) {
    use std::arch::x86_64::*;
    let symbols = _mm512_set1_epi64(SYMBOLS as i64);
    let first = _mm512_set1_epi64(FIRST as i64);
    let at = lanes.as_mut_ptr().cast::<__m512i>();
    // SAFETY: `lanes` is 8 * LANES bytes: LANES / 8 unaligned 64-byte loads.
    let mut held: [__m512i; LANES / 8] =
        std::array::from_fn(|i| unsafe { _mm512_loadu_si512(at.add(i)) });
    let step = |l: &mut __m512i| {
        let x = _mm512_xor_si512(*l, _mm512_slli_epi64::<13>(*l));
        let x = _mm512_xor_si512(x, _mm512_srli_epi64::<7>(x));
        *l = _mm512_xor_si512(x, _mm512_slli_epi64::<17>(x));
        _mm512_add_epi8(_mm512_and_si512(*l, symbols), first)
    };
    for buf in bufs {
        let mut chunks = buf.chunks_exact_mut(ROUND);
        for chunk in &mut chunks {
            for (i, l) in held.iter_mut().enumerate() {
                let v = step(l);
                // SAFETY: `chunk` has ROUND bytes, so bytes 64i..64i+64 (i <
                // LANES / 8) are in it; the store is unaligned.
                unsafe { _mm512_storeu_si512(chunk.as_mut_ptr().add(64 * i).cast(), v) };
            }
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            for (i, l) in held.iter_mut().enumerate() {
                let v = step(l);
                // register i's share of the rest: its bytes, at most 64
                let n = rest.len().saturating_sub(64 * i).min(64);
                if n > 0 {
                    // bytes past the n-th are masked off: neither written nor read
                    let mask: __mmask64 = u64::MAX >> (64 - n);
                    // SAFETY: byte 64i is in `rest` (n > 0) and the mask keeps
                    // the store inside it.
                    unsafe {
                        _mm512_mask_storeu_epi8(rest.as_mut_ptr().add(64 * i).cast(), mask, v)
                    };
                }
            }
        }
    }
    for (i, l) in held.iter().enumerate() {
        // SAFETY: as the loads.
        unsafe { _mm512_storeu_si512(at.add(i), *l) };
    }
}

/// Runs `round` over each buffer of `bufs` ROUND bytes (one step of every
/// lane) at a time; a partial last round fills a scratch block whose head
/// is copied (the scalar lanes' way, which the vector fillers match).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn by_rounds<'b>(
    bufs: impl Iterator<Item = &'b mut [MaybeUninit<u8>]>,
    mut round: impl FnMut(&mut [u8; ROUND]),
) {
    for buf in bufs {
        let mut chunks = buf.chunks_exact_mut(ROUND);
        // each round through a scratch block: the reference's way, not fast
        let mut block = [0u8; ROUND];
        for chunk in &mut chunks {
            round(&mut block);
            write_bytes(chunk, &block);
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            round(&mut block);
            write_bytes(rest, &block[..rest.len()]);
        }
    }
}

/// Fills each buffer of `bufs` with the vectors `step` makes of the `N`
/// registers in `held` (`W` bytes each, a round all `N`), as [`by_rounds`]
/// does: a partial last round steps every register, and its bytes go
/// straight into the buffer where a whole vector fits; only the last
/// partial vector goes through a `W`-byte scratch, copied in at most two
/// fixed-size moves. Through a whole scratch round, a 100-byte field was a
/// round stored twice and a call to memcpy.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn by_vectors<'b, V, const W: usize, const N: usize>(
    bufs: impl Iterator<Item = &'b mut [MaybeUninit<u8>]>,
    held: &mut [V; N],
    step: impl Fn(&mut V) -> V,
    store: impl Fn(*mut u8, V),
) {
    const { assert!(W * N == ROUND && W.is_power_of_two() && W >= 16) };
    for buf in bufs {
        let mut chunks = buf.chunks_exact_mut(ROUND);
        for chunk in &mut chunks {
            for (i, l) in held.iter_mut().enumerate() {
                // bytes W*i.. W*i + W of a whole round's chunk
                store(chunk[W * i..W * i + W].as_mut_ptr().cast(), step(l));
            }
        }
        let rest = chunks.into_remainder();
        if rest.is_empty() {
            continue;
        }
        for (i, l) in held.iter_mut().enumerate() {
            let v = step(l);
            let Some(tail) = rest.get_mut(W * i..) else {
                continue;
            };
            if tail.len() >= W {
                store(tail[..W].as_mut_ptr().cast(), v);
            } else if !tail.is_empty() {
                let mut t = [0u8; W];
                store(t.as_mut_ptr(), v);
                copy_head(tail, &t);
            }
        }
    }
}

/// `dst` (shorter than `src`, which is 16 bytes or more) gets the head of
/// `src`: two moves of one power-of-two width that overlap in the middle,
/// or a byte at a time below four bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn copy_head<const W: usize>(dst: &mut [MaybeUninit<u8>], src: &[u8; W]) {
    let n = dst.len();
    debug_assert!(n < W);
    macro_rules! two {
        ($w:expr) => {{
            write_bytes(&mut dst[..$w], &src[..$w]);
            write_bytes(&mut dst[n - $w..], &src[n - $w..n]);
        }};
    }
    if n >= 16 {
        two!(16)
    } else if n >= 8 {
        two!(8)
    } else if n >= 4 {
        two!(4)
    } else {
        write_bytes(dst, &src[..n]);
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn lanes_of(s: [u64; LANES]) -> Lanes {
    s
}

/// The lanes one `u64` at a time (the filler where there is no SSE2,
/// and the reference the SSE2 filler is tested against).
#[cfg(any(test, not(target_arch = "x86_64")))]
fn fill_scalar<'b>(
    lanes: &mut [u64; LANES],
    bufs: impl Iterator<Item = &'b mut [MaybeUninit<u8>]>,
) {
    by_rounds(bufs, |out| {
        for (l, out) in lanes.iter_mut().zip(out.chunks_exact_mut(8)) {
            *l ^= *l << 13;
            *l ^= *l >> 7;
            *l ^= *l << 17;
            out.copy_from_slice(&((*l & SYMBOLS) + FIRST).to_le_bytes());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_bytes_are_uniform_over_the_64_symbols_and_fills_differ() {
        let mut f = Filler::new(&mut Rng::new(11));
        let mut counts = [0f64; 64];
        let mut buf = vec![0u8; 1000];
        let mut last = Vec::new();
        for _ in 0..200 {
            f.fill(&mut buf);
            assert_ne!(buf, last, "each fill continues the lanes");
            for &b in &buf {
                counts[(b - 0x20) as usize] += 1.0;
            }
            last.clone_from(&buf);
        }
        let expected = [200.0 * 1000.0 / 64.0; 64];
        let t = crate::stats::chi2::chi_squared(&counts, &expected);
        assert!(t.passes(), "{t:?}");
        // every length, the tail past the last whole round included
        for len in [0, 1, 7, 31, 32, 33, 100] {
            let mut b = vec![0u8; len];
            f.fill(&mut b);
            assert!(
                b.iter().all(|&c| (0x20..=0x5F).contains(&c)),
                "{len}: {b:?}"
            );
        }
    }

    /// Every vector filler this CPU has, whichever `fill` picks, gives the
    /// scalar lanes' bytes.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_vector_filler_gives_the_scalar_lanes_bytes() {
        let mut seeds = Rng::new(8);
        let start: [u64; LANES] = std::array::from_fn(|_| seeds.next_u64() | 1);
        let (mut sse, mut avx, mut scalar) = (lanes_of(start), lanes_of(start), start);
        let mut wide = lanes_of(start);
        let avx2 = std::is_x86_feature_detected!("avx2");
        let avx512 =
            std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw");
        // every tail of a partial round and of its last vector
        for len in (0..=300).chain([1000, 3000]) {
            let (mut a, mut b, mut c) = (vec![0u8; len], vec![0u8; len], vec![0u8; len]);
            // SAFETY: SSE2 is x86_64's baseline.
            unsafe { fill_sse2(&mut sse, std::iter::once(as_uninit(&mut a[..]))) };
            fill_scalar(&mut scalar, std::iter::once(as_uninit(&mut c[..])));
            assert_eq!(a, c, "sse2, {len}");
            if avx2 {
                // SAFETY: the CPU has AVX2 (checked above).
                unsafe { fill_avx2(&mut avx, std::iter::once(as_uninit(&mut b[..]))) };
                assert_eq!(b, c, "avx2, {len}");
            }
            if avx512 {
                // a guard byte past the value: the masked store must not
                // touch it
                let mut d = vec![0u8; len + 1];
                // SAFETY: the CPU has AVX-512F and BW (checked above).
                unsafe { fill_avx512(&mut wide, std::iter::once(as_uninit(&mut d[..len]))) };
                assert_eq!(d[..len], c[..], "avx-512, {len}");
                assert_eq!(d[len], 0, "avx-512 wrote past {len}");
            }
        }
    }

    #[test]
    fn the_filler_gives_the_scalar_lanes_bytes_fill_after_fill() {
        let mut f = Filler::new(&mut Rng::new(5));
        let mut seeds = Rng::new(5);
        let mut lanes: [u64; LANES] = std::array::from_fn(|_| seeds.next_u64() | 1);
        // the lanes carry over from fill to fill, through partial rounds too
        for len in [100, 1000, 64, 1, 0, 127, 3000] {
            let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
            f.fill(&mut a);
            fill_scalar(&mut lanes, std::iter::once(as_uninit(&mut b[..])));
            assert_eq!(a, b, "{len}");
        }
    }

    #[test]
    fn many_buffers_in_one_call_get_the_bytes_of_a_call_each() {
        let (mut one, mut each) = (Filler::new(&mut Rng::new(9)), Filler::new(&mut Rng::new(9)));
        let lens = [100, 100, 1, 0, 127, 128, 129, 1000, 64, 33];
        let mut a: Vec<Vec<u8>> = lens.iter().map(|&n| vec![0u8; n]).collect();
        let mut b = a.clone();
        one.fill_all(a.iter_mut().map(|v| v.as_mut_slice()));
        for v in &mut b {
            each.fill(v);
        }
        assert_eq!(a, b);
        // and the lanes go on alike
        let (mut x, mut y) = ([0u8; 300], [0u8; 300]);
        one.fill(&mut x);
        each.fill(&mut y);
        assert_eq!(x, y);
    }
}
