//! The narrow element types (`i8 u8 i16 u16`, the `half` crate's `f16` and `bf16`) in
//! `expr!`, `#[kernel]` and `#[device_fn]`, with the runtime's semantics: small integers
//! wrap in their own width, 16-bit floats compute in `f32` and round once (to the nearest,
//! ties to even) where stored or converted (`f16::from_f32`), and casts from floats to
//! integers saturate. The host references are the `half` crate's conversions and Rust's
//! wrapping and `as`.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;

/// The sizes every test runs: empty, one, odd, larger than a work-group.
const SIZES: [usize; 5] = [0, 1, 7, 33, 1000];

/// Element `i` of a lazy array's values equals `want[i]`, as bits (NaN included).
fn assert_bits<T: Element + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        // SAFETY: element types are plain values; compare their bytes.
        let bytes = |v: &T| {
            unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }.to_vec()
        };
        assert_eq!(bytes(g), bytes(w), "{what}: element {i}: {g:?} != {w:?}");
    }
}

/// `a * s + b` in a function generic over the integers: one template per type, picked
/// by the element type.
fn scaled_sum<T: lazycl::Integer>(a: &Array<T>, b: &Array<T>, s: T) -> Array<T> {
    expr!(a * s + b)
}

macro_rules! wrapping_case {
    ($t:ty, $seed:expr) => {{
        let ctx = ctx();
        for n in SIZES {
            let a = <$t>::random_vec(&mut rng($seed + n as u64), n);
            let b = <$t>::random_vec(&mut rng($seed + 99 + n as u64), n);
            let (x, y) = (ctx.from_slice(&a).unwrap(), ctx.from_slice(&b).unwrap());
            let s: $t = 77 as $t;
            let want: Vec<$t> = a
                .iter()
                .zip(&b)
                .map(|(p, q)| p.wrapping_mul(s).wrapping_add(*q))
                .collect();
            assert_eq!(
                scaled_sum(&x, &y, s).to_vec().unwrap(),
                want,
                "{} n = {n}",
                stringify!($t)
            );
            let want: Vec<$t> = a
                .iter()
                .zip(&b)
                .map(|(p, q)| p.wrapping_mul(2).wrapping_add(*q))
                .collect();
            assert_eq!(
                expr!(x * 2 + y).to_vec().unwrap(),
                want,
                "{} n = {n}",
                stringify!($t)
            );
        }
    }};
}

#[test]
fn expr_over_small_integers_wraps_in_their_width() {
    wrapping_case!(u8, 1);
    wrapping_case!(i8, 2);
    wrapping_case!(u16, 3);
    wrapping_case!(i16, 4);
    // Wrapping must happen inside the expression, not only where it is stored: the
    // comparison sees the wrapped value.
    let ctx = ctx();
    let x = ctx.from_slice(&[200u8, 100, 128, 3]).unwrap();
    let big = expr!(x * 2 > 100).to_vec().unwrap();
    assert_eq!(big, [true, true, false, false]);
    let i = ctx.from_slice(&[-128i8, 127, 5, -1]).unwrap();
    assert_eq!(expr!(-i / -1).to_vec().unwrap(), [-128, 127, 5, -1]);
    assert_eq!(expr!((i << 1) >> 1).to_vec().unwrap(), [0, -1, 5, -1]);
}

#[test]
fn expr_over_small_integers_is_one_kernel_and_a_scalar_builds_no_program() {
    let ctx = ctx();
    let a = ctx.from_slice(&u8::random_vec(&mut rng(5), 100)).unwrap();
    let b = ctx.from_slice(&u8::random_vec(&mut rng(6), 100)).unwrap();
    scaled_sum(&a, &b, 3).eval().unwrap();
    let before = ctx.stats();
    let r = scaled_sum(&a, &b, 9).to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d:?}");
    assert_eq!(d.programs_built, 0, "a new scalar is an argument: {d:?}");
    assert_eq!(r.len(), 100);
}

/// `x * y + z` computed in `f32` and rounded once to `T`.
fn fma_reference<T: Copy>(x: &[T], y: &[T], z: &[T], to: fn(T) -> f32, from: fn(f32) -> T) -> Vec<T> {
    (0..x.len())
        .map(|i| from(to(x[i]) * to(y[i]) + to(z[i])))
        .collect()
}

