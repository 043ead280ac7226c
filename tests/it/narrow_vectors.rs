//! Elementwise loops move 16 bytes of their narrowest element type an access: eight lanes
//! of `bf16` and the 16-bit integers, sixteen of `u8`/`i8`, four of `f32`, at most 64
//! bytes of the widest type, through vector pointers. `f16` keeps four lanes (NVIDIA's
//! wider `vload_half` was measured slow) and a `bool` mask counts as four bytes. The
//! sources say so (`explain`), and the values match the host at every length around the
//! vector widths (the scalar tail), with random numbers drawn in the lanes equal to those
//! drawn one at a time.

use crate::common::{ctx, rng, Random};
use lazycl::prelude::*;
use rand::Rng;

/// Lengths around the vector widths: tails of every size, one element, none.
const LENGTHS: [usize; 10] = [0, 1, 7, 8, 9, 15, 16, 17, 1000, 4099];

/// How often `pattern` occurs in the source of what materializing `a` runs.
fn count<T: Element>(a: &Array<T>, pattern: &str) -> usize {
    a.explain().unwrap().matches(pattern).count()
}

#[test]
fn a_bf16_chain_loads_and_stores_eight_lanes_through_vector_pointers() {
    let ctx = ctx();
    let mut r = rng(71);
    for n in LENGTHS {
        let (x, y) = (f32::random_vec(&mut r, n), f32::random_vec(&mut r, n));
        let xb: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
        let yb: Vec<bf16> = y.iter().map(|&v| bf16::from_f32(v)).collect();
        let (a, b) = (ctx.from_slice(&xb).unwrap(), ctx.from_slice(&yb).unwrap());
        let out = (&a * &b + bf16::from_f32(0.25)).tanh() - &b;
        if n > 0 {
            let source = out.explain().unwrap();
            assert_eq!(
                source.matches("(__global const ushort8*)in").count(),
                2,
                "{source}"
            );
            assert_eq!(source.matches("(__global ushort8*)out0").count(), 1, "{source}");
            assert_eq!(source.matches("vload8").count(), 0, "{source}");
        }
        let got = out.to_vec().unwrap();
        for i in 0..n {
            let (p, q) = (xb[i].to_f32(), yb[i].to_f32());
            let want = bf16::from_f32((p * q + 0.25).tanh() - q);
            let ulp = (want.to_f32().abs() * 2f32.powi(-7)).max(1e-30);
            let diff = (got[i].to_f32() - want.to_f32()).abs();
            assert!(diff <= 2.0 * ulp, "bf16 n = {n}, i = {i}: {} vs {want}", got[i]);
        }

        let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
        let a = ctx.from_slice(&xh).unwrap();
        let out = (&a * f16::from_f32(3.0) - f16::ONE).abs();
        if n > 0 {
            // (Four lanes, the address in the pointer: NVIDIA's wider `f16` vector
            // accesses, and those at a vector offset, were measured slow.)
            assert_eq!(count(&out, "vload_half4(0, in0 + (q) * 4u)"), 1);
            assert_eq!(count(&out, "vstore_half4_rte("), 1);
        }
        let got = out.to_vec().unwrap();
        for i in 0..n {
            let want = f16::from_f32((xh[i].to_f32() * 3.0 - 1.0).abs());
            assert_eq!(got[i], want, "f16 n = {n}, i = {i}");
        }
    }
}

#[test]
fn byte_chains_take_sixteen_lanes_and_wide_types_keep_their_widths() {
    let ctx = ctx();
    let mut r = rng(72);
    for n in LENGTHS {
        // u8 in and out: sixteen lanes, wrapping as Rust's `wrapping_*`.
        let x: Vec<u8> = (0..n).map(|_| r.gen()).collect();
        let a = ctx.from_slice(&x).unwrap();
        let out = &a * 3u8 + 7u8;
        if n > 0 {
            assert_eq!(count(&out, "(__global const uchar16*)in0"), 1);
            assert_eq!(count(&out, "(__global uchar16*)out0"), 1);
        }
        let want: Vec<u8> = x.iter().map(|v| v.wrapping_mul(3).wrapping_add(7)).collect();
        assert_eq!(out.to_vec().unwrap(), want, "u8 n = {n}");

        // i16 to f64: the narrowest asks for eight lanes, which f64 allows (64 bytes).
        let x: Vec<i16> = (0..n).map(|_| r.gen()).collect();
        let a = ctx.from_slice(&x).unwrap();
        let out = a.cast::<f64>() * 0.5;
        if n > 0 {
            assert_eq!(count(&out, "(__global const short8*)in0"), 1);
            assert_eq!(count(&out, "(__global double8*)out0"), 1);
        }
        let want: Vec<f64> = x.iter().map(|&v| v as f64 * 0.5).collect();
        assert_eq!(out.to_vec().unwrap(), want, "i16 to f64 n = {n}");

        // u8 beside f64: sixteen lanes would be 128 bytes of f64, so eight.
        let m = ctx
            .from_slice(&x.iter().map(|&v| v as u8).collect::<Vec<_>>())
            .unwrap();
        let out = m.cast::<f64>() + &a.cast::<f64>();
        if n > 0 {
            assert_eq!(count(&out, "(__global double8*)out0"), 1);
        }
        let want: Vec<f64> = x.iter().map(|&v| (v as u8) as f64 + v as f64).collect();
        assert_eq!(out.to_vec().unwrap(), want, "u8 beside f64 n = {n}");

        // f32 alone: four lanes, as before.
        let x = f32::random_vec(&mut r, n);
        let a = ctx.from_slice(&x).unwrap();
        let out = &a * 2.0f32 - 1.0;
        if n > 0 {
            assert_eq!(count(&out, "(__global const float4*)in0"), 1);
        }
        let want: Vec<f32> = x.iter().map(|v| v * 2.0 - 1.0).collect();
        assert_eq!(out.to_vec().unwrap(), want, "f32 n = {n}");
    }
}

