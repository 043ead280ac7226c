//! Matrix products against ndarray's `dot` (or a host f64 product) on random data: f32,
//! f64 and integers; shapes with 1s, primes, tall and skinny, k = 1 and k = 0; batches
//! with broadcast batch axes; vectors on either side; transposed, sliced and computed
//! operands (fused into the tile loads) and elementwise consumers (fused into the store),
//! with the counters showing what ran as one kernel. Every tile a search may choose is
//! run on odd shapes (`Tuning::gemm_tile`).

use crate::common::{ctx, rng, Random};
use lazycl::{s, Axis, Context, GemmTile, Tuning};
use ndarray::{Array2, Array3, ArrayD, IxDyn};

/// `a · b` on the host in f64, for `[.., m, k] · [.., k, n]` with equal batch axes.
fn host_product(a: &ArrayD<f64>, b: &ArrayD<f64>) -> ArrayD<f64> {
    let (ra, rb) = (a.ndim(), b.ndim());
    let (m, k, n) = (a.shape()[ra - 2], a.shape()[ra - 1], b.shape()[rb - 1]);
    let batch: Vec<usize> = a.shape()[..ra - 2].to_vec();
    let count: usize = batch.iter().product();
    let (a, b) = (a.as_standard_layout(), b.as_standard_layout());
    let a3 = a.view().into_shape_with_order((count, m, k)).unwrap();
    let b3 = b.view().into_shape_with_order((count, k, n)).unwrap();
    let mut out = Array3::<f64>::zeros((count, m, n));
    for z in 0..count {
        out.index_axis_mut(Axis(0), z)
            .assign(&a3.index_axis(Axis(0), z).dot(&b3.index_axis(Axis(0), z)));
    }
    let mut shape = batch;
    shape.extend([m, n]);
    out.into_shape_with_order(IxDyn(&shape)).unwrap()
}

/// The sum of |a| |b| over k for each element: the scale of its rounding error.
fn host_magnitude(a: &ArrayD<f64>, b: &ArrayD<f64>) -> ArrayD<f64> {
    host_product(&a.mapv(f64::abs), &b.mapv(f64::abs))
}

/// Checks `got` against the f64 product within `eps` of each element's magnitude.
fn close(got: &[f64], want: &ArrayD<f64>, scale: &ArrayD<f64>, eps: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad: Vec<(usize, f64, f64)> = got
        .iter()
        .zip(want.iter().zip(scale.iter()))
        .enumerate()
        .filter(|(_, (g, (w, s)))| (*g - *w).abs() > eps * (**s + 1.0))
        .map(|(i, (g, (w, _)))| (i, *g, *w))
        .take(5)
        .collect();
    assert!(bad.is_empty(), "{what}: mismatches (index, got, want): {bad:?}");
}

fn random_f32(seed: u64, shape: &[usize]) -> (Vec<f32>, ArrayD<f64>) {
    let n = shape.iter().product();
    let v: Vec<f32> = f32::random_vec(&mut rng(seed), n)
        .iter()
        .map(|x| x / 100.0)
        .collect();
    let h = ArrayD::from_shape_vec(IxDyn(shape), v.iter().map(|&x| x as f64).collect()).unwrap();
    (v, h)
}

fn random_f64(seed: u64, shape: &[usize]) -> (Vec<f64>, ArrayD<f64>) {
    let n = shape.iter().product();
    let v: Vec<f64> = f64::random_vec(&mut rng(seed), n)
        .iter()
        .map(|x| x / 100.0)
        .collect();
    let h = ArrayD::from_shape_vec(IxDyn(shape), v.clone()).unwrap();
    (v, h)
}

