//! Counter-based random numbers (`ctx.random_uniform`, `random_normal`, `random_int`,
//! `Rng`): a host Philox4x32-10, checked against Random123's known answers, is the
//! reference; uniform floats and integers must be bit-identical to it on the device, for
//! random shapes (0 and 1 elements, odd sizes), seeds and streams, read whole, through
//! views, broadcast, inside regions and reductions, fused with consumers; normals within
//! `1e-5 (1 + |x|)` in `f32` and `1e-12 (1 + |x|)` in `f64`. Then coarse statistics, and
//! the counters: dropout is one kernel that stores no random numbers; a new seed or
//! stream builds nothing.
//!
//! Few distinct kernel structures (PoCL compiles each new one in about half a second):
//! sizes, seeds, streams and ranges are arguments.

use crate::common::{ctx, rng};
use lazycl::{concatenate, s, Array, Context, Element, Error};
use rand::Rng as _;

// ---- the host reference -------------------------------------------------------------

/// Philox4x32-10 (Random123's `philox4x32`, ten rounds).
fn philox(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (ctr, key);
    for _ in 0..10 {
        let p0 = 0xD251_1F53u64 * u64::from(c[0]);
        let p1 = 0xCD9E_8D57u64 * u64::from(c[2]);
        c = [
            (p1 >> 32) as u32 ^ c[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ c[3] ^ k[1],
            p0 as u32,
        ];
        k = [k[0].wrapping_add(0x9E37_79B9), k[1].wrapping_add(0xBB67_AE85)];
    }
    c
}

/// The words of counter `c` of stream `offset` of `seed` (the documented layout).
fn words(seed: u64, offset: u64, c: u64) -> [u32; 4] {
    philox(
        [c as u32, (c >> 32) as u32, offset as u32, (offset >> 32) as u32],
        [seed as u32, (seed >> 32) as u32],
    )
}

/// The 64-bit word of pair `j` of `r` (the first word the low half).
fn pair(r: [u32; 4], j: usize) -> u64 {
    u64::from(r[2 * j + 1]) << 32 | u64::from(r[2 * j])
}

/// How the host draws element `i`: each element type's layout.
trait Draws: Element {
    fn uniform(seed: u64, offset: u64, i: u64) -> Self;
    /// In f64, from the same words (the device's is within its accuracy).
    fn normal(seed: u64, offset: u64, i: u64) -> f64;
    const TOL: f64;
}

impl Draws for f32 {
    fn uniform(seed: u64, offset: u64, i: u64) -> f32 {
        let w = words(seed, offset, i / 4)[(i % 4) as usize];
        (w >> 8) as f32 * 2f32.powi(-24)
    }
    fn normal(seed: u64, offset: u64, i: u64) -> f64 {
        let r = words(seed, offset, i / 4);
        let j = (i % 4) as usize;
        let (a, b) = (r[j & 2], r[(j & 2) + 1]);
        let u1 = f64::from((a >> 8) + 1) * 2f64.powi(-24);
        let t = f64::from(b >> 8) * 2f64.powi(-23);
        let m = (-2.0 * u1.ln()).sqrt();
        let angle = std::f64::consts::PI * t;
        if j & 1 == 1 {
            m * angle.sin()
        } else {
            m * angle.cos()
        }
    }
    const TOL: f64 = 1e-5;
}

impl Draws for f64 {
    fn uniform(seed: u64, offset: u64, i: u64) -> f64 {
        let r = words(seed, offset, i / 2);
        (pair(r, (i % 2) as usize) >> 11) as f64 * 2f64.powi(-53)
    }
    fn normal(seed: u64, offset: u64, i: u64) -> f64 {
        let r = words(seed, offset, i / 2);
        let u1 = ((pair(r, 0) >> 11) + 1) as f64 * 2f64.powi(-53);
        let t = (pair(r, 1) >> 11) as f64 * 2f64.powi(-52);
        let m = (-2.0 * u1.ln()).sqrt();
        let angle = std::f64::consts::PI * t;
        if i % 2 == 1 {
            m * angle.sin()
        } else {
            m * angle.cos()
        }
    }
    const TOL: f64 = 1e-12;
}

/// Integers in `[lo, hi)` the way the device draws them (Lemire's multiply-shift).
trait Ints: Element + lazycl::Integer + Copy {
    fn int(seed: u64, offset: u64, i: u64, lo: Self, hi: Self) -> Self;
    fn from_i64(v: i64) -> Self;
    fn to_i128(self) -> i128;
}

macro_rules! ints32 {
    ($($t:ty),*) => {$(
        impl Ints for $t {
            fn int(seed: u64, offset: u64, i: u64, lo: $t, hi: $t) -> $t {
                let w = words(seed, offset, i / 4)[(i % 4) as usize];
                let range = (hi as u32).wrapping_sub(lo as u32);
                (lo as u32).wrapping_add(((u64::from(w) * u64::from(range)) >> 32) as u32) as $t
            }
            fn from_i64(v: i64) -> $t { v as $t }
            fn to_i128(self) -> i128 { self as i128 }
        }
    )*};
}
macro_rules! ints64 {
    ($($t:ty),*) => {$(
        impl Ints for $t {
            fn int(seed: u64, offset: u64, i: u64, lo: $t, hi: $t) -> $t {
                let w = pair(words(seed, offset, i / 2), (i % 2) as usize);
                let range = (hi as u64).wrapping_sub(lo as u64);
                (lo as u64).wrapping_add(((u128::from(w) * u128::from(range)) >> 64) as u64) as $t
            }
            fn from_i64(v: i64) -> $t { v as $t }
            fn to_i128(self) -> i128 { self as i128 }
        }
    )*};
}
ints32!(i32, u32);
ints64!(i64, u64);

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Element `index` (row-major) of `shape`'s coordinates: its row-major index after the
/// permutation/selection `pick` gives of each output coordinate (the host side of a view).
fn row_major(shape: &[usize], at: &[usize]) -> u64 {
    at.iter()
        .zip(shape)
        .fold(0u64, |acc, (&c, &n)| acc * n as u64 + c as u64)
}

/// The coordinates of row-major index `i` in `shape`.
fn coords(shape: &[usize], mut i: usize) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = i % shape[d];
        i /= shape[d];
    }
    c
}