#[test]
fn random_numbers_drawn_in_eight_lanes_are_those_drawn_in_four() {
    let ctx = ctx();
    for n in [1usize, 9, 17, 1001] {
        let mut g = ctx.rng(9);
        let draw = g.random::<bf16>([n]).unwrap();
        // Read by an eight-lane bf16 loop, and by a four-lane f32 one.
        let narrow = draw.clone() * bf16::ONE;
        let wide = draw.cast::<f32>();
        assert!(count(&narrow, "ushort8") > 0);
        let (narrow, wide) = (narrow.to_vec().unwrap(), wide.to_vec().unwrap());
        for i in 0..n {
            assert_eq!(narrow[i].to_f32(), wide[i], "n = {n}, i = {i}");
        }
        assert!(narrow.windows(2).any(|w| w[0] != w[1]) || n == 1);
    }
}

#[test]
fn reductions_of_narrow_types_read_sixteen_bytes_a_load() {
    let ctx = ctx();
    let mut r = rng(73);
    for n in [1usize, 7, 8, 9, 17, 1000, 40_001] {
        let x = f32::random_vec(&mut r, n);
        let xb: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
        let a = ctx.from_slice(&xb).unwrap();
        let s = a.sum();
        if n >= 1000 {
            assert!(count(&s, "ushort8") > 0, "{}", s.explain().unwrap());
        }
        let want: f64 = xb.iter().map(|v| v.to_f64()).sum();
        let got = s.item().unwrap().to_f64();
        let bound: f64 = xb.iter().map(|v| v.to_f64().abs()).sum();
        assert!(
            (got - want).abs() <= bound * 2f64.powi(-7) + 1e-6,
            "bf16 sum n = {n}: {got} vs {want}"
        );

        let bytes: Vec<u8> = (0..n).map(|_| r.gen()).collect();
        let b = ctx.from_slice(&bytes).unwrap();
        let s = b.sum();
        if n >= 1000 {
            assert!(count(&s, "uchar16") > 0, "{}", s.explain().unwrap());
        }
        let want: u32 = bytes.iter().map(|&v| v as u32).sum();
        assert_eq!(s.item().unwrap(), want, "u8 sum n = {n}");
    }
    // Rows of widths aligned to eight lanes and not: the unaligned ones load with `vload`.
    for cols in [8usize, 12, 17, 64, 1001] {
        let rows = 5;
        let x = f32::random_vec(&mut r, rows * cols);
        let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
        let a = ctx.from_shape_slice([rows, cols], &xh).unwrap();
        let got = a.sum_axis(Axis(1)).to_vec().unwrap();
        for (i, g) in got.iter().enumerate() {
            let row = &xh[i * cols..(i + 1) * cols];
            let want: f64 = row.iter().map(|v| v.to_f64()).sum();
            let bound: f64 = row.iter().map(|v| v.to_f64().abs()).sum();
            let err = (g.to_f64() - want).abs();
            assert!(
                err <= bound * 2f64.powi(-10) + 1e-6,
                "f16 row {i} of {cols}: {g} vs {want}"
            );
        }
    }
}

#[test]
fn a_16_bit_product_loads_runs_of_four_with_vload_aligned_or_not() {
    // A tile of 64 × 64 with vectors of four along the rows, on shapes it divides (aligned
    // loads) and on shapes it does not. 16-bit operands load with `vload4` either way: a
    // vector pointer of `ushort4` was measured slower on NVIDIA; `f32` operands use one
    // where aligned.
    let ctx = Context::builder()
        .tuning(lazycl::Tuning {
            gemm_tile: Some(lazycl::GemmTile::new(64, 64, 8, 8, 8, 4)),
            ..lazycl::Tuning::default()
        })
        .build()
        .unwrap();
    let mut r = rng(74);
    for (m, k, n, aligned) in [(128usize, 64usize, 128usize, true), (67, 33, 70, false)] {
        let x: Vec<bf16> = (0..m * k)
            .map(|_| bf16::from_f32(r.gen_range(-1.0..1.0)))
            .collect();
        let y: Vec<bf16> = (0..k * n)
            .map(|_| bf16::from_f32(r.gen_range(-1.0..1.0)))
            .collect();
        let a = ctx.from_shape_slice([m, k], &x).unwrap();
        let b = ctx.from_shape_slice([k, n], &y).unwrap();
        let product = a.matmul(&b);
        let source = product.explain().unwrap();
        assert!(!source.contains("(__global const ushort4*)in"), "{source}");
        assert!(source.contains("convert_uint4(vload4(0, in0"), "{source}");
        let wide = ctx.from_shape_slice([m, k], &vec![1.0f32; m * k]).unwrap();
        let f32_source = wide.matmul(&b.cast::<f32>()).explain().unwrap();
        assert_eq!(
            f32_source.contains("(__global const float4*)in0"),
            aligned,
            "{f32_source}"
        );
        let got = product.to_vec().unwrap();
        for i in 0..m {
            for j in 0..n {
                let want: f32 = (0..k)
                    .map(|l| x[i * k + l].to_f32() * y[l * n + j].to_f32())
                    .sum();
                let g = got[i * n + j].to_f32();
                assert!(
                    (g - want).abs() <= 2f32.powi(-7) * want.abs() + 1e-4 * k as f32,
                    "{m}x{k}x{n} ({i}, {j}): {g} vs {want}"
                );
            }
        }
    }
}
