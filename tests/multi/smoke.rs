use lazycl::prelude::*;

use crate::common::{multi, values};

#[test]
fn elementwise_chain_runs_one_kernel_per_device_and_never_waits() {
    let ctx = multi(2);
    let host = values(1001, 1);
    let x = ctx.from_slice(&host).unwrap();
    let before = ctx.device_stats();
    let y = (&x * 2.0 + 1.0).exp() - &x;
    y.eval().unwrap();
    let after = ctx.device_stats();
    for (b, a) in before.iter().zip(&after) {
        let d = *a - *b;
        assert_eq!(d.kernels_launched, 1, "{d}");
        assert_eq!(d.host_waits, 0);
    }
    let got = y.to_vec().unwrap();
    for (g, h) in got.iter().zip(&host) {
        let want = (h * 2.0 + 1.0).exp() - h;
        assert!((g - want).abs() <= 1e-5 * want.abs().max(1.0), "{g} {want}");
    }
}

#[test]
fn full_sum_combines_once() {
    let ctx = multi(2);
    let host = values(777, 2);
    let x = ctx.from_slice(&host).unwrap();
    let before = ctx.stats();
    let s = (&x * &x).sum();
    s.eval().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.device_combines, 1, "{d}");
    assert_eq!(d.host_waits, 0, "{d}");
    let want: f64 = host.iter().map(|v| (*v as f64) * (*v as f64)).sum();
    let got = s.item().unwrap() as f64;
    assert!((got - want).abs() < 1e-4 * want, "{got} {want}");
}

#[test]
fn stencil_reads_halo_rows_from_the_neighbour() {
    let ctx = multi(3);
    let n = 100;
    let host = values(n, 3);
    let x = ctx.from_slice(&host).unwrap();
    let y = x.slice(s![2..]) - 2.0 * x.slice(s![1..-1]) + x.slice(s![..-2]);
    let got = y.to_vec().unwrap();
    assert_eq!(got.len(), n - 2);
    for i in 0..n - 2 {
        let want = host[i + 2] - 2.0 * host[i + 1] + host[i];
        assert!((got[i] - want).abs() < 1e-6, "{i}: {} {want}", got[i]);
    }
}