// ---- the reference itself -----------------------------------------------------------

#[test]
fn host_philox_gives_random123_known_answers() {
    assert_eq!(
        philox([0; 4], [0; 2]),
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    );
    assert_eq!(
        philox([u32::MAX; 4], [u32::MAX; 2]),
        [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
    );
    assert_eq!(
        philox(
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0]
        ),
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
    );
}

#[test]
fn the_device_gives_the_known_answer_of_counter_zero() {
    // Integers in [0, 2^64 - 1) of seed 0, stream 0: w * (2^64 - 1) >> 64 = w - 1 for
    // the 64-bit words (low word first) of Philox(counter 0, key 0).
    let ctx = ctx();
    let got = ctx.random_int([2], 0u64, u64::MAX, 0).unwrap().to_vec().unwrap();
    assert_eq!(got, vec![0xe169c58d_6627e8d5 - 1, 0x9b00dbd8_bc57ac4c - 1]);
    // The same through a generator at stream 0 and the constructor's own.
    let mut r = ctx.rng(0);
    assert_eq!(r.integers([2], 0u64, u64::MAX).unwrap().to_vec().unwrap(), got);
}

// ---- bit-identical to the host --------------------------------------------------------

fn random_shape(r: &mut impl rand::Rng) -> Vec<usize> {
    let rank = r.gen_range(0..=3);
    (0..rank)
        .map(|_| match r.gen_range(0..6) {
            0 => 1,
            1 => 0,
            _ => r.gen_range(2..40),
        })
        .collect()
}

