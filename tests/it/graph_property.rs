//! Property test of whole kernels mixed with views: random chains of matrix products,
//! scans, gathers (`take` with indices of any integer type, clamped at both ends, indices
//! computed by a scan; `take_along_axis`), sorts, concatenations of a value with its own
//! scan, and every step of the view chains (`views_property`: slices, transposes, pads,
//! regions set in place, reductions, evaluations), compared with the same chain applied on
//! the host. f32 and i32, and the narrow types f16, bf16, u8 and i16 (sums, scans and
//! products of which run in their compute type); shapes with 0- and 1-sized axes and odd
//! extents. Each chain's result is read once, so a step's kernel takes in whatever the
//! chain put before it. Values are compared as in `views_property` (its module doc gives
//! the tolerances): integers exactly (wrapping on both sides), floats within a tolerance
//! that grows with the chain's bound, and for the 16-bit floats with one rounding per step
//! (a product or a scan accumulates in `f32` and rounds once, where it is stored).
//!
//! Cases per run: `LAZYCL_GRAPH_CASES` (default 80 for f32; the narrow types run a fifth of
//! it each). The chains are proptest inputs with a fixed seed: a failing chain shrinks
//! to a minimal one, which the failure shows.

use crate::common::{cases, check_property, ctx, rng};
use crate::views_property::{
    chains, check, step as view_step, upload, within_limit, Chain, Num, Pair, KINDS as VIEW_KINDS,
};
use lazycl::{Array, Context};
use ndarray::{ArrayD, Axis, IxDyn};
use rand::rngs::StdRng;
use rand::Rng;

/// numpy's `take(a, idx, axis, mode='clip')`.
fn host_take<H: Copy>(a: &ArrayD<H>, axis: usize, idx: &[i128]) -> ArrayD<H> {
    let n = a.shape()[axis] as i128;
    let picked: Vec<usize> = idx.iter().map(|&i| i.clamp(0, n - 1) as usize).collect();
    a.select(Axis(axis), &picked)
}

/// Random indices for an axis of `n`: some outside it at either end, some at the ends of
/// the index type; `signed` picks `i64` (else `u64`). As wide integers, for the host.
fn random_indices(r: &mut StdRng, n: usize, len: usize, signed: bool) -> Vec<i128> {
    (0..len)
        .map(|_| match r.gen_range(0..10) {
            0 if signed => i64::MIN as i128,
            0 => u64::MAX as i128,
            1 if signed => -(r.gen_range(1..4) as i128),
            1 => (1u128 << 63) as i128,
            2 => n as i128 + r.gen_range(0..3),
            _ => r.gen_range(0..n.max(1)) as i128,
        })
        .collect()
}

/// The indices on the device, of the type they were drawn for.
fn index_array(ctx: &Context, idx: &[i128], shape: &[usize], signed: bool) -> IndexArray {
    if signed {
        let v: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
        IndexArray::Signed(ctx.from_shape_slice(shape.to_vec(), &v).unwrap())
    } else {
        let v: Vec<u64> = idx.iter().map(|&i| i as u64).collect();
        IndexArray::Unsigned(ctx.from_shape_slice(shape.to_vec(), &v).unwrap())
    }
}

enum IndexArray {
    Signed(Array<i64>),
    Unsigned(Array<u64>),
}

/// Each lane along `axis` sorted ascending.
fn host_sort<T: Num>(a: &ArrayD<T::Host>, axis: usize) -> ArrayD<T::Host> {
    let mut out = a.clone();
    for mut lane in out.lanes_mut(Axis(axis)) {
        let mut v: Vec<T::Host> = lane.iter().copied().collect();
        v.sort_by(|x, y| T::host_f64(*x).total_cmp(&T::host_f64(*y)));
        for (d, s) in lane.iter_mut().zip(v) {
            *d = s;
        }
    }
    out
}

fn host_cumsum<T: Num>(a: &ArrayD<T::Host>, axis: usize) -> ArrayD<T::Host> {
    let mut out = a.clone();
    out.accumulate_axis_inplace(Axis(axis), |&prev, cur| *cur = T::h_add(*cur, prev));
    out
}

