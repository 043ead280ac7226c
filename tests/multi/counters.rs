//! What a multi-device flush does, counted: kernels per device, host waits, copies
//! between devices, combines.

use lazycl::prelude::*;

use crate::common::{multi, values};

#[test]
fn an_elementwise_chain_is_one_kernel_per_device_and_never_waits() {
    for devices in [2, 3] {
        let ctx = multi(devices);
        let host = values(1001, 1);
        let x = ctx.from_slice(&host).unwrap();
        let before = ctx.device_stats();
        let y = (&x * 2.0 + 1.0).exp() - &x;
        y.eval().unwrap();
        for (b, a) in before.iter().zip(ctx.device_stats()) {
            let d = a - *b;
            assert_eq!(d.kernels_launched, 1, "{d}");
            assert_eq!((d.host_waits, d.device_copies), (0, 0), "{d}");
        }
        let got = y.to_vec().unwrap();
        for (g, h) in got.iter().zip(&host) {
            let want = (h * 2.0 + 1.0).exp() - h;
            assert!((g - want).abs() <= 1e-5 * want.abs().max(1.0), "{g} {want}");
        }
    }
}

#[test]
fn a_full_sum_is_one_combine_and_waits_only_to_read() {
    let ctx = multi(2);
    let host = values(777, 2);
    let x = ctx.from_slice(&host).unwrap();
    let before = ctx.stats();
    let s = (&x * &x).sum();
    s.eval().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.device_combines, 1, "{d}");
    assert_eq!(d.device_copies, 1, "one partial sum crosses: {d}");
    assert_eq!(d.host_waits, 0, "{d}");
    // A partial per device (one kernel each) and the combine on the first.
    assert_eq!(d.kernels_launched, 3, "{d}");
    let want: f64 = host.iter().map(|v| (*v as f64) * (*v as f64)).sum();
    let got = s.item().unwrap() as f64;
    assert!((got - want).abs() < 1e-4 * want, "{got} {want}");
    assert_eq!((ctx.stats() - before).host_waits, 1);
}

#[test]
fn a_stencil_copies_only_its_halo_rows() {
    let ctx = multi(3);
    let (n, d) = (90, 5);
    let host = values(n * d, 3);
    let x = ctx.from_shape_slice([n, d], &host).unwrap();
    let before = ctx.stats();
    let y = x.slice(s![2.., ..]) - 2.0 * x.slice(s![1..n - 1, ..]) + x.slice(s![..n - 2, ..]);
    y.eval().unwrap();
    let delta = ctx.stats() - before;
    assert_eq!(delta.host_waits, 0, "{delta}");
    assert_eq!(delta.kernels_launched, 3, "{delta}");
    // Each device's rows of y read at most two rows beyond its own rows of x.
    assert!(delta.device_copies <= 4, "{delta}");
    assert!(delta.device_copy_bytes <= 4 * 2 * (d as u64) * 4, "{delta}");
    let got = y.to_vec().unwrap();
    for i in 0..n - 2 {
        for j in 0..d {
            let at = |r: usize| host[r * d + j];
            let want = at(i + 2) - 2.0 * at(i + 1) + at(i);
            assert!((got[i * d + j] - want).abs() < 1e-6, "{i},{j}");
        }
    }
}

#[test]
fn weights_share_the_rows_in_proportion() {
    let ctx = crate::common::multi_builder(2)
        .weights(&[3.0, 1.0])
        .build()
        .unwrap();
    let before = ctx.device_stats();
    let x = ctx.zeros::<f32>([400, 2]).unwrap();
    (&x + 1.0).eval().unwrap();
    let after = ctx.device_stats();
    let bytes: Vec<u64> = after
        .iter()
        .zip(&before)
        .map(|(a, b)| (*a - *b).bytes_allocated)
        .collect();
    assert!(bytes[0] >= 2 * bytes[1], "{bytes:?}");
    assert_eq!(x.sum().item().unwrap(), 0.0);
    let bad = crate::common::multi_builder(2).weights(&[1.0, -1.0]).build();
    let e = bad.unwrap_err().to_string();
    assert!(e.contains("weights") && e.contains("2 devices"), "{e}");
}

