//! Fourier transforms against an f64 DFT on the host: lengths of every kind (1, 2, powers
//! of 2, 3, 5, 7, mixed, primes by Bluestein's algorithm, two-pass lengths), every axis of
//! 1-D to 3-D arrays, views as input, round trips, Parseval, the real transforms, the
//! norms, and the fusion at both ends by the counters.

use lazycl::prelude::*;
use rand::distributions::{Distribution, Uniform};
use rand::rngs::StdRng;

use crate::common::{ctx, rng};

pub(crate) fn random(rng: &mut StdRng, n: usize) -> Vec<c64> {
    let d = Uniform::new(-1.0f64, 1.0);
    (0..n).map(|_| c64::new(d.sample(rng), d.sample(rng))).collect()
}

pub(crate) fn narrow(v: &[c64]) -> Vec<c32> {
    v.iter().map(|z| c32::new(z.re as f32, z.im as f32)).collect()
}

fn wide(v: &[c32]) -> Vec<c64> {
    v.iter().map(|z| c64::new(z.re as f64, z.im as f64)).collect()
}

/// Bin `k` of the DFT of `x` (`inverse`: the opposite sign, unscaled), exactly in f64.
pub(crate) fn bin(x: &[c64], k: usize, inverse: bool) -> c64 {
    let n = x.len();
    let sign = if inverse { 1.0 } else { -1.0 };
    x.iter()
        .enumerate()
        .map(|(j, v)| {
            let turn = (j * k % n) as f64 / n as f64;
            v * c64::from_polar(1.0, sign * 2.0 * std::f64::consts::PI * turn)
        })
        .sum()
}

pub(crate) fn dft(x: &[c64], inverse: bool) -> Vec<c64> {
    (0..x.len()).map(|k| bin(x, k, inverse)).collect()
}

/// The largest error relative to the largest magnitude of `want`.
pub(crate) fn error(got: &[c64], want: &[c64]) -> f64 {
    let scale = want.iter().map(|z| z.norm()).fold(1e-300, f64::max);
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).norm())
        .fold(0.0, f64::max)
        / scale
}

/// Tolerance of a transform of `n` points: a few ulps times log n, and Bluestein's two
/// extra transforms.
pub(crate) fn tolerance(eps: f64, n: usize) -> f64 {
    eps * 8.0 * (n as f64).log2().max(1.0) * if bluestein(n) { 8.0 } else { 1.0 }
}

fn bluestein(n: usize) -> bool {
    let mut m = n;
    for p in [2, 3, 5, 7] {
        while m.is_multiple_of(p) {
            m /= p;
        }
    }
    m != 1
}

/// Lengths of every kind: trivial, powers of each radix, mixed, primes of Bluestein's
/// algorithm, and the first of two passes.
const LENGTHS: [usize; 23] = [
    1, 2, 3, 4, 5, 7, 8, 11, 12, 16, 17, 30, 49, 64, 97, 125, 243, 343, 360, 1000, 1009, 2048, 2310,
];

#[test]
fn one_dimension_every_kind_of_length_both_types() {
    let ctx = ctx();
    let mut r = rng(1);
    for n in LENGTHS {
        let x = random(&mut r, n);
        let want = dft(&x, false);
        let got = ctx.from_slice(&x).unwrap().fft(0).to_vec().unwrap();
        let e = error(&got, &want);
        assert!(e < tolerance(f64::EPSILON, n), "c64 fft of {n}: error {e:e}");
        // (`c32` and the inverse at a length of each kind: every length is a program of its
        // own, which PoCL takes a while to build.)
        if [1, 2, 3, 5, 7, 8, 11, 12, 64, 125, 1000, 1009, 2048].contains(&n) {
            let x32 = narrow(&x);
            let want = dft(&wide(&x32), false);
            let got = wide(&ctx.from_slice(&x32).unwrap().fft(0).to_vec().unwrap());
            let e = error(&got, &want);
            assert!(
                e < tolerance(f32::EPSILON as f64, n),
                "c32 fft of {n}: error {e:e}"
            );
        }
        if [2, 3, 7, 16, 30, 343, 1009].contains(&n) {
            let want = dft(&x, true);
            let got: Vec<c64> = ctx.from_slice(&x).unwrap().ifft(0).to_vec().unwrap();
            let got: Vec<c64> = got.iter().map(|z| z * n as f64).collect();
            let e = error(&got, &want);
            assert!(e < tolerance(f64::EPSILON, n), "c64 ifft of {n}: error {e:e}");
        }
    }
}

