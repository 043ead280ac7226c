//! Views on the device: what they cost (counters) and what they refuse (errors). Their
//! values against ndarray are the property test's job (`views_property.rs`).
// `s![1..-1]` counts from the end of the axis (ndarray's slices), not an empty range.
#![allow(clippy::reversed_empty_ranges)]

use crate::common::{ctx, rng, Random};
use lazycl::{s, Array, Axis, Error, SliceInfoElem};
use ndarray::{Array1, Array2, ArrayD, IxDyn};

fn host_stencil(x: &[f32]) -> Vec<f32> {
    (0..x.len().saturating_sub(2))
        .map(|i| x[i + 2] - 2.0 * x[i + 1] + x[i])
        .collect()
}

#[test]
fn a_three_point_stencil_of_slices_is_one_kernel() {
    let ctx = ctx();
    let host = f32::random_vec(&mut rng(1), 1001);
    let x = ctx.from_slice(&host).unwrap();
    let before = ctx.stats();
    let lap = &x.slice(s![2..]) - 2.0 * &x.slice(s![1..-1]) + &x.slice(s![..-2]);
    let got = lap.to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    assert!(d.programs_built + d.programs_loaded <= 1, "{d}");
    assert_eq!(d.bytes_uploaded, 0, "the slices are read in place");
    let want = host_stencil(&host);
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-3 * (w.abs() + 1.0), "{g} vs {w}");
    }
    assert_eq!(got.len(), want.len());
}

#[test]
fn windows_at_new_offsets_build_no_new_program() {
    let ctx = ctx();
    let host = f32::random_vec(&mut rng(2), 300);
    let x = ctx.from_slice(&host).unwrap();
    let window = |k: usize| (&x.slice(s![k..k + 64]) * 2.0).to_vec().unwrap();
    assert_eq!(window(1)[0], host[1] * 2.0);
    let before = ctx.stats();
    for k in 2..=101 {
        let w = window(k);
        assert_eq!(w[0], host[k] * 2.0);
        assert_eq!(w[63], host[k + 63] * 2.0);
    }
    let d = ctx.stats() - before;
    assert_eq!(d.programs_built + d.programs_loaded, 0, "{d}");
    assert_eq!(d.kernels_launched, 100);
}

#[test]
fn adding_a_transpose_is_one_kernel() {
    let ctx = ctx();
    let (n, m) = (37, 53);
    let ha = Array2::from_shape_vec((n, m), f32::random_vec(&mut rng(3), n * m)).unwrap();
    let hb = Array2::from_shape_vec((m, n), f32::random_vec(&mut rng(4), n * m)).unwrap();
    let (a, b) = (ctx.array(&ha).unwrap(), ctx.array(&hb).unwrap());
    let before = ctx.stats();
    let got = (&a + &b.t()).to_ndarray().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    let want = &ha + &hb.t();
    assert_eq!(got, want.into_dyn());
}

#[test]
fn insert_axis_of_a_lazy_array_records_nothing_on_the_device() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let y = &x * 2.0;
    let before = ctx.stats();
    let col = y.insert_axis(Axis(1));
    let row = y.insert_axis(Axis(0));
    assert_eq!(ctx.stats(), before, "views touch nothing");
    assert!(!col.is_materialized() && !y.is_materialized());
    assert_eq!(col.shape(), &[3, 1]);
    let outer = (&col * &row).to_ndarray().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(
        d.kernels_launched, 1,
        "the outer product and its producer are one kernel: {d}"
    );
    let v = Array1::from(vec![2.0f32, 4.0, 6.0]);
    let want = v.clone().insert_axis(ndarray::Axis(1)) * v.insert_axis(ndarray::Axis(0));
    assert_eq!(outer, want.into_dyn());
}

#[test]
fn a_reduction_reads_a_transpose_in_place() {
    let ctx = ctx();
    let h = Array2::from_shape_vec((40, 30), f64::random_vec(&mut rng(5), 1200)).unwrap();
    let a = ctx.array(&h).unwrap();
    let before = ctx.stats();
    let got = a.t().sum_axis(1).to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(
        d.buffers_allocated + d.buffers_reused,
        d.kernels_launched,
        "no temporary holds the transpose: {d}"
    );
    let want = h.sum_axis(ndarray::Axis(0));
    for (g, w) in got.iter().zip(want.iter()) {
        assert!((g - w).abs() <= 1e-9 * (w.abs() + 1.0));
    }
}

