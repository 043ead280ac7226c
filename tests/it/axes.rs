//! Negative axes (numpy's: `-1` is the last) on every method that takes an axis: each
//! gives what the same axis counted from the front gives, on a 3-d array, for every axis;
//! axes out of range at either end are errors naming the operation, the axis as written
//! and the shape. The list below walks every axis-taking method of the API.

use crate::common::{ctx, rng, Random};
use lazycl::{Array, Context, Index};

/// A method taking one axis, applied with the axis given (as written), read to the host.
type Apply = fn(&Context, &Array<f32>, isize) -> lazycl::Result<Vec<f64>>;

fn floats(a: Array<f32>) -> lazycl::Result<Vec<f64>> {
    Ok(a.to_vec()?.into_iter().map(f64::from).collect())
}

fn ints<I: lazycl::Element + Into<f64>>(a: Array<I>) -> lazycl::Result<Vec<f64>> {
    Ok(a.to_vec()?.into_iter().map(Into::into).collect())
}

fn indices(a: Array<Index>) -> lazycl::Result<Vec<f64>> {
    Ok(a.to_vec()?.into_iter().map(|v| v as f64).collect())
}

fn bools(a: Array<bool>) -> lazycl::Result<Vec<f64>> {
    Ok(a.to_vec()?.into_iter().map(|v| f64::from(u8::from(v))).collect())
}

/// Every method of one axis (of the array's axes), by name.
fn methods() -> Vec<(&'static str, Apply)> {
    vec![
        ("sum_axis", |_, a, k| floats(a.sum_axis(k))),
        ("prod_axis", |_, a, k| floats(a.prod_axis(k))),
        ("amin_axis", |_, a, k| floats(a.amin_axis(k))),
        ("amax_axis", |_, a, k| floats(a.amax_axis(k))),
        ("mean_axis", |_, a, k| floats(a.mean_axis(k))),
        ("sum_axes", |_, a, k| floats(a.sum_axes(&[k], true))),
        ("amax_axes", |_, a, k| floats(a.amax_axes(&[k], false))),
        ("argmin_axis", |_, a, k| indices(a.argmin_axis(k))),
        ("argmax_axis", |_, a, k| indices(a.argmax_axis(k))),
        ("var_axis", |_, a, k| floats(a.var_axis(k, 1.0))),
        ("std_axis", |_, a, k| floats(a.std_axis(k, 0.0))),
        ("logsumexp", |_, a, k| floats(a.logsumexp(k))),
        ("softmax", |_, a, k| floats(a.softmax(k))),
        ("log_softmax", |_, a, k| floats(a.log_softmax(k))),
        ("any_axis", |_, a, k| bools(a.gt(0.5f32).any_axis(k))),
        ("all_axis", |_, a, k| bools(a.gt(-0.5f32).all_axis(k))),
        ("cumsum", |_, a, k| floats(a.cumsum(k))),
        ("cumprod", |_, a, k| floats(a.cumprod(k))),
        ("cumsum_exclusive", |_, a, k| floats(a.cumsum_exclusive(k))),
        ("cumprod_exclusive", |_, a, k| floats(a.cumprod_exclusive(k))),
        ("flip", |_, a, k| floats(a.flip(k))),
        ("swap_axes", |_, a, k| {
            let (b, c) = (a.swap_axes(k, 0), a.swap_axes(-1, k));
            let mut v = floats(b.to_contiguous())?;
            v.extend(floats(c.to_contiguous())?);
            v.extend(b.shape().iter().chain(c.shape()).map(|&n| n as f64));
            Ok(v)
        }),
        ("remove_axis", |_, a, k| floats(a.remove_axis(k))),
        ("index_axis", |_, a, k| floats(a.index_axis(k, 1))),
        ("sort_axis", |_, a, k| floats(a.sort_axis(k)?)),
        ("argsort_axis", |_, a, k| ints(a.argsort_axis(k)?)),
        ("topk_axis", |_, a, k| {
            let t = a.topk_axis(2, k)?;
            let mut v = floats(t.values)?;
            v.extend(ints(t.indices)?);
            Ok(v)
        }),
        ("bottomk_axis", |_, a, k| {
            let t = a.bottomk_axis(2, k)?;
            let mut v = floats(t.values)?;
            v.extend(ints(t.indices)?);
            Ok(v)
        }),
        ("take", |ctx, a, k| {
            let idx = ctx.from_slice(&[1u32, 0, 1])?;
            floats(a.take(k, &idx))
        }),
        ("take_along_axis", |_, a, k| {
            let picks = (a * 10.0f32).cast::<u32>();
            floats(a.take_along_axis(k, &picks))
        }),
        ("concatenate", |_, a, k| {
            floats(lazycl::concatenate(k, &[a, &(a * 2.0f32)])?)
        }),
        ("scatter_add", |ctx, a, k| {
            // Into an array one longer along the axis (where the axis is one of a's).
            let mut shape = a.shape().to_vec();
            let rank = shape.len() as isize;
            let axis = if k < 0 { k + rank } else { k };
            let n = if (0..rank).contains(&axis) {
                shape[axis as usize] += 1;
                shape[axis as usize] - 1
            } else {
                1
            };
            let mut d = ctx.zeros::<f32>(shape)?;
            let idx: Vec<u32> = (0..n as u32).rev().collect();
            lazycl::scatter_add(&mut d, k, &ctx.from_slice(&idx)?, a)?;
            floats(d)
        }),
    ]
}

