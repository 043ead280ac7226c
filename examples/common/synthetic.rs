//! Deterministic synthetic data shared by the workload examples and reproduced bit for bit
//! by `benches/reference/torch_reference.py`: counter-based uniforms (splitmix64 of a seed
//! and an index) and Box–Muller normals, so any element can be computed independently.
#![allow(dead_code)]

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Uniform in [0, 1) from stream `seed`, element `i`.
pub fn uniform(seed: u64, i: u64) -> f64 {
    let h = splitmix64(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ i);
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Standard normal from stream `seed`, element `i` (Box–Muller on elements 2i, 2i+1).
pub fn normal(seed: u64, i: u64) -> f64 {
    let u1 = uniform(seed, 2 * i);
    let u2 = uniform(seed, 2 * i + 1);
    (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}
