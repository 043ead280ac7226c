//! The element types narrower than 32 bits: `f16` and `bf16` (the `half` crate's, stored
//! in 16 bits and computed in `f32`), `i8 u8 i16 u16`. Uploads and downloads, fills,
//! casts with Rust's `as` semantics at the edges (subnormals, infinities, NaN, the
//! largest finite half, ties, saturation, wrapping), arithmetic that rounds once per
//! store, and the counters that say a chain over them is one kernel. The host references
//! are the `half` crate's conversions and Rust's own `as`.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;

/// Round trips through the device: uploads (slices and ndarrays), downloads, views.
fn round_trip<T: Element + Random + std::fmt::Debug>(ctx: &Context, seed: u64) {
    for n in [0usize, 1, 7, 1000, 4099] {
        let host = T::random_vec(&mut rng(seed + n as u64), n);
        let a = ctx.from_slice(&host).unwrap();
        assert_eq!(a.to_vec().unwrap().len(), n);
        let back = a.to_vec().unwrap();
        assert!(same_bits(&back, &host), "{} n = {n}", T::DTYPE);
        // A copy made on the device (a view's contiguous copy) moves the same bits.
        let copied = a.flip(0).flip(0).to_contiguous().to_vec().unwrap();
        assert!(same_bits(&copied, &host), "{} n = {n} through a kernel", T::DTYPE);
    }
    let m = ndarray::Array2::from_shape_vec((3, 5), T::random_vec(&mut rng(seed), 15)).unwrap();
    let a = ctx.array(&m).unwrap();
    let t = a.t().to_ndarray().unwrap();
    assert!(same_bits(
        &t.iter().copied().collect::<Vec<_>>(),
        &m.t().iter().copied().collect::<Vec<_>>()
    ));
}

/// Equal as bits (NaN payloads included).
fn same_bits<T: Element>(a: &[T], b: &[T]) -> bool {
    let bytes = |v: &[T]| -> Vec<u8> {
        // SAFETY: element types are plain values without padding.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }.to_vec()
    };
    bytes(a) == bytes(b)
}

#[test]
fn every_narrow_type_round_trips_through_uploads_views_and_kernels() {
    let ctx = ctx();
    round_trip::<f16>(&ctx, 1);
    round_trip::<bf16>(&ctx, 2);
    round_trip::<i8>(&ctx, 3);
    round_trip::<u8>(&ctx, 4);
    round_trip::<i16>(&ctx, 5);
    round_trip::<u16>(&ctx, 6);
}

#[test]
fn fills_and_ones_hold_the_value_in_its_own_bits() {
    let ctx = ctx();
    let h = ctx.full([5], f16::from_f32(-1.5)).unwrap().to_vec().unwrap();
    assert_eq!(h, vec![f16::from_f32(-1.5); 5]);
    let b = ctx.full([3], bf16::from_f32(3.0e38)).unwrap().to_vec().unwrap();
    assert_eq!(b, vec![bf16::from_f32(3.0e38); 3]);
    assert_eq!(ctx.full([4], -7i8).unwrap().to_vec().unwrap(), [-7; 4]);
    assert_eq!(ctx.full([3], 40000u16).unwrap().to_vec().unwrap(), [40000; 3]);
    assert_eq!(ctx.ones::<bf16>([2]).unwrap().to_vec().unwrap(), [bf16::ONE; 2]);
    assert_eq!(ctx.zeros::<u8>([2]).unwrap().to_vec().unwrap(), [0; 2]);
    assert_eq!(
        ctx.arange(0u8, 250, 50).unwrap().to_vec().unwrap(),
        [0, 50, 100, 150, 200]
    );
}