/// Lengths past one work-group's points: two passes (and a prime past them, Bluestein's
/// over two-pass transforms), checked at sampled bins, with round trips and Parseval.
#[test]
fn long_transforms_in_two_passes() {
    let ctx = ctx();
    let mut r = rng(2);
    for n in [4096usize, 3 * 5 * 7 * 64, 1 << 16, 4099] {
        let x = random(&mut r, n);
        let dx = ctx.from_slice(&x).unwrap();
        let got = dx.fft(0).to_vec().unwrap();
        let scale = (n as f64).sqrt();
        for k in [0, 1, 2, n / 3, n / 2, n - 1] {
            let want = bin(&x, k, false);
            assert!(
                (got[k] - want).norm() < 1e-12 * scale * 8.0,
                "fft of {n}, bin {k}: {} vs {want}",
                got[k]
            );
        }
        let back = dx.fft(0).ifft(0).to_vec().unwrap();
        assert!(error(&back, &x) < 1e-13, "round trip of {n}");
        let energy: f64 = x.iter().map(|z| z.norm_sqr()).sum();
        let spectrum: f64 = got.iter().map(|z| z.norm_sqr()).sum::<f64>() / n as f64;
        assert!((energy - spectrum).abs() < 1e-10 * energy, "Parseval at {n}");
    }
}

/// Every axis of 1-D to 3-D arrays, batched, and views as input.
#[test]
fn every_axis_batched_and_views() {
    let ctx = ctx();
    let mut r = rng(3);
    let shape = [3usize, 10, 7];
    let n: usize = shape.iter().product();
    let x = random(&mut r, n);
    let dx = ctx.from_shape_slice(shape, &x).unwrap();
    let at = |i: usize, j: usize, k: usize| (i * shape[1] + j) * shape[2] + k;
    for axis in 0..3 {
        let got = dx.fft(axis).to_vec().unwrap();
        // Each line along `axis`, against its own DFT.
        let mut worst: f64 = 0.0;
        for i in 0..shape[0] {
            for j in 0..shape[1] {
                for k in 0..shape[2] {
                    let mut idx = [i, j, k];
                    if idx[axis] != 0 {
                        continue;
                    }
                    let line: Vec<usize> = (0..shape[axis])
                        .map(|p| {
                            idx[axis] = p;
                            at(idx[0], idx[1], idx[2])
                        })
                        .collect();
                    let input: Vec<c64> = line.iter().map(|&q| x[q]).collect();
                    let output: Vec<c64> = line.iter().map(|&q| got[q]).collect();
                    worst = worst.max(error(&output, &dft(&input, false)));
                }
            }
        }
        assert!(worst < 1e-14, "axis {axis}: error {worst:e}");
    }
    // A negative axis, and a transposed view read in place.
    let want = dx.fft(2).to_vec().unwrap();
    assert_eq!(dx.fft(-1).to_vec().unwrap(), want);
    let t = dx.permuted_axes([2, 0, 1]); // [7, 3, 10]
    let got = t.fft(0).to_vec().unwrap();
    for i in 0..3 {
        for j in 0..10 {
            for k in 0..7 {
                let (g, w) = (got[(k * 3 + i) * 10 + j], want[at(i, j, k)]);
                assert!((g - w).norm() < 1e-13, "view ({i}, {j}, {k})");
            }
        }
    }
    // fft2 and fftn are the axes one after the other.
    let both = dx.fft2().to_vec().unwrap();
    let by_axes = dx.fft(1).fft(2).to_vec().unwrap();
    assert!(error(&both, &by_axes) < 1e-14);
    let all = dx.fftn(&[0, 1, 2]);
    let back = all.ifftn(&[0, 1, 2]).to_vec().unwrap();
    assert!(error(&back, &x) < 1e-14);
    assert!(error(&dx.fft2().ifft2().to_vec().unwrap(), &x) < 1e-14);
}

