//! `Display` for [`Array`]: the values, printed as ndarray prints them.

use std::fmt;

use crate::api::array::Array;
use crate::dtype::Element;

/// Prints the values as ndarray's `Display` prints the same array: nested brackets, long
/// axes shortened with `...` (`{:#}` prints every element), and the element's flags
/// applied to each value (`{:.3}`, `{:>8}`).
///
/// Printing materializes the array and reads it to the host, as
/// [`to_ndarray`](Array::to_ndarray) does. An array that cannot be read (a recording
/// error such as a shape mismatch, a failed flush) prints `<error: ...>` with the error's
/// text instead of failing the write, so `println!` never panics. `{:?}` describes the
/// array (type, shape, state) and never runs anything.
///
/// ```
/// use lazycl::prelude::*;
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let a = ctx.from_shape_slice([2, 3], &[1.0f32, 2.5, 3.0, 4.0, 5.0, 6.25])?;
/// let b = &a * 2.0; // lazy: printing runs it
/// assert_eq!(format!("{b}"), "[[2, 5, 6],\n [8, 10, 12.5]]");
/// assert_eq!(format!("{b:.2}"), "[[2.00, 5.00, 6.00],\n [8.00, 10.00, 12.50]]");
/// assert_eq!(format!("{b}"), format!("{}", b.to_ndarray()?)); // ndarray's text
///
/// let row = ctx.from_slice(&[1.0f32, 2.0])?;
/// let bad = &a + &row; // [2, 3] + [2]: a shape mismatch
/// assert!(format!("{bad}").starts_with("<error: shape mismatch"));
/// # Ok(())
/// # }
/// ```
impl<T: Element + fmt::Display> fmt::Display for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_ndarray() {
            Ok(host) => fmt::Display::fmt(&host, f),
            Err(e) => write!(f, "<error: {e}>"),
        }
    }
}
