//! Generic `#[kernel]`s: one OpenCL C program per element type the bound admits (or the
//! attribute lists), written at compile time; `name::bind::<T>(&ctx)` picks one, and each
//! instance runs against a host computation of its type.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;

/// A generic device function: an OpenCL C function per instance, picked by the caller's
/// argument types.
#[device_fn]
fn softplus<T: Float>(x: T) -> T {
    if x > (20.0 as T) {
        x
    } else {
        (x.exp() + (1.0 as T)).ln()
    }
}

#[device_fn]
fn twice<T: Numeric>(x: T) -> T {
    x + x
}

#[kernel]
fn smooth<T: Float>(x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = softplus(x[i]) + twice(x[i]);
    }
}

/// A kernel that is not generic calls the instances of its types.
#[kernel]
fn mixed(x: &[f32], n: &[i64], y: &mut [f64]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = softplus(x[i]) as f64 + twice(n[i]) as f64 + softplus(1.5f64);
    }
}

#[kernel]
fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Integers and floats alike: the constants and casts of the instance's type.
#[kernel]
fn clip_count<T: Numeric>(hi: T, x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        let v = if x[i] > hi { hi } else { x[i] };
        y[i] = (T::MAX - T::MAX) + v + (i % 3) as T;
    }
}

#[kernel(types(i32, u64))]
fn iota<T>(start: T, y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = start + i as T;
    }
}

/// Two type parameters: every combination is an instance.
#[kernel]
fn scale_to<T: Float, U: Integer>(s: T, x: &[T], y: &mut [U]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = (x[i] * s) as U;
    }
}

/// The host result of `axpy`.
fn host_axpy<T: Copy + std::ops::Mul<Output = T> + std::ops::Add<Output = T>>(
    a: T,
    x: &[T],
    y: &[T],
) -> Vec<T> {
    x.iter().zip(y).map(|(&x, &y)| a * x + y).collect()
}

#[test]
fn each_float_instance_matches_the_host() {
    let c = ctx();
    let mut r = rng(71);
    for n in [0usize, 1, 7, 1000] {
        let xs = f32::random_vec(&mut r, n);
        let ys = f32::random_vec(&mut r, n);
        let x = c.from_slice(&xs).unwrap();
        let mut y = c.from_slice(&ys).unwrap();
        axpy::bind::<f32>(&c)
            .unwrap()
            .global(n.max(1))
            .launch(1.5, &x, &mut y)
            .unwrap();
        assert_eq!(y.to_vec().unwrap(), host_axpy(1.5f32, &xs, &ys), "f32, n = {n}");

        let xd = f64::random_vec(&mut r, n);
        let yd = f64::random_vec(&mut r, n);
        let x = c.from_slice(&xd).unwrap();
        let mut y = c.from_slice(&yd).unwrap();
        axpy::bind::<f64>(&c)
            .unwrap()
            .global(n.max(1))
            .launch(-0.25, &x, &mut y)
            .unwrap();
        assert_eq!(y.to_vec().unwrap(), host_axpy(-0.25f64, &xd, &yd), "f64, n = {n}");
    }
}

#[test]
fn each_instance_is_a_program_of_its_own_written_at_compile_time() {
    assert!(axpy::source::<f64>().contains("double"));
    assert!(!axpy::source::<f32>().contains("double"));
    assert!(axpy::source::<f32>().contains("float"));
    let c = ctx();
    let built = |f: &dyn Fn()| {
        let before = c.stats();
        f();
        let d = c.stats() - before;
        d.programs_built + d.programs_loaded
    };
    // A fresh context: each instance's program once, then bound from the context's cache.
    assert_eq!(built(&|| drop(axpy::bind::<f32>(&c).unwrap())), 1);
    assert_eq!(built(&|| drop(axpy::bind::<f64>(&c).unwrap())), 1);
    assert_eq!(built(&|| drop(axpy::bind::<f32>(&c).unwrap())), 0);
}

