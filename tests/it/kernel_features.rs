//! `#[kernel]` features beyond expressions, each checked against a host computation:
//! scalar parameters of every type, `#[device_fn]`s, work-item intrinsics in 1-3
//! dimensions, local memory with barriers, atomics (global and local), early return, a
//! bound kernel shared by several threads, and the launch counters.

use lazycl::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn context() -> Context {
    Context::new().expect("an OpenCL device (PoCL is enough)")
}

fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

// ---------------------------------------------------------------- scalar parameters

#[kernel]
fn params(
    a: f32,
    b: f64,
    c: i32,
    d: u32,
    e: i64,
    f: u64,
    g: bool,
    h: usize,
    mut m: i32,
    out_f: &mut [f64],
    out_i: &mut [i64],
    flags: &mut [bool],
) {
    m += 1;
    out_f[0] = a as f64;
    out_f[1] = b;
    out_i[0] = c as i64;
    out_i[1] = d as i64;
    out_i[2] = e;
    out_i[3] = f as i64;
    out_i[4] = h as i64;
    out_i[5] = m as i64;
    flags[0] = g;
    flags[1] = !g;
}

#[test]
fn scalar_parameters_of_every_type() -> lazycl::Result<()> {
    let ctx = context();
    let k = params::bind(&ctx)?;
    let mut out_f = ctx.zeros::<f64>([2])?;
    let mut out_i = ctx.zeros::<i64>([6])?;
    let mut flags = ctx.zeros::<bool>([2])?;
    let mut r = rng(1);
    for round in 0..3 {
        let (a, b, c, d, e, f): (f32, f64, i32, u32, i64, u64) =
            (r.gen(), r.gen(), r.gen(), r.gen(), r.gen(), r.gen());
        let (g, h, m) = (
            round % 2 == 0,
            r.gen_range(0..1usize << 40),
            r.gen_range(-1000..1000),
        );
        k.global(1)
            .launch(a, b, c, d, e, f, g, h, m, &mut out_f, &mut out_i, &mut flags)?;
        assert_eq!(out_f.to_vec()?, vec![a as f64, b]);
        assert_eq!(
            out_i.to_vec()?,
            vec![c as i64, d as i64, e, f as i64, h as i64, m as i64 + 1]
        );
        assert_eq!(flags.to_vec()?, vec![g, !g]);
    }
    Ok(())
}

// ---------------------------------------------------------------- device functions

#[device_fn]
fn square(x: f32) -> f32 {
    x * x
}

/// Calls another device function.
#[device_fn]
fn sum_sq(a: f32, b: f32) -> f32 {
    square(a) + square(b)
}

#[device_fn]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i] * y[i];
    }
    s
}

#[device_fn]
fn store(out: &mut [i32], i: usize, v: i32) {
    if i >= out.len() {
        return;
    }
    out[i] = v;
}

#[device_fn]
fn collatz(n: u64) -> u32 {
    let mut n = n;
    let mut c = 0;
    while n != 1 {
        if c == 500 {
            return u32::MAX;
        }
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        c += 1;
    }
    c
}

#[kernel]
fn use_device_fns(
    x: &[f32],
    y: &[f32],
    a: &[f64],
    b: &[f64],
    out: &mut [f32],
    dots: &mut [f64],
    ints: &mut [i32],
    steps: &mut [u32],
) {
    let i = global_id(0);
    if i >= x.len() {
        return;
    }
    out[i] = sum_sq(x[i], y[i]) - square(x[i]);
    if i == 0 {
        dots[0] = dot(a, b);
    }
    store(ints, i, i as i32 * 3);
    steps[i] = collatz(i as u64 + 1);
}

fn host_collatz(mut n: u64) -> u32 {
    let mut c = 0;
    while n != 1 {
        if c == 500 {
            return u32::MAX;
        }
        n = if n.is_multiple_of(2) { n / 2 } else { 3 * n + 1 };
        c += 1;
    }
    c
}

