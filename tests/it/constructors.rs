//! The constructors users reach for (`iota`, `arange`, `linspace`, `ones`, `eye`,
//! `eye_offset`, `one_hot`, `outer`, `zeros_like`, `ones_like`, `full_like`; `histogram`
//! has its own module) against host references written from numpy's definitions: over the element types, sizes 0, 1 and odd ones, read whole,
//! through views and broadcast. Then the mechanism: positions are a lazy node with no
//! memory (`&x + ctx.eye(n)?` is one kernel and one buffer, the output), and starts,
//! steps, ends and offsets are kernel arguments (a new value builds no program and
//! never waits).

use crate::common::{ctx, rng, Random};
use lazycl::{s, Context, Error};
use rand::Rng as _;

// ---- host references ------------------------------------------------------------------

/// numpy's `arange` in exact arithmetic: `ceil((end - start) / step)` elements
/// `start + i * step` (integers).
fn arange_int(start: i128, end: i128, step: i128) -> Vec<i128> {
    let len = if step > 0 {
        (end - start + step - 1).div_euclid(step).max(0)
    } else {
        (start - end - step - 1).div_euclid(-step).max(0)
    };
    (0..len).map(|i| start + i * step).collect()
}

macro_rules! check_int_arange {
    ($ctx:expr, $t:ty, $cases:expr) => {
        for &(s, e, st) in $cases {
            let (s, e, st) = (s as $t, e as $t, st as $t);
            let want: Vec<$t> = arange_int(s as i128, e as i128, st as i128)
                .into_iter()
                .map(|v| v as $t)
                .collect();
            let got = $ctx.arange(s, e, st).unwrap().to_vec().unwrap();
            assert_eq!(got, want, "arange({s}, {e}, {st}) of {}", stringify!($t));
        }
    };
}

#[test]
fn arange_gives_numpys_elements_for_every_integer_type() {
    let ctx = ctx();
    let up: &[(i64, i64, i64)] = &[
        (0, 0, 1),
        (0, 1, 1),
        (3, 40, 1),
        (2, 11, 3),
        (5, 12, 7),
        (9, 3, 1),
        (7, 8, 5),
    ];
    let down: &[(i64, i64, i64)] = &[(5, 0, -2), (40, -3, -3), (0, 5, -1), (1, 0, -9), (-4, -4, -1)];
    check_int_arange!(ctx, i32, up);
    check_int_arange!(ctx, u32, up);
    check_int_arange!(ctx, i64, up);
    check_int_arange!(ctx, u64, up);
    check_int_arange!(ctx, i32, down);
    check_int_arange!(ctx, i64, down);
    // Near the ends of the types.
    assert_eq!(
        ctx.arange(i32::MAX - 2, i32::MAX, 1).unwrap().to_vec().unwrap(),
        [i32::MAX - 2, i32::MAX - 1]
    );
    assert_eq!(
        ctx.arange(u64::MAX - 10, u64::MAX, 4).unwrap().to_vec().unwrap(),
        [u64::MAX - 10, u64::MAX - 6, u64::MAX - 2]
    );
    assert_eq!(
        ctx.arange(i64::MIN, i64::MIN + 3, 1).unwrap().to_vec().unwrap(),
        [i64::MIN, i64::MIN + 1, i64::MIN + 2]
    );
    // A larger odd size: a vector step and a tail.
    let big = ctx.arange(-1001i32, 2000, 1).unwrap().to_vec().unwrap();
    assert_eq!(big, (-1001..2000).collect::<Vec<i32>>());
}

macro_rules! check_float_arange {
    ($ctx:expr, $t:ty) => {
        for &(s, e, st) in &[
            (0.0, 1.0, 0.25),
            (0.0, 1.0, 0.1),
            (-1.5, 2.0, 0.3),
            (1.0, 1.0, 0.5),
            (2.0, -1.0, -0.7),
            (0.0, 1.0, -0.1),
            (0.25, 0.5, 1.0),
            (-3.0, 1000.0, 0.37),
        ] {
            let (s, e, st): ($t, $t, $t) = (s, e, st);
            let len = ((f64::from(e) - f64::from(s)) / f64::from(st)).ceil().max(0.0) as usize;
            // numpy's fill: `start + i * delta`, `delta` the second element less the first.
            let delta = ((f64::from(s) + f64::from(st)) as $t) - s;
            let want: Vec<$t> = (0..len).map(|i| s + i as $t * delta).collect();
            let got = $ctx.arange(s, e, st).unwrap().to_vec().unwrap();
            assert_eq!(got, want, "arange({s}, {e}, {st}) of {}", stringify!($t));
        }
    };
}