/// The `f32`s that test rounding to 16 bits: signed zeros, subnormals of both types,
/// ties at several exponents, the largest finite values and just past them, infinities,
/// NaN.
fn float_edges() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        65504.0,
        65519.0,
        65520.0,
        -65520.0,
        1.0e-8,
        5.960_464_5e-8,
        2.980_232_2e-8,
        2.980_233e-8,
        6.097_555e-5,
        6.103_515_6e-5,
        f32::MIN_POSITIVE,
        1.0e-40,
        f32::MAX,
        -f32::MAX,
        3.389_531_4e38,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        1.0 + 2f32.powi(-11),
        1.0 + 3.0 * 2f32.powi(-11),
        1.0 + 2f32.powi(-8),
        1.0 + 3.0 * 2f32.powi(-8),
        1.0 + 2f32.powi(-8) + 2f32.powi(-20),
        2049.0,
        2051.0,
        257.0,
        259.0,
    ];
    let mut r = rng(9);
    v.extend(f32::random_vec(&mut r, 200));
    v.extend(f32::random_vec(&mut r, 100).into_iter().map(|x| x * 1.0e-6));
    v
}

#[test]
fn casts_to_16_bit_floats_round_to_nearest_even_like_the_half_crate() {
    let ctx = ctx();
    let x = float_edges();
    let a = ctx.from_slice(&x).unwrap();
    let h = a.cast::<f16>().to_vec().unwrap();
    let b = a.cast::<bf16>().to_vec().unwrap();
    for (i, &v) in x.iter().enumerate() {
        let (want_h, want_b) = (f16::from_f32(v), bf16::from_f32(v));
        assert!(
            h[i].to_bits() == want_h.to_bits() || (v.is_nan() && h[i].is_nan()),
            "f16 of {v:e}: {:#06x}, not {:#06x}",
            h[i].to_bits(),
            want_h.to_bits()
        );
        assert!(
            b[i].to_bits() == want_b.to_bits() || (v.is_nan() && b[i].is_nan()),
            "bf16 of {v:e}: {:#06x}, not {:#06x}",
            b[i].to_bits(),
            want_b.to_bits()
        );
    }
    // Back to f32 exactly, on the device: a cast in a register rounds the same way as a
    // store does (the chain is one kernel, its f16 never stored).
    let through: Vec<f32> = a.cast::<f16>().cast::<f32>().to_vec().unwrap();
    for (i, &v) in x.iter().enumerate() {
        let want = f16::from_f32(v).to_f32();
        assert!(
            through[i].to_bits() == want.to_bits() || v.is_nan(),
            "{v:e}: {}",
            through[i]
        );
    }
    let through: Vec<f32> = a.cast::<bf16>().cast::<f32>().to_vec().unwrap();
    for (i, &v) in x.iter().enumerate() {
        let want = bf16::from_f32(v).to_f32();
        assert!(
            through[i].to_bits() == want.to_bits() || v.is_nan(),
            "{v:e}: {}",
            through[i]
        );
    }
}

/// The 16-bit float nearest to `x` (ties to even), from its bits' neighbours: the `half`
/// crate's `from_f64` may round through an `f32` first (x86's F16C), so it is a guess here.
fn nearest<T: Copy>(x: f64, guess: T, bits: fn(T) -> u16, from_bits: fn(u16) -> T, value: fn(T) -> f64) -> T {
    if x.is_nan() || value(guess).is_infinite() {
        return guess;
    }
    let g = bits(guess);
    let mut best = guess;
    for b in [g.wrapping_sub(1), g, g.wrapping_add(1)] {
        let (c, v) = (from_bits(b), value(from_bits(b)));
        if v.is_nan() || (v.signum() != x.signum() && x != 0.0 && v != 0.0) {
            continue;
        }
        let (d, db) = ((x - v).abs(), (x - value(best)).abs());
        if d < db || (d == db && b & 1 == 0) {
            best = c;
        }
    }
    best
}

fn nearest_f16(x: f64) -> f16 {
    nearest(x, f16::from_f64(x), f16::to_bits, f16::from_bits, f16::to_f64)
}

fn nearest_bf16(x: f64) -> bf16 {
    nearest(x, bf16::from_f64(x), bf16::to_bits, bf16::from_bits, bf16::to_f64)
}