#[test]
fn a_one_device_multi_context_launches_what_a_plain_one_does() {
    let plain = Context::new().unwrap();
    let one = Context::builder()
        .device(DeviceSelector::Index {
            platform: plain.device().platform_index,
            device: plain.device().device_index,
        })
        .multi(true)
        .build()
        .unwrap();
    assert_eq!(one.device_count(), 1);
    let host = values(513, 4);
    for ctx in [&plain, &one] {
        let x = ctx.from_slice(&host).unwrap();
        let y = (&x * 3.0).sin() + &x;
        y.eval().unwrap();
        let before = ctx.stats();
        let z = ((&x * 3.0).sin() + &x).sum();
        z.eval().unwrap();
        let d = ctx.stats() - before;
        assert_eq!(
            (d.kernels_launched, d.device_copies, d.host_waits),
            (1, 0, 0),
            "{d}"
        );
    }
}

#[test]
fn a_loop_plans_once_per_device() {
    let ctx = multi(2);
    let x = ctx.from_shape_slice([64, 3], &values(192, 6)).unwrap();
    let mut w = ctx.zeros::<f32>([64, 3]).unwrap();
    let mut before = ctx.stats();
    for step in 0..6 {
        if step == 2 {
            before = ctx.stats();
        }
        w.assign(&w * 0.9 + &x.slice(s![.., ..]) * 0.1 - w.mean_axis(0))
            .unwrap();
    }
    let d = ctx.stats() - before;
    assert_eq!(d.flushes_planned, 0, "{d}");
    assert_eq!(d.programs_built + d.programs_loaded, 0, "{d}");
    assert!(
        d.plans_reused >= 4 * 3,
        "a mean (two partials, a combine) and the update: {d}"
    );
    assert_eq!(d.host_waits, 0, "{d}");
}

#[test]
fn a_scan_along_the_rows_copies_only_the_devices_totals() {
    let one = Context::new().unwrap();
    for devices in [2, 3] {
        let ctx = multi(devices);
        let host = values(10_001, 7);
        let (x, y) = (ctx.from_slice(&host).unwrap(), one.from_slice(&host).unwrap());
        let before = ctx.stats();
        let s = (&x * 2.0).cumsum(0);
        s.eval().unwrap();
        let d = ctx.stats() - before;
        assert_eq!(d.host_waits, 0, "{d}");
        // Device k receives the totals of the k devices before it: 4 bytes each.
        let copies = (devices * (devices - 1) / 2) as u64;
        assert_eq!(
            (d.device_copies, d.device_copy_bytes),
            (copies, 4 * copies),
            "{d}"
        );
        let (got, want) = (s.to_vec().unwrap(), (&y * 2.0).cumsum(0).to_vec().unwrap());
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-3 * w.abs().max(1.0), "{k}: {g} {w}");
        }
        let ints: Vec<i64> = (0..1001).map(|i| (i % 7) - 3).collect();
        let (xi, yi) = (ctx.from_slice(&ints).unwrap(), one.from_slice(&ints).unwrap());
        assert_eq!(
            xi.cumsum_exclusive(0).to_vec().unwrap(),
            yi.cumsum_exclusive(0).to_vec().unwrap()
        );
        let small: Vec<f64> = (0..301).map(|i| 1.0 + ((i % 5) as f64 - 2.0) * 1e-3).collect();
        let (xs, ys) = (ctx.from_slice(&small).unwrap(), one.from_slice(&small).unwrap());
        let (p, q) = (xs.cumprod(0).to_vec().unwrap(), ys.cumprod(0).to_vec().unwrap());
        for (g, w) in p.iter().zip(&q) {
            assert!((g - w).abs() <= 1e-12 * w.abs(), "{g} {w}");
        }
    }
}
