//! `histogram` against a host reference written from numpy's definition (an element's
//! bin is found by a search of the edges, not by the library's arithmetic), on random
//! data with values outside the range, on every edge, NaN and infinities, for `f32` and
//! `f64`; and `bincount`'s `Index` counts and its refusal of what they cannot count.

use crate::common::{ctx, rng};
use lazycl::{Array, Error, Index};
use rand::Rng as _;

/// numpy's bin of `x` by the edges: `edges[b] <= x < edges[b + 1]`, the last bin closed.
fn host_bin<T: PartialOrd + Copy>(x: T, edges: &[T]) -> Option<usize> {
    let bins = edges.len() - 1;
    if !(x >= edges[0] && x <= edges[bins]) {
        return None;
    }
    Some(edges.partition_point(|e| *e <= x).saturating_sub(1).min(bins - 1))
}

macro_rules! check_histogram {
    ($ctx:expr, $r:expr, $t:ty) => {
        for (n, bins, lo, hi) in [
            (0usize, 3usize, 0.0, 1.0),
            (1, 1, -1.0, 1.0),
            (1001, 7, -3.5, 10.25),
            (5000, 64, 0.1, 0.7),
            (77, 5, 2.0, 2.0),
        ] {
            let (lo, hi): ($t, $t) = (lo, hi);
            let mut data: Vec<$t> = (0..n).map(|_| $r.gen_range(lo - 1.0..hi + 1.5)).collect();
            let h = $ctx.from_slice(&data).unwrap().histogram(bins, lo..=hi).unwrap();
            let edges = h.edges.to_vec().unwrap();
            assert_eq!(edges.len(), bins + 1);
            // Values exactly on the edges, outside, NaN and infinities.
            if n > 100 {
                for (j, e) in edges.iter().enumerate() {
                    data[j * 3] = *e;
                }
                data[1] = <$t>::NAN;
                data[4] = <$t>::INFINITY;
                data[7] = <$t>::NEG_INFINITY;
                data[10] = hi;
                data[13] = lo;
            }
            let h = $ctx.from_slice(&data).unwrap().histogram(bins, lo..=hi).unwrap();
            assert_eq!(h.edges.to_vec().unwrap(), edges);
            let (wlo, whi) = if lo == hi { (lo - 0.5, hi + 0.5) } else { (lo, hi) };
            assert_eq!((edges[0], edges[bins]), (wlo, whi));
            let mut want = vec![0 as Index; bins];
            for &x in &data {
                if let Some(b) = host_bin(x, &edges) {
                    want[b] += 1;
                }
            }
            let got: Vec<Index> = h.counts.to_vec().unwrap();
            assert_eq!(
                got,
                want,
                "{n} values of {} in {bins} bins over {lo}..={hi}",
                stringify!($t)
            );
            // Any shape is flattened.
            if n == 5000 {
                let m = $ctx.from_shape_slice([50, 100], &data).unwrap();
                assert_eq!(
                    m.t().histogram(bins, lo..=hi).unwrap().counts.to_vec().unwrap(),
                    want
                );
            }
        }
    };
}

#[test]
fn histogram_counts_as_numpy_does() {
    let ctx = ctx();
    let mut r = rng(4);
    check_histogram!(ctx, r, f32);
    check_histogram!(ctx, r, f64);
}

#[test]
fn histogram_and_bincount_refuse_what_they_cannot_count() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f32, 2.0]).unwrap();
    for (bins, lo, hi, word) in [
        (0usize, 0.0f32, 1.0f32, "bins"),
        (3, 1.0, 0.0, "starts after"),
        (3, 0.0, f32::INFINITY, "not finite"),
        (3, f32::NAN, 1.0, "not finite"),
    ] {
        match x.histogram(bins, lo..=hi) {
            Err(Error::InvalidShape(m)) => assert!(m.contains("histogram") && m.contains(word), "{m}"),
            other => panic!("{other:?}"),
        }
    }
    // More values than an Index counts: refused before anything runs (the positions are
    // lazy, so nothing is allocated either).
    let long = ctx.arange(0u64, (1u64 << 32) + 1, 1).unwrap();
    match long.bincount(4) {
        Err(Error::InvalidShape(m)) => assert!(m.contains("bincount") && m.contains("4294967297"), "{m}"),
        other => panic!("{other:?}"),
    }
    let counts: Array<Index> = ctx.from_slice(&[1i64, 1, 3]).unwrap().bincount(4).unwrap();
    assert_eq!(counts.to_vec().unwrap(), [0, 2, 0, 1]);
}
