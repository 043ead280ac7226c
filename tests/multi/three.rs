//! The property tests once more on three devices (fewer cases: each case builds its
//! programs for three contexts), and a check that every device took part.

use crate::common::multi;

fn cases(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(default, |n: u64| n / 3)
}

#[test]
fn random_elementwise_dags_on_three_devices() {
    let ctx = multi(3);
    for seed in 1000..1000 + cases("LAZYCL_PROPTEST_CASES", 60) {
        match seed % 3 {
            0 => crate::lazy_property::run_case::<f32>(&ctx, seed),
            1 => crate::lazy_property::run_case::<i32>(&ctx, seed),
            _ => crate::lazy_property::run_case::<u64>(&ctx, seed),
        }
    }
    for (d, s) in ctx.device_stats().iter().enumerate() {
        assert!(s.kernels_launched > 0, "device {d} ran nothing: {s}");
    }
    assert!(ctx.stats().device_combines > 0 && ctx.stats().device_copies > 0);
}

#[test]
fn random_view_chains_on_three_devices() {
    let ctx = multi(3);
    crate::views_property::run::<f32>(&ctx, 7, cases("LAZYCL_VIEW_CASES", 40));
    crate::views_property::run::<i32>(&ctx, 8, cases("LAZYCL_VIEW_CASES", 20));
    for (d, s) in ctx.device_stats().iter().enumerate() {
        assert!(s.kernels_launched > 0, "device {d} ran nothing: {s}");
    }
    assert!(ctx.stats().device_copies > 0);
}