#[test]
fn wide_sources_round_once_to_16_bit_floats() {
    let ctx = ctx();
    // f64 values just past a tie: rounding to f32 first would land on the tie and then
    // round to even, the wrong way.
    let tie_h = 1.0 + 2f64.powi(-11);
    let tie_b = 1.0 + 2f64.powi(-8);
    let x = vec![
        tie_h + 2f64.powi(-40),
        tie_h - 2f64.powi(-40),
        tie_b + 2f64.powi(-40),
        1e300,
        -1e-300,
        70000.5,
    ];
    let a = ctx.from_slice(&x).unwrap();
    if ctx.device().fp64 {
        let h = a.cast::<f16>().to_vec().unwrap();
        let b = a.cast::<bf16>().to_vec().unwrap();
        for (i, &v) in x.iter().enumerate() {
            assert_eq!(h[i].to_bits(), nearest_f16(v).to_bits(), "f16 of {v:e}");
            assert_eq!(b[i].to_bits(), nearest_bf16(v).to_bits(), "bf16 of {v:e}");
        }
    }
    // Integers past 2^24: the `u32` → `f32` conversion alone would round.
    let ints: Vec<u32> = vec![
        (1 << 24) + (1 << 16) + 1,
        (1 << 25) + (1 << 17) - 1,
        65519,
        65520,
        7,
        u32::MAX,
    ];
    let b = ctx.from_slice(&ints).unwrap().cast::<bf16>().to_vec().unwrap();
    let h = ctx.from_slice(&ints).unwrap().cast::<f16>().to_vec().unwrap();
    for (i, &v) in ints.iter().enumerate() {
        assert_eq!(
            b[i].to_bits(),
            nearest_bf16(f64::from(v)).to_bits(),
            "bf16 of {v}"
        );
        assert_eq!(h[i].to_bits(), nearest_f16(f64::from(v)).to_bits(), "f16 of {v}");
    }
    let longs: Vec<i64> = vec![-(1 << 40) - (1 << 32) - 1, (1 << 33) + 1, -3];
    let b = ctx.from_slice(&longs).unwrap().cast::<bf16>().to_vec().unwrap();
    for (i, &v) in longs.iter().enumerate() {
        assert_eq!(b[i].to_bits(), nearest_bf16(v as f64).to_bits(), "bf16 of {v}");
    }
}

#[test]
fn float_to_small_integer_casts_saturate_and_map_nan_to_zero() {
    let ctx = ctx();
    let x = vec![
        300.0f32,
        -300.0,
        127.9,
        -128.9,
        255.5,
        -0.9,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        40000.0,
        -40000.0,
        65535.9,
        3.7,
    ];
    let a = ctx.from_slice(&x).unwrap();
    let want_u8: Vec<u8> = x.iter().map(|&v| v as u8).collect();
    let want_i8: Vec<i8> = x.iter().map(|&v| v as i8).collect();
    let want_u16: Vec<u16> = x.iter().map(|&v| v as u16).collect();
    let want_i16: Vec<i16> = x.iter().map(|&v| v as i16).collect();
    assert_eq!(a.cast::<u8>().to_vec().unwrap(), want_u8);
    assert_eq!(a.cast::<i8>().to_vec().unwrap(), want_i8);
    assert_eq!(a.cast::<u16>().to_vec().unwrap(), want_u16);
    assert_eq!(a.cast::<i16>().to_vec().unwrap(), want_i16);
    // From 16-bit floats too (their values are f32s in a kernel).
    let h: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
    let want: Vec<i8> = h.iter().map(|v| v.to_f32() as i8).collect();
    assert_eq!(ctx.from_slice(&h).unwrap().cast::<i8>().to_vec().unwrap(), want);
    let b: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
    let want: Vec<u16> = b.iter().map(|v| v.to_f32() as u16).collect();
    assert_eq!(ctx.from_slice(&b).unwrap().cast::<u16>().to_vec().unwrap(), want);
}