/// f32 and f64 products of `[.., m, k] · [.., k, n]` for each shape pair.
fn check_shapes(c: &Context, pairs: &[(&[usize], &[usize])]) {
    for (i, (sa, sb)) in pairs.iter().enumerate() {
        let (va, ha) = random_f32(2 * i as u64, sa);
        let (vb, hb) = random_f32(2 * i as u64 + 1, sb);
        let a = c.from_shape_slice(sa.to_vec(), &va).unwrap();
        let b = c.from_shape_slice(sb.to_vec(), &vb).unwrap();
        let got: Vec<f64> = a.matmul(&b).to_vec().unwrap().iter().map(|&x| x as f64).collect();
        let (ha, hb) = broadcast_batches(&ha, &hb);
        let k = sa[sa.len() - 1] as f64;
        close(
            &got,
            &host_product(&ha, &hb),
            &host_magnitude(&ha, &hb),
            4e-7 * k.max(1.0).sqrt() * 4.0,
            &format!("f32 {sa:?} x {sb:?}"),
        );

        let (va, ha) = random_f64(7 + 2 * i as u64, sa);
        let (vb, hb) = random_f64(8 + 2 * i as u64, sb);
        let a = c.from_shape_slice(sa.to_vec(), &va).unwrap();
        let b = c.from_shape_slice(sb.to_vec(), &vb).unwrap();
        let got = a.matmul(&b).to_vec().unwrap();
        let (ha, hb) = broadcast_batches(&ha, &hb);
        close(
            &got,
            &host_product(&ha, &hb),
            &host_magnitude(&ha, &hb),
            1e-15 * k.max(1.0),
            &format!("f64 {sa:?} x {sb:?}"),
        );
    }
}

/// Both operands with their batch axes broadcast to one shape.
fn broadcast_batches(a: &ArrayD<f64>, b: &ArrayD<f64>) -> (ArrayD<f64>, ArrayD<f64>) {
    let (ra, rb) = (a.ndim(), b.ndim());
    let (ba, bb) = (&a.shape()[..ra - 2], &b.shape()[..rb - 2]);
    let rank = ba.len().max(bb.len());
    let pad = |s: &[usize]| -> Vec<usize> {
        std::iter::repeat_n(1, rank - s.len())
            .chain(s.iter().copied())
            .collect()
    };
    let batch: Vec<usize> = pad(ba).iter().zip(pad(bb)).map(|(&x, y)| x.max(y)).collect();
    let full = |x: &ArrayD<f64>, r: usize| {
        let mut shape = batch.clone();
        shape.extend(&x.shape()[r - 2..]);
        x.broadcast(IxDyn(&shape)).unwrap().to_owned()
    };
    (full(a, ra), full(b, rb))
}

#[test]
fn products_of_matrices_of_many_shapes() {
    let c = ctx();
    check_shapes(
        &c,
        &[
            (&[1, 1], &[1, 1]),
            (&[3, 5], &[5, 7]),
            (&[17, 13], &[13, 19]),
            (&[64, 64], &[64, 64]),
            (&[131, 67], &[67, 129]),
            (&[200, 1], &[1, 150]),
            (&[1, 300], &[300, 1]),
            (&[1000, 3], &[3, 2]),
            (&[2, 257], &[257, 1000]),
            (&[97, 251], &[251, 5]),
        ],
    );
}

#[test]
fn batched_products_broadcast_their_batch_axes() {
    let c = ctx();
    check_shapes(
        &c,
        &[
            (&[3, 5, 7], &[3, 7, 4]),
            (&[4, 9, 11], &[11, 6]),
            (&[10, 13], &[2, 13, 3]),
            (&[2, 1, 5, 6], &[3, 6, 7]),
            (&[1, 3, 4], &[5, 4, 2]),
            (&[6, 1, 1], &[6, 1, 1]),
        ],
    );
}

#[test]
fn zero_sized_products() {
    let c = ctx();
    let a = c.zeros::<f32>([4, 0]).unwrap();
    let b = c.zeros::<f32>([0, 3]).unwrap();
    assert_eq!(
        a.matmul(&b).to_vec().unwrap(),
        vec![0.0; 12],
        "k = 0 sums nothing"
    );
    let a = c.from_shape_slice([0, 2], &[] as &[f32]).unwrap();
    let b = c.from_shape_slice([2, 3], &[1.0f32; 6]).unwrap();
    let p = a.matmul(&b);
    assert_eq!(p.shape(), &[0, 3]);
    assert!(p.to_vec().unwrap().is_empty());
}

