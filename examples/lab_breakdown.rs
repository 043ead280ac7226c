//! LAB (not committed): where a logistic-regression step's time goes, kernel by kernel.
use lazycl::prelude::*;
use std::time::Instant;

#[path = "common/synthetic.rs"]
mod synthetic;

fn time<F: FnMut() -> lazycl::Result<()>>(ctx: &Context, iters: usize, mut f: F) -> f64 {
    for _ in 0..5 {
        f().unwrap();
    }
    ctx.synchronize().unwrap();
    let t = Instant::now();
    for _ in 0..iters {
        f().unwrap();
    }
    ctx.synchronize().unwrap();
    t.elapsed().as_secs_f64() * 1e3 / iters as f64
}

macro_rules! lab {
    ($name:ident, $T:ty) => {
        fn $name(ctx: &Context, n: usize, d: usize) {
            type T = $T;
            let cast = |v: f64| v as T;
            let xs: Vec<T> = (0..n * d)
                .map(|i| cast(synthetic::normal(1, i as u64)))
                .collect();
            let ys: Vec<T> = (0..n).map(|i| cast((i % 2) as f64)).collect();
            let ws: Vec<T> = (0..d)
                .map(|i| cast(synthetic::normal(2, i as u64) * 0.01))
                .collect();
            let x = ctx.from_shape_slice([n, d], &xs).unwrap();
            let y = ctx.from_shape_slice([n, 1], &ys).unwrap();
            let w0 = ctx.from_slice(&ws).unwrap();
            let b0 = ctx.zeros::<T>([1]).unwrap();
            let bytes = (n * d * std::mem::size_of::<T>()) as f64;
            let iters = 200;
            let one = cast(1.0);
            let lr = cast(0.2);
            let inv_n = cast(1.0 / n as f64);
            let mut rows: Vec<(&str, f64, String)> = Vec::new();
            let zf = || (&x * &w0).sum_axes(&[1], true);
            let rf = |z: &Array<T>| one / ((-z).exp() + one) - &y;
            let explain = |a: &Array<T>| a.explain().unwrap_or_default();
            rows.push((
                "copy x+0",
                time(ctx, iters, || {
                    (&x + cast(0.0)).eval()?;
                    Ok(())
                }),
                String::new(),
            ));
            rows.push((
                "sum(x)",
                time(ctx, iters, || {
                    x.sum().eval()?;
                    Ok(())
                }),
                String::new(),
            ));
            rows.push((
                "z = xw",
                time(ctx, iters, || {
                    zf().eval()?;
                    Ok(())
                }),
                explain(&zf()),
            ));
            let ry = y.clone();
            rows.push((
                "x^T y",
                time(ctx, iters, || {
                    (&x * &ry).sum_axis(0).eval()?;
                    Ok(())
                }),
                explain(&(&x * &ry).sum_axis(0)),
            ));
            let gf = || {
                let z = zf();
                let g = (&x * &rf(&z)).sum_axis(0);
                (z, g)
            };
            rows.push((
                "fused g,z",
                time(ctx, iters, || {
                    let (z, g) = gf();
                    lazycl::eval(&(&z, &g))?;
                    Ok(())
                }),
                explain(&gf().1),
            ));
            let wf = || {
                let (z, g) = gf();
                let w = &w0 - &(g * inv_n) * lr;
                (z, w)
            };
            rows.push((
                "g + w update",
                time(ctx, iters, || {
                    let (z, w) = wf();
                    lazycl::eval(&(&z, &w))?;
                    Ok(())
                }),
                explain(&wf().1),
            ));
            let sf = || {
                let (z, w) = wf();
                let b = (&b0 - &rf(&z) * lr).mean_axis(0);
                (w, b)
            };
            rows.push((
                "full step",
                time(ctx, iters, || {
                    let (w, b) = sf();
                    lazycl::eval(&(&w, &b))?;
                    Ok(())
                }),
                explain(&sf().1),
            ));
            let zst = zf();
            zst.eval().unwrap();
            rows.push((
                "b mean only",
                time(ctx, iters, || {
                    (&b0 - &rf(&zst) * lr).mean_axis(0).eval()?;
                    Ok(())
                }),
                explain(&(&b0 - &rf(&zst) * lr).mean_axis(0)),
            ));
            println!("\n## {n} x {d} {}", stringify!($T));
            for (name, ms, _) in &rows {
                println!(
                    "| {name} | {:.4} ms | {:.0} GB/s of x |",
                    ms,
                    bytes / ms / 1e6
                );
            }
            for (name, _, e) in &rows {
                if !e.is_empty() {
                    println!("--- {name}\n{e}");
                }
            }
        }
    };
}
lab!(run_f64, f64);
lab!(run_f32, f32);

fn main() {
    let ctx = Context::new().unwrap();
    println!("{}", ctx.device().name);
    let small = std::env::var("LAB_SMALL").is_ok();
    if small {
        run_f64(&ctx, 2000, 1000);
        return;
    }
    run_f64(&ctx, 20000, 1000);
    run_f64(&ctx, 36000, 126);
    run_f32(&ctx, 200000, 100);
    run_f32(&ctx, 3200, 25300);
}
