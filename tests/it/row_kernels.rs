//! Row kernels: a reduction along the innermost axes whose result is read back over the
//! same rows (softmax's maximum and sum, layer norm's mean and variance), written with
//! ordinary ops, runs as one kernel with its readers when a row fits on chip, against
//! host references in `f64` on random data: several shapes (rows of 1, odd lengths,
//! rows over several axes, no rows at all), `f32` and `f64`.

use crate::common::{ctx, rng};
use lazycl::prelude::*;
use rand::Rng;

/// Host rows of `v` (`len` elements each).
fn host_rows(v: &[f64], len: usize) -> Vec<&[f64]> {
    v.chunks(len.max(1)).collect()
}

fn host_softmax(v: &[f64], len: usize) -> Vec<f64> {
    host_rows(v, len)
        .into_iter()
        .flat_map(|row| {
            let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = row.iter().map(|x| (x - m).exp()).sum();
            row.iter().map(move |x| (x - m).exp() / s).collect::<Vec<_>>()
        })
        .collect()
}

fn host_layer_norm(v: &[f64], len: usize, g: &[f64], b: &[f64], eps: f64) -> Vec<f64> {
    host_rows(v, len)
        .into_iter()
        .flat_map(|row| {
            let n = row.len() as f64;
            let m = row.iter().sum::<f64>() / n;
            let var = row.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
            row.iter()
                .enumerate()
                .map(|(j, x)| (x - m) / (var + eps).sqrt() * g[j] + b[j])
                .collect::<Vec<_>>()
        })
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: element {i}: {g} vs {w}"
        );
    }
}

/// Kernels launched by `f`.
fn kernels(ctx: &Context, f: impl FnOnce()) -> u64 {
    let before = ctx.stats().kernels_launched;
    f();
    ctx.stats().kernels_launched - before
}

/// A context whose row kernels' work-items take about `items` elements of a row each
/// (one at a time) and whose work-groups take `rows` rows (`None`: the CPU rule's). 1
/// element gives the most work-items per row, the deepest trees.
fn items_ctx(items: u32, rows: Option<u32>) -> Context {
    tuned(lazycl::Tuning {
        row_items: Some(items),
        rows_per_group: rows,
        row_width: Some(1),
        ..lazycl::Tuning::default()
    })
}

/// A context with the GPU rule's row layout: 16 elements a work-item, in runs of 4
/// neighbours (one vector load each) where a row's innermost dim is a multiple of 4, and
/// one row a group.
fn gpu_rows_ctx() -> Context {
    tuned(lazycl::Tuning {
        row_items: Some(16),
        rows_per_group: Some(1),
        row_width: Some(4),
        ..lazycl::Tuning::default()
    })
}

/// At least `n` rows, and rows enough to fill `c`'s device (two a compute unit), so that
/// rows too long for registers still take one kernel that reads them again per phase.
fn rows_to_fill(c: &Context, n: usize) -> usize {
    n.max(2 * c.device().compute_units as usize)
}

/// A context whose plans take `tuning`.
fn tuned(tuning: lazycl::Tuning) -> Context {
    Context::builder().tuning(tuning).build().unwrap()
}