#[test]
fn vectors_on_either_side() {
    let c = ctx();
    let (va, ha) = random_f64(1, &[6, 9]);
    let (vx, hx) = random_f64(2, &[9]);
    let (vy, hy) = random_f64(3, &[6]);
    let a = c.from_shape_slice([6, 9], &va).unwrap();
    let x = c.from_slice(&vx).unwrap();
    let y = c.from_slice(&vy).unwrap();
    let ha2 = ha.clone().into_dimensionality::<ndarray::Ix2>().unwrap();
    let hx1 = hx.into_dimensionality::<ndarray::Ix1>().unwrap();
    let hy1 = hy.into_dimensionality::<ndarray::Ix1>().unwrap();
    let near = |got: Vec<f64>, want: Vec<f64>| {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-12 * (1.0 + w.abs()), "{got:?} vs {want:?}");
        }
    };
    near(a.matmul(&x).to_vec().unwrap(), ha2.dot(&hx1).to_vec());
    near(y.matmul(&a).to_vec().unwrap(), hy1.dot(&ha2).to_vec());
    near(x.matmul(&x).to_vec().unwrap(), vec![hx1.dot(&hx1)]);
    near(a.dot(&x).to_vec().unwrap(), ha2.dot(&hx1).to_vec());
    // A stack of matrices times a vector, and a vector times a stack.
    let (vs, hs) = random_f64(4, &[3, 6, 9]);
    let st = c.from_shape_slice([3, 6, 9], &vs).unwrap();
    let hs3 = hs.into_dimensionality::<ndarray::Ix3>().unwrap();
    let want: Vec<f64> = (0..3)
        .flat_map(|z| hs3.index_axis(Axis(0), z).dot(&hx1).to_vec())
        .collect();
    near(st.matmul(&x).to_vec().unwrap(), want);
    let want: Vec<f64> = (0..3)
        .flat_map(|z| hy1.dot(&hs3.index_axis(Axis(0), z)).to_vec())
        .collect();
    near(y.matmul(&st).to_vec().unwrap(), want);
}

#[test]
fn integer_products_wrap() {
    let c = ctx();
    let (m, k, n) = (37, 29, 41);
    let va = i32::random_vec(&mut rng(5), m * k);
    let vb = i32::random_vec(&mut rng(6), k * n);
    let a = c.from_shape_slice([m, k], &va).unwrap();
    let b = c.from_shape_slice([k, n], &vb).unwrap();
    let got = a.matmul(&b).to_vec().unwrap();
    for i in 0..m {
        for j in 0..n {
            let want = (0..k).fold(0i32, |acc, q| {
                acc.wrapping_add(va[i * k + q].wrapping_mul(vb[q * n + j]))
            });
            assert_eq!(got[i * n + j], want, "({i}, {j})");
        }
    }
    let vb = u64::random_vec(&mut rng(7), k * n);
    let va = u64::random_vec(&mut rng(8), m * k);
    let a = c.from_shape_slice([m, k], &va).unwrap();
    let b = c.from_shape_slice([k, n], &vb).unwrap();
    let got = a.matmul(&b).to_vec().unwrap();
    let want = (0..k).fold(0u64, |acc, q| acc.wrapping_add(va[q].wrapping_mul(vb[q * n])));
    assert_eq!(got[0], want);
}

#[test]
fn transposed_sliced_and_computed_operands_fuse_into_the_loads() {
    let c = ctx();
    let (m, k, n) = (45, 70, 33);
    let (vx, hx) = random_f32(11, &[m, k]);
    let (vmu, hmu) = random_f32(12, &[k]);
    let (vw, hw) = random_f32(13, &[n, k + 3]);
    let x = c.from_shape_slice([m, k], &vx).unwrap();
    let mu = c.from_slice(&vmu).unwrap();
    let w = c.from_shape_slice([n, k + 3], &vw).unwrap();
    // (x - mu) · w[:, 1..k+1]ᵀ: a broadcast subtraction, a slice and a transpose.
    let before = c.stats();
    let got: Vec<f64> = (&x - &mu)
        .matmul(&w.slice(s![.., 1..k + 1]).t())
        .to_vec()
        .unwrap()
        .iter()
        .map(|&v| v as f64)
        .collect();
    let ran = c.stats() - before;
    assert_eq!(
        ran.kernels_launched, 1,
        "one kernel: the operands are read in its tile loads"
    );
    let ha = &hx - &hmu;
    let hb = hw.slice(s![.., 1..k + 1]).t().to_owned().into_dyn();
    close(
        &got,
        &host_product(&ha, &hb),
        &host_magnitude(&ha, &hb),
        4e-6,
        "(x - mu) w[:, 1..]ᵀ",
    );
    // A transposed left operand and a reversed right one.
    let at = c.from_shape_slice([k, m], &vx).unwrap();
    let hat = hx.clone().into_shape_with_order(IxDyn(&[k, m])).unwrap();
    let (vb, hb) = random_f32(14, &[k, n]);
    let b = c.from_shape_slice([k, n], &vb).unwrap();
    let got: Vec<f64> = at
        .t()
        .matmul(&b.slice(s![..;-1, ..]))
        .to_vec()
        .unwrap()
        .iter()
        .map(|&v| v as f64)
        .collect();
    let ha = hat.t().to_owned();
    let hb = hb.slice(ndarray::s![..;-1, ..]).to_owned().into_dyn();
    close(
        &got,
        &host_product(&ha, &hb),
        &host_magnitude(&ha, &hb),
        4e-6,
        "aᵀ b[::-1]",
    );
}