/// Methods whose axis names a position for a new one (`rank + 1` of them).
fn new_axis_methods() -> Vec<(&'static str, Apply)> {
    vec![
        ("insert_axis", |_, a, k| {
            let b = a.insert_axis(k);
            let mut v = floats(b.clone())?;
            v.extend(b.shape().iter().map(|&n| n as f64));
            Ok(v)
        }),
        ("stack", |_, a, k| {
            let b = lazycl::stack(k, &[a, &(a + 1.0f32)])?;
            let mut v = floats(b.clone())?;
            v.extend(b.shape().iter().map(|&n| n as f64));
            Ok(v)
        }),
    ]
}

fn out_of_range(name: &str, got: lazycl::Result<Vec<f64>>, axis: isize, shape: &[usize]) {
    // (A view's error is an `InvalidView`, others an `InvalidShape`: both name these.)
    match got.map_err(|e| e.to_string()) {
        Err(m) => {
            assert!(m.contains(name), "{name}({axis}): {m}");
            assert!(m.contains(&format!("axis {axis}")), "{name}({axis}): {m}");
            assert!(m.contains(&format!("{shape:?}")), "{name}({axis}): {m}");
        }
        Ok(v) => panic!("{name}({axis}): expected an error, got {v:?}"),
    }
}

#[test]
fn negative_axes_count_from_the_end_on_every_axis_method() {
    let ctx = ctx();
    let mut r = rng(21);
    let shape = [3usize, 4, 5];
    let host = f32::random_vec(&mut r, 60);
    let a = ctx.from_shape_slice(shape, &host).unwrap();
    let rank = shape.len() as isize;
    for (name, apply) in methods() {
        for k in 0..rank {
            let front = apply(&ctx, &a, k).unwrap_or_else(|e| panic!("{name}({k}): {e}"));
            let back = apply(&ctx, &a, k - rank).unwrap_or_else(|e| panic!("{name}({}): {e}", k - rank));
            assert_eq!(front, back, "{name}: axis {k} and {}", k - rank);
        }
        out_of_range(name, apply(&ctx, &a, rank), rank, &shape);
        out_of_range(name, apply(&ctx, &a, -rank - 1), -rank - 1, &shape);
    }
    for (name, apply) in new_axis_methods() {
        for k in 0..=rank {
            let front = apply(&ctx, &a, k).unwrap_or_else(|e| panic!("{name}({k}): {e}"));
            let back =
                apply(&ctx, &a, k - rank - 1).unwrap_or_else(|e| panic!("{name}({}): {e}", k - rank - 1));
            assert_eq!(front, back, "{name}: axis {k} and {}", k - rank - 1);
        }
        out_of_range(name, apply(&ctx, &a, rank + 1), rank + 1, &shape);
        out_of_range(name, apply(&ctx, &a, -rank - 2), -rank - 2, &shape);
    }
}

/// The forms users write: `softmax(-1)`, `sum_axes(&[0, -1])`, `take_along_axis(-1, ..)`
/// with an `argsort`, against the host.
#[test]
fn the_last_axis_as_minus_one_matches_the_host() {
    let ctx = ctx();
    let a = ctx
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 6.0, 5.0, 4.0])
        .unwrap();
    let s = a.softmax(-1).to_vec().unwrap();
    for (row, vals) in [[1.0f64, 2.0, 3.0], [6.0, 5.0, 4.0]].iter().enumerate() {
        let z: f64 = vals.iter().map(|v| v.exp()).sum();
        for (j, v) in vals.iter().enumerate() {
            assert!((f64::from(s[row * 3 + j]) - v.exp() / z).abs() < 1e-6);
        }
    }
    assert_eq!(a.sum_axes(&[0, -1], false).item().unwrap(), 21.0);
    assert_eq!(a.sum_axis(-2).to_vec().unwrap(), [7.0, 7.0, 7.0]);
    let sorted = a.take_along_axis(-1, &a.argsort().unwrap());
    assert_eq!(sorted.to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(a.insert_axis(-1).shape(), [2, 3, 1]);
    assert_eq!(a.cumsum(-1).to_vec().unwrap(), [1.0, 3.0, 6.0, 6.0, 11.0, 15.0]);
}
