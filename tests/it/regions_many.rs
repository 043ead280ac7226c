//! Regions of many sources: concatenations and stacks of thousands of arrays and tiles of
//! many copies are split into kernels of bounded size (a few programs, built in seconds,
//! whatever the number of sources), and results too large to compute are an error naming
//! the operation and the shapes, never a panic or an allocation of their size.

use std::time::{Duration, Instant};

use crate::common::{ctx, rng};
use lazycl::{Error, Stats};
use ndarray::{Array1, Array2, ArrayD, Axis, IxDyn};
use rand::Rng;

/// Time a test of many sources may take on a shared CPU device (the 10,000 arrays take
/// 15 to 25 s on PoCL on two shared cores with no cache, under a second from the cache).
const LIMIT: Duration = Duration::from_secs(60);

/// Programs a split region may need whatever its number of sources (levels of the tree of
/// concatenations, and the cuts between them).
const FEW_PROGRAMS: u64 = 16;

fn programs(d: &Stats) -> u64 {
    d.programs_built + d.programs_loaded
}

/// `count` random 1-D arrays of 0 to 7 elements (a few empty, many of one element).
fn random_parts(count: usize, seed: u64) -> Vec<Array1<f32>> {
    let mut r = rng(seed);
    (0..count)
        .map(|_| {
            let n = r.gen_range(0..8usize);
            Array1::from_shape_fn(n, |_| r.gen_range(-100.0f32..100.0))
        })
        .collect()
}

#[test]
fn concatenating_ten_thousand_arrays_builds_few_programs_and_matches_ndarray() {
    let ctx = ctx();
    let host = random_parts(10_000, 11);
    let dev: Vec<lazycl::Array<f32>> = host.iter().map(|h| ctx.array(h).unwrap()).collect();
    let refs: Vec<&lazycl::Array<f32>> = dev.iter().collect();
    let start = Instant::now();
    let before = ctx.stats();
    let joined = lazycl::concatenate(Axis(0), &refs).unwrap();
    let got = joined.to_vec().unwrap();
    let d = ctx.stats() - before;
    let took = start.elapsed();
    let views: Vec<_> = host.iter().map(|h| h.view()).collect();
    let want = ndarray::concatenate(Axis(0), &views).unwrap();
    assert_eq!(got, want.to_vec());
    assert!(took < LIMIT, "took {took:?}: {d}");
    assert!(programs(&d) <= FEW_PROGRAMS, "{d}");
    assert!(d.kernels_launched > 1, "split into several kernels: {d}");
    // A consumer of the concatenation computes it where it reads it.
    let doubled = (&joined * 2.0 - 1.0).to_vec().unwrap();
    let want2: Vec<f32> = want.iter().map(|v| v * 2.0 - 1.0).collect();
    assert_eq!(doubled, want2);
}

#[test]
fn stacking_and_concatenating_thousands_of_arrays_along_inner_axes_matches_ndarray() {
    let ctx = ctx();
    let mut r = rng(12);
    // Lazy sources (each a product of a materialized array), stacked along the middle
    // axis and concatenated along the last.
    let host: Vec<Array2<i32>> = (0..3_001)
        .map(|_| Array2::from_shape_fn((3, 5), |_| r.gen_range(-1000..1000)))
        .collect();
    let dev: Vec<lazycl::Array<i32>> = host.iter().map(|h| ctx.array(h).unwrap()).collect();
    let lazy: Vec<lazycl::Array<i32>> = dev.iter().map(|a| a * 3).collect();
    let refs: Vec<&lazycl::Array<i32>> = lazy.iter().collect();
    let start = Instant::now();
    let before = ctx.stats();
    let stacked = lazycl::stack(Axis(1), &refs).unwrap();
    let joined = lazycl::concatenate(Axis(1), &refs).unwrap();
    let (got_s, got_j) = (stacked.to_ndarray().unwrap(), joined.to_ndarray().unwrap());
    let d = ctx.stats() - before;
    let took = start.elapsed();
    let tripled: Vec<Array2<i32>> = host.iter().map(|h| h * 3).collect();
    let views: Vec<_> = tripled.iter().map(|h| h.view()).collect();
    assert_eq!(got_s, ndarray::stack(Axis(1), &views).unwrap().into_dyn());
    assert_eq!(got_j, ndarray::concatenate(Axis(1), &views).unwrap().into_dyn());
    assert!(took < LIMIT, "took {took:?}: {d}");
    assert!(programs(&d) <= 2 * FEW_PROGRAMS, "{d}");
}

/// A small list is still one node read in its consumer's kernel.
#[test]
fn a_few_sources_still_fuse_into_one_kernel() {
    let ctx = ctx();
    let host = random_parts(16, 13);
    let dev: Vec<lazycl::Array<f32>> = host.iter().map(|h| ctx.array(h).unwrap()).collect();
    let refs: Vec<&lazycl::Array<f32>> = dev.iter().collect();
    let joined = lazycl::concatenate(Axis(0), &refs).unwrap();
    let before = ctx.stats();
    let got = (&joined + 0.5).to_vec().unwrap();
    let d = ctx.stats() - before;
    let views: Vec<_> = host.iter().map(|h| h.view()).collect();
    let want = ndarray::concatenate(Axis(0), &views).unwrap();
    assert_eq!(got, want.iter().map(|v| v + 0.5).collect::<Vec<_>>());
    assert_eq!(d.kernels_launched, 1, "{d}");
}