macro_rules! row_tests {
    ($name:ident, $t:ty, $tol:expr, $ctx:expr) => {
        #[test]
        fn $name() {
            let c = $ctx;
            let mut r = rng(53);
            // (shape, how many trailing axes make a row)
            let cases: &[(&[usize], usize)] = &[
                (&[1, 1], 1),
                (&[3, 5], 1),
                (&[17, 1024], 1),
                (&[5, 4097], 1),
                (&[2, 3, 7], 1),
                (&[4, 6, 9], 2),
                (&[33], 1),
                // (Innermost dims a multiple of 4: runs of 4 on the GPU layout.)
                (&[3, 8], 1),
                (&[5, 3, 12], 2),
            ];
            for &(shape, inner) in cases {
                let n: usize = shape.iter().product();
                let len: usize = shape[shape.len() - inner..].iter().product();
                let rank = shape.len();
                let axes: Vec<usize> = (rank - inner..rank).collect();
                let v: Vec<f64> = (0..n).map(|_| r.gen_range(-30.0..30.0)).collect();
                let vt: Vec<$t> = v.iter().map(|&x| x as $t).collect();
                let v: Vec<f64> = vt.iter().map(|&x| x as f64).collect();
                let x = c.from_shape_slice(shape.to_vec(), &vt).unwrap();
                let what = format!("{} {shape:?} rows of {inner} axes", stringify!($t));

                // Softmax the natural way: three reductions' worth of work, one kernel.
                let mut got = Vec::new();
                let k = kernels(&c, || {
                    let m = x.amax_axes(&axes, true);
                    let e = (&x - &m).exp();
                    got = (&e / &e.sum_axes(&axes, true)).to_vec().unwrap();
                });
                assert_eq!(k, 1, "{what}: softmax written with ops");
                let want = host_softmax(&v, len);
                let got: Vec<f64> = got.iter().map(|&x| x as f64).collect();
                assert_close(&got, &want, $tol, &format!("{what}: softmax"));

                if inner == 1 {
                    let mut sm = Vec::new();
                    let mut lsm = Vec::new();
                    let k = kernels(&c, || sm = x.softmax(rank - 1).to_vec().unwrap());
                    assert_eq!(k, 1, "{what}: softmax()");
                    let k = kernels(&c, || lsm = x.log_softmax(rank - 1).to_vec().unwrap());
                    assert_eq!(k, 1, "{what}: log_softmax()");
                    let sm: Vec<f64> = sm.iter().map(|&x| x as f64).collect();
                    assert_close(&sm, &want, $tol, &format!("{what}: softmax()"));
                    let lwant: Vec<f64> = want.iter().map(|p| p.ln()).collect();
                    let lsm: Vec<f64> = lsm.iter().map(|&x| x as f64).collect();
                    // (Absolute: log-probabilities of tiny probabilities are large.)
                    assert_close(
                        &lsm,
                        &lwant,
                        $tol * 100.0,
                        &format!("{what}: log_softmax()"),
                    );
                }

                // Layer norm: mean, then the variance of the deviations, then the row
                // scaled and shifted per column.
                let gv: Vec<$t> = (0..len).map(|_| r.gen_range(0.5..2.0) as $t).collect();
                let bv: Vec<$t> = (0..len).map(|_| r.gen_range(-1.0..1.0) as $t).collect();
                let row_shape = shape[rank - inner..].to_vec();
                let g = c.from_shape_slice(row_shape.clone(), &gv).unwrap();
                let b = c.from_shape_slice(row_shape, &bv).unwrap();
                let eps: $t = 1e-5;
                let mut ln = Vec::new();
                let k = kernels(&c, || {
                    let mean = x.mean_axes(&axes, true);
                    let d = &x - &mean;
                    let var = (&d * &d).mean_axes(&axes, true);
                    ln = (&d / (var + eps).sqrt() * &g + &b).to_vec().unwrap();
                });
                assert_eq!(k, 1, "{what}: layer norm");
                let g64: Vec<f64> = gv.iter().map(|&x| x as f64).collect();
                let b64: Vec<f64> = bv.iter().map(|&x| x as f64).collect();
                let lwant = host_layer_norm(&v, len, &g64, &b64, eps as f64);
                let ln: Vec<f64> = ln.iter().map(|&x| x as f64).collect();
                assert_close(&ln, &lwant, $tol * 10.0, &format!("{what}: layer norm"));

                // Standardization with the library's std (ddof 1 where a row has two).
                if inner == 1 && len > 1 {
                    let mut z = Vec::new();
                    kernels(&c, || {
                        let mean = x.mean_axes(&axes, true);
                        let sd = x
                            .std_axis(Axis(rank - 1), 1.0 as $t)
                            .insert_axis(Axis(rank - 1));
                        z = ((&x - &mean) / &sd).to_vec().unwrap();
                    });
                    let zwant: Vec<f64> = host_rows(&v, len)
                        .into_iter()
                        .flat_map(|row| {
                            let n = row.len() as f64;
                            let m = row.iter().sum::<f64>() / n;
                            let sd = (row.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt();
                            row.iter().map(move |x| (x - m) / sd).collect::<Vec<_>>()
                        })
                        .collect();
                    let z: Vec<f64> = z.iter().map(|&x| x as f64).collect();
                    assert_close(&z, &zwant, $tol * 10.0, &format!("{what}: standardization"));
                    // (The standard deviation without kept axes is read through a view,
                    // so no kernel count is promised here: see the kept-axes test.)
                }
            }
        }
    };
}

row_tests!(row_functions_f32_one_kernel_each, f32, 2e-5, ctx());
row_tests!(row_functions_f64_one_kernel_each, f64, 1e-11, ctx());
row_tests!(row_functions_f32_with_the_gpu_layout, f32, 2e-5, gpu_rows_ctx());
row_tests!(
    row_functions_f64_with_a_work_item_per_element,
    f64,
    1e-11,
    items_ctx(1, None)
);

#[test]
fn row_standardization_with_kept_axes_is_one_kernel() {
    let c = ctx();
    let mut r = rng(54);
    let (n, d) = (9usize, 301usize);
    let v: Vec<f64> = (0..n * d).map(|_| 1e3 + r.gen_range(-1.0..1.0)).collect();
    let x = c.from_shape_slice([n, d], &v).unwrap();
    let mut z = Vec::new();
    let k = kernels(&c, || {
        let mean = x.mean_axes(&[1], true);
        let dev = &x - &mean;
        let var = (&dev * &dev).sum_axes(&[1], true) / (d as f64 - 1.0);
        z = (&dev / var.sqrt()).to_vec().unwrap();
    });
    assert_eq!(k, 1);
    for (i, row) in v.chunks(d).enumerate() {
        let m = row.iter().sum::<f64>() / d as f64;
        let sd = (row.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (d as f64 - 1.0)).sqrt();
        for j in 0..d {
            let want = (row[j] - m) / sd;
            assert!(
                (z[i * d + j] - want).abs() < 1e-9,
                "{i},{j}: {} vs {want}",
                z[i * d + j]
            );
        }
    }
}

#[test]
fn reductions_read_across_rows_stay_correct() {
    // A row reduction read through a transpose, or broadcast along the other axis
    // without kept axes, is not read per row: it stays a kernel of its own.
    let c = ctx();
    let mut r = rng(55);
    let n = 8usize;
    let v: Vec<f64> = (0..n * n).map(|_| r.gen_range(-1.0..1.0)).collect();
    let x = c.from_shape_slice([n, n], &v).unwrap();
    let sums: Vec<f64> = v.chunks(n).map(|row| row.iter().sum()).collect();
    let t = (&x - &x.sum_axes(&[1], true).t()).to_vec().unwrap();
    let flat = (&x - &x.sum_axis(1)).to_vec().unwrap();
    for i in 0..n {
        for j in 0..n {
            assert!((t[i * n + j] - (v[i * n + j] - sums[j])).abs() < 1e-12);
            assert!((flat[i * n + j] - (v[i * n + j] - sums[j])).abs() < 1e-12);
        }
    }
}

#[test]
fn row_kernel_results_stay_available() {
    // The maximum a softmax read is itself a result: written by the row kernel.
    let c = ctx();
    let mut r = rng(56);
    let (n, d) = (6usize, 77usize);
    let v: Vec<f32> = (0..n * d).map(|_| r.gen_range(-5.0..5.0)).collect();
    let x = c.from_shape_slice([n, d], &v).unwrap();
    let m = x.amax_axes(&[1], true);
    let mean = x.mean_axes(&[1], true);
    let y = (&x - &m).exp() * &mean;
    let k = kernels(&c, || lazycl::eval(&[&y, &m, &mean]).unwrap());
    assert_eq!(k, 1);
    let (y, m, mean) = (y.to_vec().unwrap(), m.to_vec().unwrap(), mean.to_vec().unwrap());
    for (i, row) in v.chunks(d).enumerate() {
        let want_m = row.iter().cloned().fold(f32::MIN, f32::max);
        let want_mean = row.iter().map(|&x| x as f64).sum::<f64>() / d as f64;
        assert_eq!(m[i], want_m);
        assert!((mean[i] as f64 - want_mean).abs() < 1e-5);
        for j in 0..d {
            let want = ((row[j] - want_m) as f64).exp() * want_mean;
            assert!((y[i * d + j] as f64 - want).abs() < 1e-5 * (1.0 + want.abs()));
        }
    }
}

#[test]
fn empty_rows_and_no_rows() {
    let c = ctx();
    let none = c.zeros::<f32>([0, 5]).unwrap();
    assert!(none.softmax(1).to_vec().unwrap().is_empty());
    let empty = c.zeros::<f32>([3, 0]).unwrap();
    assert!(empty.softmax(1).to_vec().unwrap().is_empty());
    assert!(empty.log_softmax(1).to_vec().unwrap().is_empty());
    // The sum of no exponentials is 0 (scipy's logsumexp of an empty axis).
    assert_eq!(empty.logsumexp(1).to_vec().unwrap(), vec![f32::NEG_INFINITY; 3]);
}

#[test]
fn rows_longer_than_registers_are_read_again_per_phase() {
    // 40,000 f32 elements a row: more than a work-item's registers hold. With rows
    // enough to fill the device, the reductions and their readers share one kernel
    // that reads each row again per phase (one element, or a run of 4, at a time).
    for c in [ctx(), gpu_rows_ctx()] {
        rows_read_again(&c);
    }
}

fn rows_read_again(c: &Context) {
    let mut r = rng(57);
    // (Rows enough to fill this device: fewer are split across work-groups instead.)
    let (n, d) = (rows_to_fill(c, 16), 40_000usize);
    let v: Vec<f32> = (0..n * d).map(|_| r.gen_range(-20.0..20.0)).collect();
    let x = c.from_shape_slice([n, d], &v).unwrap();
    let v64: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    let mut sm = Vec::new();
    let k = kernels(c, || sm = x.softmax(1).to_vec().unwrap());
    assert_eq!(k, 1, "softmax");
    let sm: Vec<f64> = sm.iter().map(|&x| x as f64).collect();
    assert_close(&sm, &host_softmax(&v64, d), 1e-5, "softmax");
    let g = c.full([d], 1.5f32).unwrap();
    let b = c.full([d], 0.25f32).unwrap();
    let mut ln = Vec::new();
    let k = kernels(c, || {
        let mean = x.mean_axes(&[1], true);
        let dev = &x - &mean;
        let var = (&dev * &dev).mean_axes(&[1], true);
        ln = (&dev / (var + 1e-5f32).sqrt() * &g + &b).to_vec().unwrap();
    });
    assert_eq!(k, 1, "layer norm");
    let ln: Vec<f64> = ln.iter().map(|&x| x as f64).collect();
    let want = host_layer_norm(&v64, d, &vec![1.5; d], &vec![0.25; d], 1e-5);
    assert_close(&ln, &want, 1e-4, "layer norm");
}

#[test]
fn a_value_of_an_earlier_phase_is_held_not_computed_again() {
    // Softmax's sum and quotient both need exp(x - max): with four elements a
    // work-item (a row of 1024 is 256 work-items' four), the kernel computes each
    // element's exp once, in the sum's phase, and its epilogue reads them back; it
    // loads x once too.
    let c = items_ctx(4, None);
    let mut r = rng(61);
    let v: Vec<f32> = (0..8 * 1024).map(|_| r.gen_range(-5.0..5.0)).collect();
    let x = c.from_shape_slice([8, 1024], &v).unwrap();
    let source = x.softmax(1).explain().unwrap();
    // (Each element's `exp` is a value of its own; the combining tree's rescaling of
    // partial sums is not.)
    assert_eq!(source.matches("= exp(v").count(), 4, "{source}");
    assert_eq!(source.matches("in0[").count(), 4, "{source}");
    let v64: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    let got: Vec<f64> = x.softmax(1).to_vec().unwrap().iter().map(|&x| x as f64).collect();
    assert_close(&got, &host_softmax(&v64, 1024), 2e-5, "softmax");
}

#[test]
fn runs_of_neighbours_are_one_vector_load_and_store() {
    // On the GPU layout a work-item of a row of 1024 takes 4 runs of 4 neighbours: x is
    // loaded as 4 vectors (once, held for the later phases), each of the 16 elements'
    // exp computed once, the quotient stored as 4 vectors; each reduction's result is
    // read from local memory once, not per element.
    let c = gpu_rows_ctx();
    let mut r = rng(62);
    let v: Vec<f32> = (0..8 * 1028).map(|_| r.gen_range(-5.0..5.0)).collect();
    let x = c.from_shape_slice([8, 1024], &v[..8 * 1024]).unwrap();
    let source = x.softmax(1).explain().unwrap();
    assert_eq!(source.matches("(__global const float4*)").count(), 4, "{source}");
    assert_eq!(source.matches("vload").count(), 4, "{source}");
    assert_eq!(source.matches("in0[").count(), 0, "{source}");
    assert_eq!(source.matches("= exp(v").count(), 16, "{source}");
    assert_eq!(source.matches("(__global float4*)out").count(), 4, "{source}");
    assert_eq!(source.matches("[base]").count(), 2, "{source}");
    let v64: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    let got: Vec<f64> = x.softmax(1).to_vec().unwrap().iter().map(|&x| x as f64).collect();
    assert_close(&got, &host_softmax(&v64[..8 * 1024], 1024), 2e-5, "softmax");
    // Windows of rows at offsets aligned and not to 4 elements are one program: the kernel
    // tests alignment as it runs (a vector pointer where aligned, else `vload`).
    let wide = c.from_shape_slice([8, 1028], &v[..8 * 1028]).unwrap();
    let window = |k: usize| {
        let got = wide.slice(s![.., k..k + 1024]).softmax(1).to_vec().unwrap();
        let rows: Vec<f64> = (0..8)
            .flat_map(|r| v64[r * 1028 + k..r * 1028 + k + 1024].to_vec())
            .collect();
        let got: Vec<f64> = got.iter().map(|&x| x as f64).collect();
        assert_close(
            &got,
            &host_softmax(&rows, 1024),
            2e-5,
            &format!("softmax of the window at {k}"),
        );
    };
    window(0);
    let before = c.stats();
    for k in [1, 4, 3] {
        window(k);
    }
    let d = c.stats() - before;
    assert_eq!(d.programs_built + d.programs_loaded, 0, "{d}");
    // A row whose innermost dim is not a multiple of 4 takes one element at a time.
    let odd = c.from_shape_slice([8, 1023], &v[..8 * 1023]).unwrap();
    let source = odd.softmax(1).explain().unwrap();
    assert!(!source.contains("float4"), "{source}");
}

/// A context whose row kernels take `items` elements a work-item, in runs of `width`,
/// and, with `online`, compute a maximum and the sum of exponentials shifted by it in
/// one pass.
fn pass_ctx(items: u32, width: u32, online: bool) -> Context {
    tuned(lazycl::Tuning {
        row_items: Some(items),
        row_width: Some(width),
        rows_online: online,
        ..lazycl::Tuning::default()
    })
}

/// Whether `a` and `b` agree: both NaN, equal infinities, or within `tol`.
fn agree(a: f32, b: f32, tol: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * (1.0 + b.abs())
}

#[test]
fn softmax_max_and_sum_in_one_pass_agree_with_two_passes_on_hard_rows() {
    // With `rows_online`, softmax's maximum and sum of exponentials run as one pass and
    // one combining tree (each work-item's partial sum shifted by its own maximum,
    // rescaled as they combine). On rows where that could go wrong — `-inf` in some or all elements, a
    // NaN, `+inf`, magnitudes whose exponentials overflow unshifted, work-items with
    // no element of a short row — it agrees with the two-pass kernel and the host.
    let len = 36;
    let mut r = rng(67);
    let mut rows: Vec<Vec<f32>> = Vec::new();
    let random = |r: &mut rand::rngs::StdRng, lo: f32, hi: f32| -> Vec<f32> {
        (0..len).map(|_| r.gen_range(lo..hi)).collect()
    };
    rows.push(random(&mut r, -30.0, 30.0));
    rows.push(random(&mut r, -1030.0, -1000.0));
    rows.push(random(&mut r, 1000.0, 1030.0));
    let mut some_inf = random(&mut r, -5.0, 5.0);
    for j in (0..len).step_by(3) {
        some_inf[j] = f32::NEG_INFINITY;
    }
    rows.push(some_inf);
    // Only the last element finite: every other work-item's maximum is -inf.
    let mut last = vec![f32::NEG_INFINITY; len];
    last[len - 1] = -200.0;
    rows.push(last);
    rows.push(vec![f32::NEG_INFINITY; len]);
    let mut nan = random(&mut r, -5.0, 5.0);
    nan[4] = f32::NAN;
    rows.push(nan);
    let mut inf = random(&mut r, -5.0, 5.0);
    inf[7] = f32::INFINITY;
    rows.push(inf);
    let v: Vec<f32> = rows.concat();
    let shape = [rows.len(), len];
    for (items, width) in [(1, 1), (16, 4)] {
        let one = pass_ctx(items, width, true);
        let two = pass_ctx(items, width, false);
        let (x1, x2) = (
            one.from_shape_slice(shape, &v).unwrap(),
            two.from_shape_slice(shape, &v).unwrap(),
        );
        // One pass has one combining tree fewer: fewer barriers.
        let barriers = |x: &Array<f32>| x.softmax(1).explain().unwrap().matches("barrier(").count();
        assert!(barriers(&x1) < barriers(&x2), "{items} elements a work-item");
        let pairs: [(&str, Vec<f32>, Vec<f32>); 4] = [
            (
                "softmax",
                x1.softmax(1).to_vec().unwrap(),
                x2.softmax(1).to_vec().unwrap(),
            ),
            (
                "log_softmax",
                x1.log_softmax(1).to_vec().unwrap(),
                x2.log_softmax(1).to_vec().unwrap(),
            ),
            (
                "logsumexp",
                x1.logsumexp(1).to_vec().unwrap(),
                x2.logsumexp(1).to_vec().unwrap(),
            ),
            (
                "softmax with ops",
                {
                    let m = x1.amax_axes(&[1], true);
                    let e = (&x1 - &m).exp();
                    (&e / &e.sum_axes(&[1], true)).to_vec().unwrap()
                },
                {
                    let m = x2.amax_axes(&[1], true);
                    let e = (&x2 - &m).exp();
                    (&e / &e.sum_axes(&[1], true)).to_vec().unwrap()
                },
            ),
        ];
        for (what, a, b) in &pairs {
            for (i, (&p, &q)) in a.iter().zip(b).enumerate() {
                assert!(
                    agree(p, q, 1e-5),
                    "{what}, {items} elements a work-item, row {} element {}: one pass {p}, two passes {q}",
                    i / len,
                    i % len
                );
            }
        }
        // The finite rows against the host, too.
        let v64: Vec<f64> = v[..5 * len].iter().map(|&x| x as f64).collect();
        let want = host_softmax(&v64, len);
        let got: Vec<f64> = pairs[0].1[..5 * len].iter().map(|&x| x as f64).collect();
        assert_close(&got, &want, 1e-5, "softmax, one pass");
    }
}

#[test]
fn one_pass_softmax_of_rows_read_again_per_phase() {
    // Rows longer than registers hold (4 work-items a row of 1000): the one-pass kernel
    // reads the row again for its sum, then for the epilogue; it agrees with the host.
    let ctx = |online: bool, width: u32| {
        tuned(lazycl::Tuning {
            row_work_items: Some(4),
            row_width: Some(width),
            rows_online: online,
            ..lazycl::Tuning::default()
        })
    };
    let (n, d) = (rows_to_fill(&ctx(false, 1), 8), 1000usize);
    let mut r = rng(71);
    let mut v: Vec<f32> = (0..n * d).map(|_| r.gen_range(-40.0..40.0)).collect();
    v[5] = f32::NEG_INFINITY;
    let v64: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    let want = host_softmax(&v64, d);
    for width in [1, 4] {
        let mut barriers = Vec::new();
        for online in [true, false] {
            let c = ctx(online, width);
            let x = c.from_shape_slice([n, d], &v).unwrap();
            let source = x.softmax(1).explain().unwrap();
            assert!(source.contains("for ("), "rows read again in a loop: {source}");
            barriers.push(source.matches("barrier(").count());
            let got: Vec<f64> = x.softmax(1).to_vec().unwrap().iter().map(|&g| g as f64).collect();
            assert_close(
                &got,
                &want,
                1e-5,
                &format!("softmax, online {online}, runs of {width}"),
            );
        }
        assert!(
            barriers[0] < barriers[1],
            "one tree fewer in one pass: {barriers:?}"
        );
    }
}

#[test]
fn runs_of_four_read_views_regions_and_random_numbers_right() {
    // The GPU layout's runs of 4 over inputs of every kind a row kernel reads: a slice
    // whose rows start aligned (vector pointer) or not (vload), a transpose (element by
    // element), a concatenation (guarded loads), random numbers drawn in the kernel at
    // each lane's coordinates, and the result stored into a region of another array;
    // each against the host on the same values.
    let c = gpu_rows_ctx();
    let mut r = rng(63);
    let (n, d) = (6usize, 48usize);
    let wide: Vec<f32> = (0..n * (d + 8)).map(|_| r.gen_range(-6.0..6.0)).collect();
    let w = c.from_shape_slice([n, d + 8], &wide).unwrap();
    let host_of = |f: &dyn Fn(usize, usize) -> f32| -> Vec<f64> {
        (0..n * d).map(|i| f(i / d, i % d) as f64).collect()
    };
    let check = |x: &Array<f32>, want_x: Vec<f64>, what: &str| {
        let got: Vec<f64> = x.softmax(1).to_vec().unwrap().iter().map(|&g| g as f64).collect();
        assert_close(&got, &host_softmax(&want_x, d), 2e-5, what);
    };
    for start in [4usize, 1] {
        let x = w.slice(s![.., start..start + d]);
        let source = x.softmax(1).explain().unwrap();
        let vector = if start == 4 {
            "(__global const float4*)(in"
        } else {
            "vload4"
        };
        assert!(source.contains(vector), "slice from {start}: {source}");
        check(
            &x,
            host_of(&|i, j| wide[i * (d + 8) + start + j]),
            &format!("slice from {start}"),
        );
    }
    let sq: Vec<f32> = (0..d * d).map(|_| r.gen_range(-6.0..6.0)).collect();
    let s = c.from_shape_slice([d, d], &sq).unwrap();
    check(
        &s.t(),
        (0..d * d).map(|i| sq[(i % d) * d + i / d] as f64).collect(),
        "transpose",
    );
    let (a, b) = (w.slice(s![.., ..20]), w.slice(s![.., 28..56]));
    let cat = lazycl::concatenate(1, &[&a, &b]).unwrap();
    check(
        &cat,
        host_of(&|i, j| match j < 20 {
            true => wide[i * (d + 8) + j],
            false => wide[i * (d + 8) + 28 + j - 20],
        }),
        "concatenation",
    );
    // Dropout before softmax: the mask drawn inside the row kernel equals the one drawn
    // alone (same seed, same elements).
    let x = w.slice(s![.., ..d]);
    let keep = || c.random_uniform::<f32>([n, d], 9).unwrap().gt(0.3f32);
    let kept: Vec<bool> = keep().to_vec().unwrap();
    let dropped = keep().select(&x * (1.0 / 0.7f32), 0.0f32);
    let source = dropped.softmax(1).explain().unwrap();
    assert!(
        source.contains("philox"),
        "random numbers drawn in the kernel: {source}"
    );
    let k = kernels(&c, || drop(dropped.softmax(1).to_vec().unwrap()));
    assert_eq!(k, 1, "dropout and softmax");
    let want = host_of(&|i, j| match kept[i * d + j] {
        true => wide[i * (d + 8) + j] / 0.7,
        false => 0.0,
    });
    check(&dropped, want.clone(), "dropout");
    // The softmax stored into columns 2.. of a wider array, in one kernel.
    let mut out = c.zeros::<f32>([n, d + 4]).unwrap();
    out.slice_mut(s![.., 2..2 + d])
        .assign(dropped.softmax(1))
        .unwrap();
    let got = out.to_vec().unwrap();
    let sm = host_softmax(&want, d);
    for i in 0..n {
        for j in 0..d + 4 {
            let expect = if (2..2 + d).contains(&j) {
                sm[i * d + j - 2]
            } else {
                0.0
            };
            let g = got[i * (d + 4) + j] as f64;
            assert!(
                (g - expect).abs() <= 2e-5 * (1.0 + expect.abs()),
                "region ({i}, {j}): {g} vs {expect}"
            );
        }
    }
}