#[test]
fn elementwise_consumers_fuse_into_the_store() {
    let c = ctx();
    let (m, k, n) = (50, 31, 70);
    let (va, ha) = random_f32(21, &[m, k]);
    let (vb, hb) = random_f32(22, &[k, n]);
    let (vbias, hbias) = random_f32(23, &[n]);
    let (vr, hr) = random_f32(24, &[m, n]);
    let (vs, hs) = random_f32(25, &[m, 1]);
    let a = c.from_shape_slice([m, k], &va).unwrap();
    let b = c.from_shape_slice([k, n], &vb).unwrap();
    let bias = c.from_slice(&vbias).unwrap();
    let residual = c.from_shape_slice([m, n], &vr).unwrap();
    let scale = c.from_shape_slice([m, 1], &vs).unwrap();
    let before = c.stats();
    let y = ((&a.matmul(&b) + &bias).max(0.0) + &residual) * &scale;
    let got: Vec<f64> = y.to_vec().unwrap().iter().map(|&v| v as f64).collect();
    let ran = c.stats() - before;
    assert_eq!(
        ran.kernels_launched, 1,
        "relu(a b + bias) + residual, scaled per row: one kernel"
    );
    let p = host_product(&ha, &hb);
    let want = ((&p + &hbias).mapv(|v| v.max(0.0)) + &hr) * &hs;
    let scale_h = host_magnitude(&ha, &hb) * hs.mapv(f64::abs) + 1.0;
    close(&got, &want, &scale_h, 4e-6, "epilogue");
    // The product itself kept as well: stored by the same kernel.
    let p_dev = a.matmul(&b);
    let z = (&p_dev * 2.0).exp();
    let before = c.stats();
    lazycl::eval(&(&p_dev, &z)).unwrap();
    assert_eq!(
        (c.stats() - before).kernels_launched,
        1,
        "product and consumer in one kernel"
    );
    let got: Vec<f64> = p_dev.to_vec().unwrap().iter().map(|&v| v as f64).collect();
    close(&got, &p, &host_magnitude(&ha, &hb), 4e-6, "the product kept");
}

#[test]
fn a_consumer_reading_the_product_elsewhere_gets_a_kernel_of_its_own() {
    let c = ctx();
    let n = 24;
    let (va, ha) = random_f64(31, &[n, n]);
    let (vb, hb) = random_f64(32, &[n, n]);
    let a = c.from_shape_slice([n, n], &va).unwrap();
    let b = c.from_shape_slice([n, n], &vb).unwrap();
    let p = a.matmul(&b);
    let got = (&p + &p.t()).to_vec().unwrap();
    let hp = host_product(&ha, &hb);
    let want = &hp + &hp.t();
    close(&got, &want, &(host_magnitude(&ha, &hb) * 2.0), 1e-14, "p + pᵀ");
    // A reduction of the product, and a product of products.
    let got = p.sum_axis(Axis(1)).to_vec().unwrap();
    let want = hp.sum_axis(Axis(1));
    for (g, w) in got.iter().zip(want.iter()) {
        assert!((g - w).abs() < 1e-12 * (1.0 + w.abs()));
    }
    let got = p.matmul(&p).to_vec().unwrap();
    let want = host_product(&hp, &hp);
    close(&got, &want, &host_magnitude(&hp, &hp), 1e-14, "p p");
}

#[test]
fn a_loop_of_products_of_one_shape_class_builds_once() {
    let c = ctx();
    let (m, k, n) = (40, 24, 30);
    let (vb, _) = random_f32(41, &[k, n]);
    let b = c.from_shape_slice([k, n], &vb).unwrap();
    let bias = c.full([n], 0.5f32).unwrap();
    let mut first = None;
    for i in 0..100 {
        let (va, _) = random_f32(100 + i, &[m + (i as usize % 7), k]);
        let a = c.from_shape_slice([m + (i as usize % 7), k], &va).unwrap();
        let before = c.stats();
        (&a.matmul(&b) + &bias).max(0.0).eval().unwrap();
        let ran = c.stats() - before;
        assert_eq!(ran.kernels_launched, 1);
        if i > 0 {
            assert_eq!(
                ran.programs_built + ran.programs_loaded,
                0,
                "iteration {i} built a program"
            );
            assert_eq!(ran.gemm_searches, 0);
        }
        first.get_or_insert(ran);
    }
}

