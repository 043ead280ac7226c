//! The lazy runtime's promises, asserted with `ctx.stats()`: recording touches nothing,
//! chains fuse into one launch, scalars are kernel arguments, buffers are pooled.

use crate::common::{ctx, rng, Random};
use lazycl::{Array, Error};

#[test]
fn recording_alone_touches_nothing() {
    let ctx = ctx();
    let x = ctx.from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
    let y = ctx.full(3, 0.5f32).unwrap();
    let before = ctx.stats();
    let z = ((2.0 * &x + &y).sqrt() * x.exp() - 1.0).max(&y).clamp(0.0, 10.0);
    let m = z.lt(&x).select(&z, 3.0);
    let _c = m.cast::<i32>() * 2;
    assert_eq!(
        ctx.stats(),
        before,
        "recording must not enqueue, allocate, build or wait"
    );
    assert!(!m.is_materialized());
}

#[test]
fn an_eight_op_chain_is_one_launch() {
    let ctx = ctx();
    let mut r = rng(1);
    let host = f32::random_vec(&mut r, 10_001);
    let x = ctx.from_slice(&host).unwrap();
    let chain =
        |x: &Array<f32>| ((((((x * 1.5 + 2.0) * x - 0.25).abs() + 1.0).sqrt() * 3.0) / 7.0) - x).tanh();
    let before = ctx.stats();
    let z = chain(&x).to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    assert_eq!(d.host_waits, 1);
    assert_eq!(
        d.buffers_allocated + d.buffers_reused,
        1,
        "only the output is allocated"
    );
    for (g, &v) in z.iter().zip(&host) {
        let h = ((((((v * 1.5 + 2.0) * v - 0.25).abs() + 1.0).sqrt() * 3.0) / 7.0) - v).tanh();
        assert!((g - h).abs() <= 1e-5 * (1.0 + h.abs()), "{g} vs {h}");
    }
    // The same structure again: a cache hit, no new program.
    let before = ctx.stats();
    chain(&x).eval().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(
        (d.programs_built, d.kernel_cache_hits, d.kernels_launched),
        (0, 1, 1)
    );
}

#[test]
fn a_thousand_scalar_values_build_one_program_and_wait_once() {
    let ctx = ctx();
    let x = ctx
        .from_vec((0..4097).map(|i| i as f32 / 4097.0).collect())
        .unwrap();
    let mut y = ctx.zeros::<f32>(4097).unwrap();
    let mut host_y = vec![0.0f32; 4097];
    let host_x: Vec<f32> = (0..4097).map(|i| i as f32 / 4097.0).collect();
    let before = ctx.stats();
    for i in 0..1000 {
        let a = 1.0 + (i % 7) as f32 * 0.001;
        let b = -0.5 * (i % 3) as f32;
        y = a * &x + b + &y * 0.5;
        y.eval().unwrap();
        for (hy, hx) in host_y.iter_mut().zip(&host_x) {
            *hy = a * hx + b + *hy * 0.5;
        }
    }
    let got = y.to_vec().unwrap();
    let d = ctx.stats() - before;
    assert!(d.programs_built + d.programs_loaded <= 1, "{d}");
    assert_eq!(d.kernels_launched, 1000);
    assert_eq!(d.host_waits, 1, "only the final read waits");
    assert_eq!(d.bytes_uploaded, 0, "scalars are kernel arguments, never uploads");
    assert!(d.buffers_allocated <= 3, "the pool recycles: {d}");
    for (g, h) in got.iter().zip(&host_y) {
        assert!((g - h).abs() <= 1e-4 * (1.0 + h.abs()), "{g} vs {h}");
    }
}