fn check_uniform<T: Draws + PartialEq + std::fmt::Debug + lazycl::Float>(
    ctx: &Context,
    r: &mut impl rand::Rng,
) {
    for _ in 0..6 {
        let shape = random_shape(r);
        let offset = if r.gen() {
            r.gen_range(0..4u64)
        } else {
            r.gen::<u64>()
        };
        let seed = r.gen::<u64>();
        let mut g = lazycl::Rng::at(ctx, seed, offset);
        let got = g.random::<T>(shape.clone()).unwrap().to_vec().unwrap();
        let want: Vec<T> = (0..numel(&shape) as u64)
            .map(|i| T::uniform(seed, offset, i))
            .collect();
        assert_eq!(got, want, "{shape:?} seed {seed:#x} offset {offset}");
        assert_eq!(g.offset(), offset.wrapping_add(1));
    }
}

#[test]
fn uniform_floats_are_bit_identical_to_the_host() {
    let ctx = ctx();
    let mut r = rng(21);
    check_uniform::<f32>(&ctx, &mut r);
    check_uniform::<f64>(&ctx, &mut r);
    // Every value in [0, 1); 0 elements and 1 element.
    let u = ctx.random_uniform::<f32>([10_007], 5).unwrap().to_vec().unwrap();
    assert!(u.iter().all(|v| (0.0..1.0).contains(v)));
    assert!(ctx
        .random_uniform::<f32>([0, 3], 5)
        .unwrap()
        .to_vec()
        .unwrap()
        .is_empty());
    assert_eq!(
        ctx.random_uniform::<f64>(Vec::<usize>::new(), 9)
            .unwrap()
            .item()
            .unwrap(),
        f64::uniform(9, 0, 0)
    );
}

fn check_ints<T: Ints + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    r: &mut impl rand::Rng,
    ranges: &[(i64, i64)],
) {
    for &(lo, hi) in ranges {
        let (lo, hi) = (T::from_i64(lo), T::from_i64(hi));
        let shape = random_shape(r);
        let seed = r.gen::<u64>();
        let got = ctx
            .random_int(shape.clone(), lo, hi, seed)
            .unwrap()
            .to_vec()
            .unwrap();
        let want: Vec<T> = (0..numel(&shape) as u64)
            .map(|i| T::int(seed, 0, i, lo, hi))
            .collect();
        assert_eq!(got, want, "{shape:?} [{lo:?}, {hi:?}) seed {seed:#x}");
        assert!(got
            .iter()
            .all(|v| v.to_i128() >= lo.to_i128() && v.to_i128() < hi.to_i128()));
    }
}

#[test]
fn integers_are_bit_identical_to_the_host() {
    let ctx = ctx();
    let mut r = rng(22);
    check_ints::<i32>(
        &ctx,
        &mut r,
        &[(-5, 5), (i32::MIN as i64, i32::MAX as i64), (7, 8)],
    );
    check_ints::<u32>(
        &ctx,
        &mut r,
        &[(0, 10), (0, u32::MAX as i64), (1 << 31, (1 << 31) + 3)],
    );
    check_ints::<i64>(&ctx, &mut r, &[(-1000, 1000), (i64::MIN, i64::MAX)]);
    check_ints::<u64>(&ctx, &mut r, &[(0, 6), (1 << 40, 1 << 41)]);
    // A generator's streams.
    let mut g = ctx.rng(77);
    let a = g.integers([9], -3i32, 4).unwrap().to_vec().unwrap();
    let b = g.integers([9], -3i32, 4).unwrap().to_vec().unwrap();
    let want = |off| (0..9u64).map(|i| i32::int(77, off, i, -3, 4)).collect::<Vec<_>>();
    assert_eq!((a, b), (want(0), want(1)));
}