#[test]
fn concatenate_stack_and_pad_are_fused_into_their_consumer() {
    let ctx = ctx();
    let a = ctx.from_slice(&[1i32, 2, 3]).unwrap();
    let b = ctx.from_slice(&[10i32, 20]).unwrap();
    let before = ctx.stats();
    let c = lazycl::concatenate(Axis(0), &[&a, &(&b * 2)]).unwrap();
    let p = (&c + 1).pad(&[(1, 2)], -7);
    assert_eq!(p.to_vec().unwrap(), vec![-7, 2, 3, 4, 21, 41, -7, -7]);
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    let s = lazycl::stack(Axis(1), &[&a, &(&a * 10)]).unwrap();
    assert_eq!(s.shape(), &[3, 2]);
    assert_eq!(s.to_vec().unwrap(), vec![1, 10, 2, 20, 3, 30]);
    let t = a.tile(&[2]);
    assert_eq!(t.to_vec().unwrap(), vec![1, 2, 3, 1, 2, 3]);
}

#[test]
fn slice_assignment_writes_only_its_region_in_place() {
    let ctx = ctx();
    let h = Array2::from_shape_vec((4, 5), (0..20).map(|v| v as f32).collect()).unwrap();
    let mut a = ctx.array(&h).unwrap();
    let x = ctx.from_slice(&[100.0f32, 200.0]).unwrap();
    let before = ctx.stats();
    a.slice_mut(s![.., 1..3]).assign(&(&x + 1.0)).unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    assert_eq!(d.buffers_allocated + d.buffers_reused, 0, "written in place: {d}");
    a.slice_mut(s![3, ..;2]).fill(-1.0).unwrap();
    let mut want = h.clone();
    want.slice_mut(s![.., 1..3])
        .assign(&Array1::from(vec![101.0f32, 201.0]));
    want.slice_mut(s![3, ..;2]).fill(-1.0);
    assert_eq!(a.to_ndarray().unwrap(), want.into_dyn());
}

/// Reductions, scans and products write whole arrays of their own: assigned into a
/// region, each is computed first and then copied into the region (the rest of the
/// array untouched).
#[test]
fn slice_assignment_of_a_reduction_a_scan_or_a_product_writes_only_its_region() {
    let ctx = ctx();
    let hx = ndarray::Array3::from_shape_fn((5, 2, 3), |(i, j, k)| (i * 6 + j * 3 + k) as f32);
    let x = ctx.array(&hx).unwrap();
    let h = Array2::from_shape_fn((4, 6), |(i, j)| -((i * 6 + j) as f32));
    let mut a = ctx.array(&h).unwrap();
    a.slice_mut(s![1..3, 0..3]).assign(x.sum_axis(0)).unwrap();
    a.slice_mut(s![2..4, 3..6])
        .assign(x.slice(s![0, .., ..]).cumsum(1))
        .unwrap();
    let m = ctx.from_shape_slice([2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    a.slice_mut(s![0, 4..6])
        .assign(m.matmul(&m).slice(s![1, ..]))
        .unwrap();
    let mut want = h.clone();
    want.slice_mut(s![1..3, 0..3])
        .assign(&hx.sum_axis(ndarray::Axis(0)));
    let mut scanned = hx.slice(s![0, .., ..]).to_owned();
    scanned.accumulate_axis_inplace(ndarray::Axis(1), |&prev, cur| *cur += prev);
    want.slice_mut(s![2..4, 3..6]).assign(&scanned);
    want.slice_mut(s![0, 4..6])
        .assign(&Array1::from(vec![15.0f32, 22.0]));
    assert_eq!(a.to_ndarray().unwrap(), want.into_dyn());
}

#[test]
fn slice_assignment_from_an_overlapping_view_of_itself_reads_the_old_values() {
    let ctx = ctx();
    let mut a = ctx.from_slice(&[1i32, 2, 3, 4, 5]).unwrap();
    let shifted = a.slice(s![..-1]);
    a.slice_mut(s![1..]).assign(&shifted).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![1, 1, 2, 3, 4]);
    assert_eq!(
        shifted.to_vec().unwrap(),
        vec![1, 2, 3, 4],
        "a view keeps its own values"
    );
}

#[test]
fn views_of_a_view_passed_to_a_kernel_must_be_made_contiguous() {
    let ctx = ctx();
    let a = ctx.array(&Array2::<f32>::zeros((3, 4))).unwrap();
    let Err(err) = a.t().kernel_arg() else {
        panic!("a view passed to a kernel must be refused")
    };
    assert!(err.to_string().contains("to_contiguous"), "{err}");
    let c = a.t().to_contiguous();
    assert!(c.kernel_arg().is_ok());
    assert_eq!(c.shape(), &[4, 3]);
}

#[test]
fn bad_views_are_errors_naming_the_operation_and_the_shape() {
    let ctx = ctx();
    let a = ctx.array(&ArrayD::<f32>::zeros(IxDyn(&[3, 4]))).unwrap();
    let cases: Vec<(Array<f32>, &str)> = vec![
        (a.slice(s![5.., ..]), "slice"),
        // (`s![]` itself refuses a step of 0; a slice built by hand reaches lazycl.)
        (
            a.slice([
                SliceInfoElem::from(..),
                SliceInfoElem::Slice {
                    start: 0,
                    end: None,
                    step: 0,
                },
            ]),
            "step of 0",
        ),
        (a.slice(s![.., 4]), "index 4"),
        (a.slice(s![.., .., ..]), "3 axes"),
        (a.flip(Axis(2)), "flip"),
        (a.insert_axis(Axis(3)), "insert_axis"),
        (a.permuted_axes([0, 0]), "permuted_axes"),
        (a.pad(&[(1, 1)], 0.0), "pad"),
    ];
    for (view, what) in cases {
        let err = view.to_vec().unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::InvalidView { .. }), "{text}");
        assert!(text.contains(what) && text.contains("[3, 4]"), "{what}: {text}");
    }
    let b = ctx.array(&ArrayD::<f32>::zeros(IxDyn(&[2, 5]))).unwrap();
    let err = lazycl::concatenate(Axis(0), &[&a, &b]).unwrap_err();
    assert!(
        matches!(&err, Error::ShapeMismatch { left, right, .. } if left == &[3, 4] && right == &[2, 5]),
        "{err}"
    );
    let err = lazycl::concatenate::<f32>(Axis(0), &[]).unwrap_err();
    assert!(err.to_string().contains("no arrays"), "{err}");
    let err = lazycl::stack(Axis(0), &[&a, &b]).unwrap_err();
    assert!(err.to_string().contains("stack"), "{err}");
}

