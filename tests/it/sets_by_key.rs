//! `reduce_by_key` against a host walk over the runs of consecutive equal keys: keys
//! unsorted, sorted and all equal, of every numeric type (floats with NaN keys and signed
//! zeros), values of every numeric type, each reduction, sizes 0, 1, odd and of several
//! tiles. Counters check the two waits and the doubling steps the documentation promises.

use crate::common::{ctx, rng, Random};
use crate::sets::{assert_same, Key, SIZES};
use lazycl::{reduce_by_key, Array, Context, KeyReduce};
use rand::rngs::StdRng;
use rand::Rng;

trait Val: Key {
    /// `op` over a run's values on the host.
    fn host(op: KeyReduce, v: &[Self]) -> Self;
    /// Whether the device's `got` is right for the host's `want` over values `v`.
    fn close(op: KeyReduce, got: Self, want: Self, v: &[Self]) -> bool;
    /// Values for `op` whose host reduction is exact or bounded.
    fn values(r: &mut StdRng, op: KeyReduce, n: usize) -> Vec<Self>;
}

macro_rules! int_val {
    ($($t:ty),*) => {$(
        impl Val for $t {
            fn host(op: KeyReduce, v: &[Self]) -> Self {
                match op {
                    KeyReduce::Sum => v.iter().fold(0, |a: $t, &b| a.wrapping_add(b)),
                    KeyReduce::Prod => v.iter().fold(1, |a: $t, &b| a.wrapping_mul(b)),
                    KeyReduce::Min => *v.iter().min().unwrap(),
                    KeyReduce::Max => *v.iter().max().unwrap(),
                }
            }
            fn close(_: KeyReduce, got: Self, want: Self, _: &[Self]) -> bool { got == want }
            fn values(r: &mut StdRng, _: KeyReduce, n: usize) -> Vec<Self> { Self::random_vec(r, n) }
        }
    )*};
}
int_val!(i32, u32, i64, u64);

macro_rules! float_val {
    ($($t:ty => $tol:expr),*) => {$(
        impl Val for $t {
            fn host(op: KeyReduce, v: &[Self]) -> Self {
                match op {
                    KeyReduce::Sum => v.iter().map(|&x| x as f64).sum::<f64>() as $t,
                    KeyReduce::Prod => v.iter().product(),
                    KeyReduce::Min => v.iter().fold(<$t>::NAN, |a, &b| a.min(b)),
                    KeyReduce::Max => v.iter().fold(<$t>::NAN, |a, &b| a.max(b)),
                }
            }
            fn close(op: KeyReduce, got: Self, want: Self, v: &[Self]) -> bool {
                match op {
                    KeyReduce::Sum => {
                        let scale: f64 = v.iter().map(|&x| (x as f64).abs()).sum();
                        ((got as f64) - (want as f64)).abs() <= $tol * scale + 1e-30
                    }
                    _ => Self::equal_nan(got, want),
                }
            }
            fn values(r: &mut StdRng, op: KeyReduce, n: usize) -> Vec<Self> {
                match op {
                    KeyReduce::Sum => Self::random_vec(r, n),
                    // Products of ±1 are exact in any order.
                    KeyReduce::Prod => (0..n).map(|_| if r.gen_bool(0.5) { 1.0 } else { -1.0 }).collect(),
                    KeyReduce::Min | KeyReduce::Max => Self::few(r, n),
                }
            }
        }
    )*};
}
float_val!(f32 => 1e-5, f64 => 1e-13);

/// Runs of consecutive equal keys (NaN equal to NaN): their key, their range.
fn host_runs<K: Key>(keys: &[K]) -> Vec<(K, std::ops::Range<usize>)> {
    let mut runs: Vec<(K, std::ops::Range<usize>)> = vec![];
    for (i, &k) in keys.iter().enumerate() {
        match runs.last_mut() {
            Some((first, range)) if K::equal_nan(*first, k) => range.end = i + 1,
            _ => runs.push((k, i..i + 1)),
        }
    }
    runs
}

const OPS: [KeyReduce; 4] = [KeyReduce::Sum, KeyReduce::Prod, KeyReduce::Min, KeyReduce::Max];

