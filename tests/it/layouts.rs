//! Every layout of the reductions that join two kernels' work, on any device: the
//! planner's tuning switches (`ContextBuilder::tuning`) make a CPU run take the layouts
//! GPUs take (rows shared by work-items) and the combine pass where a kernel could
//! finish itself, and the results must match the host and each other.

use lazycl::{Array, Context, Tuning};

/// A context whose plans share rows on any device, and take the combine pass only when
/// `combine_pass_only`.
fn tuned(combine_pass_only: bool) -> Context {
    Context::builder()
        .tuning(Tuning {
            combine_pass_only,
            shared_rows_anywhere: true,
            ..Tuning::default()
        })
        .build()
        .expect("an OpenCL device")
}

/// Split reductions give the same results whether their last work-group or a combine
/// pass finishes them: column and lanes layouts, sums, means and arg reductions.
#[test]
fn both_ways_of_finishing_a_split_reduction_agree() {
    let contexts = [tuned(false), tuned(true)];
    for (rows, cols) in [(100_000usize, 4usize), (3000, 100)] {
        let data: Vec<i32> = (0..rows * cols)
            .map(|i| ((i * 7919) % 201) as i32 - 100)
            .collect();
        let mut results = Vec::new();
        for (ctx, combine_only) in contexts.iter().zip([false, true]) {
            let m = ctx.from_shape_slice([rows, cols], &data).unwrap();
            let col_sum = m.sum_axis(0);
            let col_arg = m.argmax_axis(0);
            let col_mean = m.cast::<f32>().mean_axis(0);
            let total = m.sum();
            // A row reduction inside a column reduction (`RowPart`): rows read whole
            // by one work-item (4 columns) or shared by a row of work-items (100).
            let fused = (&m * &m.sum_axes(&[1], true)).sum_axis(0);
            let below_max = (&m - &m.amax_axes(&[1], true)).sum_axis(0);
            assert!(fused.explain().unwrap().contains("computed inside"));
            assert!(below_max.explain().unwrap().contains("computed inside"));
            if cols == 4 {
                // Few partials per work-item: both layouts finish in the kernel.
                let text = col_sum.explain().unwrap() + &total.explain().unwrap();
                let finished = text.matches("finished by the last work-group").count();
                let combined = text.matches("plus a combine pass").count();
                let want = if combine_only { (0, 2) } else { (2, 0) };
                assert_eq!((finished, combined), want, "{text}");
            }
            results.push((
                col_sum.to_vec().unwrap(),
                col_arg.to_vec().unwrap(),
                col_mean.to_vec().unwrap(),
                total.item().unwrap(),
                fused.to_vec().unwrap(),
                below_max.to_vec().unwrap(),
            ));
        }
        let want_sum: Vec<i32> = (0..cols)
            .map(|j| (0..rows).map(|i| data[i * cols + j]).sum())
            .collect();
        let want_arg: Vec<u32> = (0..cols)
            .map(|j| {
                let mut best = 0;
                for i in 1..rows {
                    if data[i * cols + j] > data[best * cols + j] {
                        best = i;
                    }
                }
                best as u32
            })
            .collect();
        let row_sum = |i: usize| (0..cols).fold(0i32, |a, k| a.wrapping_add(data[i * cols + k]));
        let want_fused: Vec<i32> = (0..cols)
            .map(|j| {
                (0..rows).fold(0i32, |a, i| {
                    a.wrapping_add(data[i * cols + j].wrapping_mul(row_sum(i)))
                })
            })
            .collect();
        let row_max = |i: usize| (0..cols).map(|k| data[i * cols + k]).max().unwrap_or(0);
        let want_below: Vec<i32> = (0..cols)
            .map(|j| (0..rows).map(|i| data[i * cols + j] - row_max(i)).sum())
            .collect();
        for (sum, arg, mean, total, fused, below) in &results {
            assert_eq!(fused, &want_fused, "{rows}x{cols}");
            assert_eq!(below, &want_below, "{rows}x{cols}");
            assert_eq!(sum, &want_sum, "{rows}x{cols}");
            assert_eq!(arg, &want_arg, "{rows}x{cols}");
            for (m, s) in mean.iter().zip(&want_sum) {
                assert!((m - *s as f32 / rows as f32).abs() < 1e-4, "{rows}x{cols}");
            }
            assert_eq!(*total, data.iter().sum::<i32>(), "{rows}x{cols}");
        }
    }
}