#[test]
fn integer_and_float_instances_take_their_types_constants_and_casts() {
    let c = ctx();
    let n = 10usize;
    macro_rules! check {
        ($t:ty, $hi:expr) => {{
            let xs: Vec<$t> = (0..n).map(|i| (i * 2) as $t).collect();
            let x = c.from_slice(&xs).unwrap();
            let mut y = c.zeros::<$t>([n]).unwrap();
            clip_count::bind::<$t>(&c)
                .unwrap()
                .global(n)
                .launch($hi, &x, &mut y)
                .unwrap();
            let want: Vec<$t> = xs
                .iter()
                .enumerate()
                .map(|(i, &v)| (if v > $hi { $hi } else { v }) + (i % 3) as $t)
                .collect();
            assert_eq!(y.to_vec().unwrap(), want, stringify!($t));
        }};
    }
    check!(i32, 9);
    check!(u32, 9);
    check!(i64, 9);
    check!(u64, 9);
    check!(f32, 9.5);
    check!(f64, 9.5);

    let mut a = c.zeros::<i32>([5]).unwrap();
    iota::bind::<i32>(&c)
        .unwrap()
        .global(5)
        .launch(-2, &mut a)
        .unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![-2, -1, 0, 1, 2]);
    let mut b = c.zeros::<u64>([3]).unwrap();
    iota::bind::<u64>(&c)
        .unwrap()
        .global(3)
        .launch(1 << 40, &mut b)
        .unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![1 << 40, (1 << 40) + 1, (1 << 40) + 2]);
}

#[test]
fn two_type_parameters_give_every_combination() {
    let c = ctx();
    let xs = [0.5f64, 1.25, -3.75, 100.0];
    let x = c.from_slice(&xs).unwrap();
    let mut y = c.zeros::<i64>([4]).unwrap();
    scale_to::bind::<f64, i64>(&c)
        .unwrap()
        .global(4)
        .launch(2.0, &x, &mut y)
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![1, 2, -7, 200]);
    let xf = c.from_slice(&[1.5f32, 2.5]).unwrap();
    let mut z = c.zeros::<u32>([2]).unwrap();
    scale_to::bind::<f32, u32>(&c)
        .unwrap()
        .global(2)
        .launch(4.0, &xf, &mut z)
        .unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![6, 10]);
}

fn host_softplus(x: f64) -> f64 {
    if x > 20.0 {
        x
    } else {
        (x.exp() + 1.0).ln()
    }
}

#[test]
fn generic_device_functions_are_picked_by_argument_types() {
    let c = ctx();
    let xs = [-3.0f64, 0.0, 0.5, 25.0];
    let x = c.from_slice(&xs).unwrap();
    let mut y = c.zeros::<f64>([4]).unwrap();
    smooth::bind::<f64>(&c)
        .unwrap()
        .global(4)
        .launch(&x, &mut y)
        .unwrap();
    let want: Vec<f64> = xs.iter().map(|&v| host_softplus(v) + 2.0 * v).collect();
    let got = y.to_vec().unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-12, "{got:?} {want:?}");
    }
    // Only the instances a program calls are in its source.
    assert!(smooth::source::<f32>().contains("lzc_fn_softplus__f32"));
    assert!(!smooth::source::<f32>().contains("lzc_fn_softplus__f64"));
    assert!(!smooth::source::<f32>().contains("double"));

    let xf = c.from_slice(&[0.25f32, -1.0]).unwrap();
    let n = c.from_slice(&[3i64, -4]).unwrap();
    let mut z = c.zeros::<f64>([2]).unwrap();
    mixed::bind(&c)
        .unwrap()
        .global(2)
        .launch(&xf, &n, &mut z)
        .unwrap();
    let got = z.to_vec().unwrap();
    for (k, (&xv, &nv)) in [0.25f32, -1.0].iter().zip(&[3i64, -4]).enumerate() {
        let want = host_softplus(xv as f64) + 2.0 * nv as f64 + host_softplus(1.5);
        assert!((got[k] - want).abs() < 1e-6, "{got:?}");
    }
    assert!(mixed::SOURCE.contains("lzc_fn_softplus__f32") && mixed::SOURCE.contains("lzc_fn_twice__i64"));
}