macro_rules! rounding_case {
    ($t:ty, $seed:expr) => {{
        let ctx = ctx();
        let mut differs = 0;
        for n in SIZES {
            let v: Vec<Vec<$t>> = (0..3)
                .map(|k| <$t>::random_vec(&mut rng($seed + 10 * k + n as u64), n))
                .collect();
            let (x, y, z) = (
                ctx.from_slice(&v[0]).unwrap(),
                ctx.from_slice(&v[1]).unwrap(),
                ctx.from_slice(&v[2]).unwrap(),
            );
            let got = expr!(x * y + z).to_vec().unwrap();
            let want = fma_reference(&v[0], &v[1], &v[2], <$t>::to_f32, <$t>::from_f32);
            assert_bits(&got, &want, stringify!($t));
            // Host Rust rounds after each operation; a kernel rounds once, where it stores.
            let per_op: Vec<$t> = (0..n).map(|i| v[0][i] * v[1][i] + v[2][i]).collect();
            differs += got.iter().zip(&per_op).filter(|(g, p)| g != p).count();
            // A scalar operand of the type, and a literal (its nearest value of the type).
            let s = <$t>::from_f32(0.3);
            let got = expr!(x * s - 0.3).to_vec().unwrap();
            let want: Vec<$t> = v[0]
                .iter()
                .map(|p| <$t>::from_f32(p.to_f32() * s.to_f32() - s.to_f32()))
                .collect();
            assert_bits(&got, &want, concat!(stringify!($t), " with a scalar"));
        }
        assert!(
            differs > 0,
            "{}: no value showed the single rounding",
            stringify!($t)
        );
    }};
}

#[test]
fn expr_over_16_bit_floats_computes_in_f32_and_rounds_once() {
    rounding_case!(f16, 10);
    rounding_case!(bf16, 20);
}

#[test]
fn expr_casts_from_16_bit_floats_saturate_and_to_them_round() {
    let ctx = ctx();
    let edge = [
        -5.5f32,
        0.49,
        255.5,
        300.0,
        1.0e4,
        -1.0e4,
        f32::INFINITY,
        f32::NAN,
    ];
    let h: Vec<f16> = edge.iter().map(|&v| f16::from_f32(v)).collect();
    let x = ctx.from_slice(&h).unwrap();
    let want: Vec<u8> = h.iter().map(|v| v.to_f32() as u8).collect();
    assert_eq!(expr!(x as u8).to_vec().unwrap(), want);
    let want: Vec<i8> = h.iter().map(|v| v.to_f32() as i8).collect();
    assert_eq!(expr!(x as i8).to_vec().unwrap(), want);
    let b: Vec<bf16> = edge.iter().map(|&v| bf16::from_f32(v * 7.0)).collect();
    let y = ctx.from_slice(&b).unwrap();
    let want: Vec<i16> = b.iter().map(|v| v.to_f32() as i16).collect();
    assert_eq!(expr!(y as i16).to_vec().unwrap(), want);
    // `from_f32` rounds; `to_f32` reads the value exactly.
    let f = ctx
        .from_slice(&[0.1f32, 65519.0, 65520.0, -1.0e-8, 1.0 / 3.0])
        .unwrap();
    let got = expr!(bf16::from_f32(f).to_f32() + f16::from_f32(f).to_f32())
        .to_vec()
        .unwrap();
    let want: Vec<f32> = [0.1f32, 65519.0, 65520.0, -1.0e-8, 1.0 / 3.0]
        .iter()
        .map(|&v| bf16::from_f32(v).to_f32() + f16::from_f32(v).to_f32())
        .collect();
    assert_eq!(got, want);
}

/// Slices of 16-bit floats and scalars of them; `from_f32`/`to_f32`, a constant.
#[kernel]
fn half_to_brain(a: f16, x: &[f16], y: &mut [bf16]) {
    let i = global_id(0);
    if i < y.len() {
        let v = x[i] * a + f16::from_f32(0.1);
        y[i] = bf16::from_f32(v.to_f32().min(half::f16::MAX.to_f32()));
    }
}