/// Reductions over the rows of one value per row, in a flush with a column reduction
/// `g` that computes their row reduction `z` inside (`make` records a fresh pair):
/// beside it, they launch no more kernels than `g` alone. A mean with a
/// single-element input, a sum, the largest and the smallest (the row result itself);
/// the same as on the host, and `g` unchanged.
fn check_row_totals(
    ctx: &Context,
    make: impl Fn() -> (Array<f64>, Array<f64>),
    ya: &Array<f64>,
    hz: &[f64],
    y: &[f64],
) {
    let n = hz.len() as f64;
    let b = ctx.from_slice(&[0.25]).unwrap();
    type Total<'a> = &'a dyn Fn(&Array<f64>) -> Array<f64>;
    let totals: [Total; 4] = [
        &|z| (&b - &((&z.tanh() - ya) * 0.2)).mean_axis(0),
        &|z| (z * ya).sum_axis(0),
        &|z| (&(z * 0.5).exp() - ya).amax_axis(0),
        &|z| z.amin_axis(0),
    ];
    let host = [
        hz.iter()
            .zip(y)
            .map(|(z, y)| 0.25 - (z.tanh() - y) * 0.2)
            .sum::<f64>()
            / n,
        hz.iter().zip(y).map(|(z, y)| z * y).sum::<f64>(),
        hz.iter()
            .zip(y)
            .map(|(z, y)| (z * 0.5).exp() - y)
            .fold(f64::MIN, f64::max),
        hz.iter().cloned().fold(f64::MAX, f64::min),
    ];
    for (total, h) in totals.iter().zip(host) {
        let (alone, _) = make();
        let before = ctx.stats().kernels_launched;
        alone.eval().unwrap();
        let launches = ctx.stats().kernels_launched - before;
        let (g, z) = make();
        let t = total(&z);
        let before = ctx.stats().kernels_launched;
        lazycl::eval(&(&g, &t)).unwrap();
        assert_eq!(
            ctx.stats().kernels_launched - before,
            launches,
            "a kernel of its own"
        );
        let got = t.item().unwrap();
        assert!((got - h).abs() < 1e-9 * h.abs().max(1.0), "total: {got} vs {h}");
        assert_eq!(g.to_vec().unwrap(), alone.to_vec().unwrap());
    }
}

/// The shared-row kernel (a row of work-items per row, a tree per step) on any
/// device: a linear model's gradient in f64 against the host, rows of 40 (vectors)
/// and 126 (single elements), a mean row reduction, several segments; totals over
/// the rows beside (with the per-row values computed once per row).
#[test]
fn shared_rows_give_the_host_gradient() {
    let ctx = tuned(false);
    for (n, d) in [(3000usize, 40usize), (3000, 126), (37, 36)] {
        let x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
            .collect();
        let w: Vec<f64> = (0..d).map(|j| ((j * 31) % 17) as f64 / 17.0 - 0.5).collect();
        let y: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
        let xa = ctx.from_shape_slice([n, d], &x).unwrap();
        let wa = ctx.from_slice(&w).unwrap();
        let ya = ctx.from_shape_slice([n, 1], &y).unwrap();
        let z = (&xa * &wa).sum_axes(&[1], true);
        let g = (&xa * &(z.tanh() - &ya)).sum_axis(0);
        let m = (&xa * &xa.mean_axes(&[1], true)).sum_axis(0);
        let text = g.explain().unwrap();
        assert!(
            text.contains("computed inside") && !text.contains("each work-item reads whole rows"),
            "{text}"
        );
        let make = || {
            let z = (&xa * &wa).sum_axes(&[1], true);
            ((&xa * &(z.tanh() - &ya)).sum_axis(0), z)
        };
        lazycl::eval(&(&g, &m, &z)).unwrap();
        let row = |i: usize| &x[i * d..(i + 1) * d];
        let hz: Vec<f64> = (0..n)
            .map(|i| row(i).iter().zip(&w).map(|(a, b)| a * b).sum())
            .collect();
        for (a, b) in z.to_vec().unwrap().iter().zip(&hz) {
            assert!((a - b).abs() < 1e-12 * d as f64, "{n}x{d} z: {a} vs {b}");
        }
        check_row_totals(&ctx, make, &ya, &hz, &y);
        let gv = g.to_vec().unwrap();
        let mv = m.to_vec().unwrap();
        for j in 0..d {
            let hg: f64 = (0..n).map(|i| x[i * d + j] * (hz[i].tanh() - y[i])).sum();
            let hm: f64 = (0..n)
                .map(|i| x[i * d + j] * row(i).iter().sum::<f64>() / d as f64)
                .sum();
            assert!(
                (gv[j] - hg).abs() < 1e-9 * n as f64,
                "{n}x{d} g[{j}]: {} vs {hg}",
                gv[j]
            );
            assert!(
                (mv[j] - hm).abs() < 1e-9 * n as f64,
                "{n}x{d} m[{j}]: {} vs {hm}",
                mv[j]
            );
        }
    }
}

