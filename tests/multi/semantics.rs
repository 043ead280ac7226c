//! Operations on arrays split across devices give what one device gives: reductions
//! along each axis, row functions, products, scans, gathers, random numbers, in-place
//! regions, arrays smaller than the device count; and a clear error for what needs an
//! array in one device's memory.

use lazycl::prelude::*;
use ndarray::{Array2, ArrayD};

use crate::common::{multi, values};

fn close(got: &ArrayD<f32>, want: &ArrayD<f32>, tol: f32) {
    assert_eq!(got.shape(), want.shape());
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "element {k}: {g} against {w}"
        );
    }
}

fn host(n: usize, d: usize, seed: u64) -> Array2<f32> {
    Array2::from_shape_vec((n, d), values(n * d, seed)).unwrap()
}

#[test]
fn reductions_along_every_axis_match_one_device() {
    let one = Context::new().unwrap();
    for devices in [2, 3] {
        let ctx = multi(devices);
        for (n, d) in [(1, 3), (2, 1), (5, 7), (64, 33), (301, 4)] {
            let h = host(n, d, n as u64);
            let (x, y) = (ctx.array(&h).unwrap(), one.array(&h).unwrap());
            let pairs: Vec<(Array<f32>, Array<f32>)> = vec![
                (x.sum(), y.sum()),
                (x.mean(), y.mean()),
                (x.amax(), y.amax()),
                (x.amin_axis(0), y.amin_axis(0)),
                (x.sum_axis(0), y.sum_axis(0)),
                (x.mean_axis(0), y.mean_axis(0)),
                (x.sum_axis(1), y.sum_axis(1)),
                (x.sum_axes(&[0], true), y.sum_axes(&[0], true)),
                (&x - x.mean_axis(0), &y - y.mean_axis(0)),
                (&x / x.sum(), &y / y.sum()),
                (x.softmax(1), y.softmax(1)),
                ((&x * 2.0).cumsum(1), (&y * 2.0).cumsum(1)),
                (x.cumsum(0), y.cumsum(0)),
            ];
            for (k, (a, b)) in pairs.iter().enumerate() {
                let (got, want) = (a.to_ndarray().unwrap(), b.to_ndarray().unwrap());
                assert_eq!(got.shape(), want.shape(), "pair {k}, shape {n}x{d}");
                close(&got, &want, 1e-4);
            }
            let (a, b) = (x.argmax().item().unwrap(), y.argmax().item().unwrap());
            assert_eq!(a, b, "argmax of {n}x{d}");
            assert_eq!(
                x.argmin_axis(0).to_vec().unwrap(),
                y.argmin_axis(0).to_vec().unwrap()
            );
        }
    }
}

#[test]
fn integer_sums_and_empty_and_tiny_arrays() {
    let ctx = multi(3);
    let v: Vec<i64> = (0..10).map(|i| i * 1_000_000_007).collect();
    let x = ctx.from_slice(&v).unwrap();
    assert_eq!(x.sum().item().unwrap(), v.iter().sum::<i64>());
    assert_eq!(
        (&x * 2).to_vec().unwrap(),
        v.iter().map(|a| a * 2).collect::<Vec<_>>()
    );
    let one = ctx.from_slice(&[7i32]).unwrap();
    assert_eq!((&one + 1).to_vec().unwrap(), [8]);
    assert_eq!(one.sum().item().unwrap(), 7);
    let empty = ctx.from_slice::<f32>(&[]).unwrap();
    assert_eq!((&empty * 2.0).to_vec().unwrap(), Vec::<f32>::new());
    assert_eq!(empty.sum().item().unwrap(), 0.0);
    let wide = ctx.zeros::<f32>([0, 4]).unwrap();
    assert_eq!(wide.sum_axis(0).to_vec().unwrap(), [0.0; 4]);
    let s = ctx.scalar(2.5f32).unwrap();
    assert_eq!((&s * 2.0).item().unwrap(), 5.0);
}

