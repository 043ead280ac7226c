//! Recompute or store: a per-row value that a larger kernel reads along the columns is
//! stored by a kernel of its own where recomputing it for every read costs more (its
//! operations are expensive, the device's compute is slow against its memory: PoCL on a
//! CPU), and fused where it does not (cheap arithmetic; a GPU). `explain()` says which,
//! and the values are equal either way.

use crate::common::ctx;
use lazycl::prelude::*;

#[test]
fn an_expensive_value_read_many_times_over_is_stored_where_recomputing_costs_more() {
    let ctx = ctx();
    let (n, d) = (2000, 100);
    let xs: Vec<f32> = (0..n * d)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5)
        .collect();
    let x = ctx.from_shape_slice([n, d], &xs).unwrap();
    let z = x.sum_axes(&[1], true);
    let expensive = (z.exp() + 1.0f32).ln() / (&z * &z + 1.0f32);
    let cpu = ctx.device().device_type != lazycl::DeviceType::Gpu;
    let kernels = |a: &Array<f32>| {
        let before = ctx.stats();
        let v = a.to_vec().unwrap();
        ((ctx.stats() - before).kernels_launched, v)
    };
    let read = (&x * &expensive).sum_axis(0);
    let plan = read.explain().unwrap();
    assert_eq!(plan.contains("stored, not recomputed"), cpu, "{plan}");
    let (k, got) = kernels(&read);
    assert_eq!(
        k,
        if cpu { 3 } else { 2 },
        "the row sum, {}the column sum",
        if cpu { "the stored value, " } else { "" }
    );
    // (A row sum of its own: the first flush stored `z`.)
    let cheap = x.sum_axes(&[1], true) * 2.0f32 + 1.0f32;
    let cheap_read = (&x * &cheap).sum_axis(0);
    assert!(!cheap_read.explain().unwrap().contains("stored, not recomputed"));
    assert_eq!(kernels(&cheap_read).0, 2, "cheap arithmetic is recomputed");
    // The values, against the host.
    let mut want = vec![0.0f64; d];
    for i in 0..n {
        let zi: f64 = (0..d).map(|j| xs[i * d + j] as f64).sum();
        let r = (zi.exp() + 1.0).ln() / (zi * zi + 1.0);
        for j in 0..d {
            want[j] += xs[i * d + j] as f64 * r;
        }
    }
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (*g as f64 - w).abs() <= 1e-3 * w.abs().max(1.0),
            "{g} against {w}"
        );
    }
}