#[test]
fn normals_are_within_the_tolerance_of_the_host() {
    let ctx = ctx();
    let mut r = rng(23);
    fn check<T: Draws + lazycl::Float + Into<f64>>(ctx: &Context, seed: u64, offset: u64, shape: &[usize]) {
        let got = lazycl::Rng::at(ctx, seed, offset)
            .standard_normal::<T>(shape.to_vec())
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(got.len(), numel(shape));
        for (i, g) in got.into_iter().enumerate() {
            let (g, h) = (g.into(), T::normal(seed, offset, i as u64));
            assert!(
                g.is_finite() && (g - h).abs() <= T::TOL * (1.0 + h.abs()),
                "{i}: {g} vs {h}"
            );
        }
    }
    for _ in 0..3 {
        let shape = random_shape(&mut r);
        let (seed, offset) = (r.gen(), r.gen_range(0..3));
        check::<f32>(&ctx, seed, offset, &shape);
        check::<f64>(&ctx, seed, offset, &shape);
    }
    check::<f32>(&ctx, 3, 0, &[4099]);
    check::<f64>(&ctx, 3, 1, &[4099]);
}

// ---- views, broadcasts, regions, reductions, consumers ----------------------------------

#[test]
fn views_and_broadcasts_read_each_element_at_its_own_coordinates() {
    let ctx = ctx();
    let (seed, shape) = (0x5eed_u64, [7usize, 13]);
    let host: Vec<f32> = (0..91).map(|i| f32::uniform(seed, 0, i)).collect();
    let at = |c: &[usize]| host[row_major(&shape, c) as usize];
    let u = ctx.random_uniform::<f32>(shape, seed).unwrap();
    // A lazy transpose equals the transpose of the materialized array.
    let t = u.t().to_vec().unwrap();
    assert!(!u.is_materialized());
    for (k, v) in t.iter().enumerate() {
        let c = coords(&[13, 7], k);
        assert_eq!(*v, at(&[c[1], c[0]]), "transpose at {c:?}");
    }
    // A strided, flipped slice, fused with a consumer.
    let sl = (u.slice(s![1..;2, ..;-3]) * 2.0f32 + 1.0f32).to_vec().unwrap();
    let rows: Vec<usize> = (1..7).step_by(2).collect();
    let cols: Vec<usize> = (0..13).rev().step_by(3).collect();
    let want: Vec<f32> = rows
        .iter()
        .flat_map(|&i| cols.iter().map(move |&j| (i, j)))
        .map(|(i, j)| at(&[i, j]) * 2.0 + 1.0)
        .collect();
    assert_eq!(sl, want);
    // Broadcast: a [1, 13] random row added into every row of [5, 13].
    let row = ctx.random_uniform::<f32>([1, 13], seed).unwrap();
    let z = ctx.zeros::<f32>([5, 13]).unwrap();
    let b = (&z + &row).to_vec().unwrap();
    for (k, v) in b.iter().enumerate() {
        assert_eq!(*v, host[k % 13], "broadcast at {k}");
    }
    // A region: two random arrays (other seeds) concatenated, and one padded.
    let a = ctx.random_uniform::<f32>([3, 13], 1).unwrap();
    let cat = concatenate(0, &[&a, &u]).unwrap().to_vec().unwrap();
    let want: Vec<f32> = (0..39)
        .map(|i| f32::uniform(1, 0, i))
        .chain(host.iter().copied())
        .collect();
    assert_eq!(cat, want);
    let p = a.pad(&[(1, 0), (0, 2)], -1.0).to_vec().unwrap();
    for (k, v) in p.iter().enumerate() {
        let c = coords(&[4, 15], k);
        let w = if c[0] == 0 || c[1] >= 13 {
            -1.0
        } else {
            f32::uniform(1, 0, row_major(&[3, 13], &[c[0] - 1, c[1]]))
        };
        assert_eq!(*v, w, "pad at {c:?}");
    }
}

