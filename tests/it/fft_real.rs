//! Real signals' transforms (`rfft`, `irfft`) against an f64 DFT on the host: even lengths
//! whose half is one pass (half a complex transform's points, in one kernel), odd lengths
//! and longer halves (the complex route), the imaginary parts `irfft` ignores, every axis
//! of a 3-D array, consumers in the store and a store into a region, by the counters.

use lazycl::prelude::*;
use ndarray::s;
use rand::distributions::{Distribution, Uniform};
use rand::rngs::StdRng;

use crate::common::{ctx, rng};
use crate::fft::{bin, error, tolerance};

fn real(rng: &mut StdRng, n: usize) -> Vec<f64> {
    let d = Uniform::new(-1.0f64, 1.0);
    (0..n).map(|_| d.sample(rng)).collect()
}

fn complex(v: &[f64]) -> Vec<c64> {
    v.iter().map(|&x| c64::new(x, 0.0)).collect()
}

/// The positions checked of a transform of `n`: all of them up to 1024, else 64 spread
/// over it and both ends.
fn checked(n: usize) -> Vec<usize> {
    match n <= 1024 {
        true => (0..n).collect(),
        false => (0..64).map(|k| k * n / 64 + k % 7).chain([n - 1]).collect(),
    }
}

/// numpy's `irfft(half, n)`: the conjugate-mirrored spectrum's inverse, the imaginary
/// parts of `X_0` and (for an even `n`) `X_(n/2)` ignored, at samples `at`.
fn irfft_host(half: &[c64], n: usize, at: &[usize]) -> Vec<f64> {
    let mut full: Vec<c64> = (0..n)
        .map(|k| match k <= n / 2 {
            true => half[k],
            false => half[n - k].conj(),
        })
        .collect();
    full[0].im = 0.0;
    if n.is_multiple_of(2) {
        full[n / 2].im = 0.0;
    }
    at.iter().map(|&j| bin(&full, j, true).re / n as f64).collect()
}

fn worst(got: &[f64], want: &[f64]) -> f64 {
    let scale = want.iter().map(|v| v.abs()).fold(1e-300, f64::max);
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max)
        / scale
}

#[test]
fn even_lengths_take_one_pass_of_half_the_points() {
    let ctx = ctx();
    let mut r = rng(31);
    // Halves of every radix and mixed, one pass; 12000's half (6000) is two passes and
    // 22's (11) Bluestein's: the complex route.
    for n in [4usize, 6, 10, 14, 22, 24, 1000, 8192, 12000] {
        let x = real(&mut r, n);
        let at = checked(n / 2 + 1);
        let want: Vec<c64> = at.iter().map(|&k| bin(&complex(&x), k, false)).collect();
        let spectrum = ctx.from_slice(&x).unwrap().rfft(0).to_vec().unwrap();
        assert_eq!(spectrum.len(), n / 2 + 1);
        let got: Vec<c64> = at.iter().map(|&k| spectrum[k]).collect();
        let e = error(&got, &want);
        assert!(e < tolerance(f64::EPSILON, n), "rfft of {n}: {e:e}");
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let spectrum32 = ctx.from_slice(&x32).unwrap().rfft(0).to_vec().unwrap();
        let got: Vec<c64> = at
            .iter()
            .map(|&k| c64::new(spectrum32[k].re as f64, spectrum32[k].im as f64))
            .collect();
        let e = error(&got, &want);
        assert!(e < tolerance(f32::EPSILON as f64, n), "c32 rfft of {n}: {e:e}");

        // A random half spectrum, imaginary parts of its ends included.
        let half: Vec<c64> = x
            .iter()
            .zip(real(&mut r, n))
            .take(n / 2 + 1)
            .map(|(&a, b)| c64::new(a, b))
            .collect();
        let at = checked(n);
        let want = irfft_host(&half, n, &at);
        let samples = ctx.from_slice(&half).unwrap().irfft(0, n).to_vec().unwrap();
        assert_eq!(samples.len(), n);
        let got: Vec<f64> = at.iter().map(|&j| samples[j]).collect();
        let e = worst(&got, &want);
        assert!(e < tolerance(f64::EPSILON, n), "irfft of {n}: {e:e}");
        let half32: Vec<c32> = half.iter().map(|z| c32::new(z.re as f32, z.im as f32)).collect();
        let samples = ctx.from_slice(&half32).unwrap().irfft(0, n).to_vec().unwrap();
        let got: Vec<f64> = at.iter().map(|&j| samples[j] as f64).collect();
        let e = worst(&got, &want);
        assert!(e < tolerance(f32::EPSILON as f64, n), "c32 irfft of {n}: {e:e}");
    }
}

