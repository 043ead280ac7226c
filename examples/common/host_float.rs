//! What the examples' host side needs of a float element type: conversions to and from
//! `f64`, for reference computations in `f64` whatever the device computes in.

/// `f32` or `f64` on the host.
pub trait HostFloat: lazycl::Float {
    /// `v` rounded to this type.
    fn of(v: f64) -> Self;
    /// This value in `f64` (exactly).
    fn to_f64(self) -> f64;
}

impl HostFloat for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl HostFloat for f64 {
    fn of(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}