#[test]
fn products_transposes_gathers_and_concatenations_match_one_device() {
    let one = Context::new().unwrap();
    let ctx = multi(2);
    let (a, b) = (host(37, 9, 1), host(9, 5, 2));
    let (xa, xb) = (ctx.array(&a).unwrap(), ctx.array(&b).unwrap());
    let (ya, yb) = (one.array(&a).unwrap(), one.array(&b).unwrap());
    let idx: Vec<u32> = vec![36, 0, 5, 5, 20];
    let (xi, yi) = (ctx.from_slice(&idx).unwrap(), one.from_slice(&idx).unwrap());
    // Indices as many as the rows (a gather of a product's or a scan's own shape).
    let rows: Vec<u64> = (0..37u64)
        .map(|i| (i * 7 + 3) % 37)
        .chain([u64::MAX])
        .skip(1)
        .collect();
    let (xr, yr) = (ctx.from_slice(&rows).unwrap(), one.from_slice(&rows).unwrap());
    let pairs: Vec<(Array<f32>, Array<f32>)> = vec![
        (xa.matmul(&xb), ya.matmul(&yb)),
        (xa.matmul(&xb).take(0, &xr), ya.matmul(&yb).take(0, &yr)),
        (
            xa.cumsum(0).cumsum(0).take(0, &xr),
            ya.cumsum(0).cumsum(0).take(0, &yr),
        ),
        (xa.t().matmul(&xa), ya.t().matmul(&ya)),
        (xa.t().to_contiguous(), ya.t().to_contiguous()),
        (xa.flip(0) * 2.0, ya.flip(0) * 2.0),
        (xa.take(0, &xi), ya.take(0, &yi)),
        (xa.slice(s![3..30;4, 1..]), ya.slice(s![3..30;4, 1..])),
        (
            lazycl::concatenate(0, &[&xa, &xa.slice(s![..5, ..])]).unwrap() + 1.0,
            lazycl::concatenate(0, &[&ya, &ya.slice(s![..5, ..])]).unwrap() + 1.0,
        ),
        (xa.pad(&[(2, 1), (0, 3)], 0.5), ya.pad(&[(2, 1), (0, 3)], 0.5)),
        (xa.reshape([9, 37]), ya.reshape([9, 37])),
        (
            xa.reshape([37 * 9]).slice(s![10..200]),
            ya.reshape([37 * 9]).slice(s![10..200]),
        ),
    ];
    for (k, (m, o)) in pairs.iter().enumerate() {
        close(&m.to_ndarray().unwrap(), &o.to_ndarray().unwrap(), 1e-4);
        assert!(m.is_materialized(), "pair {k}");
    }
}

#[test]
fn random_numbers_are_those_of_one_device() {
    let one = Context::new().unwrap();
    let ctx = multi(3);
    let a = ctx.random_uniform::<f32>([101, 3], 42).unwrap();
    let b = one.random_uniform::<f32>([101, 3], 42).unwrap();
    assert_eq!(a.to_vec().unwrap(), b.to_vec().unwrap());
    let (m, o) = ((&a * 2.0).sum_axis(0), (&b * 2.0).sum_axis(0));
    close(&m.to_ndarray().unwrap(), &o.to_ndarray().unwrap(), 1e-5);
}

#[test]
fn assign_and_regions_set_in_place_keep_value_semantics() {
    let ctx = multi(2);
    let h = host(11, 3, 9);
    let mut w = ctx.array(&h).unwrap();
    let kept = w.clone();
    for _ in 0..3 {
        w.assign(&w * 0.5 + 1.0).unwrap();
    }
    w.slice_mut(s![4..8, 1]).fill(-1.0).unwrap();
    w.slice_mut(s![9, ..])
        .assign(&kept.slice(s![0, ..]) * 3.0)
        .unwrap();
    let mut want = h.mapv(|v| ((v * 0.5 + 1.0) * 0.5 + 1.0) * 0.5 + 1.0);
    want.slice_mut(s![4..8, 1]).fill(-1.0);
    let row0 = h.row(0).mapv(|v| v * 3.0);
    want.row_mut(9).assign(&row0);
    close(&w.to_ndarray().unwrap(), &want.into_dyn(), 1e-5);
    close(&kept.to_ndarray().unwrap(), &h.into_dyn(), 0.0);
}