#[test]
fn integer_casts_keep_the_low_bits_and_widen_by_sign() {
    let ctx = ctx();
    let x: Vec<i32> = vec![
        300,
        -1,
        200,
        -129,
        65535,
        -32769,
        i32::MIN,
        i32::MAX,
        0,
        127,
        -128,
    ];
    let a = ctx.from_slice(&x).unwrap();
    assert_eq!(
        a.cast::<u8>().to_vec().unwrap(),
        x.iter().map(|&v| v as u8).collect::<Vec<_>>()
    );
    assert_eq!(
        a.cast::<i8>().to_vec().unwrap(),
        x.iter().map(|&v| v as i8).collect::<Vec<_>>()
    );
    assert_eq!(
        a.cast::<i16>().to_vec().unwrap(),
        x.iter().map(|&v| v as i16).collect::<Vec<_>>()
    );
    assert_eq!(
        a.cast::<u16>().to_vec().unwrap(),
        x.iter().map(|&v| v as u16).collect::<Vec<_>>()
    );
    let small: Vec<i8> = vec![-128, -1, 0, 1, 127];
    let s = ctx.from_slice(&small).unwrap();
    assert_eq!(
        s.cast::<u32>().to_vec().unwrap(),
        small.iter().map(|&v| v as u32).collect::<Vec<_>>()
    );
    assert_eq!(
        s.cast::<i64>().to_vec().unwrap(),
        small.iter().map(|&v| i64::from(v)).collect::<Vec<_>>()
    );
    assert_eq!(
        s.cast::<u8>().to_vec().unwrap(),
        small.iter().map(|&v| v as u8).collect::<Vec<_>>()
    );
    assert_eq!(
        s.cast::<f32>().to_vec().unwrap(),
        small.iter().map(|&v| f32::from(v)).collect::<Vec<_>>()
    );
    let u: Vec<u16> = vec![0, 1, 32768, 65535];
    let w = ctx.from_slice(&u).unwrap();
    assert_eq!(
        w.cast::<i16>().to_vec().unwrap(),
        u.iter().map(|&v| v as i16).collect::<Vec<_>>()
    );
    assert_eq!(
        w.cast::<i64>().to_vec().unwrap(),
        u.iter().map(|&v| i64::from(v)).collect::<Vec<_>>()
    );
    assert_eq!(
        ctx.from_slice(&[true, false])
            .unwrap()
            .cast::<bf16>()
            .to_vec()
            .unwrap(),
        [bf16::ONE, bf16::ZERO]
    );
    assert_eq!(
        ctx.from_slice(&[0u8, 3])
            .unwrap()
            .cast::<bool>()
            .to_vec()
            .unwrap(),
        [false, true]
    );
}