fn check_by_key<K: Key, V: Val>(seed: u64) {
    let ctx = ctx();
    let mut r = rng(seed);
    for n in SIZES {
        let mut sorted = K::few(&mut r, n);
        sorted.sort_by(|&a, &b| K::order(a, b));
        let key_sets = [
            ("unsorted", K::few(&mut r, n)),
            ("sorted", sorted),
            ("all equal", vec![K::of(3); n]),
        ];
        for (kind, keys) in key_sets {
            for op in OPS {
                let what = format!(
                    "{} keys {kind}, {} values, {op:?}, n={n}",
                    std::any::type_name::<K>(),
                    std::any::type_name::<V>()
                );
                let vals = V::values(&mut r, op, n);
                let got = reduce_by_key(
                    &ctx.from_slice(&keys).unwrap(),
                    &ctx.from_slice(&vals).unwrap(),
                    op,
                )
                .unwrap();
                let runs = host_runs(&keys);
                let want_keys: Vec<K> = runs.iter().map(|(k, _)| *k).collect();
                assert_same(&what, &got.keys.to_vec().unwrap(), &want_keys);
                let counts: Vec<u32> = runs.iter().map(|(_, r)| r.len() as u32).collect();
                assert_eq!(got.counts.to_vec().unwrap(), counts, "{what}: counts");
                let values = got.values.to_vec().unwrap();
                assert_eq!(values.len(), runs.len(), "{what}");
                for (j, (_, range)) in runs.iter().enumerate() {
                    let v = &vals[range.clone()];
                    let want = V::host(op, v);
                    assert!(
                        V::close(op, values[j], want, v),
                        "{what}: run {j} {range:?}: got {:?}, want {want:?}",
                        values[j]
                    );
                }
            }
        }
    }
}

#[test]
fn by_key_u32_f32() {
    check_by_key::<u32, f32>(21);
}
#[test]
fn by_key_f64_i64() {
    check_by_key::<f64, i64>(22);
}
#[test]
fn by_key_i32_f64() {
    check_by_key::<i32, f64>(23);
}
#[test]
fn by_key_f32_u64() {
    check_by_key::<f32, u64>(24);
}
#[test]
fn by_key_i64_u32() {
    check_by_key::<i64, u32>(25);
}
#[test]
fn by_key_u64_i32() {
    check_by_key::<u64, i32>(26);
}

/// Keys `0, 0, ..` in runs of `run` elements.
fn runs_of(ctx: &Context, n: usize, run: usize) -> Array<u32> {
    ctx.from_vec((0..n).map(|i| (i / run) as u32).collect()).unwrap()
}

#[test]
fn by_key_takes_log2_of_the_longest_run_steps_and_two_waits() {
    let ctx = ctx();
    let n = 96;
    let vals = ctx.from_vec((0..n).map(|i| i as f32).collect()).unwrap();
    let mut launched = vec![];
    for run in [1, 2, 8, 5] {
        let keys = runs_of(&ctx, n, run);
        keys.eval().unwrap();
        vals.eval().unwrap();
        let before = ctx.stats();
        let r = reduce_by_key(&keys, &vals, KeyReduce::Sum).unwrap();
        let d = ctx.stats() - before;
        assert_eq!(d.host_waits, 2, "run {run}: the number of runs and the longest");
        launched.push(d.kernels_launched);
        let want: Vec<f32> = (0..n.div_ceil(run))
            .map(|j| (j * run..(j * run + run).min(n)).sum::<usize>() as f32)
            .collect();
        assert_eq!(r.values.to_vec().unwrap(), want, "run {run}");
    }
    // Runs of 1 need no step, of 2 one, of 8 three, of 5 three.
    assert_eq!(launched[1], launched[0] + 1, "{launched:?}");
    assert_eq!(launched[2], launched[0] + 3, "{launched:?}");
    assert_eq!(launched[3], launched[0] + 3, "{launched:?}");
}

#[test]
fn by_key_refuses_bad_shapes() {
    let ctx = ctx();
    let k2 = ctx.from_shape_slice([2, 2], &[1u32, 1, 2, 2]).unwrap();
    let v = ctx.from_slice(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let e = reduce_by_key(&k2, &v, KeyReduce::Sum)
        .err()
        .expect("2-D keys")
        .to_string();
    assert!(e.contains("one-dimensional") && e.contains("[2, 2]"), "{e}");
    let k3 = ctx.from_slice(&[1u32, 1, 2]).unwrap();
    let e = reduce_by_key(&k3, &v, KeyReduce::Max)
        .err()
        .expect("3 keys, 4 values")
        .to_string();
    assert!(
        e.contains("reduce_by_key") && e.contains("[3]") && e.contains("[4]"),
        "{e}"
    );
}
