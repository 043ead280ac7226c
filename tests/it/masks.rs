//! A mask (`Array<bool>`) in arithmetic with a numeric array counts as 0 and 1 of the
//! array's type, on either side, owned or borrowed, broadcast by numpy's rules; against
//! the same arithmetic on the host.

use crate::common::{ctx, rng, Random};
use lazycl::Array;

/// Checks `a op mask` and `mask op a` for every borrow form against the host, with the
/// mask of shape `[n, 1]` broadcast against `a` of shape `[n, m]` and a full-shape one.
macro_rules! mask_suite {
    ($test:ident, $t:ty, $seed:expr, [$($op:tt),*], $small:expr) => {
        #[test]
        fn $test() {
            let ctx = ctx();
            if <$t as lazycl::Element>::DTYPE == lazycl::DType::F64 && !ctx.device().fp64 {
                return;
            }
            let (n, m) = (37, 29);
            let mut r = rng($seed);
            let small: fn($t) -> $t = $small;
            let xs: Vec<$t> = <$t>::random_vec(&mut r, n * m).into_iter().map(small).collect();
            let col: Vec<bool> = bool::random_vec(&mut r, n);
            let full: Vec<bool> = bool::random_vec(&mut r, n * m);
            let x = ctx.from_shape_slice([n, m], &xs).unwrap();
            let mcol = ctx.from_shape_slice([n, 1], &col).unwrap();
            let mfull = ctx.from_shape_slice([n, m], &full).unwrap();
            let one = |b: bool| if b { 1 as $t } else { 0 as $t };
            $(
                let f = |p: $t, q: $t| -> $t { p $op q };
                for (name, mask, at) in [
                    ("[n, 1]", &mcol, &(|i: usize| col[i / m]) as &dyn Fn(usize) -> bool),
                    ("[n, m]", &mfull, &|i: usize| full[i]),
                ] {
                    let right: Vec<$t> = (0..n * m).map(|i| f(xs[i], one(at(i)))).collect();
                    let left: Vec<$t> = (0..n * m).map(|i| f(one(at(i)), xs[i])).collect();
                    let forms: Vec<(&str, Array<$t>, &Vec<$t>)> = vec![
                        ("&a op &mask", &x $op mask, &right),
                        ("&a op mask", &x $op mask.clone(), &right),
                        ("a op &mask", x.clone() $op mask, &right),
                        ("a op mask", x.clone() $op mask.clone(), &right),
                        ("&mask op &a", mask $op &x, &left),
                        ("&mask op a", mask $op x.clone(), &left),
                        ("mask op &a", mask.clone() $op &x, &left),
                        ("mask op a", mask.clone() $op x.clone(), &left),
                    ];
                    for (form, got, want) in forms {
                        assert_eq!(got.shape(), [n, m]);
                        let got = got.to_vec().unwrap();
                        for (i, (g, h)) in got.iter().zip(want.iter()).enumerate() {
                            assert!(
                                g == h || (g != g && h != h),
                                "{} {form} with a {name} mask, element {i}: device {g:?} host {h:?}",
                                stringify!($op)
                            );
                        }
                    }
                }
            )*
        }
    };
}

// Integer operands are kept small so that `+ - *` stay in range on the host; division by
// a mask of zeros is left to floats (integer division by zero is guarded on the device
// and panics on the host).
mask_suite!(masks_f32, f32, 1, [+, -, *, /], |v| v);
mask_suite!(masks_f64, f64, 2, [+, -, *, /], |v| v);
mask_suite!(masks_i32, i32, 3, [+, -, *], |v| v / 4);
mask_suite!(masks_u32, u32, 4, [+, *], |v| v / 4);
mask_suite!(masks_i64, i64, 5, [+, -, *], |v| v / 4);
mask_suite!(masks_u64, u64, 6, [+, *], |v| v / 4);

#[test]
fn a_mask_times_an_array_fuses_into_one_kernel() {
    let ctx = ctx();
    let mut r = rng(9);
    let gs = f32::random_vec(&mut r, 1000);
    let hs = f32::random_vec(&mut r, 1000);
    let g = ctx.from_slice(&gs).unwrap();
    let h = ctx.from_slice(&hs).unwrap();
    let before = ctx.stats();
    let y = &g * h.gt(0.0); // ReLU's gradient
    assert!(!y.is_materialized());
    let got = y.to_vec().unwrap();
    assert_eq!((ctx.stats() - before).kernels_launched, 1);
    let want: Vec<f32> = gs
        .iter()
        .zip(&hs)
        .map(|(g, h)| if *h > 0.0 { *g } else { 0.0 })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_mask_of_the_wrong_shape_is_a_recorded_error() {
    let ctx = ctx();
    let a = ctx.from_shape_slice([3, 4], &[1.0f32; 12]).unwrap();
    let mask = ctx.from_slice(&[true, false, true]).unwrap();
    let err = (&a * &mask).to_vec().unwrap_err();
    assert!(err.to_string().contains("shape mismatch"), "{err}");
}
