//! `Display` of arrays: the same text as ndarray's `Display` of the host array, flags
//! included; an array that cannot be read prints its error.

use crate::common::{ctx, rng, Random};
use lazycl::Context;
use ndarray::{ArrayD, IxDyn};

/// Uploads random values of `shape` and checks `{}`, `{:.3}`, `{:#}` and `{:>12}` against
/// ndarray's text of the same values.
fn check<T>(ctx: &Context, shape: &[usize], seed: u64)
where
    T: lazycl::Element + Random + std::fmt::Display,
{
    let n: usize = shape.iter().product();
    let values = T::random_vec(&mut rng(seed), n);
    let host = ArrayD::from_shape_vec(IxDyn(shape), values.clone()).unwrap();
    let a = ctx.from_shape_slice(shape, &values).unwrap();
    assert_eq!(format!("{a}"), format!("{host}"), "{shape:?}");
    assert_eq!(format!("{a:.3}"), format!("{host:.3}"), "{shape:?}");
    assert_eq!(format!("{a:#}"), format!("{host:#}"), "{shape:?}");
    assert_eq!(format!("{a:>12}"), format!("{host:>12}"), "{shape:?}");
}

const SHAPES: &[&[usize]] = &[
    &[],
    &[1],
    &[7],
    &[3, 4],
    &[2, 3, 4],
    &[0],
    &[3, 0],
    &[1000],
    &[40, 30],
    &[9, 8, 10],
];

#[test]
fn every_type_and_shape_prints_as_ndarray_does() {
    let ctx = ctx();
    for (i, shape) in SHAPES.iter().enumerate() {
        let seed = i as u64;
        check::<f32>(&ctx, shape, seed);
        check::<i32>(&ctx, shape, seed + 100);
        check::<u32>(&ctx, shape, seed + 200);
        check::<i64>(&ctx, shape, seed + 300);
        check::<u64>(&ctx, shape, seed + 400);
        check::<bool>(&ctx, shape, seed + 500);
        if ctx.device().fp64 {
            check::<f64>(&ctx, shape, seed + 600);
        }
    }
}

#[test]
fn long_axes_are_shortened() {
    let ctx = ctx();
    let values = f32::random_vec(&mut rng(7), 2000);
    let a = ctx.from_slice(&values).unwrap();
    let text = format!("{a}");
    assert!(text.contains("..."), "{text}");
    assert_eq!(text, format!("{}", ndarray::Array1::from(values)));
}

#[test]
fn a_lazy_array_is_computed_for_printing() {
    let ctx = ctx();
    let mut r = rng(11);
    let xs = f32::random_vec(&mut r, 24);
    let ys = f32::random_vec(&mut r, 6);
    let x = ctx.from_shape_slice([4, 6], &xs).unwrap();
    let y = ctx.from_slice(&ys).unwrap();
    let z = (&x * 0.5 + &y).sum_axis(1);
    assert!(!z.is_materialized());
    let hx = ndarray::Array2::from_shape_vec((4, 6), xs).unwrap();
    let hy = ndarray::Array1::from(ys);
    let hz = (&hx * 0.5 + &hy).sum_axis(ndarray::Axis(1));
    let got = z.to_vec().unwrap();
    for (g, h) in got.iter().zip(hz.iter()) {
        assert!((g - h).abs() <= 1e-4 * h.abs().max(1.0), "{g} {h}");
    }
    // The printed text is ndarray's text of the device's values.
    assert_eq!(format!("{z:.2}"), format!("{:.2}", ndarray::Array1::from(got)));
    let mask = x.gt(0.0);
    let hmask = hx.mapv(|v| v > 0.0);
    assert_eq!(format!("{mask}"), format!("{hmask}"));
}

#[test]
fn a_failed_recording_prints_its_error() {
    let ctx = ctx();
    let a = ctx.from_shape_slice([2, 3], &[1.0f32; 6]).unwrap();
    let b = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
    let bad = &(&a + &b) * 2.0;
    let text = format!("{bad}");
    let err = bad.to_vec().unwrap_err();
    assert_eq!(text, format!("<error: {err}>"));
    assert!(text.contains("shape mismatch"), "{text}");
    // println! does not panic on it, and Debug still runs nothing.
    println!("{bad}");
    assert!(format!("{bad:?}").contains("failed"), "{bad:?}");
}

#[test]
fn debug_runs_nothing() {
    let ctx = ctx();
    let a = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let b = &a + 1.0;
    let text = format!("{b:?}");
    assert!(text.contains("lazy"), "{text}");
    assert!(!b.is_materialized());
    assert_eq!(format!("{b}"), "[2, 3, 4]");
}