#[test]
fn expr_calls_the_instance_of_its_operands() {
    let c = ctx();
    let xs = [-2.0f32, 0.5, 30.0];
    let x = c.from_slice(&xs).unwrap();
    let got = expr!(softplus(x) * 2.0).to_vec().unwrap();
    for (g, &v) in got.iter().zip(&xs) {
        assert!(
            (*g as f64 - 2.0 * host_softplus(v as f64)).abs() < 1e-5,
            "{got:?}"
        );
    }
    let xd = c.from_slice(&[1.0f64]).unwrap();
    let got: f64 = expr!(softplus(xd)).item().unwrap();
    assert!((got - host_softplus(1.0)).abs() < 1e-12);
}

/// Host code generic over the element type launches whichever instance it is given.
fn generic_axpy<T: Element + axpy::Types>(
    c: &Context,
    a: T,
    x: &Array<T>,
    y: &mut Array<T>,
) -> lazycl::Result<()> {
    let n = y.len().max(1);
    axpy::bind::<T>(c)?.global(n).launch(a, x, y)
}

#[test]
fn generic_host_code_launches_any_instance() {
    let c = ctx();
    let x = c.from_slice(&[1.0f32, 2.0]).unwrap();
    let mut y = c.from_slice(&[0.5f32, 0.25]).unwrap();
    generic_axpy(&c, 2.0f32, &x, &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![2.5, 4.25]);
    let x = c.from_slice(&[1.0f64, 2.0]).unwrap();
    let mut y = c.from_slice(&[0.5f64, 0.25]).unwrap();
    generic_axpy(&c, -1.0f64, &x, &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![-0.5, -1.75]);
    // Without `::<T>`, `launch`'s arguments say which instance.
    axpy::bind(&c).unwrap().global(2).launch(1.0, &x, &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![0.5, 0.25]);
}

// ---------------------------------------------------------------- const parameters

/// Sums of the `2R + 1` elements around each element (clamped at the ends): `R` is a
/// constant of the program, one program per value.
#[kernel]
fn window_sums<const R: usize>(x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < y.len() {
        let mut s = 0.0f32;
        for k in 0..2 * R + 1 {
            let j = (i + k).max(R) - R;
            s += x[j.min(x.len() - 1)];
        }
        y[i] = s;
    }
}

/// A type parameter and a constant together: `x * K`.
#[kernel]
fn scale_by<T: Float, const K: i32>(x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < y.len() {
        y[i] = x[i] * (K as T);
    }
}

fn host_window_sums(x: &[f32], r: usize) -> Vec<f32> {
    (0..x.len())
        .map(|i| {
            (0..2 * r + 1)
                .map(|k| x[((i + k).max(r) - r).min(x.len() - 1)])
                .sum()
        })
        .collect()
}

#[test]
fn const_parameters_are_program_constants_one_program_per_value() -> lazycl::Result<()> {
    let c = ctx();
    let mut r = rng(97);
    let xs = f32::random_vec(&mut r, 333);
    let x = c.from_slice(&xs)?;
    let mut y = c.zeros::<f32>([333])?;
    let built = c.stats().programs_built + c.stats().programs_loaded;
    window_sums::bind::<1>(&c)?.global(333).launch(&x, &mut y)?;
    let got = y.to_vec()?;
    for (g, w) in got.iter().zip(host_window_sums(&xs, 1)) {
        assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "R = 1: {g} vs {w}");
    }
    window_sums::bind::<4>(&c)?.global(333).launch(&x, &mut y)?;
    let got = y.to_vec()?;
    for (g, w) in got.iter().zip(host_window_sums(&xs, 4)) {
        assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "R = 4: {g} vs {w}");
    }
    // Two values, two programs; the first value again builds nothing.
    let after = c.stats().programs_built + c.stats().programs_loaded;
    assert_eq!(after - built, 2);
    window_sums::bind::<1>(&c)?;
    assert_eq!(c.stats().programs_built + c.stats().programs_loaded, after);
    // The source names the constant; its value comes at bind.
    assert!(window_sums::SOURCE.contains("LZC_CONST_R"));

    let x64: Vec<f64> = xs.iter().map(|&v| v as f64).collect();
    let xa = c.from_slice(&x64)?;
    let mut ya = c.zeros::<f64>([333])?;
    scale_by::bind::<f64, -3>(&c)?.global(333).launch(&xa, &mut ya)?;
    let want: Vec<f64> = x64.iter().map(|v| v * -3.0).collect();
    assert_eq!(ya.to_vec()?, want);
    Ok(())
}