#[test]
fn reductions_read_random_numbers_in_their_loads() {
    let ctx = ctx();
    // Rows of 5 (unaligned vector steps) and of 8 (aligned), summed along both axes.
    for cols in [5usize, 8] {
        let shape = [33usize, cols];
        let host: Vec<f64> = (0..(33 * cols) as u64).map(|i| f64::uniform(4, 2, i)).collect();
        let u = lazycl::Rng::at(&ctx, 4, 2).random::<f64>(shape).unwrap();
        let rows = u.sum_axis(1).to_vec().unwrap();
        for (i, g) in rows.iter().enumerate() {
            let h: f64 = host[i * cols..(i + 1) * cols].iter().sum();
            assert!((g - h).abs() < 1e-12, "row {i}: {g} vs {h}");
        }
        let columns = u.sum_axis(0).to_vec().unwrap();
        for (j, g) in columns.iter().enumerate() {
            let h: f64 = (0..33).map(|i| host[i * cols + j]).sum();
            assert!((g - h).abs() < 1e-12, "column {j}: {g} vs {h}");
        }
        let total = (&u * 2.0).sum().item().unwrap();
        let h: f64 = host.iter().sum::<f64>() * 2.0;
        assert!((total - h).abs() < 1e-10, "{total} vs {h}");
    }
}

// ---- statistics ---------------------------------------------------------------------------

/// Mean and variance.
fn moments(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (m, v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n)
}

#[test]
fn a_hundred_thousand_draws_have_the_moments_of_their_distributions() {
    let ctx = ctx();
    let n = 100_000usize;
    // Within 5 standard errors: mean σ/√n, variance about σ² √(κ-1)/√n.
    let se = 5.0 / (n as f64).sqrt();
    let u: Vec<f64> = ctx
        .random_uniform::<f32>([n], 11)
        .unwrap()
        .to_vec()
        .unwrap()
        .into_iter()
        .map(f64::from)
        .collect();
    let (m, v) = moments(&u);
    assert!((m - 0.5).abs() < se * (1.0f64 / 12.0).sqrt(), "uniform mean {m}");
    assert!((v - 1.0 / 12.0).abs() < se * 0.075, "uniform variance {v}");
    let z = ctx.random_normal::<f32>([n], 12).unwrap().to_vec().unwrap();
    let z: Vec<f64> = z.into_iter().map(f64::from).collect();
    let (m, v) = moments(&z);
    assert!(m.abs() < se, "normal mean {m}");
    assert!((v - 1.0).abs() < se * 2f64.sqrt(), "normal variance {v}");
    // The sin and cos halves of the pairs are uncorrelated, and so are neighbours.
    let corr = z.chunks(2).map(|p| p[0] * p[1]).sum::<f64>() / (n / 2) as f64;
    assert!(
        corr.abs() < 5.0 / ((n / 2) as f64).sqrt(),
        "pair correlation {corr}"
    );
    // Integers: each of ten values about n / 10 times (5 σ of a binomial count).
    let k = ctx.random_int([n], 0u32, 10, 13).unwrap().to_vec().unwrap();
    let mut counts = [0usize; 10];
    for &x in &k {
        counts[x as usize] += 1;
    }
    let sd = (n as f64 * 0.1 * 0.9).sqrt();
    assert!(
        counts
            .iter()
            .all(|&c| (c as f64 - n as f64 / 10.0).abs() < 5.0 * sd),
        "{counts:?}"
    );
    // Streams and seeds differ.
    let a = ctx.random_uniform::<f32>([64], 11).unwrap().to_vec().unwrap();
    let b = lazycl::Rng::at(&ctx, 11, 1)
        .random::<f32>([64])
        .unwrap()
        .to_vec()
        .unwrap();
    let c = ctx.random_uniform::<f32>([64], 12).unwrap().to_vec().unwrap();
    assert!(a.iter().zip(&b).filter(|(x, y)| x == y).count() < 2);
    assert!(a.iter().zip(&c).filter(|(x, y)| x == y).count() < 2);
}

// ---- counters, errors -------------------------------------------------------------------