#[test]
fn norms_and_real_transforms() {
    let ctx = ctx();
    let mut r = rng(4);
    let n = 12;
    let x = random(&mut r, n);
    let dx = ctx.from_slice(&x).unwrap();
    let plain = dft(&x, false);
    let scaled = |s: f64| plain.iter().map(|z| z * s).collect::<Vec<_>>();
    let e = error(
        &dx.fft_norm(0, FftNorm::Ortho).to_vec().unwrap(),
        &scaled(1.0 / (n as f64).sqrt()),
    );
    assert!(e < 1e-14);
    let e = error(
        &dx.fft_norm(0, FftNorm::Forward).to_vec().unwrap(),
        &scaled(1.0 / n as f64),
    );
    assert!(e < 1e-14);
    let unitary = dx
        .fft_norm(0, FftNorm::Ortho)
        .ifft_norm(0, FftNorm::Ortho)
        .to_vec()
        .unwrap();
    assert!(error(&unitary, &x) < 1e-14);
    let e = error(
        &dx.ifft_norm(0, FftNorm::Forward).to_vec().unwrap(),
        &dft(&x, true),
    );
    assert!(e < 1e-14);
    // Real transforms, odd and even lengths, both directions, along an inner axis too.
    for n in [1usize, 2, 7, 16, 45, 1009] {
        let real: Vec<f64> = random(&mut r, n).iter().map(|z| z.re).collect();
        let full = dft(&real.iter().map(|&v| c64::new(v, 0.0)).collect::<Vec<_>>(), false);
        let dr = ctx.from_slice(&real).unwrap();
        let spectrum = dr.rfft(0);
        assert_eq!(spectrum.shape(), [n / 2 + 1]);
        let e = error(&spectrum.to_vec().unwrap(), &full[..n / 2 + 1]);
        assert!(e < tolerance(f64::EPSILON, n), "rfft of {n}: {e:e}");
        let back = spectrum.irfft(0, n).to_vec().unwrap();
        let worst = back
            .iter()
            .zip(&real)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-12, "irfft(rfft) of {n}: {worst:e}");
        let r32: Vec<f32> = real.iter().map(|&v| v as f32).collect();
        let back = ctx
            .from_slice(&r32)
            .unwrap()
            .rfft(0)
            .irfft(0, n)
            .to_vec()
            .unwrap();
        let worst = back
            .iter()
            .zip(&r32)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(worst < 1e-4, "c32 irfft(rfft) of {n}: {worst:e}");
    }
    let m = ctx
        .from_shape_slice(
            [4, 6],
            &random(&mut r, 24).iter().map(|z| z.re).collect::<Vec<_>>(),
        )
        .unwrap();
    let half = m.rfft(1);
    assert_eq!(half.shape(), [4, 4]);
    let back = half.irfft(1, 6).to_vec().unwrap();
    let worst = back
        .iter()
        .zip(m.to_vec().unwrap())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-13);
}

/// A windowed power spectrum is one kernel per pass and nothing else; an FFT convolution
/// launches no kernel of its own for the product or the mirror of `irfft`.
#[test]
fn fusion_at_both_ends_by_the_counters() {
    let ctx = ctx();
    let mut r = rng(5);
    let (rows, n) = (6usize, 256usize);
    let x: Vec<f32> = random(&mut r, rows * n).iter().map(|z| z.re as f32).collect();
    let window: Vec<f32> = (0..n)
        .map(|k| 0.5 - 0.5 * (2.0 * std::f32::consts::PI * k as f32 / n as f32).cos())
        .collect();
    let dx = ctx.from_shape_slice([rows, n], &x).unwrap();
    let dw = ctx.from_slice(&window).unwrap();
    dx.eval().unwrap();
    let before = ctx.stats();
    let power = (&dx * &dw).cast::<c32>().fft(1).norm_sqr().to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "one pass: {d}");
    for row in [0, rows - 1] {
        let line: Vec<c64> = (0..n)
            .map(|k| c64::new((x[row * n + k] * window[k]) as f64, 0.0))
            .collect();
        let want: Vec<f64> = dft(&line, false).iter().map(|z| z.norm_sqr()).collect();
        for k in 0..n {
            let got = power[row * n + k] as f64;
            assert!(
                (got - want[k]).abs() < 1e-3 * want.iter().cloned().fold(1.0, f64::max),
                "row {row}, bin {k}"
            );
        }
    }
    // Two passes (on every device: a group transforms at most 4096 points): two kernels.
    let long = ctx.from_slice(&narrow(&random(&mut r, 1 << 16))).unwrap();
    long.eval().unwrap();
    let before = ctx.stats();
    (&long * 2.0f32).fft(0).abs().to_vec().unwrap();
    assert_eq!((ctx.stats() - before).kernels_launched, 2);
    // Convolution: three transforms of one pass each.
    let (a, b) = (random(&mut r, n), random(&mut r, n));
    let (a, b): (Vec<f64>, Vec<f64>) = (a.iter().map(|z| z.re).collect(), b.iter().map(|z| z.re).collect());
    let (da, db) = (ctx.from_slice(&a).unwrap(), ctx.from_slice(&b).unwrap());
    eval(&(&da, &db)).unwrap();
    let before = ctx.stats();
    let conv = (da.rfft(0) * db.rfft(0)).irfft(0, n).to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 3, "{d}");
    for k in [0, 1, n / 2, n - 1] {
        let want: f64 = (0..n).map(|j| a[j] * b[(k + n - j) % n]).sum();
        assert!(
            (conv[k] - want).abs() < 1e-10,
            "circular convolution at {k}: {} vs {want}",
            conv[k]
        );
    }
}

#[test]
fn errors_name_the_transform_and_the_axis() {
    let ctx = ctx();
    let x = ctx.zeros::<c32>([2, 0]).unwrap();
    let e = x.fft(1).to_vec().unwrap_err().to_string();
    assert!(
        e.contains("fft") && e.contains("no points") && e.contains("[2, 0]"),
        "{e}"
    );
    let e = x.fft(2).to_vec().unwrap_err().to_string();
    assert!(e.contains("fft") && e.contains('2'), "{e}");
    // Along an empty batch axis: nothing to transform, an empty result.
    assert_eq!(x.fft(0).to_vec().unwrap(), []);
}