/// Generic over the complex types (`ComplexFloat`): the complex product and `conj` of the
/// instance's type.
#[kernel]
fn rotate<T: ComplexFloat>(w: T, z: &[T], out: &mut [T]) {
    let i = global_id(0);
    if i < out.len() {
        out[i] = z[i] * w + z[i].conj();
    }
}

/// A real and a complex type listed: the same body, each type's arithmetic.
#[kernel(types(f32, c64))]
fn doubled<T>(x: &[T], out: &mut [T]) {
    let i = global_id(0);
    if i < out.len() {
        out[i] = x[i] + x[i] * 1.0;
    }
}

/// Bounded by `Element`, ordering its values: no complex instance (complex numbers have
/// no order), and the real ones compile as before.
#[kernel]
fn larger<T: Element + PartialOrd>(a: &[T], b: &[T], out: &mut [T]) {
    let i = global_id(0);
    if i < out.len() {
        out[i] = if a[i] > b[i] { a[i] } else { b[i] };
    }
}

#[test]
fn complex_instances_of_generic_kernels() {
    let c = ctx();
    for n in [0usize, 1, 7, 300] {
        let z: Vec<c64> = (0..n)
            .map(|k| c64::new(k as f64 * 0.5 - 1.0, 2.0 - k as f64))
            .collect();
        let w = c64::new(0.75, -1.25);
        let dz = c.from_slice(&z).unwrap();
        let mut out = c.zeros::<c64>([n]).unwrap();
        rotate::bind::<c64>(&c)
            .unwrap()
            .global(n.max(1))
            .launch(w, &dz, &mut out)
            .unwrap();
        let want: Vec<c64> = z.iter().map(|&v| v * w + v.conj()).collect();
        assert_eq!(out.to_vec().unwrap(), want, "c64, n = {n}");

        let z32: Vec<c32> = z.iter().map(|v| c32::new(v.re as f32, v.im as f32)).collect();
        let w32 = c32::new(0.75, -1.25);
        let dz = c.from_slice(&z32).unwrap();
        let mut out = c.zeros::<c32>([n]).unwrap();
        rotate::bind::<c32>(&c)
            .unwrap()
            .global(n.max(1))
            .launch(w32, &dz, &mut out)
            .unwrap();
        let got = out.to_vec().unwrap();
        for (g, v) in got.iter().zip(&z32) {
            assert!((g - (v * w32 + v.conj())).norm() < 1e-5, "c32, n = {n}");
        }

        let mut out = c.zeros::<c64>([n]).unwrap();
        doubled::bind::<c64>(&c)
            .unwrap()
            .global(n.max(1))
            .launch(&c.from_slice(&z).unwrap(), &mut out)
            .unwrap();
        let want: Vec<c64> = z.iter().map(|&v| v + v * 1.0).collect();
        assert_eq!(out.to_vec().unwrap(), want, "doubled c64, n = {n}");
    }
    let (a, b) = (
        c.from_slice(&[1i32, 5, -2]).unwrap(),
        c.from_slice(&[3i32, 4, -7]).unwrap(),
    );
    let mut out = c.zeros::<i32>([3]).unwrap();
    larger::bind::<i32>(&c)
        .unwrap()
        .global(3)
        .launch(&a, &b, &mut out)
        .unwrap();
    assert_eq!(out.to_vec().unwrap(), [3, 5, -2]);
}