#[test]
fn mismatched_shapes_are_errors_with_both_shapes() {
    let c = ctx();
    let a = c.zeros::<f32>([3, 4]).unwrap();
    let b = c.zeros::<f32>([5, 2]).unwrap();
    let e = a.matmul(&b).to_vec().unwrap_err().to_string();
    assert!(
        e.contains("[3, 4]") && e.contains("[5, 2]") && e.contains("matmul"),
        "{e}"
    );
    let b = c.zeros::<f32>([2, 4, 2]).unwrap();
    let a3 = c.zeros::<f32>([3, 3, 4]).unwrap();
    let e = a3.matmul(&b).to_vec().unwrap_err().to_string();
    assert!(e.contains("batch"), "{e}");
    let e = a3.dot(&b).to_vec().unwrap_err().to_string();
    assert!(e.contains("dot"), "{e}");
    let s = c.scalar(1.0f32).unwrap();
    assert!(s.matmul(&a).to_vec().is_err());
}

/// Every tile a search may choose, or with `LAZYCL_GEMM_TILE_CASES` unset, one of each
/// shape of the generated code (vector width, unrolling, work per item, block shape):
/// PoCL takes seconds to compile each of these kernels, and `make test` runs cold in CI.
#[test]
fn every_candidate_tile_computes_the_same_products() {
    let every = [
        GemmTile::new(128, 128, 8, 8, 8, 4).unrolled(2),
        GemmTile::new(256, 128, 8, 16, 8, 4).unrolled(4),
        GemmTile::new(64, 128, 8, 8, 16, 4),
        GemmTile::new(128, 128, 8, 8, 8, 4),
        GemmTile::new(128, 128, 16, 8, 8, 4),
        GemmTile::new(128, 64, 16, 8, 4, 4),
        GemmTile::new(64, 128, 16, 4, 8, 4),
        GemmTile::new(64, 64, 16, 4, 4, 4),
        GemmTile::new(64, 64, 8, 4, 4, 4),
        GemmTile::new(128, 32, 16, 8, 2, 2),
        GemmTile::new(64, 32, 16, 4, 2, 2),
        GemmTile::new(32, 32, 16, 2, 2, 2),
        GemmTile::new(16, 16, 16, 1, 1, 1),
        GemmTile::new(32, 32, 16, 4, 4, 4),
        GemmTile::new(64, 64, 8, 8, 8, 4),
        GemmTile::new(32, 64, 16, 4, 8, 4),
        // The tiles that cover rows for a row reduction (`plan::gemm::tiles::covering`).
        GemmTile::new(64, 16, 16, 4, 2, 2),
        GemmTile::new(64, 128, 8, 4, 8, 4),
        GemmTile::new(32, 128, 8, 2, 8, 2),
        GemmTile::new(8, 128, 8, 1, 8, 1),
        // The GPU's candidates for products with a short side.
        GemmTile::new(128, 32, 16, 4, 4, 4),
        GemmTile::new(64, 32, 16, 8, 4, 4),
        GemmTile::new(32, 64, 16, 4, 4, 4),
        GemmTile::new(32, 64, 32, 4, 4, 4),
        GemmTile::new(32, 128, 16, 4, 4, 4),
    ];
    let shapes_of_code = [1, 2, 4, 5, 9, 12, 16, 18];
    let tiles: Vec<GemmTile> = match std::env::var("LAZYCL_GEMM_TILE_CASES").as_deref() {
        Ok("all") => every.to_vec(),
        _ => shapes_of_code.iter().map(|&i| every[i]).collect(),
    };
    for tile in tiles {
        let c = Context::builder()
            .tuning(Tuning {
                gemm_tile: Some(tile),
                ..Tuning::default()
            })
            .build()
            .unwrap();
        // One program per tile: a slice of the left operand, a transposed right one
        // and an epilogue, on shapes no block divides.
        let (m, k, n) = (131, 37, 67);
        let (va, ha) = random_f32(51, &[m, k]);
        let (vb, hb) = random_f32(52, &[n, k]);
        let a = c.from_shape_slice([m, k], &va).unwrap();
        let b = c.from_shape_slice([n, k], &vb).unwrap();
        let got: Vec<f64> = (a.slice(s![1.., ..]).matmul(&b.t()) - 1.0)
            .to_vec()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect();
        let ha = ha.slice(ndarray::s![1.., ..]).to_owned().into_dyn();
        let hbt = hb.t().to_owned();
        let want = host_product(&ha, &hbt) - 1.0;
        close(
            &got,
            &want,
            &host_magnitude(&ha, &hbt),
            4e-6,
            &format!("tile {tile}"),
        );
    }
}

