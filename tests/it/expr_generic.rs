//! `expr!` inside functions generic over the element type: the expression's variants
//! become one impl bounded by the element kinds (`T: Float`, `T: Numeric`, ...), so the
//! generic function compiles once and runs for each type it is called with; type
//! parameters named in the expression (`T::EPSILON`, `T::from(v)`, `as T`, `T::MAX`,
//! `T::ZERO`) are the caller's. Host scalars of type `T` (or `&T`) are operands with no
//! bound beyond the element kind. Against host references on random data, several sizes.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;

const SIZES: [usize; 4] = [0, 1, 7, 1001];

/// `(x - mean) / (std + ε)` with the element type's ε.
fn standardize<T: lazycl::Float>(x: &Array<T>, mean: &Array<T>, std: &Array<T>) -> Array<T> {
    expr!((x - mean) / (std + T::EPSILON))
}

/// `x * y + x` over any numeric type (wrapping for integers).
fn fma_like<T: lazycl::Numeric>(x: &Array<T>, y: &Array<T>) -> Array<T> {
    expr!(x * y + x)
}

/// Affine map with converted constants: `x * 2 + 1` in `T`.
fn affine<T: lazycl::Float>(x: &Array<T>) -> Array<T> {
    expr!(x * T::from(2.0) + T::ONE)
}

/// Integers converted to the caller's float type, halved: `T` names no operand's type.
fn halves<T: lazycl::Float>(i: &Array<i32>) -> Array<T> {
    expr!(i as T * T::from(0.5))
}

/// The successor, saturating at the type's maximum.
fn successor<T: lazycl::Integer>(x: &Array<T>) -> Array<T> {
    expr!(if x == T::MAX { x } else { x + T::ONE })
}

/// `a * x + b` with host scalars of the caller's float type.
fn scale_shift<T: lazycl::Float>(x: &Array<T>, a: T, b: &T) -> Array<T> {
    expr!(if x > b { (x * a).exp() } else { x * a + b })
}

/// `a * x + y` with a host scalar of any numeric type (wrapping for integers); `y` owned.
fn axpy<T: lazycl::Numeric>(a: T, x: &Array<T>, y: Array<T>) -> Array<T> {
    expr!(a * x + y)
}

/// `x / 4` with bits flipped by a host mask, floored at a host value.
fn masked_floor<T: lazycl::Integer>(x: &Array<T>, mask: T, lo: T) -> Array<T> {
    expr!(if x < lo { lo } else { (x >> 2) ^ mask })
}

/// Bits of `x` under a host mask: `&` and `!` also take `bool` (kind `Bitwise`), and an
/// `Integer` function uses the same expression.
fn clear_bits<T: lazycl::Bitwise>(x: &Array<T>, mask: T) -> Array<T> {
    expr!(x & !mask)
}
fn clear_bits_int<T: lazycl::Integer>(x: &Array<T>, mask: T) -> Array<T> {
    expr!(x & !mask)
}

/// The array where `c` holds, else a host value: any element type, `bool` included.
fn fill_where_not<T: lazycl::Element>(c: &Array<bool>, a: &Array<T>, v: T) -> Array<T> {
    expr!(if c { a } else { v })
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol * (1.0 + b.abs())
}

#[test]
fn float_generic_expressions_run_for_f32_and_f64() {
    let c = ctx();
    let mut r = rng(91);
    for n in SIZES {
        let x32 = f32::random_vec(&mut r, n);
        let x64: Vec<f64> = x32.iter().map(|&v| v as f64 * 1.25).collect();
        // f32
        let (m, s) = (3.5f32, 0.0f32);
        let x = c.from_slice(&x32).unwrap();
        let got = standardize(&x, &c.from_slice(&[m]).unwrap(), &c.from_slice(&[s]).unwrap());
        let got = got.to_vec().unwrap();
        for (g, v) in got.iter().zip(&x32) {
            let want = ((v - m) / (s + f32::EPSILON)) as f64;
            assert!(close(*g as f64, want, 1e-6), "f32 standardize {g} vs {want}");
        }
        let got = affine(&x).to_vec().unwrap();
        for (g, v) in got.iter().zip(&x32) {
            assert!(close(*g as f64, (v * 2.0 + 1.0) as f64, 1e-6));
        }
        // f64: ε is f64's.
        let x = c.from_slice(&x64).unwrap();
        let got = standardize(
            &x,
            &c.from_slice(&[1.0f64]).unwrap(),
            &c.from_slice(&[0.0f64]).unwrap(),
        );
        for (g, v) in got.to_vec().unwrap().iter().zip(&x64) {
            assert!(close(*g, (v - 1.0) / f64::EPSILON, 1e-12), "f64 standardize");
        }
        let got = affine(&x).to_vec().unwrap();
        for (g, v) in got.iter().zip(&x64) {
            assert!(close(*g, v * 2.0 + 1.0, 1e-12));
        }
        // A type parameter that is no operand's: the result's.
        let ints = i32::random_vec(&mut r, n);
        let i = c.from_slice(&ints).unwrap();
        let h32: Vec<f32> = halves::<f32>(&i).to_vec().unwrap();
        let h64: Vec<f64> = halves::<f64>(&i).to_vec().unwrap();
        for ((a, b), v) in h32.iter().zip(&h64).zip(&ints) {
            assert_eq!(*a, *v as f32 * 0.5);
            assert_eq!(*b, *v as f64 * 0.5);
        }
    }
}