#[test]
fn small_integer_arithmetic_wraps_like_rusts_wrapping_operations() {
    let ctx = ctx();
    let mut r = rng(21);
    let (x, y) = (i8::random_vec(&mut r, 500), i8::random_vec(&mut r, 500));
    let (a, b) = (ctx.from_slice(&x).unwrap(), ctx.from_slice(&y).unwrap());
    let pairs = x.iter().zip(&y);
    assert_eq!(
        (&a + &b).to_vec().unwrap(),
        pairs.clone().map(|(p, q)| p.wrapping_add(*q)).collect::<Vec<_>>()
    );
    assert_eq!(
        (&a - &b).to_vec().unwrap(),
        pairs.clone().map(|(p, q)| p.wrapping_sub(*q)).collect::<Vec<_>>()
    );
    assert_eq!(
        (&a * &b).to_vec().unwrap(),
        pairs.clone().map(|(p, q)| p.wrapping_mul(*q)).collect::<Vec<_>>()
    );
    let div: Vec<i8> = pairs
        .clone()
        .map(|(p, q)| if *q == 0 { 0 } else { p.wrapping_div(*q) })
        .collect();
    assert_eq!((&a / &b).to_vec().unwrap(), div);
    assert_eq!(
        (-&a).to_vec().unwrap(),
        x.iter().map(|p| p.wrapping_neg()).collect::<Vec<_>>()
    );
    assert_eq!(
        a.abs().to_vec().unwrap(),
        x.iter().map(|p| p.wrapping_abs()).collect::<Vec<_>>()
    );
    assert_eq!((!&a).to_vec().unwrap(), x.iter().map(|p| !p).collect::<Vec<_>>());
    // The result of a wrapped sum compared in the same kernel: compared as wrapped.
    let gt: Vec<bool> = pairs.clone().map(|(p, q)| p.wrapping_add(*q) > 0).collect();
    assert_eq!((&a + &b).gt(0).to_vec().unwrap(), gt);
    let m = ctx.from_slice(&[i8::MIN, -1]).unwrap();
    assert_eq!((&m / -1i8).to_vec().unwrap(), [i8::MIN, 1]);
    let (u, v) = (u8::random_vec(&mut r, 300), u8::random_vec(&mut r, 300));
    let (c, d) = (ctx.from_slice(&u).unwrap(), ctx.from_slice(&v).unwrap());
    let uv = u.iter().zip(&v);
    assert_eq!(
        (&c + &d).to_vec().unwrap(),
        uv.clone().map(|(p, q)| p.wrapping_add(*q)).collect::<Vec<_>>()
    );
    assert_eq!(
        (&c * 3u8).to_vec().unwrap(),
        u.iter().map(|p| p.wrapping_mul(3)).collect::<Vec<_>>()
    );
    assert_eq!(
        (&c - &d).to_vec().unwrap(),
        uv.clone().map(|(p, q)| p.wrapping_sub(*q)).collect::<Vec<_>>()
    );
    let lt: Vec<bool> = uv.clone().map(|(p, q)| p.wrapping_add(*q) < 100).collect();
    assert_eq!((&c + &d).lt(100).to_vec().unwrap(), lt);
    assert_eq!((!&c).to_vec().unwrap(), u.iter().map(|p| !p).collect::<Vec<_>>());
    assert_eq!(
        (&c & 0x0fu8).to_vec().unwrap(),
        u.iter().map(|p| p & 0x0f).collect::<Vec<_>>()
    );
    let (s, t) = (i16::random_vec(&mut r, 300), i16::random_vec(&mut r, 300));
    let (e, f) = (ctx.from_slice(&s).unwrap(), ctx.from_slice(&t).unwrap());
    let st = s.iter().zip(&t);
    assert_eq!(
        (&e * &f).to_vec().unwrap(),
        st.clone().map(|(p, q)| p.wrapping_mul(*q)).collect::<Vec<_>>()
    );
    let rem: Vec<i16> = st
        .clone()
        .map(|(p, q)| if *q == 0 || *q == -1 { 0 } else { p % q })
        .collect();
    assert_eq!((&e % &f).to_vec().unwrap(), rem);
    assert_eq!(
        e.pow(3).to_vec().unwrap(),
        s.iter().map(|p| p.wrapping_pow(3)).collect::<Vec<_>>()
    );
    assert_eq!(
        e.max(&f).to_vec().unwrap(),
        st.map(|(p, q)| *p.max(q)).collect::<Vec<_>>()
    );
}