/// `a`'s stack of matrices (its last two axes; a vector is one row) times `b` (`k` by `n`).
fn host_matmul<T: Num>(a: &ArrayD<T::Host>, b: &ArrayD<T::Host>) -> ArrayD<T::Host> {
    let shape = a.shape();
    let (m, k) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let n = b.shape()[1];
    let mut out_shape = shape.to_vec();
    *out_shape.last_mut().unwrap() = n;
    let a = a.as_standard_layout();
    let flat = a.as_slice().unwrap();
    let batch: usize = shape[..shape.len() - 2].iter().product();
    let mut out = Vec::with_capacity(batch * m * n);
    for s in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let mut acc = T::h_small(0);
                for p in 0..k {
                    acc = T::h_add(acc, T::h_mul(flat[s * m * k + i * k + p], b[[p, j]]));
                }
                out.push(acc);
            }
        }
    }
    ArrayD::from_shape_vec(IxDyn(&out_shape), out).unwrap()
}

/// The kinds of [`step`]: 0 to 8 a whole kernel (where it applies), the rest a step of
/// the view chains.
const KINDS: u32 = 16;

/// One step of kind `kind`: a whole kernel of some kind, or a step of the view chains (of
/// a kind drawn from `r`).
fn step<T: Num>(ctx: &Context, kind: u32, r: &mut StdRng, a: Pair<T>) -> Pair<T> {
    let rank = a.host.ndim();
    let bound = a.bound;
    match kind {
        0 | 1 if rank > 0 => {
            // A product with a small random matrix (a vector is one row).
            let a = if rank == 1 {
                Pair {
                    dev: a.dev.insert_axis(0),
                    host: a.host.clone().insert_axis(Axis(0)),
                    bound,
                }
            } else {
                a
            };
            let k = *a.host.shape().last().unwrap();
            let n = r.gen_range(1..=5);
            let b = upload::<T>(ctx, r, vec![k, n]);
            Pair {
                dev: a.dev.matmul(&b.dev),
                host: host_matmul::<T>(&a.host, &b.host),
                bound: bound * b.bound.max(1.0) * k.max(1) as f64,
            }
        }
        2 | 3 if rank > 0 => {
            let axis = r.gen_range(0..rank);
            let n = a.host.shape()[axis];
            Pair {
                dev: a.dev.cumsum(axis).cast::<T>(),
                host: host_cumsum::<T>(&a.host, axis),
                bound: bound * n.max(1) as f64,
            }
        }
        4 | 5 if rank > 0 && a.host.shape().iter().all(|&d| d > 0) => {
            // take along an axis, with indices of either signedness; or with indices a
            // scan of 0s and 1s computes (a lazy index of a whole kernel).
            let axis = r.gen_range(0..rank);
            let n = a.host.shape()[axis];
            let len = r.gen_range(0..=5);
            if r.gen_bool(0.3) {
                let steps: Vec<u32> = (0..len).map(|_| r.gen_range(0..2)).collect();
                let mut at = 0i128;
                let idx: Vec<i128> = steps
                    .iter()
                    .map(|&s| {
                        at += s as i128;
                        at
                    })
                    .collect();
                let dev_idx = ctx.from_slice(&steps).unwrap().cumsum(0);
                return Pair {
                    dev: a.dev.take(axis, &dev_idx),
                    host: host_take(&a.host, axis, &idx),
                    bound,
                };
            }
            let signed = r.gen_bool(0.5);
            let idx = random_indices(r, n, len, signed);
            let dev = match index_array(ctx, &idx, &[len], signed) {
                IndexArray::Signed(i) => a.dev.take(axis, &i),
                IndexArray::Unsigned(i) => a.dev.take(axis, &i),
            };
            Pair {
                dev,
                host: host_take(&a.host, axis, &idx),
                bound,
            }
        }
        6 if rank > 0 && a.host.shape().iter().all(|&d| d > 0) => {
            // take_along_axis with indices of the array's shape but `len` along the axis.
            let axis = r.gen_range(0..rank);
            let n = a.host.shape()[axis];
            let len = r.gen_range(1..=4);
            let mut shape = a.host.shape().to_vec();
            shape[axis] = len;
            let count: usize = shape.iter().product();
            let signed = r.gen_bool(0.5);
            let idx = random_indices(r, n, count, signed);
            let host_idx = ArrayD::from_shape_vec(IxDyn(&shape), idx.clone()).unwrap();
            let host = ArrayD::from_shape_fn(IxDyn(&shape), |at| {
                let mut src = at.clone();
                src[axis] = host_idx[&at].clamp(0, n as i128 - 1) as usize;
                a.host[src]
            });
            let dev = match index_array(ctx, &idx, &shape, signed) {
                IndexArray::Signed(i) => a.dev.take_along_axis(axis, &i),
                IndexArray::Unsigned(i) => a.dev.take_along_axis(axis, &i),
            };
            Pair { dev, host, bound }
        }
        7 if rank > 0 && !a.host.is_empty() => {
            // A sort along the last axis, or the same through argsort and a gather.
            let axis = rank - 1;
            let dev = if r.gen_bool(0.5) {
                a.dev.sort_axis(axis).unwrap()
            } else {
                a.dev.take_along_axis(axis, &a.dev.argsort_axis(axis).unwrap())
            };
            Pair {
                dev,
                host: host_sort::<T>(&a.host, axis),
                bound,
            }
        }
        8 if rank > 0 => {
            // The value beside its own scan.
            let axis = r.gen_range(0..rank);
            let n = a.host.shape()[axis];
            let scanned = host_cumsum::<T>(&a.host, axis);
            Pair {
                dev: lazycl::concatenate(axis, &[&a.dev, &a.dev.cumsum(axis).cast::<T>()]).unwrap(),
                host: ndarray::concatenate(Axis(axis), &[a.host.view(), scanned.view()]).unwrap(),
                bound: bound * n.max(1) as f64,
            }
        }
        _ => view_step(r.gen_range(0..VIEW_KINDS), r, a),
    }
}

