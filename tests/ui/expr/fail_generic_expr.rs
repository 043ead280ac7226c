use lazycl::prelude::*;

// A float method on a type that may be an integer.
fn roots<T: lazycl::Numeric>(x: &Array<T>) -> Array<T> {
    expr!(x.sqrt())
}

// A type parameter in the closure form.
fn closure<T: lazycl::Float>(x: &Array<f32>) -> Array<f32> {
    expr!(|v: f32| v + T::EPSILON).apply(x)
}

// `T::from` converts losslessly only.
fn lossy<T: lazycl::Float>(x: &Array<T>, i: &Array<i64>) -> Array<T> {
    expr!(x + T::from(i))
}

// An element-type constant that does not exist.
fn unknown<T: lazycl::Float>(x: &Array<T>) -> Array<T> {
    expr!(x * T::GOLDEN)
}

fn main() {}