fn check_numeric<T>(seed: u64, host: impl Fn(T, T) -> T)
where
    T: lazycl::Numeric + Random + std::fmt::Debug,
{
    let c = ctx();
    let mut r = rng(seed);
    for n in SIZES {
        let (xs, ys) = (T::random_vec(&mut r, n), T::random_vec(&mut r, n));
        let got = fma_like(&c.from_slice(&xs).unwrap(), &c.from_slice(&ys).unwrap());
        let got = got.to_vec().unwrap();
        let want: Vec<T> = xs.iter().zip(&ys).map(|(&x, &y)| host(x, y)).collect();
        assert_eq!(got, want, "{} n = {n}", std::any::type_name::<T>());
    }
}

#[test]
fn numeric_generic_expressions_run_for_every_numeric_type() {
    check_numeric::<i32>(1, |x, y| x.wrapping_mul(y).wrapping_add(x));
    check_numeric::<u32>(2, |x, y| x.wrapping_mul(y).wrapping_add(x));
    check_numeric::<i64>(3, |x, y| x.wrapping_mul(y).wrapping_add(x));
    check_numeric::<u64>(4, |x, y| x.wrapping_mul(y).wrapping_add(x));
    // (FP_CONTRACT is off: `x * y + x` rounds twice, as on the host.)
    check_numeric::<f32>(5, |x, y| x * y + x);
    check_numeric::<f64>(6, |x, y| x * y + x);
}

#[test]
fn integer_constants_are_the_callers_types() {
    let c = ctx();
    let x = c.from_slice(&[0u32, 7, u32::MAX]).unwrap();
    assert_eq!(successor(&x).to_vec().unwrap(), vec![1, 8, u32::MAX]);
    let x = c.from_slice(&[i64::MIN, -1, i64::MAX]).unwrap();
    assert_eq!(successor(&x).to_vec().unwrap(), vec![i64::MIN + 1, 0, i64::MAX]);
}

#[test]
fn a_generic_expression_fuses_and_builds_one_program_per_type() {
    let c = ctx();
    let x = c.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let y = c.from_slice(&[0.5f32, 0.25, 2.0]).unwrap();
    let before = c.stats();
    // Two generic expressions and an operator: one kernel.
    let z = (affine(&fma_like(&x, &y)) * 2.0f32).to_vec().unwrap();
    let mid = c.stats();
    assert_eq!(mid.kernels_launched - before.kernels_launched, 1);
    assert_eq!(z, vec![8.0, 12.0, 38.0]);
    // Again: nothing new to build.
    let _ = (affine(&fma_like(&x, &y)) * 2.0f32).to_vec().unwrap();
    assert_eq!(c.stats().programs_built, mid.programs_built);
}

#[test]
fn host_scalars_of_a_float_type_parameter_are_operands() {
    let c = ctx();
    let mut r = rng(92);
    for n in SIZES {
        let x32 = f32::random_vec(&mut r, n);
        let got = scale_shift(&c.from_slice(&x32).unwrap(), 0.75f32, &0.25f32);
        for (g, &v) in got.to_vec().unwrap().iter().zip(&x32) {
            let v = v as f64;
            let want = if v > 0.25 {
                (v * 0.75).exp()
            } else {
                v * 0.75 + 0.25
            };
            assert!(close(*g as f64, want, 1e-5), "f32 {g} vs {want}");
        }
        let x64: Vec<f64> = x32.iter().map(|&v| v as f64 * 1.5 - 0.125).collect();
        let got = scale_shift(&c.from_slice(&x64).unwrap(), -1.25f64, &0.5f64);
        for (g, &v) in got.to_vec().unwrap().iter().zip(&x64) {
            let want = if v > 0.5 {
                (v * -1.25).exp()
            } else {
                v * -1.25 + 0.5
            };
            assert!(close(*g, want, 1e-12), "f64 {g} vs {want}");
        }
    }
}