#[test]
fn device_functions() -> lazycl::Result<()> {
    let ctx = context();
    let k = use_device_fns::bind(&ctx)?;
    assert!(use_device_fns::SOURCE.contains("lzc_fn_square"));
    let mut r = rng(2);
    for n in [1usize, 7, 300] {
        let x: Vec<f32> = (0..n).map(|_| r.gen_range(-10.0..10.0)).collect();
        let y: Vec<f32> = (0..n).map(|_| r.gen_range(-10.0..10.0)).collect();
        let a: Vec<f64> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
        let b: Vec<f64> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
        let (xa, ya, aa, ba) = (
            ctx.from_slice(&x)?,
            ctx.from_slice(&y)?,
            ctx.from_slice(&a)?,
            ctx.from_slice(&b)?,
        );
        let mut out = ctx.zeros::<f32>([n])?;
        let mut dots = ctx.zeros::<f64>([1])?;
        let mut ints = ctx.zeros::<i32>([n])?;
        let mut steps = ctx.zeros::<u32>([n])?;
        k.global(n)
            .launch(&xa, &ya, &aa, &ba, &mut out, &mut dots, &mut ints, &mut steps)?;
        let out = out.to_vec()?;
        for i in 0..n {
            let want = x[i] * x[i] + y[i] * y[i] - x[i] * x[i];
            assert!(
                (out[i] - want).abs() <= 1e-4 * want.abs().max(1.0),
                "{i}: {} vs {want}",
                out[i]
            );
        }
        let want: f64 = a.iter().zip(&b).map(|(p, q)| p * q).sum();
        assert!((dots.to_vec()?[0] - want).abs() < 1e-12);
        assert_eq!(ints.to_vec()?, (0..n as i32).map(|i| i * 3).collect::<Vec<_>>());
        assert_eq!(
            steps.to_vec()?,
            (0..n as u64).map(|i| host_collatz(i + 1)).collect::<Vec<_>>()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------- work-item intrinsics

#[kernel]
fn work_items(out: &mut [u64]) {
    let w = global_size(0);
    let h = global_size(1);
    let idx = ((global_id(2) * h + global_id(1)) * w + global_id(0)) * 12;
    for d in 0..3 {
        out[idx + d as usize] = global_id(d) as u64;
        out[idx + 3 + d as usize] = local_id(d) as u64;
        out[idx + 6 + d as usize] = group_id(d) as u64;
    }
    out[idx + 9] = local_size(0) as u64 * 100 + local_size(1) as u64 * 10 + local_size(2) as u64;
    out[idx + 10] = num_groups(0) as u64 * 100 + num_groups(1) as u64 * 10 + num_groups(2) as u64;
    out[idx + 11] = global_size(2) as u64;
}

#[test]
fn work_item_intrinsics_in_three_dimensions() -> lazycl::Result<()> {
    let ctx = context();
    let k = work_items::bind(&ctx)?;
    let (w, h, d) = (8usize, 6usize, 2usize);
    let (lw, lh, ld) = (4usize, 3usize, 1usize);
    let mut out = ctx.zeros::<u64>([w * h * d * 12])?;
    k.global([w, h, d]).local([lw, lh, ld]).launch(&mut out)?;
    let out = out.to_vec()?;
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                let base = ((z * h + y) * w + x) * 12;
                let g = [x, y, z];
                let l = [lw, lh, ld];
                for dim in 0..3 {
                    assert_eq!(out[base + dim], g[dim] as u64);
                    assert_eq!(out[base + 3 + dim], (g[dim] % l[dim]) as u64);
                    assert_eq!(out[base + 6 + dim], (g[dim] / l[dim]) as u64);
                }
                assert_eq!(out[base + 9], 431);
                assert_eq!(out[base + 10], 222);
                assert_eq!(out[base + 11], d as u64);
            }
        }
    }
    // Two dimensions, given as a tuple, without a local size.
    let mut out2 = ctx.zeros::<u64>([5 * 3 * 12])?;
    k.global((5, 3)).launch(&mut out2)?;
    let out2 = out2.to_vec()?;
    assert_eq!(out2[(2 * 5 + 4) * 12], 4);
    assert_eq!(out2[(2 * 5 + 4) * 12 + 1], 2);
    assert_eq!(out2[(2 * 5 + 4) * 12 + 11], 1);
    Ok(())
}

// ---------------------------------------------------------------- local memory, barrier

#[kernel]
fn reverse_groups(x: &[i32], out: &mut [i32]) {
    let mut tile = Local::<[i32; 64]>::new();
    let l = local_id(0);
    let g = global_id(0);
    let n = local_size(0);
    tile[l] = x[g];
    barrier();
    out[g] = tile[n - 1 - l];
}

#[kernel]
fn group_sums(x: &[f32], sums: &mut [f32]) {
    let mut tile: Local<[f32; 128]> = Local::new();
    let l = local_id(0);
    let g = global_id(0);
    tile[l] = if g < x.len() { x[g] } else { 0.0 };
    barrier();
    let mut stride = local_size(0) / 2;
    while stride > 0 {
        if l < stride {
            tile[l] += tile[l + stride];
        }
        barrier();
        stride /= 2;
    }
    if l == 0 {
        sums[group_id(0)] = tile[0];
    }
}