/// Applies `chain` (up to seven steps) on the device and on the host, and compares.
fn run_chain<T: Num>(ctx: &Context, chain: &Chain) {
    let mut r = rng(chain.seed);
    let mut v: Pair<T> = upload(ctx, &mut r, chain.shape.clone());
    if chain.lazy {
        v.dev = &v.dev * T::small(1);
    }
    let mut steps = 0;
    for s in &chain.steps {
        // The bound keeps float tolerances meaningful (integers compare exactly, and
        // start anywhere in their range); a product with a random matrix scales it by up
        // to 25 times its `k`.
        if v.host.len() > 2048
            || v.host.ndim() > 5
            || (T::FLOAT && v.bound > 1e6)
            || !within_limit::<T>(v.bound, v.host.shape(), 25.0)
        {
            break;
        }
        v = step(ctx, s.kind, &mut rng(s.seed), v);
        steps += 1;
    }
    let got = v.dev.to_ndarray().unwrap_or_else(|e| panic!("{e}"));
    check(&got, &v.host, v.bound, steps);
}

/// `cases` random chains (proptest, seeded by `seed`).
pub(crate) fn run<T: Num>(ctx: &Context, seed: u64, cases: u32) {
    check_property(seed, cases, chains(KINDS, 7), |chain| run_chain::<T>(ctx, &chain));
}

fn graph_cases() -> u32 {
    cases("LAZYCL_GRAPH_CASES", 80)
}

#[test]
fn random_graphs_of_products_scans_gathers_and_sorts_match_the_host_f32() {
    run::<f32>(&ctx(), 11, graph_cases());
}

#[test]
fn random_graphs_of_products_scans_gathers_and_sorts_match_the_host_i32() {
    run::<i32>(&ctx(), 12, graph_cases() / 2);
}

#[test]
fn random_graphs_of_products_scans_gathers_and_sorts_match_the_host_f16() {
    run::<lazycl::f16>(&ctx(), 14, graph_cases() / 5);
}

#[test]
fn random_graphs_of_products_scans_gathers_and_sorts_match_the_host_bf16() {
    run::<lazycl::bf16>(&ctx(), 15, graph_cases() / 5);
}

#[test]
fn random_graphs_of_products_scans_gathers_and_sorts_match_the_host_u8() {
    run::<u8>(&ctx(), 16, graph_cases() / 5);
}

#[test]
fn random_graphs_of_products_scans_gathers_and_sorts_match_the_host_i16() {
    run::<i16>(&ctx(), 17, graph_cases() / 5);
}

/// The same graphs where transposed reads are staged through local memory in tiles (the
/// GPU layout), on any device.
#[test]
fn random_graphs_of_products_scans_gathers_and_sorts_match_the_host_with_tiles() {
    let tuning = lazycl::Tuning {
        tiles_anywhere: true,
        ..Default::default()
    };
    let ctx = crate::common::builder().tuning(tuning).build().unwrap();
    run::<f32>(&ctx, 13, graph_cases() / 3);
}