#[test]
fn dot_of_matrices_matches_ndarray() {
    let c = ctx();
    let a = Array2::from_shape_fn((23, 17), |(i, j)| (i as f64 - j as f64) / 7.0);
    let b = Array2::from_shape_fn((17, 11), |(i, j)| ((i * j) % 5) as f64 - 2.0);
    let got = c
        .array(&a)
        .unwrap()
        .dot(&c.array(&b).unwrap())
        .to_ndarray()
        .unwrap();
    let want = a.dot(&b).into_dyn();
    for (g, w) in got.iter().zip(want.iter()) {
        assert!((g - w).abs() < 1e-12 * (1.0 + w.abs()));
    }
}

#[test]
fn long_products_of_few_blocks_split_k_and_keep_their_epilogue() {
    // 3 x 5 from k = 6000: one block, so on any device the product is split along k
    // (segments added up by a second kernel, which applies the epilogue).
    let c = ctx();
    let (m, k, n) = (3, 6000, 5);
    let (va, ha) = random_f32(61, &[k, m]);
    let (vb, hb) = random_f32(62, &[k, n]);
    let a = c.from_shape_slice([k, m], &va).unwrap();
    let b = c.from_shape_slice([k, n], &vb).unwrap();
    let p = a.t().matmul(&b);
    let y = (&p * 0.5).abs();
    lazycl::eval(&(&p, &y)).unwrap();
    let hat = ha.t().to_owned();
    let want = host_product(&hat, &hb);
    let scale = host_magnitude(&hat, &hb);
    let got: Vec<f64> = p.to_vec().unwrap().iter().map(|&v| v as f64).collect();
    close(&got, &want, &scale, 1e-5, "the product");
    let got: Vec<f64> = y.to_vec().unwrap().iter().map(|&v| v as f64).collect();
    close(
        &got,
        &want.mapv(|v| (v * 0.5).abs()),
        &scale,
        1e-5,
        "its epilogue",
    );
    // Integers too (the segments wrap like the whole sum).
    let vi: Vec<i64> = (0..k as i64).map(|i| i * 7919 - 3).collect();
    let ai = c.from_shape_slice([1, k], &vi).unwrap();
    let bi = c.from_shape_slice([k, 1], &vi).unwrap();
    let want = vi.iter().fold(0i64, |s, v| s.wrapping_add(v.wrapping_mul(*v)));
    assert_eq!(ai.matmul(&bi).to_vec().unwrap(), vec![want]);
}

#[test]
fn sums_of_a_product_along_its_axes_never_compute_it() {
    let c = ctx();
    let (m, k, n) = (300, 40, 500);
    let (va, ha) = random_f64(71, &[m, k]);
    let (vb, hb) = random_f64(72, &[k, n]);
    let a = c.from_shape_slice([m, k], &va).unwrap();
    let b = c.from_shape_slice([k, n], &vb).unwrap();
    let hp = host_product(&ha, &hb);
    let scale = host_magnitude(&ha, &hb);
    let near = |got: Vec<f64>, want: ndarray::ArrayD<f64>, bound: ndarray::ArrayD<f64>, what: &str| {
        close(&got, &want, &bound, 1e-13, what);
    };
    let before = c.stats();
    let rows = a.matmul(&b).sum_axis(Axis(1)).to_vec().unwrap();
    let ran = c.stats() - before;
    assert!(
        ran.kernels_launched <= 2,
        "b's row sums, then a matrix-vector product: {ran:?}"
    );
    assert!(
        ran.bytes_allocated < (m * n * 8) as u64,
        "the [m, n] product is never stored"
    );
    near(rows, hp.sum_axis(Axis(1)), scale.sum_axis(Axis(1)), "(a b) 1");
    let cols = a.matmul(&b).sum_axis(Axis(0)).to_vec().unwrap();
    near(cols, hp.sum_axis(Axis(0)), scale.sum_axis(Axis(0)), "1ᵀ (a b)");
    let means = a.matmul(&b).mean_axis(Axis(1)).to_vec().unwrap();
    near(
        means,
        hp.mean_axis(Axis(1)).unwrap(),
        scale.mean_axis(Axis(1)).unwrap(),
        "mean over columns",
    );
    // Batched, with a broadcast batch axis.
    let (vs, hs) = random_f64(73, &[3, k, n]);
    let s3 = c.from_shape_slice([3, k, n], &vs).unwrap();
    let got = a.matmul(&s3).sum_axis(Axis(2)).to_vec().unwrap();
    let (ha3, hs3) = broadcast_batches(&ha, &hs);
    let want = host_product(&ha3, &hs3).sum_axis(Axis(2));
    near(got, want, host_magnitude(&ha3, &hs3).sum_axis(Axis(2)), "batched");
    // Not a matrix axis of the product: reduced as usual.
    let got = a.matmul(&s3).sum_axis(Axis(0)).to_vec().unwrap();
    let want = host_product(&ha3, &hs3).sum_axis(Axis(0));
    near(
        got,
        want,
        host_magnitude(&ha3, &hs3).sum_axis(Axis(0)),
        "over the batch",
    );
}