fn check_axpy<T>(seed: u64, a: T, host: impl Fn(T, T, T) -> T)
where
    T: lazycl::Numeric + Random + std::fmt::Debug,
{
    let c = ctx();
    let mut r = rng(seed);
    for n in SIZES {
        let (xs, ys) = (T::random_vec(&mut r, n), T::random_vec(&mut r, n));
        let got = axpy(a, &c.from_slice(&xs).unwrap(), c.from_slice(&ys).unwrap());
        let want: Vec<T> = xs.iter().zip(&ys).map(|(&x, &y)| host(a, x, y)).collect();
        assert_eq!(
            got.to_vec().unwrap(),
            want,
            "{} n = {n}",
            std::any::type_name::<T>()
        );
    }
}

#[test]
fn host_scalars_of_a_numeric_type_parameter_are_operands() {
    check_axpy::<i32>(11, -3, |a, x, y| a.wrapping_mul(x).wrapping_add(y));
    check_axpy::<u32>(12, 7, |a, x, y| a.wrapping_mul(x).wrapping_add(y));
    check_axpy::<i64>(13, -5, |a, x, y| a.wrapping_mul(x).wrapping_add(y));
    check_axpy::<u64>(14, 9, |a, x, y| a.wrapping_mul(x).wrapping_add(y));
    check_axpy::<f32>(15, 1.5, |a, x, y| a * x + y);
    check_axpy::<f64>(16, -0.75, |a, x, y| a * x + y);
}

#[test]
fn host_scalars_of_integer_bitwise_and_element_type_parameters_are_operands() {
    let c = ctx();
    let mut r = rng(93);
    for n in SIZES {
        let xs = i64::random_vec(&mut r, n);
        let got = masked_floor(&c.from_slice(&xs).unwrap(), 0xff0i64, -100);
        let want: Vec<i64> = xs
            .iter()
            .map(|&x| if x < -100 { -100 } else { (x >> 2) ^ 0xff0 })
            .collect();
        assert_eq!(got.to_vec().unwrap(), want);
        let us = u32::random_vec(&mut r, n);
        let got = masked_floor(&c.from_slice(&us).unwrap(), 0xf0f0u32, 1 << 20);
        let want: Vec<u32> = us
            .iter()
            .map(|&x| if x < 1 << 20 { 1 << 20 } else { (x >> 2) ^ 0xf0f0 })
            .collect();
        assert_eq!(got.to_vec().unwrap(), want);

        let got = clear_bits(&c.from_slice(&us).unwrap(), 0xf0f0u32);
        let want: Vec<u32> = us.iter().map(|&x| x & !0xf0f0).collect();
        assert_eq!(got.to_vec().unwrap(), want);
        let got = clear_bits_int(&c.from_slice(&xs).unwrap(), -8i64);
        let want: Vec<i64> = xs.iter().map(|&x| x & !-8).collect();
        assert_eq!(got.to_vec().unwrap(), want);

        let cond = bool::random_vec(&mut r, n);
        let got = clear_bits(&c.from_slice(&cond).unwrap(), true);
        assert_eq!(got.to_vec().unwrap(), vec![false; n]);
        let got = clear_bits(&c.from_slice(&cond).unwrap(), false);
        assert_eq!(got.to_vec().unwrap(), cond);
        let cm = c.from_slice(&cond).unwrap();
        let fs = f64::random_vec(&mut r, n);
        let got = fill_where_not(&cm, &c.from_slice(&fs).unwrap(), -1.0);
        let want: Vec<f64> = cond
            .iter()
            .zip(&fs)
            .map(|(&k, &f)| if k { f } else { -1.0 })
            .collect();
        assert_eq!(got.to_vec().unwrap(), want);
        let bs = bool::random_vec(&mut r, n);
        let got = fill_where_not(&cm, &c.from_slice(&bs).unwrap(), true);
        let want: Vec<bool> = cond
            .iter()
            .zip(&bs)
            .map(|(&k, &b)| if k { b } else { true })
            .collect();
        assert_eq!(got.to_vec().unwrap(), want);
    }
}

#[test]
fn a_new_generic_host_scalar_builds_no_program() {
    let c = ctx();
    let x = c.from_slice(&[1.0f32, -2.0, 3.0]).unwrap();
    let y = c.from_slice(&[0.5f32, 0.25, 2.0]).unwrap();
    assert_eq!(
        axpy(2.0f32, &x, y.clone()).to_vec().unwrap(),
        vec![2.5, -3.75, 8.0]
    );
    let before = c.stats();
    assert_eq!(axpy(-1.0f32, &x, y).to_vec().unwrap(), vec![-0.5, 2.25, -1.0]);
    let after = c.stats();
    assert_eq!(
        after.programs_built, before.programs_built,
        "a scalar is a kernel argument"
    );
    assert_eq!(after.kernels_launched - before.kernels_launched, 1);
}
