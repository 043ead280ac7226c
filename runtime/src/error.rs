//! The one error type of lazycl, with variants a user can match on.

use crate::dtype::DType;
use crate::stats::MemoryStats;

/// Every fallible lazycl call returns this.
pub type Result<T> = std::result::Result<T, Error>;

/// What went wrong, with the facts needed to fix it.
///
/// Recording an operation never fails: a mistake such as a shape mismatch is kept in the
/// lazy array and returned by the first call that materializes it.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let a = ctx.from_slice(&[1.0f32, 2.0])?;
/// let b = ctx.from_slice(&[1.0f32, 2.0, 3.0])?;
/// let c = (&a + &b) * 2.0; // recorded, error and all
/// match c.to_vec() {
///     Err(Error::ShapeMismatch { left, right, .. }) => assert_eq!((left, right), (vec![2], vec![3])),
///     other => panic!("expected a shape mismatch, got {other:?}"),
/// }
/// # Ok(())
/// # }
/// ```
///
/// Its `Debug` is its message (as `anyhow`'s is), so that `fn main() -> lazycl::Result<()>`
/// prints a readable report, tables and build logs on lines of their own. Match on the
/// variants for the facts.
#[derive(Clone, thiserror::Error)]
pub enum Error {
    /// The OpenCL ICD loader (`libOpenCL.so.1`) could not be loaded.
    #[error(
        "the OpenCL loader (libOpenCL.so.1) could not be loaded; install it with \
         `apt-get install ocl-icd-opencl-dev pocl-opencl-icd`, or point OPENCL_DYLIB_PATH at it"
    )]
    NoLoader,

    /// The loader works but no OpenCL platform (driver) is installed.
    #[error(
        "no OpenCL platform found; install one, for example PoCL on the CPU: \
         `apt-get install pocl-opencl-icd ocl-icd-opencl-dev`"
    )]
    NoPlatform,

    /// No device matched the requested selection.
    #[error("no OpenCL device matches {request:?}; available devices:\n{available}")]
    NoMatchingDevice {
        /// The selection as the user wrote it (`LAZYCL_DEVICE` or the builder).
        request: String,
        /// A table of what is available.
        available: String,
    },

    /// An OpenCL API call failed.
    #[error("OpenCL call {call} failed with {name} ({code})")]
    Cl {
        /// The API function, e.g. `clEnqueueNDRangeKernel`.
        call: &'static str,
        /// The CL error name, e.g. `CL_INVALID_KERNEL_ARGS`.
        name: &'static str,
        /// The numeric code.
        code: i32,
    },

    /// The device cannot run this element type (e.g. `f64` without `cl_khr_fp64`).
    #[error("element type {dtype} is not supported on device {device:?} (no cl_khr_fp64 extension)")]
    UnsupportedDtype {
        /// The element type.
        dtype: DType,
        /// The device's name.
        device: String,
    },

    /// A kernel enables an OpenCL extension (`#pragma OPENCL EXTENSION ... : enable`) the
    /// device does not have (e.g. 64-bit atomics, `cl_khr_int64_base_atomics`).
    #[error("kernel `{kernel}` needs the OpenCL extension {extension}, which device {device:?} does not have{why}")]
    UnsupportedExtension {
        /// The kernel's name.
        kernel: String,
        /// The extension.
        extension: String,
        /// The device's name.
        device: String,
        /// What in the kernel needs it, where known (`: 64-bit atomics`), or empty.
        why: String,
    },

    /// Shapes that cannot be combined.
    #[error("shape mismatch in {op}: {left:?} and {right:?} {why}")]
    ShapeMismatch {
        /// The user's operation (`` `+` ``, `dot`, `assign`, `concatenate along Axis(1)`).
        op: String,
        /// The left operand's shape.
        left: Vec<usize>,
        /// The right operand's shape.
        right: Vec<usize>,
        /// What the shapes fail to do ([`BROADCAST`](Error::BROADCAST) for elementwise
        /// operations).
        why: String,
    },

    /// An integer division or remainder whose divisor holds zeros
    /// ([`Array::checked_div`](crate::Array::checked_div); plain `/` gives 0 there).
    #[error("division by zero in {op}: the divisor (shape {shape:?}) holds {zeros} zero(s)")]
    DivisionByZero {
        /// The user's operation.
        op: String,
        /// The divisor's shape.
        shape: Vec<usize>,
        /// How many of its elements are 0.
        zeros: u64,
    },

    /// Host data whose length does not fit the requested shape, or another bad shape.
    #[error("invalid shape: {0}")]
    InvalidShape(String),

    /// A view, region or reshape that does not fit its array: an index or range outside
    /// an axis, a step of 0, a bad axis or permutation, no arrays to join.
    #[error("{op} on an array of shape {shape:?}: {reason}")]
    InvalidView {
        /// The user's operation, e.g. `slice` or `concatenate along Axis(0)`.
        op: String,
        /// The shape of the array it was applied to.
        shape: Vec<usize>,
        /// What is wrong.
        reason: String,
    },

    /// A step that cannot be captured (`Context::capture`).
    #[error("capturing a step: {reason}")]
    InvalidStep {
        /// What is wrong.
        reason: String,
    },

    /// A broken internal invariant: a bug in lazycl, please report it (with the message).
    /// Nothing a caller did or can fix; never returned for a user's mistake.
    #[error("internal error (a bug in lazycl, please report it): {0}")]
    Internal(String),

    /// Device memory ran out: a request over the device's largest buffer or over the
    /// context's whole memory limit, one that would pass the limit even after the pool's
    /// free buffers were released (`ContextBuilder::memory_limit`), or one the driver
    /// refused. Returned by the call that needed the memory (for lazy arrays, the one
    /// that materializes them); the context keeps working, and dropping arrays gives
    /// their memory back.
    #[error("out of device memory allocating {what} ({bytes} bytes requested): {reason}; {memory}")]
    OutOfMemory {
        /// What was being allocated, e.g. `"a kernel's output"`, `"an upload"`.
        what: &'static str,
        /// How many bytes (rounded up to the pool's size class).
        bytes: usize,
        /// Why it could not be had.
        reason: String,
        /// The context's device memory when it failed: bytes live, pooled, the limit.
        memory: MemoryStats,
    },

    /// The OpenCL compiler rejected a program of the user's (a `#[kernel]`). A kernel
    /// lazycl generated that fails to build is an [`Internal`](Error::Internal) error.
    #[error(
        "building OpenCL program {name:?} failed:\n--- build log ---\n{log}\n--- source ---\n{source_code}"
    )]
    Build {
        /// The kernel or program name.
        name: String,
        /// The compiler's build log.
        log: String,
        /// The OpenCL C source that was compiled.
        source_code: String,
    },

    /// A kernel launch was configured wrongly (sizes, arguments).
    #[error("invalid launch of kernel {kernel:?}: {reason}")]
    InvalidLaunch {
        /// The kernel name.
        kernel: String,
        /// What is wrong.
        reason: String,
    },

    /// Arrays, queues or events of two different contexts were combined. OpenCL leaves
    /// mixing objects of two contexts undefined, so lazycl refuses it before enqueuing.
    #[error("{op}: {found} belongs to another context than {expected}")]
    ContextMismatch {
        /// The user's operation, e.g. `assign` or `launch of kernel "saxpy"`.
        op: String,
        /// The context the operation runs on: its number, device and platform.
        expected: String,
        /// The object of the other context: what it is, and its context's number, device
        /// and platform.
        found: String,
    },

    /// An array too large to compute: its element count or byte size overflows, its
    /// iteration space is more than a kernel may cover, or memory it must be computed
    /// into is more than the device allocates at once (a large `tile`).
    #[error("{op}: an array of shape {shape:?} is too large: {reason}")]
    TooLarge {
        /// The operation that needed the array.
        op: String,
        /// The array's shape.
        shape: Vec<usize>,
        /// Which limit it exceeds.
        reason: String,
    },

    /// An operation that needs an array in one device's memory, applied to an array of a
    /// multi-device context (split by rows across its devices), or a multi-device
    /// context asked for something it cannot be.
    #[error("{op} on a context of {devices} devices: {reason}")]
    MultiDevice {
        /// The user's operation.
        op: String,
        /// How many devices the context has.
        devices: usize,
        /// What is wrong, and what to do instead.
        reason: String,
    },

    /// A collective operation over MPI ranks (`lazycl::dist`, feature `mpi`) that cannot
    /// run: every rank returns it, never one alone (no rank is left waiting).
    #[error("{op}: {reason}")]
    Distributed {
        /// The user's operation, e.g. `World::init`.
        op: String,
        /// What is wrong, naming the ranks concerned.
        reason: String,
    },

    /// An `eval()` this thread made earlier failed after it returned: its flush was handed
    /// to the context's dispatch thread ([`Dispatch`](crate::Dispatch)), and the
    /// error is returned by the thread's next call that submits work or reads (that call
    /// did nothing). What the `eval()` was computing is still unevaluated; reading it
    /// tries again and returns the error itself. `Dispatch::Inline` returns such errors
    /// from `eval()`.
    #[error(
        "an earlier eval() on this thread failed after it returned (its flush was handed \
         to the context's dispatch thread; this call did nothing, and the arrays that \
         eval() was computing are still unevaluated): {0}"
    )]
    Deferred(Box<Error>),

    /// A gradient (`Array::grad`, `vjp`, `value_and_grad`) cannot be taken through an
    /// operation: it has no derivative (an `expr!` without one, a `#[kernel]` launch), its
    /// recipe is gone (the array was materialized before the gradient was asked for), or
    /// the request is malformed (a loss that is not 0-d, a cotangent of another shape).
    #[error("gradient through {op} (recorded at {at}): {reason}")]
    Gradient {
        /// The operation, as the user wrote it.
        op: String,
        /// Where the user's code recorded it (`file:line:column`).
        at: String,
        /// Why, and what to do instead.
        reason: String,
    },

    /// A conversion with no meaning: a complex array cast to a real type.
    #[error("cast of {from} to {to} (recorded at {at}): {reason}")]
    InvalidCast {
        /// The array's element type.
        from: DType,
        /// The type asked for.
        to: DType,
        /// Where the user's code recorded it (`file:line:column`).
        at: String,
        /// Why, and what to do instead.
        reason: String,
    },

    /// An environment variable lazycl reads has a value it cannot use.
    #[error("environment variable {variable}={value:?} {reason}")]
    InvalidEnvironment {
        /// The variable, e.g. `LAZYCL_DEVICE`.
        variable: &'static str,
        /// Its value (non-UTF-8 bytes shown as U+FFFD).
        value: String,
        /// What is wrong and what would be accepted.
        reason: String,
    },
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl Error {
    /// This error of a recording made at `at` in the user's code: the operation it names
    /// (or, without one, its message) says "recorded at file:line:column". Only the
    /// first recording is named: an error that other operations carry on keeps it.
    pub(crate) fn recorded_at(self, at: &std::panic::Location<'_>) -> Error {
        let mark = |text: &mut String| {
            if !text.contains(RECORDED_AT) {
                text.push_str(&format!(" ({RECORDED_AT} {at})"));
            }
        };
        let mut e = self;
        match &mut e {
            Error::ShapeMismatch { op, .. }
            | Error::DivisionByZero { op, .. }
            | Error::InvalidView { op, .. }
            | Error::ContextMismatch { op, .. }
            | Error::TooLarge { op, .. }
            | Error::MultiDevice { op, .. } => mark(op),
            Error::InvalidShape(text) => mark(text),
            _ => {}
        }
        e
    }

    /// The `why` of a [`ShapeMismatch`](Error::ShapeMismatch) of an elementwise
    /// operation: numpy's broadcasting rule.
    pub const BROADCAST: &'static str = "cannot be broadcast together (trailing axes must be equal, or 1)";

    /// Wraps a CL error code returned by `call`.
    pub(crate) fn cl(call: &'static str, code: i32) -> Self {
        if code == cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED {
            return Error::NoLoader;
        }
        Error::Cl {
            call,
            name: cl3::error_codes::error_text(code),
            code,
        }
    }

    /// Whether `code` says the driver had no memory for an allocation.
    pub(crate) fn is_alloc_failure(code: i32) -> bool {
        use cl3::error_codes::{CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES};
        code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES
    }
}

/// The words before a recording's source location in an error's text.
const RECORDED_AT: &str = "recorded at";

/// `result.cl("clFoo")?` turns a raw CL error code into an [`Error`].
pub(crate) trait ClResultExt<T> {
    fn cl(self, call: &'static str) -> Result<T>;
}

impl<T> ClResultExt<T> for std::result::Result<T, i32> {
    fn cl(self, call: &'static str) -> Result<T> {
        self.map_err(|code| Error::cl(call, code))
    }
}

impl<T> ClResultExt<T> for std::result::Result<T, opencl3::error_codes::ClError> {
    fn cl(self, call: &'static str) -> Result<T> {
        self.map_err(|e| Error::cl(call, e.0))
    }
}