#[test]
fn dropout_is_one_kernel_that_stores_no_random_numbers() {
    let ctx = ctx();
    let n = 40_000usize;
    let x = ctx.full([n], 3.0f32).unwrap();
    let p = 0.25f32;
    let dropout = |seed: u64| {
        let u = ctx.random_uniform::<f32>([n], seed).unwrap();
        u.lt(1.0 - p).select(&x / (1.0 - p), 0.0f32)
    };
    dropout(1).eval().unwrap();
    let before = ctx.stats();
    let y = dropout(2).to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    assert_eq!(d.buffers_allocated + d.buffers_reused, 1, "only the output: {d}");
    assert!(d.bytes_allocated <= (n * 4) as u64, "{d}");
    assert_eq!(
        (d.programs_built, d.plans_reused),
        (0, 1),
        "a new seed builds nothing: {d}"
    );
    let want: Vec<f32> = (0..n as u64)
        .map(|i| {
            if f32::uniform(2, 0, i) < 1.0 - p {
                3.0 / (1.0 - p)
            } else {
                0.0
            }
        })
        .collect();
    assert_eq!(y, want, "the replayed plan binds the new seed");
    // A new stream: nothing built either, and its own numbers.
    let mut g = ctx.rng(2);
    g.set_offset(5);
    let before = ctx.stats();
    let u = g.random::<f32>([n]).unwrap();
    let y = u.lt(1.0 - p).select(&x / (1.0 - p), 0.0f32).to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!((d.programs_built, d.kernels_launched), (0, 1), "{d}");
    assert_eq!(
        y[..64],
        (0..64)
            .map(|i| if f32::uniform(2, 5, i) < 0.75 { 4.0 } else { 0.0 })
            .collect::<Vec<_>>()[..]
    );
}

#[test]
fn a_vector_step_shares_one_philox_call_among_its_lanes() {
    let ctx = ctx();
    let text = ctx
        .random_uniform::<f32>([1 << 12], 1)
        .unwrap()
        .explain()
        .unwrap();
    // The vector loop (over `q`) up to the tail loop (over `gid`).
    let start = text.find("for (uint q = ").expect("a vector loop");
    let len = text[start..].find("for (uint gid = ").expect("a tail loop");
    let step = &text[start..start + len];
    assert_eq!(step.matches("lzc_philox_stream(").count(), 1, "{text}");
    assert_eq!(step.matches("lzc_random_uniform_float(").count(), 4, "{text}");
    // Read through a transposed view, each element takes a call of its own.
    let u = ctx.random_uniform::<f32>([64, 64], 1).unwrap();
    let text = (u.t() * 2.0f32).explain().unwrap();
    assert!(text.contains("rb0"), "an index of its own: {text}");
}