#[test]
fn kernel_reads_16_bit_slices_and_writes_rounded() {
    let ctx = ctx();
    let k = half_to_brain::bind(&ctx).unwrap();
    let a = f16::from_f32(-2.75);
    for n in SIZES {
        let xs = f16::random_vec(&mut rng(30 + n as u64), n);
        let x = ctx.from_slice(&xs).unwrap();
        let mut y = ctx.zeros::<bf16>([n]).unwrap();
        k.global(n.max(1)).launch(a, &x, &mut y).unwrap();
        let tenth = f16::from_f32(0.1).to_f32();
        let want: Vec<bf16> = xs
            .iter()
            .map(|v| bf16::from_f32((v.to_f32() * a.to_f32() + tenth).min(f16::MAX.to_f32())))
            .collect();
        assert_bits(&y.to_vec().unwrap(), &want, &format!("n = {n}"));
    }
}

/// Scalars of the small integers travel as 32-bit arguments; arithmetic wraps.
#[kernel]
fn small_ints(k: u8, s: i8, x: &[u8], y: &mut [i16]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = (x[i] * k) as i16 * 300 + s as i16;
    }
}

#[test]
fn kernel_takes_small_integer_scalars_and_wraps() {
    let ctx = ctx();
    let bound = small_ints::bind(&ctx).unwrap();
    for n in SIZES {
        let xs = u8::random_vec(&mut rng(40 + n as u64), n);
        let x = ctx.from_slice(&xs).unwrap();
        let mut y = ctx.zeros::<i16>([n]).unwrap();
        bound.global(n.max(1)).launch(201, -7, &x, &mut y).unwrap();
        let want: Vec<i16> = xs
            .iter()
            .map(|v| (v.wrapping_mul(201) as i16).wrapping_mul(300).wrapping_add(-7))
            .collect();
        assert_eq!(y.to_vec().unwrap(), want, "n = {n}");
    }
}

/// Local memory of a 16-bit float holds values rounded where written.
#[kernel]
fn tile_round(x: &[f16], y: &mut [f16]) {
    let mut tile = Local::<[f16; 64]>::new();
    let i = global_id(0);
    let l = local_id(0);
    if i < x.len() {
        tile[l] = x[i] * x[i] + f16::ZERO;
    }
    barrier();
    if i < y.len() {
        // The rounding error of the square, exactly (none without the rounding).
        y[i] = tile[l] - x[i] * x[i];
    }
}

#[test]
fn kernel_local_memory_of_16_bit_floats_rounds_where_written() {
    let ctx = ctx();
    let k = tile_round::bind(&ctx).unwrap();
    for n in [1usize, 7, 64, 130] {
        let xs = f16::random_vec(&mut rng(50 + n as u64), n);
        let x = ctx.from_slice(&xs).unwrap();
        let mut y = ctx.zeros::<f16>([n]).unwrap();
        k.global(n.div_ceil(64) * 64)
            .local(64)
            .launch(&x, &mut y)
            .unwrap();
        let want: Vec<f16> = xs
            .iter()
            .map(|v| {
                let t = f16::from_f32(v.to_f32() * v.to_f32()).to_f32();
                f16::from_f32(t - v.to_f32() * v.to_f32())
            })
            .collect();
        assert_bits(&y.to_vec().unwrap(), &want, &format!("n = {n}"));
        assert!(
            n < 7 || want.iter().any(|w| w.to_f32() != 0.0),
            "n = {n}: no square rounded"
        );
    }
}

/// A device function of 16-bit floats, mapped over arrays and called from `expr!`.
#[device_fn]
fn lerp16(a: f16, b: f16, t: f16) -> f16 {
    a + (b - a) * t
}

#[test]
fn device_fn_of_16_bit_floats_maps_and_rounds_once() {
    let ctx = ctx();
    for n in SIZES {
        let v: Vec<Vec<f16>> = (0..2)
            .map(|k| f16::random_vec(&mut rng(60 + k + n as u64), n))
            .collect();
        let (a, b) = (ctx.from_slice(&v[0]).unwrap(), ctx.from_slice(&v[1]).unwrap());
        let t = f16::from_f32(0.375);
        let host = |p: f16, q: f16| f16::from_f32(p.to_f32() + (q.to_f32() - p.to_f32()) * t.to_f32());
        let want: Vec<f16> = v[0].iter().zip(&v[1]).map(|(p, q)| host(*p, *q)).collect();
        assert_bits(&lerp16::map(&a, &b, t).to_vec().unwrap(), &want, "map");
        let twice: Vec<f16> = want.iter().map(|w| f16::from_f32(w.to_f32() * 2.0)).collect();
        assert_bits(&expr!(lerp16(a, b, t) * 2.0).to_vec().unwrap(), &twice, "expr!");
    }
}

