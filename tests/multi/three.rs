//! The property tests once more on three devices (fewer cases: each case builds its
//! programs for three contexts), and a check that every device took part.

use crate::common::multi;

/// A third of `variable`'s case count when set, else `default`.
fn cases(variable: &str, default: u32) -> u32 {
    std::env::var(variable)
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(default, |n: u32| n / 3)
}

#[test]
fn random_elementwise_dags_on_three_devices() {
    use lazycl::DType::{F32, I32, U64};
    let ctx = multi(3);
    let cases = cases("LAZYCL_PROPTEST_CASES", 60);
    crate::lazy_property::run(&ctx, 1000, cases, &[F32, I32, U64]);
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