#[test]
fn a_loop_reuses_pooled_buffers() {
    let ctx = ctx();
    let x = ctx.full(1000, 1.0f32).unwrap();
    let mut y = ctx.full(1000, 2.0f32).unwrap();
    for _ in 0..3 {
        y = (&y + &x) * 0.5;
        y.eval().unwrap();
    }
    let before = ctx.stats();
    for _ in 0..10 {
        y = (&y + &x) * 0.5;
        y.eval().unwrap();
    }
    let d = ctx.stats() - before;
    assert_eq!(d.buffers_allocated, 0, "steady state allocates nothing: {d}");
    assert_eq!(d.buffers_reused, 10);
    // assign: the in-place form, writing into y's own memory when nothing else sees it.
    let mut out = ctx.zeros::<f32>(1000).unwrap();
    let before = ctx.stats();
    for _ in 0..10 {
        out.assign(&x * 3.0 + &y).unwrap();
    }
    let d = ctx.stats() - before;
    assert_eq!(
        (d.buffers_allocated, d.buffers_reused),
        (0, 0),
        "assign writes in place: {d}"
    );
    let v = out.to_vec().unwrap();
    let yv = y.to_vec().unwrap();
    assert!(v.iter().zip(&yv).all(|(o, y)| (o - (3.0 + y)).abs() < 1e-6));
    // assign with a value that reads the target: correct, and still no allocation.
    for _ in 0..3 {
        out.assign(&out * 0.5 + 1.0).unwrap();
    }
    let before = ctx.stats();
    for _ in 0..5 {
        out.assign(&out * 0.5 + 1.0).unwrap();
    }
    assert_eq!((ctx.stats() - before).buffers_allocated, 0);
    let mut expect: Vec<f32> = v.clone();
    for _ in 0..8 {
        expect.iter_mut().for_each(|e| *e = *e * 0.5 + 1.0);
    }
    assert!(out
        .to_vec()
        .unwrap()
        .iter()
        .zip(&expect)
        .all(|(a, b)| (a - b).abs() < 1e-5));
}

#[test]
fn shared_subexpressions_and_several_outputs_share_one_kernel() {
    // Exact comparisons below: ask for a correctly rounded sqrt, as on the host.
    let ctx = lazycl::Context::builder()
        .correctly_rounded_div_sqrt(true)
        .build()
        .unwrap();
    let x = ctx.from_vec((0..777).map(|i| i as f32).collect()).unwrap();
    let t = (&x * 2.0).sqrt(); // shared
    let a = &t + 1.0;
    let b = &t * &t;
    let c = a.max(&b).lt(100.0);
    let before = ctx.stats();
    lazycl::eval(&(&a, &b, &c)).unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "three outputs, one kernel: {d}");
    // Each element is computed by one loop body (a scalar body, and four lanes in a
    // vectorized body); the shared sqrt appears once per body.
    let bodies = |src: &str| src.matches("out0[gid] =").count() + 4 * src.matches("4*)out0)[q] =").count();
    let src = (&t + 1.0).explain().unwrap();
    assert_eq!(src.matches("sqrt(").count(), bodies(&src), "{src}");
    let (av, bv, cv) = (a.to_vec().unwrap(), b.to_vec().unwrap(), c.to_vec().unwrap());
    for i in 0..777 {
        let t = (i as f32 * 2.0).sqrt();
        assert_eq!(av[i], t + 1.0);
        assert_eq!(bv[i], t * t);
        assert_eq!(cv[i], (t + 1.0).max(t * t) < 100.0);
    }
    // The shared node is computed once in the kernel text too.
    let y = (&x * 2.0).sqrt();
    let z = &y + &y * &y;
    let src = z.explain().unwrap();
    assert_eq!(src.matches("sqrt(").count(), bodies(&src), "{src}");
}