#[test]
fn a_16_bit_float_chain_is_one_kernel_that_rounds_once_on_store() {
    let ctx = ctx();
    let mut r = rng(31);
    for n in [1usize, 5, 1000, 4099] {
        let (x, y, z) = (
            f32::random_vec(&mut r, n),
            f32::random_vec(&mut r, n),
            f32::random_vec(&mut r, n),
        );
        // bf16
        let to_b = |v: &[f32]| v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>();
        let (xb, yb, zb) = (to_b(&x), to_b(&y), to_b(&z));
        let (a, b, c) = (
            ctx.from_slice(&xb).unwrap(),
            ctx.from_slice(&yb).unwrap(),
            ctx.from_slice(&zb).unwrap(),
        );
        let before = ctx.stats();
        let out = (((&a * &b + &c) * bf16::from_f32(0.5)).exp() - &a).sqrt().abs() + &c;
        let got = out.to_vec().unwrap();
        let d = ctx.stats() - before;
        assert_eq!(d.kernels_launched, 1, "{d}");
        for i in 0..n {
            let (p, q, s) = (xb[i].to_f32(), yb[i].to_f32(), zb[i].to_f32());
            let want = bf16::from_f32((((p * q + s) * 0.5).exp() - p).sqrt().abs() + s);
            close_bf16(got[i], want, 2, &format!("n = {n}, i = {i}"));
        }
        // f16
        let to_h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x / 16.0)).collect::<Vec<_>>();
        let (xh, yh) = (to_h(&x), to_h(&y));
        let (a, b) = (ctx.from_slice(&xh).unwrap(), ctx.from_slice(&yh).unwrap());
        let before = ctx.stats();
        let got = ((&a * &b - &a) / (b.abs() + f16::ONE)).tanh().to_vec().unwrap();
        assert_eq!((ctx.stats() - before).kernels_launched, 1);
        for i in 0..n {
            let (p, q) = (xh[i].to_f32(), yh[i].to_f32());
            let want = f16::from_f32(((p * q - p) / (q.abs() + 1.0)).tanh());
            let diff = (got[i].to_f32() - want.to_f32()).abs();
            assert!(
                diff <= 2.0 * ulp_f16(want),
                "n = {n}, i = {i}: {} vs {}",
                got[i],
                want
            );
        }
    }
}

/// One unit in the last place of `v` as an `f16`.
fn ulp_f16(v: f16) -> f32 {
    let next = f16::from_bits(v.to_bits().wrapping_add(1)).to_f32();
    (next - v.to_f32()).abs().max(2f32.powi(-24))
}

/// `got` within `ulps` units in the last place of `want`, or both NaN.
fn close_bf16(got: bf16, want: bf16, ulps: u16, at: &str) {
    if want.is_nan() {
        assert!(got.is_nan(), "{at}: {got}, not NaN");
        return;
    }
    let d = (got.to_bits() as i32 - want.to_bits() as i32).unsigned_abs();
    assert!(d <= u32::from(ulps), "{at}: {got} vs {want}");
}

#[test]
fn comparisons_selects_and_clamps_take_narrow_types() {
    let ctx = ctx();
    let x: Vec<f16> = [-2.0f32, -0.5, 0.0, 0.5, 2.0, f32::NAN]
        .iter()
        .map(|&v| f16::from_f32(v))
        .collect();
    let a = ctx.from_slice(&x).unwrap();
    assert_eq!(
        a.gt(f16::ZERO).to_vec().unwrap(),
        [false, false, false, true, true, false]
    );
    let clipped = a.clamp(f16::from_f32(-1.0), f16::ONE).to_vec().unwrap();
    assert_eq!(&clipped[..5], &[-1.0f32, -0.5, 0.0, 0.5, 1.0].map(f16::from_f32));
    assert!(clipped[5].is_nan());
    let picked = a.gt(f16::ZERO).select(&a, &(-&a)).to_vec().unwrap();
    assert_eq!(&picked[..5], &[2.0f32, 0.5, -0.0, 0.5, 2.0].map(f16::from_f32));
    let b = ctx.from_slice(&[5u8, 250, 7]).unwrap();
    assert_eq!(
        b.ge(7u8)
            .select(&b, ctx.full([3], 1u8).unwrap())
            .to_vec()
            .unwrap(),
        [1, 250, 7]
    );
    let masked =
        &ctx.from_slice(&[1.5f32, 2.5]).unwrap().cast::<bf16>() * ctx.from_slice(&[true, false]).unwrap();
    assert_eq!(masked.to_vec().unwrap(), [bf16::from_f32(1.5), bf16::ZERO]);
}