#[test]
fn arange_gives_numpys_elements_for_floats() {
    let ctx = ctx();
    check_float_arange!(ctx, f32);
    check_float_arange!(ctx, f64);
}

#[test]
fn linspace_follows_numpys_formula_and_ends_at_its_end() {
    let ctx = ctx();
    let mut r = rng(1);
    for n in [0usize, 1, 2, 3, 7, 1001] {
        for _ in 0..3 {
            let (a, b) = (r.gen_range(-100.0..100.0f64), r.gen_range(-100.0..100.0f64));
            let got = ctx.linspace(a, b, n).unwrap().to_vec().unwrap();
            let step = (b - a) / (n as f64 - 1.0);
            let want: Vec<f64> = (0..n)
                .map(|i| match (i + 1 == n, n) {
                    (_, 1) => a,
                    (true, _) => b,
                    (false, _) => i as f64 * step + a,
                })
                .collect();
            assert_eq!(got, want, "linspace({a}, {b}, {n})");
            let (a, b) = (a as f32, b as f32);
            let got = ctx.linspace(a, b, n).unwrap().to_vec().unwrap();
            let step = (b - a) / (n as f32 - 1.0);
            let want: Vec<f32> = (0..n)
                .map(|i| match (i + 1 == n, n) {
                    (_, 1) => a,
                    (true, _) => b,
                    (false, _) => i as f32 * step + a,
                })
                .collect();
            assert_eq!(got, want, "linspace({a}, {b}, {n}) in f32");
            if n > 1 {
                assert_eq!(got[n - 1], b);
            }
        }
    }
    // A step that underflows to 0: numpy divides first.
    let tiny = f64::MIN_POSITIVE * f64::EPSILON;
    let got = ctx.linspace(0.0, tiny, 4).unwrap().to_vec().unwrap();
    assert_eq!(got, [0.0, 0.0, tiny * (2.0 / 3.0), tiny]);
}

macro_rules! check_eye {
    ($ctx:expr, $t:ty) => {
        for (n, m, k) in [
            (0usize, 0usize, 0isize),
            (1, 1, 0),
            (5, 5, 0),
            (3, 7, 2),
            (7, 3, -1),
            (4, 4, 9),
            (4, 4, -4),
            (2, 5, -1),
        ] {
            let want: Vec<$t> = (0..n * m)
                .map(|e| ((e % m) as isize - (e / m) as isize == k) as u8 as $t)
                .collect();
            let got = $ctx.eye_offset::<$t>(n, m, k).unwrap();
            assert_eq!(got.shape(), [n, m]);
            assert_eq!(
                got.to_vec().unwrap(),
                want,
                "eye({n}, {m}, {k}) of {}",
                stringify!($t)
            );
            if n == m && k == 0 {
                assert_eq!($ctx.eye::<$t>(n).unwrap().to_vec().unwrap(), want);
            }
        }
    };
}

#[test]
fn eye_has_ones_on_its_diagonal_for_every_type() {
    let ctx = ctx();
    check_eye!(ctx, i32);
    check_eye!(ctx, u32);
    check_eye!(ctx, i64);
    check_eye!(ctx, u64);
    check_eye!(ctx, f32);
    check_eye!(ctx, f64);
}