#[test]
fn empty_ranges_and_bad_shapes_are_errors() {
    let ctx = ctx();
    match ctx.random_int([4], 5i32, 5, 0) {
        Err(Error::InvalidShape(m)) => assert!(
            m.contains("random_int") && m.contains("lo = 5") && m.contains("hi = 5"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(ctx.random_int([4], 9u64, 2, 0).is_err());
    let mut g = ctx.rng(1);
    assert!(matches!(g.integers([4], 0i64, -1), Err(Error::InvalidShape(m)) if m.contains("integers")));
    assert_eq!(g.offset(), 0, "a failed draw takes no stream");
    assert!(ctx.random_uniform::<f32>([usize::MAX, 2], 0).is_err());
    let huge: Array<f32> = ctx.random_uniform([1 << 30, 1 << 30], 0).unwrap();
    assert!(matches!(huge.eval(), Err(Error::TooLarge { .. })));
}

/// Kernels in the plan of materializing `a`.
fn planned_kernels<T: Element>(a: &Array<T>) -> usize {
    let text = a.explain().unwrap();
    text.lines().filter(|l| l.starts_with("kernel ")).count()
}

#[test]
fn every_kernel_kind_reads_random_numbers_at_their_own_coordinates() {
    // GPU layouts forced on any device: tiles for a transposed read, rows shared.
    let ctx = Context::builder()
        .tuning(lazycl::Tuning {
            tiles_anywhere: true,
            shared_rows_anywhere: true,
            ..lazycl::Tuning::default()
        })
        .build()
        .unwrap();
    let uniform = |seed, offset, shape: &[usize]| -> Vec<f64> {
        (0..numel(shape) as u64)
            .map(|i| f64::uniform(seed, offset, i))
            .collect()
    };
    // A tiled kernel: a transposed input plus random numbers of the output's shape.
    let (m, n) = (37usize, 41usize);
    let xs: Vec<f64> = (0..m * n).map(|i| i as f64).collect();
    let x = ctx.from_shape_slice([m, n], &xs).unwrap();
    let y = x.t() + lazycl::Rng::at(&ctx, 8, 3).random::<f64>([n, m]).unwrap();
    assert!(y.explain().unwrap().contains("__local"), "a tiled kernel");
    let u = uniform(8, 3, &[n, m]);
    let got = y.to_vec().unwrap();
    for (k, g) in got.iter().enumerate() {
        let (i, j) = (k / m, k % m);
        assert_eq!(*g, xs[j * n + i] + u[k], "tiled at ({i}, {j})");
    }
    // A column reduction with the row reduction inside, over random rows.
    let (rows, d) = (2000usize, 8usize);
    let w: Vec<f64> = (0..d).map(|j| j as f64 * 0.25 - 1.0).collect();
    let xr = ctx.random_uniform::<f64>([rows, d], 9).unwrap();
    let z = (&xr * &ctx.from_slice(&w).unwrap()).sum_axes(&[1], true);
    let g = (&xr * (&z * 0.5).tanh()).sum_axis(0);
    assert!(planned_kernels(&g) <= 2, "{}", g.explain().unwrap());
    let hx = uniform(9, 0, &[rows, d]);
    let hz: Vec<f64> = (0..rows)
        .map(|i| (0..d).map(|j| hx[i * d + j] * w[j]).sum())
        .collect();
    for (j, got) in g.to_vec().unwrap().iter().enumerate() {
        let want: f64 = (0..rows).map(|i| hx[i * d + j] * (0.5 * hz[i]).tanh()).sum();
        assert!(
            (got - want).abs() < 1e-9 * rows as f64,
            "gradient {j}: {got} vs {want}"
        );
    }
    // A matrix product of a random operand, with random numbers in its epilogue.
    let (pm, pk, pn) = (17usize, 9usize, 11usize);
    let bs: Vec<f32> = (0..pk * pn).map(|i| (i % 7) as f32 - 3.0).collect();
    let b = ctx.from_shape_slice([pk, pn], &bs).unwrap();
    let a = ctx.random_uniform::<f32>([pm, pk], 10).unwrap();
    let e = ctx.random_uniform::<f32>([pm, pn], 11).unwrap();
    let p = (a.matmul(&b) + &e).to_vec().unwrap();
    for (k, got) in p.iter().enumerate() {
        let (i, j) = (k / pn, k % pn);
        let dot: f64 = (0..pk)
            .map(|l| f64::from(f32::uniform(10, 0, (i * pk + l) as u64)) * f64::from(bs[l * pn + j]))
            .sum();
        let want = dot + f64::from(f32::uniform(11, 0, k as u64));
        assert!(
            (f64::from(*got) - want).abs() < 1e-4 * (1.0 + want.abs()),
            "product at ({i}, {j})"
        );
    }
    // A scan of random numbers, with a consumer reading them again.
    let (sr, sc) = (5usize, 33usize);
    let s = ctx.random_uniform::<f64>([sr, sc], 12).unwrap();
    let got = (s.cumsum(1) * &s).to_vec().unwrap();
    let hs = uniform(12, 0, &[sr, sc]);
    for i in 0..sr {
        let mut acc = 0.0;
        for j in 0..sc {
            acc += hs[i * sc + j];
            let want = acc * hs[i * sc + j];
            assert!(
                (got[i * sc + j] - want).abs() < 1e-12 * (1.0 + want.abs()),
                "scan at ({i}, {j})"
            );
        }
    }
}
