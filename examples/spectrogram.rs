//! A spectrogram and a convolution by Fourier transforms, on generated data, each checked
//! against the host.
//!
//! The signal is a chirp (a tone whose frequency sweeps up) in noise. Its spectrogram is
//! the power of each frame's transform after a Hann window: `(frames * window).rfft(1)
//! .norm_sqr()`, one kernel per pass of the transform, the window applied in the first
//! pass's loads and the power computed in the last pass's stores. Each frame's loudest
//! frequency follows the sweep. Then the signal is smoothed by a circular convolution with
//! a Gaussian kernel, `(x.rfft(0) * k.rfft(0)).irfft(0, n)`: the product runs inside the
//! inverse transform's loads.
//!
//! `cargo run --release --example spectrogram`; `LAZYCL_EXAMPLE_SMALL=1` runs small sizes.

use std::f64::consts::PI;
use std::time::Instant;

use lazycl::prelude::*;

/// A deterministic chirp from `f0` to `f1` cycles per sample over `n` samples, in noise.
fn chirp(n: usize, f0: f64, f1: f64) -> Vec<f32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|i| {
            let t = i as f64;
            let phase = 2.0 * PI * (f0 * t + (f1 - f0) * t * t / (2.0 * n as f64));
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let noise = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            (phase.sin() + 0.2 * noise) as f32
        })
        .collect()
}

/// The power of the DFT of `x` at bins `0..=n/2`, on the host in f64.
fn host_power(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    (0..=n / 2)
        .map(|k| {
            let (mut re, mut im) = (0.0, 0.0);
            for (j, v) in x.iter().enumerate() {
                let a = -2.0 * PI * ((j * k) % n) as f64 / n as f64;
                re += v * a.cos();
                im += v * a.sin();
            }
            re * re + im * im
        })
        .collect()
}

fn main() -> lazycl::Result<()> {
    let small = std::env::var("LAZYCL_EXAMPLE_SMALL").is_ok();
    let (frames, width) = if small { (16, 128) } else { (256, 1024) };
    let n = frames * width;
    let ctx = Context::new()?;
    println!(
        "spectrogram of {frames} frames of {width} samples on {}",
        ctx.device().name
    );

    let samples = chirp(n, 0.02, 0.4);
    let signal = ctx.from_slice(&samples)?;
    let window: Vec<f32> = (0..width)
        .map(|k| (0.5 - 0.5 * (2.0 * PI * k as f64 / width as f64).cos()) as f32)
        .collect();
    let hann = ctx.from_slice(&window)?;

    let start = Instant::now();
    let power = (signal.reshape([frames, width]) * &hann).rfft(1).norm_sqr();
    let power = power.to_ndarray_dim::<ndarray::Ix2>()?;
    println!("  computed in {:.1} ms", start.elapsed().as_secs_f64() * 1e3);

    // Every frame against the host's DFT, and its loudest bin following the sweep.
    let mut worst: f64 = 0.0;
    let mut peaks = Vec::new();
    for f in 0..frames {
        let frame: Vec<f64> = (0..width)
            .map(|k| samples[f * width + k] as f64 * window[k] as f64)
            .collect();
        let want = host_power(&frame);
        let top = want.iter().cloned().fold(0.0, f64::max);
        for (k, w) in want.iter().enumerate() {
            worst = worst.max((power[[f, k]] as f64 - w).abs() / top);
        }
        let peak = (0..=width / 2)
            .max_by(|&a, &b| power[[f, a]].total_cmp(&power[[f, b]]))
            .unwrap_or(0);
        peaks.push(peak);
    }
    println!("  largest error against the host: {worst:.2e} of each frame's peak");
    assert!(worst < 1e-4, "the spectrogram differs from the host's");
    let rising = peaks.windows(2).filter(|p| p[1] >= p[0]).count();
    println!(
        "  loudest frequency per frame (bins of {}): {:?} ...",
        width / 2 + 1,
        &peaks[..peaks.len().min(8)]
    );
    assert!(
        rising + 2 >= peaks.len(),
        "the chirp's frequency rises: {peaks:?}"
    );

    // Smoothing by a circular convolution with a Gaussian (sigma of 4 samples).
    let kernel: Vec<f32> = (0..n)
        .map(|i| {
            let d = i.min(n - i) as f64;
            ((-d * d / 32.0).exp() / (32.0 * PI).sqrt()) as f32
        })
        .collect();
    let gauss = ctx.from_slice(&kernel)?;
    let before = ctx.stats();
    let smooth = (signal.rfft(0) * gauss.rfft(0)).irfft(0, n).to_vec()?;
    let kernels = (ctx.stats() - before).kernels_launched;
    let mut worst: f64 = 0.0;
    for i in (0..n).step_by((n / 64).max(1)) {
        let want: f64 = (0..n)
            .map(|j| samples[j] as f64 * kernel[(i + n - j) % n] as f64)
            .sum();
        worst = worst.max((smooth[i] as f64 - want).abs());
    }
    println!("  smoothed by a convolution of {n} samples in {kernels} kernels; largest error {worst:.2e}");
    assert!(worst < 1e-3, "the convolution differs from the host's");
    Ok(())
}
