//! Boolean compaction (`compress`, `nonzero`) against host filters on random data: every
//! element type, masks none, few, half and all true, lengths 0, 1, odd, one tile, and
//! many tiles joined by the look-back; broadcast and lazy masks; the count on the device.

use crate::common::{ctx, rng, Random};
use lazycl::{Array, Context, Element};
use rand::Rng;

const LENGTHS: [usize; 7] = [0, 1, 7, 4096, 4097, 65_537, 300_001];

fn mask(r: &mut rand::rngs::StdRng, n: usize, density: f64) -> Vec<bool> {
    (0..n).map(|_| r.gen_bool(density)).collect()
}

fn check<T: Element + Random + PartialEq + std::fmt::Debug>(c: &Context, seed: u64) {
    let mut r = rng(seed);
    for &n in &LENGTHS {
        for density in [0.0, 0.01, 0.5, 1.0] {
            let v = T::random_vec(&mut r, n);
            let m = mask(&mut r, n, density);
            let want: Vec<T> = v.iter().zip(&m).filter(|(_, &k)| k).map(|(&x, _)| x).collect();
            let a = c.from_slice(&v).unwrap();
            let mk = c.from_slice(&m).unwrap();
            let got = a.compress(&mk).unwrap();
            assert_eq!(got.capacity(), n);
            assert_eq!(
                got.len().unwrap(),
                want.len(),
                "{:?} n {n} density {density}",
                T::DTYPE
            );
            assert_eq!(
                got.to_vec().unwrap(),
                want,
                "{:?} n {n} density {density}",
                T::DTYPE
            );
            let positions: Vec<u32> = (0..n as u32).filter(|&i| m[i as usize]).collect();
            assert_eq!(
                mk.nonzero().unwrap().to_vec().unwrap(),
                positions,
                "nonzero n {n}"
            );
        }
    }
}

#[test]
fn compress_f32_and_nonzero() {
    check::<f32>(&ctx(), 1);
}

#[test]
fn compress_every_other_type() {
    let c = ctx();
    check::<i32>(&c, 2);
    check::<f64>(&c, 3);
    check::<u64>(&c, 4);
    check::<bool>(&c, 5);
}

#[test]
fn masks_broadcast_and_may_be_lazy() {
    let c = ctx();
    let mut r = rng(6);
    let (rows, cols) = (3, 5000);
    let v = f32::random_vec(&mut r, rows * cols);
    let x = c.from_shape_slice([rows, cols], &v).unwrap();
    // A lazy mask, computed in its own kernel then compacted.
    let got = x.compress(&x.gt(10.0)).unwrap().to_vec().unwrap();
    let want: Vec<f32> = v.iter().copied().filter(|&e| e > 10.0).collect();
    assert_eq!(got, want);
    // A mask of rows, broadcast along the columns.
    let keep = c.from_shape_slice([rows, 1], &[true, false, true]).unwrap();
    let got = x.compress(&keep).unwrap().to_vec().unwrap();
    let want: Vec<f32> = v[..cols].iter().chain(&v[2 * cols..]).copied().collect();
    assert_eq!(got, want);
    // A lazy operand.
    let y = &x * 2.0;
    let got = y.compress(&keep).unwrap().into_array().unwrap().to_vec().unwrap();
    assert_eq!(got, want.iter().map(|e| e * 2.0).collect::<Vec<_>>());
}

#[test]
fn the_count_stays_on_the_device_until_read() {
    let c = ctx();
    let v: Vec<i32> = (0..100_000).map(|i| (i * 7919) % 1000 - 500).collect();
    let x = c.from_slice(&v).unwrap();
    let before = c.stats();
    let picked = x.compress(&x.lt(0)).unwrap();
    // The count feeds lazy work with no wait.
    let share = picked.count().cast::<f64>() / v.len() as f64;
    share.eval().unwrap();
    let d = c.stats() - before;
    assert_eq!(d.host_waits, 0, "{d:?}");
    let negative = v.iter().filter(|&&e| e < 0).count();
    assert_eq!(picked.len().unwrap(), negative);
    assert!((share.item().unwrap() - negative as f64 / v.len() as f64).abs() < 1e-12);
    let d = c.stats() - before;
    assert_eq!(d.waits_read, 2, "reading the length, then the share: {d:?}");
}

#[test]
fn a_mask_of_another_shape_is_an_error() {
    let c = ctx();
    let x: Array<f32> = c.zeros([4, 3]).unwrap();
    let m = c.from_slice(&[true, false]).unwrap();
    let e = x.compress(&m).err().unwrap().to_string();
    assert!(
        e.contains("compress") && e.contains("[4, 3]") && e.contains("[2]"),
        "{e}"
    );
}