#[test]
fn what_needs_one_device_is_a_clear_error() {
    let ctx = multi(2);
    let x = ctx.from_slice(&[3.0f32, 1.0, 2.0]).unwrap();
    let expect = |r: lazycl::Result<()>, op: &str| {
        let e = r.unwrap_err();
        assert!(matches!(e, Error::MultiDevice { devices: 2, .. }), "{e}");
        assert!(e.to_string().contains(op), "{e}");
    };
    expect(x.sort().map(drop), "a sort");
    expect(x.kernel_arg().map(drop), "#[kernel]");
    expect(ctx.new_queue().map(drop), "Context::new_queue");
    expect(x.explain().map(drop), "Array::explain");
    expect(x.gt(1.0).nonzero().map(drop), "a compaction");
    let other = Context::new().unwrap().from_slice(&[1.0f32]).unwrap();
    let e = lazycl::eval(&(&x, &other)).unwrap_err();
    assert!(matches!(e, Error::ContextMismatch { .. }), "{e}");
    let e = lazycl::eval(&(&other, &x)).unwrap_err();
    assert!(matches!(e, Error::ContextMismatch { .. }), "{e}");
    // The array is still usable afterwards.
    assert_eq!((&x + 1.0).to_vec().unwrap(), [4.0, 2.0, 3.0]);
}

#[test]
fn captured_steps_run_their_closure_on_several_devices() {
    let ctx = multi(2);
    let target = ctx.from_slice(&values(9, 5)).unwrap();
    let step = ctx.capture(|w: Array<f32>| Ok(&w - 0.25 * (2.0 * (&w - &target))));
    let mut w = ctx.zeros::<f32>(9).unwrap();
    for _ in 0..4 {
        w = step.run(&w).unwrap();
    }
    let want: Vec<f32> = values(9, 5).iter().map(|t| t * (1.0 - 0.5f32.powi(4))).collect();
    for (g, h) in w.to_vec().unwrap().iter().zip(&want) {
        assert!((g - h).abs() < 1e-6, "{g} {h}");
    }
    // A host value as an input: each run's own.
    let scaled = ctx.capture(|(w, k): (Array<f32>, Array<f32>)| Ok(&w * &k));
    for k in [2.0f32, -0.5] {
        let got = scaled.run((&w, k)).unwrap().to_vec().unwrap();
        for (g, h) in got.iter().zip(&want) {
            assert!((g - h * k).abs() < 1e-5, "k = {k}: {g} {h}");
        }
    }
}

#[test]
fn device_lists_parse() {
    assert_eq!(DeviceSelector::parse("gpu:*").unwrap(), DeviceSelector::AllGpus);
    assert_eq!(DeviceSelector::parse("*").unwrap(), DeviceSelector::All);
    assert_eq!(
        DeviceSelector::parse(" 1:* ").unwrap(),
        DeviceSelector::Platform(1)
    );
    assert_eq!(
        DeviceSelector::parse("1:0,1:1").unwrap(),
        DeviceSelector::List(vec![
            DeviceSelector::Index {
                platform: 1,
                device: 0
            },
            DeviceSelector::Index {
                platform: 1,
                device: 1
            }
        ])
    );
    assert!(DeviceSelector::parse("cpu:*").unwrap().is_multi());
    assert!(!DeviceSelector::parse("gpu").unwrap().is_multi());
    assert_eq!(DeviceSelector::parse("0:0,cpu").unwrap().to_string(), "0:0,cpu");
    let e = Context::multi(DeviceSelector::Platform(99))
        .unwrap_err()
        .to_string();
    assert!(e.contains("99:*"), "{e}");
    // An empty list names no device: an error, as a selection of none, not a panic.
    for builder in [
        Context::builder()
            .device(DeviceSelector::List(vec![]))
            .multi(true),
        Context::builder().device(DeviceSelector::List(vec![])),
    ] {
        match builder.build() {
            Err(lazycl::Error::NoMatchingDevice { request, .. }) => {
                assert!(request.contains("empty list"), "{request}")
            }
            other => panic!(
                "expected NoMatchingDevice, got {:?}",
                other.map(|c| c.device_count())
            ),
        }
    }
    assert!(Context::multi(DeviceSelector::List(vec![])).is_err());
}