#[test]
fn row_reductions_of_the_epilogue_run_in_the_product_kernel() {
    let c = ctx();
    for (m, k, n) in [(130, 20, 32), (77, 9, 5), (40, 33, 128), (5, 3, 1)] {
        let (va, ha) = random_f32(81 + n as u64, &[m, k]);
        let (vb, hb) = random_f32(82 + n as u64, &[k, n]);
        let (vbias, hbias) = random_f32(83 + n as u64, &[n]);
        let a = c.from_shape_slice([m, k], &va).unwrap();
        let b = c.from_shape_slice([k, n], &vb).unwrap();
        let bias = c.from_slice(&vbias).unwrap();
        let hp = host_product(&ha, &hb);
        let scale = host_magnitude(&ha, &hb);
        let relu = (&hp + &hbias).mapv(|v| v.max(0.0));
        let before = c.stats();
        let got = (&a.matmul(&b) + &bias)
            .max(0.0)
            .sum_axis(Axis(1))
            .to_vec()
            .unwrap();
        assert_eq!(
            (c.stats() - before).kernels_launched,
            1,
            "relu(a b + bias) summed per row: one kernel"
        );
        let got: Vec<f64> = got.iter().map(|&v| v as f64).collect();
        close(
            &got,
            &relu.sum_axis(Axis(1)),
            &(&scale + hbias.mapv(f64::abs)).sum_axis(Axis(1)),
            4e-6,
            "row sums",
        );
        // The nearest column (k-means' assignment), and the largest, kept as [m, 1].
        let score = &hbias - 2.0 * &hp;
        let got = (&bias - 2.0f32 * a.matmul(&b)).argmin_axis(1).to_vec().unwrap();
        for (i, &g) in got.iter().enumerate() {
            let row = score.index_axis(Axis(0), i);
            let best = row.iter().cloned().fold(f64::INFINITY, f64::min);
            // f32 against f64: the chosen column's score is within rounding of the best.
            let tol = 1e-5 * (1.0 + scale.index_axis(Axis(0), i).iter().cloned().fold(0.0, f64::max));
            assert!(
                row[g as usize] - best <= tol,
                "row {i}: column {g} scores {} against {best}",
                row[g as usize]
            );
        }
        let top = a.matmul(&b).amax_axes(&[1], true);
        assert_eq!(top.shape(), &[m, 1]);
        let got: Vec<f64> = top.to_vec().unwrap().iter().map(|&v| v as f64).collect();
        let want = hp.map_axis(Axis(1), |r| r.iter().cloned().fold(f64::NEG_INFINITY, f64::max));
        close(
            &got,
            &want.into_dyn(),
            &scale
                .map_axis(Axis(1), |r| r.iter().cloned().fold(0.0, f64::max))
                .into_dyn(),
            4e-6,
            "row maxima",
        );
    }
    // Rows longer than one block reduces: the product is stored and reduced after.
    let (va, ha) = random_f64(91, &[20, 6]);
    let (vb, hb) = random_f64(92, &[6, 300]);
    let a = c.from_shape_slice([20, 6], &va).unwrap();
    let b = c.from_shape_slice([6, 300], &vb).unwrap();
    let got = a.matmul(&b).amin_axis(1).to_vec().unwrap();
    let want = host_product(&ha, &hb).map_axis(Axis(1), |r| r.iter().cloned().fold(f64::INFINITY, f64::min));
    for (g, w) in got.iter().zip(want.iter()) {
        assert!((g - w).abs() < 1e-12 * (1.0 + w.abs()));
    }
}

