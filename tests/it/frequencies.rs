//! Sample frequencies and zero-frequency shifts of discrete Fourier transforms
//! (`fftfreq`, `rfftfreq`, `fftshift`, `ifftshift`) against numpy's definitions computed
//! on the host, for lengths 0 to 9, several spacings, every axis and negative axes.

use crate::common::ctx;

/// numpy's `fftfreq(n, d)` in f64.
fn fftfreq_host(n: usize, d: f64) -> Vec<f64> {
    (0..n)
        .map(|k| {
            let k = if k < n.div_ceil(2) {
                k as f64
            } else {
                k as f64 - n as f64
            };
            k / (d * n as f64)
        })
        .collect()
}

/// `v` rolled by `shift` places (numpy's `np.roll` of a 1-D array).
fn roll_host<T: Copy>(v: &[T], shift: isize) -> Vec<T> {
    let n = v.len() as isize;
    (0..n)
        .map(|i| v[((i - shift).rem_euclid(n.max(1))) as usize])
        .collect()
}

#[test]
fn frequencies_match_numpy() {
    let ctx = ctx();
    for n in 0..10 {
        for d in [1.0, 0.1, -2.5] {
            let want = fftfreq_host(n, d);
            let got = ctx.fftfreq(n, d).unwrap().to_vec().unwrap();
            assert_eq!(got.len(), n);
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                    "fftfreq({n}, {d}): {got:?} against {want:?}"
                );
            }
            let got32 = ctx.fftfreq(n, d as f32).unwrap().to_vec().unwrap();
            for (g, w) in got32.iter().zip(&want) {
                assert!(
                    (*g as f64 - w).abs() <= 1e-6 * w.abs().max(1.0),
                    "f32 fftfreq({n}, {d})"
                );
            }
            let r = ctx.rfftfreq(n, d).unwrap().to_vec().unwrap();
            let want_r: Vec<f64> = (0..=n / 2).map(|k| k as f64 / (d * n.max(1) as f64)).collect();
            assert_eq!(r.len(), n / 2 + 1);
            for (g, w) in r.iter().zip(&want_r) {
                assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "rfftfreq({n}, {d})");
            }
        }
    }
    for d in [0.0, f64::NAN, f64::INFINITY] {
        let e = ctx.fftfreq(4, d).unwrap_err().to_string();
        assert!(e.contains("fftfreq(n = 4") && e.contains("spacing"), "{e}");
    }
}

#[test]
fn shifts_roll_half_of_each_axis_and_undo_each_other() {
    let ctx = ctx();
    for n in 0..8usize {
        let v: Vec<i32> = (0..n as i32).collect();
        let a = ctx.from_slice(&v).unwrap();
        assert_eq!(
            a.fftshift().to_vec().unwrap(),
            roll_host(&v, (n / 2) as isize),
            "n = {n}"
        );
        assert_eq!(
            a.ifftshift().to_vec().unwrap(),
            roll_host(&v, -((n / 2) as isize)),
            "n = {n}"
        );
        assert_eq!(a.fftshift().ifftshift().to_vec().unwrap(), v);
    }
    // numpy: fftshift(fftfreq(5)) is ascending.
    let f = ctx.fftfreq(5, 1.0f64).unwrap();
    assert_eq!(f.fftshift().to_vec().unwrap(), [-0.4, -0.2, 0.0, 0.2, 0.4]);
    // Two axes, of odd and even lengths; one axis named from the end.
    let m: Vec<i32> = (0..15).collect();
    let a = ctx.from_shape_slice([3, 5], &m).unwrap();
    let both = a.fftshift().to_vec().unwrap();
    let mut want = Vec::new();
    for i in 0..3 {
        let row = (i + 3 - 1) % 3; // rolled by 1 along axis 0
        want.extend(roll_host(&m[row * 5..row * 5 + 5], 2));
    }
    assert_eq!(both, want);
    let last = a.fftshift_axes(&[-1]).to_vec().unwrap();
    let want_last: Vec<i32> = (0..3).flat_map(|i| roll_host(&m[i * 5..i * 5 + 5], 2)).collect();
    assert_eq!(last, want_last);
    assert_eq!(a.fftshift_axes(&[-1]).ifftshift_axes(&[1]).to_vec().unwrap(), m);
    let e = a.fftshift_axes(&[2]).to_vec().unwrap_err().to_string();
    assert!(e.contains("fftshift_axes"), "{e}");
}