/// numpy's tile on the host: `a` repeated `reps[d]` times along each axis.
fn host_tile(a: &ArrayD<f32>, reps: &[usize]) -> ArrayD<f32> {
    let rank = a.ndim();
    let all: Vec<usize> = std::iter::repeat_n(1, rank - reps.len())
        .chain(reps.iter().copied())
        .collect();
    let shape: Vec<usize> = a.shape().iter().zip(&all).map(|(n, r)| n * r).collect();
    ArrayD::from_shape_fn(IxDyn(&shape), |ix| {
        let at: Vec<usize> = (0..rank).map(|d| ix[d] % a.shape()[d]).collect();
        a[IxDyn(&at)]
    })
}

#[test]
fn tiling_a_hundred_thousand_times_matches_the_host() {
    let ctx = ctx();
    let mut r = rng(14);
    let h = Array1::from_shape_fn(7, |_| r.gen_range(-10.0f32..10.0)).into_dyn();
    let a = ctx.array(&h).unwrap();
    let start = Instant::now();
    let before = ctx.stats();
    let t = a.tile(&[100_000]);
    assert_eq!(t.shape(), [700_000]);
    let got = t.to_ndarray().unwrap();
    let d = ctx.stats() - before;
    let took = start.elapsed();
    assert_eq!(got, host_tile(&h, &[100_000]));
    assert!(took < LIMIT, "took {took:?}: {d}");
    assert!(programs(&d) <= 2, "{d}");
    // Consumed lazily, of a lazy source, on several axes with odd repetitions.
    let h2 = ndarray::Array2::from_shape_fn((3, 5), |_| r.gen_range(-10.0f32..10.0)).into_dyn();
    let b = ctx.array(&h2).unwrap();
    let t2 = ((&b + 1.0).tile(&[37, 3]) * 2.0).to_ndarray().unwrap();
    let want = host_tile(&h2.mapv(|v| v + 1.0), &[37, 3]).mapv(|v| v * 2.0);
    assert_eq!(t2, want);
    // Leading axes repeated once; 0 and 1 repetitions; a one-element source.
    let t3 = b.tile(&[1001]).to_ndarray().unwrap();
    assert_eq!(t3, host_tile(&h2, &[1001]));
    assert_eq!(b.tile(&[0, 40]).shape(), [0, 200]);
    assert!(b.tile(&[0, 40]).to_vec().unwrap().is_empty());
    assert_eq!(b.tile(&[1, 1]).to_ndarray().unwrap(), h2);
    let one = ctx.from_slice(&[2.5f32]).unwrap();
    assert_eq!(one.tile(&[17]).to_vec().unwrap(), vec![2.5f32; 17]);
    let empty = ctx.from_slice::<f32>(&[]).unwrap();
    assert!(empty.tile(&[1 << 40]).to_vec().unwrap().is_empty());
}

fn too_large(e: &Error, words: &[&str]) {
    assert!(matches!(e, Error::TooLarge { .. }), "{e:?}");
    let msg = e.to_string();
    for w in words {
        assert!(msg.contains(w), "{w:?} missing in: {msg}");
    }
}

#[test]
fn huge_tiles_pads_stacks_and_concatenations_are_errors_naming_the_shapes() {
    let ctx = ctx();
    let v = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    // More bytes than the device allocates (no host allocation of that size either).
    let e = v.tile(&[1 << 40]).to_vec().unwrap_err();
    too_large(
        &e,
        &["tile by [1099511627776]", "[3]", "CL_DEVICE_MAX_MEM_ALLOC_SIZE"],
    );
    // More elements than any array may have, or a length overflowing usize.
    let e = v.tile(&[1 << 62]).eval().unwrap_err();
    too_large(&e, &["tile by", "[3]"]);
    let m = ctx.from_shape_slice([1, 3], &[1.0f32, 2.0, 3.0]).unwrap();
    let e = m.tile(&[1 << 40, 1 << 40]).to_vec().unwrap_err();
    too_large(&e, &["tile by [1099511627776, 1099511627776]", "2^48"]);
    let e = v.pad(&[(usize::MAX, 1)], 0.0).to_vec().unwrap_err();
    too_large(&e, &["pad by", "overflows"]);
    let e = m
        .pad(&[(1 << 30, 0), (0, 1 << 30)], 0.0)
        .sum()
        .item()
        .unwrap_err();
    too_large(&e, &["pad by", "2^48"]);
    // A concatenation whose length overflows: views broadcast to huge lengths.
    let wide = v.slice(ndarray::s![0..1]).broadcast_to(&[usize::MAX / 2 + 1]);
    let e = lazycl::concatenate(Axis(0), &[&wide, &wide]).unwrap_err();
    too_large(&e, &["concatenate along Axis(0)", "overflows"]);
    let big = v.slice(ndarray::s![0..1]).broadcast_to(&[1 << 47]);
    let e = lazycl::stack(Axis(0), &[&big, &big, &big]).unwrap_err();
    too_large(&e, &["stack along Axis(0)", "[3, 140737488355328]", "2^48"]);
    // The arrays are still usable.
    assert_eq!(v.tile(&[2]).to_vec().unwrap(), [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
}