#[test]
fn products_assigned_in_place_and_into_regions() {
    let c = ctx();
    let (m, k, n) = (19, 7, 11);
    let (va, ha) = random_f64(101, &[m, k]);
    let (vb, hb) = random_f64(102, &[k, n]);
    let a = c.from_shape_slice([m, k], &va).unwrap();
    let b = c.from_shape_slice([k, n], &vb).unwrap();
    let hp = host_product(&ha, &hb);
    let scale = host_magnitude(&ha, &hb);
    // `y = y + a b`, written into y's own memory.
    let mut y = c.full([m, n], 1.0f64).unwrap();
    let before = c.stats();
    y.assign(&y + &a.matmul(&b)).unwrap();
    assert_eq!((c.stats() - before).kernels_launched, 1);
    close(&y.to_vec().unwrap(), &(&hp + 1.0), &scale, 1e-14, "y += a b");
    // A product stored into a region of a larger array.
    let mut big = c.zeros::<f64>([m + 2, n + 3]).unwrap();
    big.slice_mut(s![1..m + 1, 2..n + 2])
        .assign(a.matmul(&b) * 2.0)
        .unwrap();
    let got = big.to_vec().unwrap();
    for i in 0..m + 2 {
        for j in 0..n + 3 {
            let want = if (1..=m).contains(&i) && (2..n + 2).contains(&j) {
                2.0 * hp[[i - 1, j - 2]]
            } else {
                0.0
            };
            assert!(
                (got[i * (n + 3) + j] - want).abs() <= 1e-13 * (1.0 + want.abs()),
                "({i}, {j})"
            );
        }
    }
}

#[test]
fn a_shape_class_is_searched_once_per_device_and_remembered_on_disk() {
    let dir = std::env::temp_dir().join(format!("lazycl-tune-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let open = || {
        Context::builder()
            .program_cache(lazycl::CacheDir::Dir(dir.clone()))
            .build()
            .unwrap()
    };
    let searching = !matches!(
        std::env::var("LAZYCL_TUNE").as_deref(),
        Ok("off" | "0" | "false" | "no")
    );
    // 2^24 multiply-adds: large enough to be worth a search.
    let n = 256;
    let (va, _) = random_f32(111, &[n, n]);
    let c = open();
    let a = c.from_shape_slice([n, n], &va).unwrap();
    let b = a.t().to_contiguous();
    b.eval().unwrap();
    for i in 0..100 {
        let before = c.stats();
        (&a.matmul(&b) * 0.5).eval().unwrap();
        let ran = c.stats() - before;
        if i == 0 {
            assert_eq!(
                ran.gemm_searches,
                u64::from(searching),
                "the first product searches"
            );
            if searching {
                assert!(ran.gemm_candidates >= 2, "{ran:?}");
            }
        } else {
            assert_eq!(ran.gemm_searches, 0, "iteration {i} searched again");
            assert_eq!(
                ran.programs_built + ran.programs_loaded,
                0,
                "iteration {i} built a program"
            );
            assert_eq!(ran.kernels_launched, 1);
        }
    }
    // Another context on the same cache (as another process would be) finds the choice
    // on disk and its program in the cache: no search, no build.
    let c2 = open();
    let a2 = c2.from_shape_slice([n, n], &va).unwrap();
    let b2 = a2.t().to_contiguous();
    b2.eval().unwrap();
    let before = c2.stats();
    (&a2.matmul(&b2) * 0.5).eval().unwrap();
    let ran = c2.stats() - before;
    assert_eq!(ran.gemm_searches, 0);
    assert_eq!(ran.programs_built, 0, "{ran:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reductions_of_products_with_empty_rows_are_defined() {
    let c = ctx();
    let a = c
        .from_shape_slice([3, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let b = c.zeros::<f32>([2, 0]).unwrap();
    // Sums over no columns are 0, whether the product or its epilogue is reduced.
    assert_eq!(a.matmul(&b).sum_axis(Axis(1)).to_vec().unwrap(), vec![0.0; 3]);
    assert_eq!(
        (a.matmul(&b) + 1.0).sum_axis(Axis(1)).to_vec().unwrap(),
        vec![0.0; 3]
    );
    assert!(
        (a.matmul(&b) * 2.0).amax_axis(Axis(1)).to_vec().is_err(),
        "the largest of nothing"
    );
}
