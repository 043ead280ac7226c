//! Names: the OpenCL C reserved words and builtins that user names must not take, the
//! subset's intrinsics and methods, and suggestions for misspelled ones.

use crate::ir::{AtomicOp, Collective};

/// Names that must not be used for OpenCL C identifiers (keywords, types, builtins the
/// generated code calls, macros).
const RESERVED: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "half",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "event_t",
    "sampler_t",
    "global",
    "local",
    "constant",
    "private",
    "kernel",
    "read_only",
    "write_only",
    "read_write",
    "true",
    "false",
    "NULL",
    "INFINITY",
    "NAN",
    "MAXFLOAT",
    "HUGE_VAL",
    "HUGE_VALF",
    "FLT_MAX",
    "DBL_MAX",
    "M_PI",
    "M_PI_F",
    "sqrt",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "cbrt",
    "fabs",
    "fmin",
    "fmax",
    "min",
    "max",
    "pow",
    "pown",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fma",
    "hypot",
    "copysign",
    "fmod",
    "isnan",
    "isfinite",
    "isinf",
    "abs",
    "select",
    "barrier",
    "get_global_id",
    "get_local_id",
    "get_group_id",
    "get_global_size",
    "get_local_size",
    "get_num_groups",
    "CLK_LOCAL_MEM_FENCE",
    "CLK_GLOBAL_MEM_FENCE",
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_xchg",
    "atomic_cmpxchg",
    "convert_int_sat",
    "convert_uint_sat",
    "convert_long_sat",
    "convert_ulong_sat",
    "main",
];

/// OpenCL C builtin functions (1.2) that a kernel or variable name must not shadow.
const BUILTINS: &[&str] = &[
    "acosh",
    "acospi",
    "asinh",
    "asinpi",
    "atanh",
    "atanpi",
    "atan2pi",
    "cospi",
    "erfc",
    "erf",
    "exp10",
    "expm1",
    "fdim",
    "fract",
    "frexp",
    "ilogb",
    "ldexp",
    "lgamma",
    "lgamma_r",
    "log1p",
    "logb",
    "mad",
    "maxmag",
    "minmag",
    "modf",
    "nan",
    "nextafter",
    "powr",
    "remainder",
    "remquo",
    "rint",
    "rootn",
    "rsqrt",
    "sincos",
    "sinpi",
    "tanpi",
    "tgamma",
    "abs_diff",
    "add_sat",
    "hadd",
    "rhadd",
    "clamp",
    "clz",
    "ctz",
    "mad_hi",
    "mad_sat",
    "mul_hi",
    "rotate",
    "sub_sat",
    "upsample",
    "popcount",
    "mad24",
    "mul24",
    "degrees",
    "mix",
    "radians",
    "step",
    "smoothstep",
    "sign",
    "cross",
    "dot",
    "distance",
    "length",
    "normalize",
    "fast_distance",
    "fast_length",
    "fast_normalize",
    "isequal",
    "isnotequal",
    "isgreater",
    "isgreaterequal",
    "isless",
    "islessequal",
    "islessgreater",
    "isnormal",
    "isordered",
    "isunordered",
    "signbit",
    "any",
    "all",
    "bitselect",
    "mem_fence",
    "read_mem_fence",
    "write_mem_fence",
    "async_work_group_copy",
    "async_work_group_strided_copy",
    "wait_group_events",
    "prefetch",
    "shuffle",
    "shuffle2",
    "printf",
    "char",
    "short",
    "image1d_t",
    "image2d_t",
    "image3d_t",
    "image1d_array_t",
    "image2d_array_t",
    "image1d_buffer_t",
    "typedef",
    "complex",
    "imaginary",
    "cl_khr_fp64",
];

/// Prefixes of OpenCL C builtins and of the names lazycl generates.
const RESERVED_PREFIXES: &[&str] = &[
    "native_",
    "half_",
    "vload",
    "vstore",
    "atomic_",
    "atom_",
    "get_",
    "convert_",
    "as_",
    "read_image",
    "write_image",
    "__",
    "lzc_",
    "CLK_",
    "CL_",
    "FLT_",
    "DBL_",
    "M_",
];