#[test]
fn every_axis_of_a_3d_array_and_back() {
    let ctx = ctx();
    let mut r = rng(32);
    let shape = [4usize, 10, 6];
    let x = real(&mut r, shape.iter().product());
    let dx = ctx.from_shape_slice(shape, &x).unwrap();
    let host = ndarray::Array3::from_shape_vec(shape, x.clone()).unwrap();
    for axis in 0..3 {
        let n = shape[axis];
        let spectrum = dx.rfft(axis);
        let mut half_shape = shape;
        half_shape[axis] = n / 2 + 1;
        assert_eq!(spectrum.shape(), half_shape);
        let got = spectrum.to_ndarray().unwrap();
        for line in 0..x.len() / n {
            // The line's position along the other two axes.
            let others: Vec<usize> = (0..3).filter(|&a| a != axis).collect();
            let (p, q) = (line / shape[others[1]], line % shape[others[1]]);
            let index = |k: usize| {
                let mut i = [0; 3];
                (i[others[0]], i[others[1]], i[axis]) = (p, q, k);
                i
            };
            let samples: Vec<f64> = (0..n).map(|k| host[index(k)]).collect();
            let want: Vec<c64> = (0..=n / 2).map(|k| bin(&complex(&samples), k, false)).collect();
            let have: Vec<c64> = (0..=n / 2).map(|k| got[index(k)]).collect();
            assert!(error(&have, &want) < 1e-13, "axis {axis}, line {line}");
        }
        let back = spectrum.irfft(axis, n).to_vec().unwrap();
        assert!(worst(&back, &x) < 1e-13, "irfft(rfft) along axis {axis}");
    }
}

#[test]
fn consumers_join_the_pass_and_a_region_takes_its_store() {
    let ctx = ctx();
    let mut r = rng(33);
    let (rows, n) = (5usize, 8192usize);
    let x: Vec<f32> = real(&mut r, rows * n).iter().map(|&v| v as f32).collect();
    let dx = ctx.from_shape_slice([rows, n], &x).unwrap();
    dx.eval().unwrap();
    // A power spectrum of real rows: one pass of 4096 points, where a complex transform
    // of 8192 takes two (a work-group transforms at most 4096).
    let before = ctx.stats();
    let power = dx.rfft(1).norm_sqr().to_ndarray().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    let row: Vec<c64> = x[(rows - 1) * n..]
        .iter()
        .map(|&v| c64::new(v as f64, 0.0))
        .collect();
    for k in [0, 1, 777, n / 2] {
        let want = bin(&row, k, false).norm_sqr();
        let got = power[[rows - 1, k]] as f64;
        assert!(
            (got - want).abs() < 1e-4 * want.max(1.0),
            "bin {k}: {got} vs {want}"
        );
    }
    // The inverse with a consumer in its store, written into a region of another array.
    let spectrum = dx.rfft(1);
    spectrum.eval().unwrap();
    let mut target = ctx.zeros::<f32>([rows + 2, n + 3]).unwrap();
    let before = ctx.stats();
    target
        .slice_mut(s![1..rows + 1, 2..n + 2])
        .assign(&(spectrum.irfft(1, n) * 2.0f32))
        .unwrap();
    let got = target.to_ndarray().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    for (i, j) in [(0, 0), (2, 5), (rows - 1, n - 1)] {
        let want = 2.0 * x[i * n + j];
        assert!((got[[i + 1, j + 2]] - want).abs() < 1e-4, "({i}, {j})");
    }
    assert_eq!(got[[0, 0]], 0.0);
    assert_eq!(got[[rows + 1, n + 2]], 0.0);
}