/// The group-rows kernel (a whole work-group per row, several vectors per work-item)
/// on any device: rows of 275 and 1,023 vectors (f32) and of 1,019 single elements
/// (f64: not a multiple of the vector width), one or two per work-item, with sum,
/// mean and max row reductions, one segment (5 rows) and several; per-row values
/// computed once per row (shared in local memory) and totals over the rows beside;
/// rows wider than the layout holds stay two kernels.
#[test]
fn group_rows_give_the_host_gradient() {
    let ctx = tuned(false);
    for (n, d, f32_data) in [(300usize, 1100usize, true), (37, 1019, false), (5, 4092, true)] {
        let x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
            .collect();
        let w: Vec<f64> = (0..d).map(|j| ((j * 31) % 17) as f64 / 17.0 - 0.5).collect();
        let y: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
        let xa = ctx.from_shape_slice([n, d], &x).unwrap();
        let wa = ctx.from_slice(&w).unwrap();
        let ya = ctx.from_shape_slice([n, 1], &y).unwrap();
        // f32 data: the same values rounded (the host reference rounds them too).
        let (x, xa) = if f32_data {
            let x32: Vec<f64> = x.iter().map(|&v| f64::from(v as f32)).collect();
            (x32, xa.cast::<f32>().cast::<f64>())
        } else {
            (x, xa)
        };
        let xs = xa.cast::<f32>();
        let z = (&xa * &wa).sum_axes(&[1], true);
        let g = (&xa * &(z.tanh() - &ya)).sum_axis(0);
        let m = (&xa * &xa.mean_axes(&[1], true)).sum_axis(0);
        let below = (&xs - &xs.amax_axes(&[1], true)).sum_axis(0);
        // Column means and maxima (with a row sum inside).
        let cmean = (&xa * &z).mean_axis(0);
        let cmax = (&xa * &z).amax_axis(0);
        // Per-row values computed once per row: a select, one read twice, the whole
        // operand.
        let sel = (&xa * &z.gt(0.0).select(&ya, &(&z * 0.5))).sum_axis(0);
        let q = (&z * 0.01).exp();
        let twice = (&(&xa * &q) + &q).sum_axis(0);
        let whole = (z.tanh() * &ya).broadcast_to(&[n, d]).sum_axis(0);
        // A boolean per-row value (local memory of another type).
        let above = (&xa * &z.gt(&ya).cast::<f64>()).sum_axis(0);
        // Each computes its per-row values once per row (local `hs*`).
        for a in [&g, &sel, &twice, &whole, &above] {
            let text = a.explain().unwrap();
            assert!(text.contains("__local double hs"), "{n}x{d}: {text}");
        }
        for a in [&g, &m, &cmean, &cmax, &sel, &twice, &whole, &above] {
            let text = a.explain().unwrap();
            assert!(text.contains("shares each row"), "{n}x{d}: {text}");
        }
        assert!(below.explain().unwrap().contains("shares each row"));
        lazycl::eval(&(&g, &m, &z)).unwrap();
        let (cmean, cmax) = (cmean.to_vec().unwrap(), cmax.to_vec().unwrap());
        lazycl::eval(&(&sel, &twice, &whole, &above)).unwrap();
        let above = above.to_vec().unwrap();
        let (sel, twice, whole) = (
            sel.to_vec().unwrap(),
            twice.to_vec().unwrap(),
            whole.to_vec().unwrap(),
        );
        let row = |i: usize| &x[i * d..(i + 1) * d];
        let hz: Vec<f64> = (0..n)
            .map(|i| row(i).iter().zip(&w).map(|(a, b)| a * b).sum())
            .collect();
        for (a, b) in z.to_vec().unwrap().iter().zip(&hz) {
            assert!((a - b).abs() < 1e-12 * d as f64, "{n}x{d} z: {a} vs {b}");
        }
        let make = || {
            let z = (&xa * &wa).sum_axes(&[1], true);
            ((&xa * &(z.tanh() - &ya)).sum_axis(0), z)
        };
        check_row_totals(&ctx, make, &ya, &hz, &y);
        let (gv, mv, bv) = (g.to_vec().unwrap(), m.to_vec().unwrap(), below.to_vec().unwrap());
        for j in 0..d {
            let hg: f64 = (0..n).map(|i| x[i * d + j] * (hz[i].tanh() - y[i])).sum();
            let hm: f64 = (0..n)
                .map(|i| x[i * d + j] * row(i).iter().sum::<f64>() / d as f64)
                .sum();
            let hb: f64 = (0..n)
                .map(|i| x[i * d + j] - row(i).iter().cloned().fold(f64::MIN, f64::max))
                .sum();
            let hmean = (0..n).map(|i| x[i * d + j] * hz[i]).sum::<f64>() / n as f64;
            let hsel: f64 = (0..n)
                .map(|i| x[i * d + j] * if hz[i] > 0.0 { y[i] } else { hz[i] * 0.5 })
                .sum();
            let htwice: f64 = (0..n).map(|i| (x[i * d + j] + 1.0) * (hz[i] * 0.01).exp()).sum();
            let hwhole: f64 = (0..n).map(|i| hz[i].tanh() * y[i]).sum();
            let habove: f64 = (0..n).filter(|&i| hz[i] > y[i]).map(|i| x[i * d + j]).sum();
            assert!(
                (above[j] - habove).abs() < 1e-9 * n as f64,
                "{n}x{d} above[{j}]: {} vs {habove}",
                above[j]
            );
            for (name, got, want) in [
                ("sel", sel[j], hsel),
                ("twice", twice[j], htwice),
                ("whole", whole[j], hwhole),
            ] {
                assert!(
                    (got - want).abs() < 1e-9 * n as f64,
                    "{n}x{d} {name}[{j}]: {got} vs {want}"
                );
            }
            let hmax = (0..n).map(|i| x[i * d + j] * hz[i]).fold(f64::MIN, f64::max);
            assert!(
                (cmean[j] - hmean).abs() < 1e-9,
                "{n}x{d} mean[{j}]: {} vs {hmean}",
                cmean[j]
            );
            assert!(
                (cmax[j] - hmax).abs() < 1e-9,
                "{n}x{d} max[{j}]: {} vs {hmax}",
                cmax[j]
            );
            assert!(
                (gv[j] - hg).abs() < 1e-9 * n as f64,
                "{n}x{d} g[{j}]: {} vs {hg}",
                gv[j]
            );
            assert!(
                (mv[j] - hm).abs() < 1e-9 * n as f64,
                "{n}x{d} m[{j}]: {} vs {hm}",
                mv[j]
            );
            assert!(
                (f64::from(bv[j]) - hb).abs() < 1e-5 * n as f64,
                "{n}x{d} below[{j}]: {} vs {hb}",
                bv[j]
            );
        }
    }
    // Rows wider than the largest group times the most vectors one work-item holds.
    let wide = ctx.from_shape_slice([2, 4100], &vec![1.0f32; 8200]).unwrap();
    let text = (&wide * &wide.sum_axes(&[1], true))
        .sum_axis(0)
        .explain()
        .unwrap();
    assert!(!text.contains("computed inside"), "{text}");
}