/// The generic saxpy: its instances include the 16-bit floats.
#[kernel]
fn saxpy_any<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

fn generic_saxpy_case<T>(to: fn(T) -> f32, from: fn(f32) -> T, seed: u64)
where
    T: Element + Random + std::fmt::Debug + saxpy_any::Types,
{
    let ctx = ctx();
    let k = saxpy_any::bind::<T>(&ctx).unwrap();
    let a = from(-1.625);
    for n in SIZES {
        let xs = T::random_vec(&mut rng(seed + n as u64), n);
        let ys = T::random_vec(&mut rng(seed + 7 + n as u64), n);
        let x = ctx.from_slice(&xs).unwrap();
        let mut y = ctx.from_slice(&ys).unwrap();
        k.global(n.max(1)).launch(a, &x, &mut y).unwrap();
        let want: Vec<T> = xs
            .iter()
            .zip(&ys)
            .map(|(p, q)| from(to(a) * to(*p) + to(*q)))
            .collect();
        assert_bits(&y.to_vec().unwrap(), &want, &format!("{} n = {n}", T::DTYPE));
    }
}

#[test]
fn generic_saxpy_instantiates_for_16_bit_floats() {
    generic_saxpy_case::<f16>(f16::to_f32, f16::from_f32, 70);
    generic_saxpy_case::<bf16>(bf16::to_f32, bf16::from_f32, 80);
    generic_saxpy_case::<f32>(|v| v, |v| v, 90);
    // Each instance is its own program, with the element type's memory type.
    assert!(saxpy_any::source::<f16>().contains("__global const half*"));
    assert!(saxpy_any::source::<bf16>().contains("__global const ushort*"));
}

/// A generic kernel whose body the 16-bit floats cannot have (atomics on them): its
/// instances for them are left out, the others work.
#[kernel]
fn float_total<T: Float>(x: &[T], total: &mut [T]) {
    let i = global_id(0);
    if i < x.len() {
        atomic_add(&mut total[0], x[i]);
    }
}

#[test]
fn generic_kernel_leaves_out_the_16_bit_instances_it_cannot_have() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.5]).unwrap();
    let mut t = ctx.zeros::<f32>([1]).unwrap();
    float_total::bind::<f32>(&ctx)
        .unwrap()
        .global(3)
        .launch(&x, &mut t)
        .unwrap();
    assert_eq!(t.to_vec().unwrap(), [6.5]);
}

/// Generic over the integers: the small ones included, each wrapping in its width.
#[kernel]
fn shift_add<T: Integer>(s: T, x: &mut [T]) {
    let i = global_id(0);
    if i < x.len() {
        x[i] = (x[i] << 3) + s * x[i];
    }
}

#[test]
fn generic_integer_kernel_instantiates_for_small_integers() {
    let ctx = ctx();
    let xs = i8::random_vec(&mut rng(100), 33);
    let mut x = ctx.from_slice(&xs).unwrap();
    shift_add::bind::<i8>(&ctx)
        .unwrap()
        .global(33)
        .launch(-3, &mut x)
        .unwrap();
    let want: Vec<i8> = xs
        .iter()
        .map(|v| (v << 3).wrapping_add((-3i8).wrapping_mul(*v)))
        .collect();
    assert_eq!(x.to_vec().unwrap(), want);
    let xs = u16::random_vec(&mut rng(101), 7);
    let mut x = ctx.from_slice(&xs).unwrap();
    shift_add::bind::<u16>(&ctx)
        .unwrap()
        .global(7)
        .launch(1000, &mut x)
        .unwrap();
    let want: Vec<u16> = xs
        .iter()
        .map(|v| (v << 3).wrapping_add(1000u16.wrapping_mul(*v)))
        .collect();
    assert_eq!(x.to_vec().unwrap(), want);
}