#[test]
fn local_memory_and_barriers() -> lazycl::Result<()> {
    let ctx = context();
    let mut r = rng(3);
    let rev = reverse_groups::bind(&ctx)?;
    let x: Vec<i32> = (0..64 * 5).map(|_| r.gen()).collect();
    let xa = ctx.from_slice(&x)?;
    let mut out = ctx.zeros::<i32>([x.len()])?;
    rev.global(x.len()).local(64).launch(&xa, &mut out)?;
    let want: Vec<i32> = x.chunks(64).flat_map(|c| c.iter().rev().copied()).collect();
    assert_eq!(out.to_vec()?, want);

    let sums = group_sums::bind(&ctx)?;
    for n in [1usize, 127, 128, 1000] {
        let x: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
        let groups = n.div_ceil(128);
        let xa = ctx.from_slice(&x)?;
        let mut s = ctx.zeros::<f32>([groups])?;
        sums.global(groups * 128).local(128).launch(&xa, &mut s)?;
        let s = s.to_vec()?;
        for (gi, c) in x.chunks(128).enumerate() {
            let want: f32 = c.iter().sum();
            assert!((s[gi] - want).abs() < 1e-4, "group {gi}: {} vs {want}", s[gi]);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- atomics

macro_rules! atomics_kernel {
    ($name:ident, $T:ident) => {
        #[kernel]
        fn $name(x: &[$T], acc: &mut [$T], old: &mut [$T], bins: &mut [u32]) {
            let mut local_bins = Local::<[u32; 16]>::new();
            let l = local_id(0);
            if l < 16 {
                local_bins[l] = 0;
            }
            barrier();
            let i = global_id(0);
            if i < x.len() {
                let v = x[i];
                atomic_add(&mut acc[0], v);
                atomic_sub(&mut acc[1], v);
                atomic_min(&mut acc[2], v);
                atomic_max(&mut acc[3], v);
                atomic_and(&mut acc[4], v | 0x0f0f);
                atomic_or(&mut acc[5], v & 0x0ff0);
                atomic_xor(&mut acc[6], v);
                let mut cur = acc[7];
                loop {
                    let prev = atomic_cmpxchg(&mut acc[7], cur, cur + 1);
                    if prev == cur {
                        break;
                    }
                    cur = prev;
                }
                old[i] = atomic_xchg(&mut acc[8], v);
                atomic_add(&mut local_bins[(v as u32 % 16) as usize], 1);
            }
            barrier();
            if l < 16 {
                atomic_add(&mut bins[l], local_bins[l]);
            }
        }
    };
}

atomics_kernel!(atomics_i32, i32);
atomics_kernel!(atomics_u32, u32);
// 64-bit integers: OpenCL C 1.2's `atom_*` under `cl_khr_int64_*_atomics`.
atomics_kernel!(atomics_i64, i64);
atomics_kernel!(atomics_u64, u64);

macro_rules! atomics_test {
    ($test:ident, $name:ident, $T:ident, $seed:expr) => {
        #[test]
        fn $test() -> lazycl::Result<()> {
            let ctx = context();
            let k = $name::bind(&ctx)?;
            let mut r = rng($seed);
            for n in [1usize, 333, 4096] {
                let x: Vec<$T> = (0..n).map(|_| r.gen::<$T>() >> 4).collect();
                let init: Vec<$T> = vec![5, 7, <$T>::MAX, <$T>::MIN, !0, 0, 0, 0, 42];
                let xa = ctx.from_slice(&x)?;
                let mut acc = ctx.from_slice(&init)?;
                let mut old = ctx.zeros::<$T>([n])?;
                let mut bins = ctx.zeros::<u32>([16])?;
                let global = n.div_ceil(64) * 64;
                k.global(global)
                    .local(64)
                    .launch(&xa, &mut acc, &mut old, &mut bins)?;
                let acc = acc.to_vec()?;
                let fold = |f: fn($T, $T) -> $T, start: $T| x.iter().fold(start, |a, &b| f(a, b));
                assert_eq!(acc[0], fold(|a, b| a.wrapping_add(b), 5));
                assert_eq!(acc[1], fold(|a, b| a.wrapping_sub(b), 7));
                assert_eq!(acc[2], fold(|a, b| a.min(b), <$T>::MAX));
                assert_eq!(acc[3], fold(|a, b| a.max(b), <$T>::MIN));
                assert_eq!(acc[4], fold(|a, b| a & (b | 0x0f0f), !0));
                assert_eq!(acc[5], fold(|a, b| a | (b & 0x0ff0), 0));
                assert_eq!(acc[6], fold(|a, b| a ^ b, 0));
                assert_eq!(acc[7], n as $T);
                let mut seen = old.to_vec()?;
                seen.push(acc[8]);
                seen.sort_unstable();
                let mut want = x.clone();
                want.push(42);
                want.sort_unstable();
                assert_eq!(seen, want);
                let mut hist = vec![0u32; 16];
                for &v in &x {
                    hist[(v as u32 % 16) as usize] += 1;
                }
                assert_eq!(bins.to_vec()?, hist);
            }
            Ok(())
        }
    };
}

atomics_test!(atomics_on_i32, atomics_i32, i32, 4);
atomics_test!(atomics_on_u32, atomics_u32, u32, 5);
atomics_test!(atomics_on_i64, atomics_i64, i64, 6);
atomics_test!(atomics_on_u64, atomics_u64, u64, 7);

#[test]
fn a_kernel_names_the_extension_its_64_bit_atomics_need() {
    assert!(atomics_i64::SOURCE.contains("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable"));
    assert!(atomics_i64::SOURCE.contains("#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable"));
    assert!(!atomics_i32::SOURCE.contains("int64"));
}

#[test]
fn binding_a_kernel_whose_extension_the_device_lacks_is_an_error_naming_it() {
    // Every extension a program enables is checked at bind against the device's list.
    static NEEDS: lazycl::KernelSource = lazycl::KernelSource {
        name: "needs_an_extension",
        source: "#pragma OPENCL EXTENSION cl_lazycl_no_such_extension : enable\n\
                 __kernel void needs_an_extension(__global int* x) { x[0] = 1; }",
        num_args: 1,
        dtypes: &[],
    };
    let c = crate::common::ctx();
    match lazycl::Kernel::bind(&c, &NEEDS) {
        Err(e @ lazycl::Error::UnsupportedExtension { .. }) => {
            let text = e.to_string();
            assert!(text.contains("needs_an_extension"), "{text}");
            assert!(text.contains("cl_lazycl_no_such_extension"), "{text}");
            assert!(text.contains(&c.device().name), "{text}");
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("bound a kernel whose extension the device lacks"),
    }
}

// ---------------------------------------------------------------- threads and counters

#[kernel]
fn axpb(a: i64, b: i64, x: &[i64], y: &mut [i64]) {
    let i = global_id(0);
    if i < x.len() {
        y[i] = a * x[i] + b;
    }
}

#[test]
fn one_bound_kernel_from_many_threads() -> lazycl::Result<()> {
    let ctx = context();
    let k = axpb::bind(&ctx)?;
    std::thread::scope(|s| {
        for t in 0..6i64 {
            let (k, ctx) = (&k, &ctx);
            s.spawn(move || -> lazycl::Result<()> {
                let n = 1000 + 37 * t as usize;
                let x: Vec<i64> = (0..n as i64).map(|i| i * (t + 1)).collect();
                let xa = ctx.from_slice(&x)?;
                let mut y = ctx.zeros::<i64>([n])?;
                for round in 0..25 {
                    k.global(n).launch(t + round, -t, &xa, &mut y)?;
                }
                let y = y.to_vec()?;
                for i in 0..n {
                    assert_eq!(y[i], (t + 24) * x[i] - t, "thread {t}, element {i}");
                }
                Ok(())
            });
        }
    });
    Ok(())
}

#[test]
fn launches_build_once_and_never_wait() -> lazycl::Result<()> {
    let ctx = context();
    let x = ctx.from_slice(&(0..256i64).collect::<Vec<_>>())?;
    let mut y = ctx.zeros::<i64>([256])?;
    y.eval()?;
    x.eval()?;
    let before = ctx.stats();
    let k = axpb::bind(&ctx)?;
    let k2 = axpb::bind(&ctx)?; // cached: no second build or kernel
    for i in 0..100 {
        if i % 2 == 0 { &k } else { &k2 }
            .global(256)
            .launch(i, 1, &x, &mut y)?;
    }
    let d = ctx.stats() - before;
    assert_eq!(d.programs_built + d.programs_loaded, 1, "{d:?}");
    assert_eq!(d.kernels_created, 1, "{d:?}");
    assert_eq!(d.kernels_launched, 100, "{d:?}");
    assert_eq!(d.host_waits, 0, "{d:?}");
    assert_eq!(y.to_vec()?[3], 99 * 3 + 1);
    Ok(())
}

#[test]
fn empty_and_single_launches() -> lazycl::Result<()> {
    let ctx = context();
    let k = axpb::bind(&ctx)?;
    let x = ctx.zeros::<i64>([0])?;
    let mut y = ctx.zeros::<i64>([0])?;
    k.global(0).launch(1, 2, &x, &mut y)?;
    assert_eq!(y.to_vec()?, Vec::<i64>::new());
    let x = ctx.from_slice(&[5i64])?;
    let mut y = ctx.zeros::<i64>([1])?;
    k.global(1).launch(3, 2, &x, &mut y)?;
    assert_eq!(y.to_vec()?, vec![17]);
    // More work-items than elements: the kernel's bounds check keeps it safe.
    let x = ctx.from_slice(&[1i64, 2, 3])?;
    let mut y = ctx.zeros::<i64>([3])?;
    k.global(64).launch(2, 0, &x, &mut y)?;
    assert_eq!(y.to_vec()?, vec![2, 4, 6]);
    Ok(())
}

#[test]
fn launch_errors_are_reported() -> lazycl::Result<()> {
    let ctx = context();
    let k = axpb::bind(&ctx)?;
    let x = ctx.zeros::<i64>([10])?;
    let mut y = ctx.zeros::<i64>([10])?;
    // 10 is not a multiple of 4.
    assert!(k.global(10).local(4).launch(1, 2, &x, &mut y).is_err());
    assert!(k.global([10]).local([5, 1]).launch(1, 2, &x, &mut y).is_err());
    Ok(())
}

/// Tuple bindings: every value is computed before any name is bound (so a tuple swaps),
/// nested and typed tuples, `_`, and `mut` names.
#[kernel]
fn tuple_lets(x: &[f32], out: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        let (s, c) = (x[i].sin(), x[i].cos());
        let (mut a, b) = (s, c);
        let (a2, b2) = (b, a);
        a += 1.0;
        let ((p, _), q): ((f32, i32), f32) = ((a2 * b2, 7), 2.0);
        out[i] = s * s + c * c + a + p * q + b;
    }
}

#[test]
fn tuple_bindings_match_the_host() {
    let c = crate::common::ctx();
    let xs: Vec<f32> = (0..37).map(|i| i as f32 * 0.37 - 5.0).collect();
    let x = c.from_slice(&xs).unwrap();
    let mut out = c.zeros::<f32>([xs.len()]).unwrap();
    tuple_lets::bind(&c)
        .unwrap()
        .global(xs.len())
        .launch(&x, &mut out)
        .unwrap();
    let got = out.to_vec().unwrap();
    for (g, &v) in got.iter().zip(&xs) {
        let (s, co) = (v.sin(), v.cos());
        // a = s + 1 after the swap took (a2, b2) = (c, s).
        let want = s * s + co * co + (s + 1.0) + (co * s) * 2.0 + co;
        assert!((g - want).abs() < 1e-5 * (1.0 + want.abs()), "{g} {want}");
    }
}

#[device_fn]
fn cube(v: f32) -> f32 {
    v * v * v
}

/// Closures bound to a name, inlined where called: typed parameters, a block body with
/// its own `let`, a declared return type, device functions inside, shadowed names
/// around the call.
#[kernel]
fn closures(x: &[f32], out: &mut [f32]) {
    let sq = |v: f32| v * v;
    let lerp = |a: f32, b: f32, t: f32| -> f32 {
        let d = b - a;
        a + d * t
    };
    let poly = |v: f32, k: i32| cube(v) + (k as f32) * v;
    let i = global_id(0);
    if i < x.len() {
        let v = x[i];
        let a = 100.0f32; // the closures' `a` is their parameter, not this
        out[i] = lerp(sq(v), v, 0.25) + sq(2.0) + poly(v, 3) + a;
    }
}

#[test]
fn closures_are_inlined_and_match_the_host() {
    let c = crate::common::ctx();
    let xs: Vec<f32> = (0..29).map(|i| i as f32 * 0.5 - 7.0).collect();
    let x = c.from_slice(&xs).unwrap();
    let mut out = c.zeros::<f32>([xs.len()]).unwrap();
    closures::bind(&c)
        .unwrap()
        .global(xs.len())
        .launch(&x, &mut out)
        .unwrap();
    let got = out.to_vec().unwrap();
    for (g, &v) in got.iter().zip(&xs) {
        let s = v * v;
        let want = s + (v - s) * 0.25 + 4.0 + v * v * v + 3.0 * v + 100.0;
        assert!((g - want).abs() < 1e-4 * (1.0 + want.abs()), "{g} {want}");
    }
    assert!(!closures::SOURCE.contains("lerp"), "inlined, not a function");
}

/// `const` items: an array of weights indexed by a loop, one repeated, a scalar, and a
/// constant computed from another.
#[kernel]
fn weighted(x: &[f32], out: &mut [f32]) {
    const W: [f32; 5] = [0.1, 0.2, 0.4, 0.2, 0.1];
    const ONES: [i32; 3] = [1; 3];
    const SCALE: f32 = 2.0 * std::f32::consts::PI;
    const HALF: f32 = SCALE / 2.0 + W[2] - 0.4;
    let i = global_id(0);
    if i + W.len() <= x.len() {
        let mut s = 0.0;
        for k in 0..W.len() {
            s += W[k] * x[i + k];
        }
        out[i] = s * SCALE + (ONES[0] + ONES[2]) as f32 + HALF;
    }
}

#[test]
fn const_items_match_the_host() {
    let c = crate::common::ctx();
    let xs: Vec<f32> = (0..40).map(|i| ((i * 7) % 11) as f32 - 3.0).collect();
    let x = c.from_slice(&xs).unwrap();
    let n = xs.len() - 4;
    let mut out = c.zeros::<f32>([n]).unwrap();
    weighted::bind(&c)
        .unwrap()
        .global(n)
        .launch(&x, &mut out)
        .unwrap();
    let got = out.to_vec().unwrap();
    let w = [0.1f32, 0.2, 0.4, 0.2, 0.1];
    let scale = 2.0 * std::f32::consts::PI;
    for (i, g) in got.iter().enumerate() {
        let s: f32 = (0..5).map(|k| w[k] * xs[i + k]).sum();
        let want = s * scale + 2.0 + (scale / 2.0 + 0.4 - 0.4);
        assert!((g - want).abs() < 1e-4 * (1.0 + want.abs()), "{i}: {g} {want}");
    }
}

/// `atomic_add` on `f32` and `f64`, in global and in local memory (a compare-and-swap
/// loop; `f64`'s needs `cl_khr_int64_base_atomics`).
#[kernel]
fn float_sums<T: Float>(x: &[T], sums: &mut [T], by_group: &mut [T]) {
    let mut acc = Local::<[T; 1]>::new();
    let i = global_id(0);
    if local_id(0) == 0 {
        acc[0] = 0.0;
    }
    barrier();
    if i < x.len() {
        atomic_add(&mut sums[i % 4], x[i]);
        atomic_sub(&mut sums[4], x[i]);
        atomic_add(&mut acc[0], x[i]);
    }
    barrier();
    if local_id(0) == 0 {
        atomic_add(&mut by_group[0], acc[0]);
    }
}

fn float_atomics_add_every_value<T>() -> lazycl::Result<()>
where
    T: lazycl::Element
        + lazycl::Float
        + std::ops::AddAssign
        + std::ops::SubAssign
        + std::iter::Sum
        + From<f32>,
    T: float_sums::Types,
{
    let c = crate::common::ctx();
    let n = 1000usize;
    // Values whose sums are exact whatever the order: multiples of 1/4.
    let xs: Vec<T> = (0..n).map(|i| T::from(((i * 37) % 101) as f32 * 0.25)).collect();
    let x = c.from_slice(&xs)?;
    let mut sums = c.zeros::<T>([5])?;
    let mut total = c.zeros::<T>([1])?;
    float_sums::bind::<T>(&c)?
        .global(1024)
        .local(64)
        .launch(&x, &mut sums, &mut total)?;
    let mut want = [T::from(0.0); 5];
    for (i, &v) in xs.iter().enumerate() {
        want[i % 4] += v;
        want[4] -= v;
    }
    assert_eq!(sums.to_vec()?, want.to_vec());
    assert_eq!(total.to_vec()?, vec![xs.iter().copied().sum::<T>()]);
    Ok(())
}

#[test]
fn float_atomics_add_every_value_f32_and_f64() -> lazycl::Result<()> {
    float_atomics_add_every_value::<f32>()?;
    float_atomics_add_every_value::<f64>()
}

// ---------------------------------------------------------------- work-group collectives

macro_rules! collectives_kernel {
    ($name:ident, $T:ident, $zero:expr) => {
        /// Per work-group: the sum, least and greatest of its elements of `x` (work-items
        /// past the end add nothing and repeat the last element), and the element of the
        /// group's work-item `pick`; written by the group's last work-item.
        #[kernel]
        fn $name(
            x: &[$T],
            pick: usize,
            sums: &mut [$T],
            mins: &mut [$T],
            maxs: &mut [$T],
            picked: &mut [$T],
        ) {
            let i = global_id(0);
            let n = x.len();
            let v = if i < n { x[i] } else { $zero };
            let w = x[i.min(n - 1)];
            let s = work_group_reduce_add(v);
            let lo = work_group_reduce_min(w);
            let hi = work_group_reduce_max(w);
            let p = work_group_broadcast(w, pick);
            if local_id(0) == local_size(0) - 1 {
                let g = group_id(0);
                sums[g] = s;
                mins[g] = lo;
                maxs[g] = hi;
                picked[g] = p;
            }
        }
    };
}

collectives_kernel!(collectives_i32, i32, 0);
collectives_kernel!(collectives_u64, u64, 0);
collectives_kernel!(collectives_f32, f32, 0.0);
collectives_kernel!(collectives_f64, f64, 0.0);

/// (PoCL takes about 8 s to build each of these kernels, whose barriers sit in loops
/// inside helpers: `i32` and `f64` run in `make test`, `u64` and `f32` with `--ignored`.)
macro_rules! collectives_test {
    ($(#[$attr:meta])* $test:ident, $name:ident, $T:ident, $gen:expr, $close:expr) => {
        #[test]
        $(#[$attr])*
        fn $test() -> lazycl::Result<()> {
            let ctx = context();
            let k = $name::bind(&ctx)?;
            let mut r = rng(71);
            // An odd size, and more than the scratch holds (folded in
            // chunks). (PoCL compiles a kernel per work-group size: few sizes.)
            for (n, group) in [(1000usize, 3usize), (1300, 512)] {
                let x: Vec<$T> = (0..n).map(|_| $gen(&mut r)).collect();
                let groups = n.div_ceil(group);
                let pick = group / 2;
                let xa = ctx.from_slice(&x)?;
                let mut out: Vec<lazycl::Array<$T>> = (0..4)
                    .map(|_| ctx.zeros::<$T>([groups]))
                    .collect::<lazycl::Result<_>>()?;
                let [sums, mins, maxs, picked] = &mut out[..] else {
                    unreachable!()
                };
                k.global(groups * group)
                    .local(group)
                    .launch(&xa, pick, sums, mins, maxs, picked)?;
                let (sums, mins, maxs, picked) = (
                    sums.to_vec()?,
                    mins.to_vec()?,
                    maxs.to_vec()?,
                    picked.to_vec()?,
                );
                for g in 0..groups {
                    let part = &x[g * group..((g + 1) * group).min(n)];
                    let last = x[((g + 1) * group).min(n) - 1];
                    let want_sum = part.iter().fold(0 as $T, |a, &b| $close.0(a, b));
                    assert!(
                        $close.1(sums[g], want_sum),
                        "n {n} group {group} #{g}: sum {} vs {}",
                        sums[g],
                        want_sum
                    );
                    let lo = part
                        .iter()
                        .copied()
                        .fold(last, |a, b| if b < a { b } else { a });
                    let hi = part
                        .iter()
                        .copied()
                        .fold(last, |a, b| if b > a { b } else { a });
                    assert_eq!(
                        (mins[g], maxs[g]),
                        (lo, hi),
                        "n {n} group {group} #{g}: min, max"
                    );
                    let want_pick = x[(g * group + pick).min(n - 1)];
                    assert_eq!(picked[g], want_pick, "n {n} group {group} #{g}: broadcast");
                }
            }
            Ok(())
        }
    };
}

collectives_test!(
    collectives_on_i32,
    collectives_i32,
    i32,
    |r: &mut rand::rngs::StdRng| r.gen::<i32>(),
    (|a: i32, b: i32| a.wrapping_add(b), |g: i32, w: i32| g == w)
);
collectives_test!(
    #[ignore = "slow to build on PoCL; run with --ignored"]
    collectives_on_u64,
    collectives_u64,
    u64,
    |r: &mut rand::rngs::StdRng| r.gen::<u64>(),
    (|a: u64, b: u64| a.wrapping_add(b), |g: u64, w: u64| g == w)
);
collectives_test!(
    #[ignore = "slow to build on PoCL; run with --ignored"]
    collectives_on_f32,
    collectives_f32,
    f32,
    |r: &mut rand::rngs::StdRng| r.gen_range(-100.0f32..100.0),
    (
        |a: f32, b: f32| a + b,
        |g: f32, w: f32| (g - w).abs() <= 1e-3 * (1.0 + w.abs())
    )
);
collectives_test!(
    collectives_on_f64,
    collectives_f64,
    f64,
    |r: &mut rand::rngs::StdRng| r.gen_range(-100.0f64..100.0),
    (
        |a: f64, b: f64| a + b,
        |g: f64, w: f64| (g - w).abs() <= 1e-9 * (1.0 + w.abs())
    )
);

// ---------------------------------------------------------------- structs by value

/// Parameters of a step, passed by value.
#[derive(Clone, Copy, Debug, KernelStruct)]
#[repr(C)]
struct Step {
    dt: f32,
    steps: u32,
}

/// Fields of every size, in an order that needs padding (`b` at 8, 24 bytes in all).
#[derive(Clone, Copy, Debug, KernelStruct)]
#[repr(C)]
struct Mixed {
    a: u32,
    b: f64,
    c: i32,
    d: i64,
    e: f32,
    f: u64,
}

#[kernel]
fn advance(p: Step, x: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        x[i] += p.dt * p.steps as f32;
    }
}

/// Every field of `m`, each as an f64, and two structs in one kernel.
#[kernel]
fn read_fields(m: Mixed, s: Step, out: &mut [f64]) {
    if global_id(0) == 0 {
        out[0] = m.a as f64;
        out[1] = m.b;
        out[2] = m.c as f64;
        out[3] = m.d as f64;
        out[4] = m.e as f64;
        out[5] = m.f as f64;
        out[6] = s.dt as f64 + s.steps as f64;
    }
}

/// A generic kernel that takes a struct.
#[kernel]
fn advance_any<T: Float>(p: Step, x: &mut [T]) {
    let i = global_id(0);
    if i < x.len() {
        x[i] += (p.dt * p.steps as f32) as T;
    }
}

#[test]
fn structs_are_passed_by_value_at_opencl_cs_offsets() -> lazycl::Result<()> {
    let c = crate::common::ctx();
    let mut x = c.from_slice(&[1.0f32, 2.0, 3.0])?;
    let k = advance::bind(&c)?;
    k.global(3).launch(Step { dt: 0.5, steps: 4 }, &mut x)?;
    assert_eq!(x.to_vec()?, vec![3.0, 4.0, 5.0]);
    // A new value of the same struct each launch (struct arguments are set every time).
    k.global(3).launch(Step { dt: -1.0, steps: 1 }, &mut x)?;
    assert_eq!(x.to_vec()?, vec![2.0, 3.0, 4.0]);
    let mut y = c.from_slice(&[1.0f64, 2.0])?;
    advance_any::bind::<f64>(&c)?
        .global(2)
        .launch(Step { dt: 0.25, steps: 2 }, &mut y)?;
    assert_eq!(y.to_vec()?, vec![1.5, 2.5]);

    let m = Mixed {
        a: 7,
        b: -2.5,
        c: -9,
        d: -(1 << 40),
        e: 0.25,
        f: 1 << 50,
    };
    let mut out = c.zeros::<f64>([7])?;
    read_fields::bind(&c)?
        .global(1)
        .launch(m, Step { dt: 1.5, steps: 2 }, &mut out)?;
    let want = vec![
        7.0,
        -2.5,
        -9.0,
        -(1i64 << 40) as f64,
        0.25,
        (1u64 << 50) as f64,
        3.5,
    ];
    assert_eq!(out.to_vec()?, want);
    assert!(read_fields::SOURCE
        .contains("typedef struct { uint a; double b; int c; long d; float e; ulong f; } lzc_struct_Mixed;"));
    Ok(())
}

#[test]
fn the_devices_struct_layout_is_rusts() -> lazycl::Result<()> {
    // A probe kernel reports OpenCL C's `sizeof` and offsets of the typedef the derive
    // wrote; they equal Rust's `size_of` and `offset_of!`.
    static PROBE: lazycl::KernelSource = lazycl::KernelSource {
        name: "probe",
        source: concat!(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
            "typedef struct { uint a; double b; int c; long d; float e; ulong f; } lzc_struct_Mixed;\n",
            "__kernel void probe(__global ulong* out) { lzc_struct_Mixed m; __private char* base = (__private char*)&m;\n",
            " out[0] = sizeof(lzc_struct_Mixed);\n",
            " out[1] = (__private char*)&m.a - base; out[2] = (__private char*)&m.b - base;\n",
            " out[3] = (__private char*)&m.c - base; out[4] = (__private char*)&m.d - base;\n",
            " out[5] = (__private char*)&m.e - base; out[6] = (__private char*)&m.f - base; }\n"
        ),
        num_args: 1,
        dtypes: &[lazycl::DType::F64],
    };
    assert!(PROBE
        .source
        .contains(<Mixed as lazycl::KernelStruct>::CL_SOURCE.lines().nth(2).unwrap()));
    let c = crate::common::ctx();
    let out = c.zeros::<u64>([7])?;
    let k = lazycl::Kernel::bind(&c, &PROBE)?;
    let arg = out.kernel_arg()?;
    k.submit(
        &lazycl::LaunchOptions::new(lazycl::Dims::from(1)),
        &[arg.mem()],
        &[&arg],
        false,
    )?;
    use std::mem::{offset_of, size_of};
    let want = vec![
        size_of::<Mixed>() as u64,
        offset_of!(Mixed, a) as u64,
        offset_of!(Mixed, b) as u64,
        offset_of!(Mixed, c) as u64,
        offset_of!(Mixed, d) as u64,
        offset_of!(Mixed, e) as u64,
        offset_of!(Mixed, f) as u64,
    ];
    assert_eq!(out.to_vec()?, want);
    Ok(())
}

/// Struct locals: a literal, a copy of a parameter, fields written.
#[kernel]
fn struct_locals(p: Step, x: &mut [f32]) {
    let i = global_id(0);
    let mut q = p;
    q.dt = q.dt * 2.0;
    let r = Step { steps: 3, dt: 0.25 };
    if i < x.len() {
        x[i] = q.dt * q.steps as f32 + r.dt * r.steps as f32 + p.dt;
    }
}

#[test]
fn struct_locals_are_literals_and_copies() -> lazycl::Result<()> {
    let c = crate::common::ctx();
    let mut x = c.zeros::<f32>([2])?;
    struct_locals::bind(&c)?
        .global(2)
        .launch(Step { dt: 1.5, steps: 2 }, &mut x)?;
    // q = (3.0, 2) → 6; r → 0.75; p.dt unchanged → 1.5.
    assert_eq!(x.to_vec()?, vec![8.25, 8.25]);
    Ok(())
}

/// A tuple parameter: fields `p.0`, `p.1`, laid out like a struct.
#[kernel]
fn tuple_param(p: (u32, f64, f32), x: &mut [f64]) {
    let i = global_id(0);
    if i < x.len() {
        x[i] = p.0 as f64 + p.1 * p.2 as f64;
    }
}

#[test]
fn tuples_are_passed_by_value() -> lazycl::Result<()> {
    let c = crate::common::ctx();
    let mut x = c.zeros::<f64>([3])?;
    tuple_param::bind(&c)?.global(3).launch((4, -1.5, 2.0), &mut x)?;
    assert_eq!(x.to_vec()?, vec![1.0; 3]);
    assert!(tuple_param::SOURCE
        .contains("typedef struct { uint _0; double _1; float _2; } lzc_struct_tuple_u32_f64_f32;"));
    Ok(())
}