/// Whether `name` cannot be an OpenCL C identifier of user code: a keyword, type, builtin
/// function or macro (vector types like `float4` included).
pub fn is_reserved(name: &str) -> bool {
    if RESERVED.contains(&name)
        || BUILTINS.contains(&name)
        || RESERVED_PREFIXES.iter().any(|p| name.starts_with(p))
    {
        return true;
    }
    let scalar_types = [
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half", "bool",
    ];
    scalar_types.iter().any(|t| {
        name.strip_prefix(t)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Work-item intrinsics: Rust name → OpenCL builtin.
pub(super) const WORK_ITEM: &[(&str, &str)] = &[
    ("global_id", "get_global_id"),
    ("local_id", "get_local_id"),
    ("group_id", "get_group_id"),
    ("global_size", "get_global_size"),
    ("local_size", "get_local_size"),
    ("num_groups", "get_num_groups"),
];

/// Float methods with an OpenCL builtin: (Rust name, OpenCL name, number of arguments
/// besides the receiver).
pub(super) const FLOAT_METHODS: &[(&str, &str, usize)] = &[
    ("sqrt", "sqrt", 0),
    ("cbrt", "cbrt", 0),
    ("exp", "exp", 0),
    ("exp2", "exp2", 0),
    ("ln", "log", 0),
    ("log2", "log2", 0),
    ("log10", "log10", 0),
    ("sin", "sin", 0),
    ("cos", "cos", 0),
    ("tan", "tan", 0),
    ("sinh", "sinh", 0),
    ("cosh", "cosh", 0),
    ("tanh", "tanh", 0),
    ("asin", "asin", 0),
    ("acos", "acos", 0),
    ("atan", "atan", 0),
    ("asinh", "asinh", 0),
    ("acosh", "acosh", 0),
    ("atanh", "atanh", 0),
    ("ln_1p", "log1p", 0),
    ("exp_m1", "expm1", 0),
    ("erf", "erf", 0),
    ("erfc", "erfc", 0),
    ("lgamma", "lgamma", 0),
    ("tgamma", "tgamma", 0),
    ("abs", "fabs", 0),
    ("floor", "floor", 0),
    ("ceil", "ceil", 0),
    ("round", "round", 0),
    ("trunc", "trunc", 0),
    ("powf", "pow", 1),
    ("atan2", "atan2", 1),
    ("hypot", "hypot", 1),
    ("min", "fmin", 1),
    ("max", "fmax", 1),
    ("copysign", "copysign", 1),
    ("mul_add", "fma", 2),
];

pub(super) const FLOAT_METHOD_LIST: &str = "sqrt cbrt exp exp2 exp_m1 ln ln_1p log2 log10 sin cos tan sinh cosh tanh asin acos atan \
     asinh acosh atanh erf erfc lgamma tgamma abs \
     floor ceil round trunc powf powi atan2 hypot min max copysign mul_add clamp signum is_nan is_finite is_infinite";
pub(super) const INT_METHOD_LIST: &str =
    "min max clamp abs (signed) pow wrapping_add wrapping_sub wrapping_mul wrapping_neg";

/// The methods of complex numbers the subset has, for messages.
pub const COMPLEX_METHOD_LIST: &str =
    "conj norm norm_sqr arg exp ln sqrt powf powc inv scale unscale is_nan is_finite is_infinite";

/// Whether `name` is a method of some scalar type (float, integer or complex), e.g.
/// `sqrt`, `max`, `wrapping_add`, `conj`: what an `expr!` operand, one element, can call.
pub fn is_scalar_method(name: &str) -> bool {
    FLOAT_METHOD_LIST
        .split_whitespace()
        .chain(INT_METHOD_LIST.split_whitespace())
        .chain(COMPLEX_METHOD_LIST.split_whitespace())
        .any(|m| m == name)
}

/// Names of the functions the subset provides (not device functions).
pub fn is_intrinsic(name: &str) -> bool {
    WORK_ITEM.iter().any(|(n, _)| *n == name)
        || name == "barrier"
        || AtomicOp::from_name(name).is_some()
        || Collective::from_name(name).is_some()
}

/// All intrinsic names, for suggestions.
fn intrinsic_names() -> impl Iterator<Item = &'static str> {
    WORK_ITEM
        .iter()
        .map(|(n, _)| *n)
        .chain(["barrier"])
        .chain(AtomicOp::ALL.iter().map(|op| op.c()))
        .chain(Collective::ALL.iter().map(|c| c.name()))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A hint for a call of an unknown function that is surely not a device function (a
/// misspelled intrinsic, a math function written C-style, an OpenCL builtin).
pub fn suggest(name: &str) -> Option<String> {
    let math = FLOAT_METHODS
        .iter()
        .map(|(r, _, _)| *r)
        .chain(["pow", "powi", "log", "fabs", "fmin", "fmax", "fma"]);
    for m in math {
        if m == name {
            return Some(format!(
                "math functions are methods in Rust: write `x.{}(...)`",
                if name == "log" { "ln" } else { name }
            ));
        }
    }
    if let Some(rest) = name.strip_prefix("get_") {
        if let Some((r, _)) = WORK_ITEM.iter().find(|(r, _)| *r == rest) {
            return Some(format!("the intrinsic is called `{r}(d)`"));
        }
    }
    match name {
        "atomic_inc" | "atomic_dec" => {
            return Some("use `atomic_add(&mut a[i], 1)` / `atomic_sub(&mut a[i], 1)`".into());
        }
        "mem_fence" | "local_barrier" | "work_group_barrier" | "syncthreads" | "__syncthreads" => {
            return Some("use `barrier()` (it fences local and global memory)".into());
        }
        "atomic_compare_exchange" => return Some("use `atomic_cmpxchg(&mut a[i], expected, new)`".into()),
        _ => {}
    }
    let best = intrinsic_names().map(|n| (edit_distance(name, n), n)).min()?;
    (best.0 <= 2 && best.0 < name.len()).then(|| format!("did you mean `{}`?", best.1))
}