#[test]
fn an_image_normalization_reading_u8_is_one_kernel_and_its_inverse_saturates() {
    let ctx = ctx();
    let (h, w) = (17usize, 23usize);
    let pixels = u8::random_vec(&mut rng(41), h * w * 3);
    let img = ctx.from_shape_slice([h, w, 3], &pixels).unwrap();
    let mean = ctx.from_slice(&[0.485f32, 0.456, 0.406]).unwrap();
    let std = ctx.from_slice(&[0.229f32, 0.224, 0.225]).unwrap();
    let before = ctx.stats();
    let normalized = ((img.cast::<f32>() / 255.0 - &mean) / &std).to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    for (i, &p) in pixels.iter().enumerate() {
        let c = i % 3;
        let want = (f32::from(p) / 255.0 - [0.485, 0.456, 0.406][c]) / [0.229, 0.224, 0.225][c];
        assert!((normalized[i] - want).abs() <= 1e-5 * want.abs().max(1.0), "{i}");
    }
    // Back to pixels, brightened past the top: saturates at 255 (Rust's `as`).
    let n = ctx.from_shape_slice([h, w, 3], &normalized).unwrap();
    let before = ctx.stats();
    let back = (((&n * &std + &mean) * 255.0) * 1.5)
        .round()
        .cast::<u8>()
        .to_vec()
        .unwrap();
    assert_eq!((ctx.stats() - before).kernels_launched, 1);
    for (i, &p) in pixels.iter().enumerate() {
        let want = (f32::from(p) * 1.5).round() as u8;
        assert!(back[i].abs_diff(want) <= 1, "{i}: {} vs {want}", back[i]);
    }
    assert!(back.contains(&255));
}

#[test]
fn views_regions_and_gathers_of_narrow_types_move_their_elements() {
    let ctx = ctx();
    let x = bf16::random_vec(&mut rng(51), 6 * 7);
    let a = ctx.from_shape_slice([6, 7], &x).unwrap();
    let host = ndarray::Array2::from_shape_vec((6, 7), x.clone()).unwrap();
    let got = a.slice(s![1..5;2, ..;-3]).to_ndarray().unwrap();
    assert_eq!(got, host.slice(ndarray::s![1..5;2, ..;-3]).to_owned().into_dyn());
    let joined = concatenate(Axis(0), &[&a, &a.slice(s![..2, ..])])
        .unwrap()
        .to_ndarray()
        .unwrap();
    assert_eq!(joined.shape(), [8, 7]);
    let tail: Vec<bf16> = joined.slice(ndarray::s![6.., ..]).iter().copied().collect();
    assert_eq!(
        tail,
        host.slice(ndarray::s![..2, ..])
            .iter()
            .copied()
            .collect::<Vec<_>>()
    );
    let rows = ctx.from_slice(&[5u8, 0, 5, 200]).unwrap();
    let taken = a.take(0, &rows).to_ndarray().unwrap();
    for (k, &r) in [5usize, 0, 5, 5].iter().enumerate() {
        let got: Vec<bf16> = taken.slice(ndarray::s![k, ..]).iter().copied().collect();
        assert_eq!(got, host.slice(ndarray::s![r, ..]).to_vec());
    }
    let small = ctx.from_slice(&[1i16, -2, 3]).unwrap();
    let padded = small.pad(&[(2, 1)], 9i16).to_vec().unwrap();
    assert_eq!(padded, [9, 9, 1, -2, 3, 9]);
    let h = ctx.from_slice(&[f16::from_f32(1.0), f16::from_f32(2.0)]).unwrap();
    assert_eq!(
        stack(Axis(1), &[&h, &h]).unwrap().to_vec().unwrap(),
        [1.0f32, 1.0, 2.0, 2.0].map(f16::from_f32)
    );
}