/// A context that tiles transposed reads on any device (by default only GPUs do), so that
/// the tiled kernels run on PoCL too.
fn tiling_ctx() -> lazycl::Context {
    let tuning = lazycl::Tuning {
        tiles_anywhere: true,
        ..Default::default()
    };
    lazycl::Context::builder().tuning(tuning).build().unwrap()
}

#[test]
fn tiled_transposed_reads_match_the_host_for_odd_and_batched_shapes() {
    let ctx = tiling_ctx();
    for (k, &(n, m)) in [(1usize, 1usize), (2, 3), (33, 31), (64, 32), (70, 129)]
        .iter()
        .enumerate()
    {
        let ha = Array2::from_shape_vec((n, m), f32::random_vec(&mut rng(10 + k as u64), n * m)).unwrap();
        let hb = Array2::from_shape_vec((m, n), f32::random_vec(&mut rng(20 + k as u64), n * m)).unwrap();
        let hv = Array1::from(f32::random_vec(&mut rng(30 + k as u64), m));
        let (a, b, v) = (
            ctx.array(&ha).unwrap(),
            ctx.array(&hb).unwrap(),
            ctx.array(&hv).unwrap(),
        );
        // A transposed view, a broadcast row and a lazy producer of the transposed read.
        let got = (&a + &(&b * 2.0).t() * &v).to_ndarray().unwrap();
        let want = &ha + &(&hb * 2.0).t() * &hv;
        assert_eq!(got, want.into_dyn(), "{n}x{m}");
    }
    // Batched: a permuted 3-D array, where the tiles cover the two innermost dims.
    let h = ArrayD::from_shape_vec(IxDyn(&[3, 40, 37]), i32::random_vec(&mut rng(40), 3 * 40 * 37)).unwrap();
    let x = ctx.array(&h).unwrap();
    let got = (x.permuted_axes([0, 2, 1]) + 1).to_ndarray().unwrap();
    let want = h
        .clone()
        .permuted_axes(IxDyn(&[0, 2, 1]))
        .mapv(|v| v.wrapping_add(1));
    assert_eq!(got, want);
}