/// Collecting skips its table for a node that only its one consumer holds (no second
/// path reaches it): a shared node over such nodes, reached on three paths, and the same
/// array named twice as a root, are each collected once.
#[test]
fn nodes_held_once_and_shared_nodes_over_them_are_collected_once() {
    let ctx = lazycl::Context::builder()
        .correctly_rounded_div_sqrt(true)
        .build()
        .unwrap();
    let x = ctx.from_vec((0..301).map(|i| i as f32 / 7.0).collect()).unwrap();
    // `x * 2` and `+ 1` are temporaries: held only by their consumer.
    let s = (&x * 2.0 + 1.0).sqrt();
    let z = &s * &s + (&s - 3.0);
    let before = ctx.stats();
    lazycl::eval(&(&z, &z, &s)).unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    let (zv, sv) = (z.to_vec().unwrap(), s.to_vec().unwrap());
    for i in 0..301 {
        let s = (i as f32 / 7.0 * 2.0 + 1.0).sqrt();
        assert_eq!(sv[i], s);
        assert_eq!(zv[i], s * s + (s - 3.0));
    }
    // The same graph again replays the plans: one collected graph, the same signature.
    let s2 = (&x * 2.0 + 1.0).sqrt();
    let z2 = &s2 * &s2 + (&s2 - 3.0);
    let before = ctx.stats();
    lazycl::eval(&(&z2, &z2, &s2)).unwrap();
    let d = ctx.stats() - before;
    assert_eq!((d.plans_reused, d.flushes_planned), (1, 0), "{d}");
    assert_eq!(z2.to_vec().unwrap(), zv);
    // The shared node is computed once per loop body of the kernel (a scalar body, and
    // four lanes in a vectorized one).
    let s3 = (&x * 2.0 + 1.0).sqrt();
    let src = (&s3 * &s3 + (&s3 - 3.0)).explain().unwrap();
    let bodies = src.matches("out0[gid] =").count() + 4 * src.matches("4*)out0)[q] =").count();
    assert_eq!(src.matches("sqrt(").count(), bodies, "{src}");
}

#[test]
fn a_ten_thousand_node_chain_works() {
    let ctx = ctx();
    let x = ctx.from_vec(vec![1.0f32; 333]).unwrap();
    let mut y = x.clone();
    for i in 0..10_000 {
        y = if i % 2 == 0 { &y * 1.0001 } else { &y + 0.0001 };
    }
    let before = ctx.stats();
    let v = y.to_vec().unwrap();
    let d = ctx.stats() - before;
    let mut h = 1.0f32;
    for i in 0..10_000 {
        h = if i % 2 == 0 { h * 1.0001 } else { h + 0.0001 };
    }
    assert!(v.iter().all(|g| (g - h).abs() < 1e-3 * h), "{} vs {h}", v[0]);
    assert!(d.kernels_launched > 1, "the chain was split into bounded kernels");
    assert!(
        d.programs_built + d.programs_loaded <= 4,
        "split kernels share structure: {d}"
    );
    // Dropping a long unevaluated chain does not overflow the stack either.
    let mut z = x.clone();
    for _ in 0..200_000 {
        z = z + 1.0;
    }
    drop(z);
}

#[test]
fn shape_mismatch_names_both_shapes_when_materialized() {
    let ctx = ctx();
    let a = ctx.zeros::<f32>([3, 4]).unwrap();
    let b = ctx.zeros::<f32>([5]).unwrap();
    let bad = (&a + &b) * 2.0; // recorded: no panic
    let err = bad.eval().unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("[3, 4]") && msg.contains("[5]"), "{msg}");
    assert!(bad.to_vec().is_err());
    // Broadcasting that fits works, including 0-d and size-1 axes.
    let c = ctx.from_shape_slice([3, 1], &[1.0f32, 2.0, 3.0]).unwrap();
    let d = ctx
        .from_shape_slice([1, 4], &[10.0f32, 20.0, 30.0, 40.0])
        .unwrap();
    let e = (&c + &d).to_ndarray().unwrap();
    assert_eq!(e.shape(), &[3, 4]);
    assert_eq!(e[[2, 3]], 43.0);
    let s = ctx.full((), 5.0f32).unwrap();
    assert_eq!((&a + &s).to_vec().unwrap(), vec![5.0; 12]);
    let mut t = ctx.zeros::<f32>([2, 2]).unwrap();
    assert!(matches!(t.assign(&a).unwrap_err(), Error::ShapeMismatch { .. }));
}

#[test]
fn explain_shows_the_plan_and_the_source() {
    let ctx = ctx();
    let x = ctx.full([4, 5], 1.0f32).unwrap();
    let v = ctx.full(5, 2.0f32).unwrap();
    let text = (&x * &v + 3.0).explain().unwrap();
    assert!(text.contains("kernel 0"), "{text}");
    assert!(text.contains("__kernel void"), "{text}");
    assert!(
        text.contains("in1[i1]") || text.contains("in0[i1]"),
        "a broadcast load: {text}"
    );
}