#[test]
fn iota_gives_the_coordinate_along_any_axis() {
    let ctx = ctx();
    let shape = [3usize, 1, 5, 2];
    let n: usize = shape.iter().product();
    for axis in -4isize..4 {
        let d = axis.rem_euclid(4) as usize;
        let inner: usize = shape[d + 1..].iter().product();
        let want: Vec<i64> = (0..n).map(|e| ((e / inner) % shape[d]) as i64).collect();
        let got = ctx.iota::<i64>(shape, axis).unwrap();
        assert_eq!(got.shape(), shape);
        assert_eq!(got.to_vec().unwrap(), want, "axis {axis}");
        let f: Vec<f32> = ctx.iota::<f32>(shape, axis).unwrap().to_vec().unwrap();
        assert_eq!(f, want.iter().map(|&v| v as f32).collect::<Vec<_>>());
    }
    assert_eq!(ctx.iota::<u32>([0], 0).unwrap().len(), 0);
    assert_eq!(ctx.iota::<u64>([1], 0).unwrap().to_vec().unwrap(), [0]);
    match ctx.iota::<f32>([2, 3], 2) {
        Err(Error::InvalidShape(m)) => assert!(m.contains("iota"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn views_and_broadcasts_read_each_element_at_its_own_position() {
    let ctx = ctx();
    let (n, m) = (37usize, 23usize);
    // A transposed eye_offset is the eye_offset of the other shape and -k.
    let e = ctx.eye_offset::<f32>(n, m, 3).unwrap();
    let want = ctx.eye_offset::<f32>(m, n, -3).unwrap().to_vec().unwrap();
    assert_eq!(e.t().to_vec().unwrap(), want);
    assert_eq!(
        (e.t() * 2.0f32).to_vec().unwrap(),
        want.iter().map(|v| v * 2.0).collect::<Vec<_>>()
    );
    // Slices of arange: every third element from the back, a middle block.
    let a = ctx.arange(10i64, 10 + 3 * 101, 3).unwrap();
    let host: Vec<i64> = (0..101).map(|i| 10 + 3 * i).collect();
    let back: Vec<i64> = host.iter().rev().step_by(3).copied().collect();
    assert_eq!(a.slice(s![..;-3]).to_vec().unwrap(), back);
    assert_eq!(a.slice(s![17..40]).to_vec().unwrap(), host[17..40]);
    // Broadcast against a matrix: each row reads the same positions.
    let rows = 9usize;
    let x = ctx
        .array(&ndarray::Array2::<f64>::from_shape_fn((rows, 101), |(i, j)| {
            (i * 1000 + j) as f64
        }))
        .unwrap();
    let l = ctx.linspace(-1.0f64, 1.0, 101).unwrap();
    let host_l = l.to_vec().unwrap();
    let got = (&x + &l).to_vec().unwrap();
    for (k, g) in got.iter().enumerate() {
        let (i, j) = (k / 101, k % 101);
        assert_eq!(*g, (i * 1000 + j) as f64 + host_l[j], "({i}, {j})");
    }
    let b = l
        .broadcast_to(&[rows, 101])
        .t()
        .slice(s![5..9, ..])
        .to_vec()
        .unwrap();
    for (k, g) in b.iter().enumerate() {
        assert_eq!(*g, host_l[5 + k / rows], "broadcast, transposed, sliced at {k}");
    }
    // A reduction of positions: the sum of each row of an iota.
    let sums = ctx
        .iota::<u64>([4, 1001], 1)
        .unwrap()
        .sum_axis(1)
        .to_vec()
        .unwrap();
    assert_eq!(sums, vec![1000 * 1001 / 2; 4]);
}

fn check_one_hot<I: lazycl::Integer + Into<i128>>(ctx: &Context, labels: &[I], shape: &[usize], k: usize) {
    let a = ctx.from_shape_slice(shape, labels).unwrap();
    let want: Vec<f32> = labels
        .iter()
        .flat_map(|&l| (0..k).map(move |c| (l.into() == c as i128) as u8 as f32))
        .collect();
    let mut out_shape = shape.to_vec();
    out_shape.push(k);
    let hot = a.one_hot::<f32>(k).unwrap();
    assert_eq!(hot.shape(), &out_shape[..]);
    assert_eq!(hot.to_vec().unwrap(), want, "labels {shape:?}, k = {k}");
    let ints = a.one_hot::<i64>(k).unwrap().to_vec().unwrap();
    assert_eq!(ints, want.iter().map(|&v| v as i64).collect::<Vec<_>>());
    let mask = a.one_hot::<bool>(k).unwrap().to_vec().unwrap();
    assert_eq!(mask, want.iter().map(|&v| v == 1.0).collect::<Vec<_>>());
}

#[test]
fn one_hot_marks_each_label_and_leaves_outsiders_zero() {
    let ctx = ctx();
    let mut r = rng(2);
    for (shape, k) in [
        (vec![0usize], 4usize),
        (vec![1], 1),
        (vec![13], 5),
        (vec![3, 7], 9),
        (vec![2, 0], 3),
    ] {
        let n: usize = shape.iter().product();
        let i32s: Vec<i32> = (0..n).map(|_| r.gen_range(-2..k as i32 + 2)).collect();
        check_one_hot(&ctx, &i32s, &shape, k);
        let i64s: Vec<i64> = (0..n).map(|_| r.gen_range(-2..k as i64 + 2)).collect();
        check_one_hot(&ctx, &i64s, &shape, k);
        let u32s: Vec<u32> = (0..n).map(|_| r.gen_range(0..k as u32 + 2)).collect();
        check_one_hot(&ctx, &u32s, &shape, k);
        let u64s: Vec<u64> = (0..n).map(|_| r.gen_range(0..k as u64 + 2)).collect();
        check_one_hot(&ctx, &u64s, &shape, k);
    }
    // Read through a transposed view of the labels.
    let labels = ctx.from_shape_slice([2, 3], &[0u32, 1, 2, 2, 1, 0]).unwrap();
    let hot = labels.t().one_hot::<u32>(3).unwrap().to_vec().unwrap();
    assert_eq!(hot, [1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0]);
    // Labels too narrow for the positions.
    match labels.cast::<i32>().one_hot::<f32>(i32::MAX as usize + 2) {
        Err(Error::InvalidShape(m)) => assert!(m.contains("one_hot"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn outer_is_numpys_outer_product() {
    let ctx = ctx();
    let mut r = rng(3);
    for (n, m) in [(0usize, 3usize), (1, 1), (5, 0), (7, 13), (33, 1)] {
        let a = f64::random_vec(&mut r, n);
        let b = f64::random_vec(&mut r, m);
        let got = ctx.from_slice(&a).unwrap().outer(&ctx.from_slice(&b).unwrap());
        assert_eq!(got.shape(), [n, m]);
        let want: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| x * y)).collect();
        assert_eq!(got.to_vec().unwrap(), want);
        let ai: Vec<i32> = (0..n).map(|_| r.gen_range(-1000..1000)).collect();
        let bi: Vec<i32> = (0..m).map(|_| r.gen_range(-1000..1000)).collect();
        let got = ctx.from_slice(&ai).unwrap().outer(&ctx.from_slice(&bi).unwrap());
        let want: Vec<i32> = ai.iter().flat_map(|x| bi.iter().map(move |y| x * y)).collect();
        assert_eq!(got.to_vec().unwrap(), want);
    }
    // Other ranks are flattened in row-major order, views included.
    let m = ctx
        .from_shape_slice([2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let v = ctx.from_slice(&[10.0f32, -1.0]).unwrap();
    let got = m.t().outer(&v).to_vec().unwrap();
    let flat = [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0];
    let want: Vec<f32> = flat.iter().flat_map(|x| [x * 10.0, -x]).collect();
    assert_eq!(got, want);
    assert_eq!(
        ctx.scalar(3i64)
            .unwrap()
            .outer(&ctx.from_slice(&[2i64]).unwrap())
            .to_vec()
            .unwrap(),
        [6]
    );
}

#[test]
fn like_constructors_copy_the_shape_and_type() {
    let ctx = ctx();
    let x = ctx
        .from_shape_slice([3, 1, 2], &[1.5f64, -2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    for (a, v) in [
        (x.zeros_like().unwrap(), 0.0),
        (x.ones_like().unwrap(), 1.0),
        (x.full_like(-7.25).unwrap(), -7.25),
    ] {
        assert_eq!(a.shape(), [3, 1, 2]);
        assert_eq!(a.to_vec().unwrap(), vec![v; 6]);
    }
    let y = ctx.arange(0u32, 10, 1).unwrap().slice(s![1..;2]);
    assert_eq!(y.ones_like().unwrap().to_vec().unwrap(), [1; 5]);
    assert_eq!(y.full_like(9).unwrap().to_vec().unwrap(), [9; 5]);
    assert_eq!(ctx.ones::<f32>([0, 4]).unwrap().shape(), [0, 4]);
    assert_eq!(ctx.ones::<i32>([]).unwrap().to_vec().unwrap(), [1]);
}

#[test]
fn bad_ranges_and_lengths_are_errors() {
    let ctx = ctx();
    for r in [
        ctx.arange(0i32, 4, 0).map(|_| ()),
        ctx.arange(0.0f64, 4.0, 0.0).map(|_| ()),
    ] {
        match r {
            Err(Error::InvalidShape(m)) => assert!(m.contains("arange") && m.contains("step is 0"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
    assert!(ctx.arange(0.0f32, f32::NAN, 1.0).is_err());
    assert!(ctx.arange(0.0f64, f64::INFINITY, 1.0).is_err());
    assert!(ctx.eye_offset::<f32>(usize::MAX, 2, 0).is_err());
}

// ---- the mechanism: lazy, arguments ------------------------------------------------------

/// Kernels of a structure new to the context: generated (a cache miss in memory), built
/// from source or loaded from the disk cache.
fn new_programs(d: &lazycl::Stats) -> u64 {
    d.kernel_cache_misses + d.programs_built + d.programs_loaded
}

#[test]
fn adding_an_eye_is_one_kernel_that_stores_no_identity() {
    let ctx = ctx();
    let n = 129usize;
    let mut r = rng(5);
    let xs = f32::random_vec(&mut r, n * n);
    let x = ctx.from_shape_slice([n, n], &xs).unwrap();
    (&x + ctx.eye::<f32>(n).unwrap()).eval().unwrap();
    let before = ctx.stats();
    let y = (&x + ctx.eye::<f32>(n).unwrap()).to_vec().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(d.kernels_launched, 1, "{d}");
    assert_eq!(d.buffers_allocated + d.buffers_reused, 1, "only the output: {d}");
    assert!(d.bytes_allocated <= (n * n * 4) as u64, "{d}");
    assert_eq!(new_programs(&d), 0, "{d}");
    for (k, g) in y.iter().enumerate() {
        assert_eq!(*g, xs[k] + f32::from(k / n == k % n), "at {k}");
    }
    // `explain` shows the positions in the kernel, `explain_dot` names the operation.
    let sum = &x + ctx.eye::<f32>(n).unwrap();
    let text = sum.explain().unwrap();
    assert!(
        text.contains("/* position */") && text.contains(" 1 inputs"),
        "{text}"
    );
    assert!(sum.explain_dot().unwrap().contains("position (arange"));
}

#[test]
fn new_starts_steps_ends_and_offsets_build_no_program_and_never_wait() {
    let ctx = ctx();
    let x = ctx
        .from_slice(&(0..1000).map(|i| i as f32).collect::<Vec<_>>())
        .unwrap();
    (&x * ctx.arange(0.0f32, 1000.0, 1.0).unwrap()).eval().unwrap();
    ctx.synchronize().unwrap();
    let before = ctx.stats();
    let y = &x * ctx.arange(3.0f32, 3.0 + 1000.0 * 0.5, 0.5).unwrap();
    y.eval().unwrap();
    let d = ctx.stats() - before;
    assert_eq!(
        (new_programs(&d), d.host_waits),
        (0, 0),
        "a new start and step: {d}"
    );
    let got = y.to_vec().unwrap();
    assert_eq!(
        got,
        (0..1000)
            .map(|i| i as f32 * (3.0 + i as f32 * 0.5))
            .collect::<Vec<_>>()
    );
    // Integers: a start of 0, then others, and another length.
    ctx.arange(0i64, 64, 1).unwrap().to_vec().unwrap();
    let before = ctx.stats();
    assert_eq!(
        ctx.arange(5i64, 69, 1).unwrap().to_vec().unwrap(),
        (5..69).collect::<Vec<_>>()
    );
    assert_eq!(
        ctx.arange(-7i64, 300, 2).unwrap().to_vec().unwrap(),
        (-7..300).step_by(2).collect::<Vec<_>>()
    );
    let d = ctx.stats() - before;
    assert_eq!(new_programs(&d), 0, "{d}");
    // linspace with new ends, eye with a new offset.
    ctx.linspace(0.0f64, 1.0, 50).unwrap().to_vec().unwrap();
    ctx.eye_offset::<f32>(6, 8, 0).unwrap().to_vec().unwrap();
    let before = ctx.stats();
    assert_eq!(ctx.linspace(-2.0f64, 5.0, 50).unwrap().to_vec().unwrap()[49], 5.0);
    let e = ctx.eye_offset::<f32>(6, 8, 2).unwrap().to_vec().unwrap();
    assert_eq!(e[2], 1.0);
    let d = ctx.stats() - before;
    assert_eq!(new_programs(&d), 0, "{d}");
}
