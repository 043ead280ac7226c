//! Signatures: syn types and function headers → the IR's parameter types, with errors
//! that say what is supported.

use crate::diag::{Errors, Spanned};
use crate::ir::{Param, ParamTy, Scalar, StructDef};

pub const SCALARS: &str =
    "f32, f64, i32, u32, i64, u64, i8, u8, i16, u16, f16, bf16, c32, c64, bool or usize";
pub const ELEMENTS: &str = "f32, f64, i32, u32, i64, u64, i8, u8, i16, u16, f16, bf16, c32, c64 or bool";

/// A scalar type (`f32`, `usize`, ...).
pub fn scalar_type(ty: &syn::Type) -> syn::Result<Scalar> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            if let Some(s) = scalar_path(&p.path) {
                return Ok(s);
            }
            Err(ty.span().error( format!("unsupported type; kernels support the scalar types {SCALARS}")))
        }
        syn::Type::Paren(p) => scalar_type(&p.elem),
        // (A type parameter replaced in an instance: `generics`.)
        syn::Type::Group(g) => scalar_type(&g.elem),
        syn::Type::Reference(_) => Err(ty.span().error(
            format!("references are only supported as kernel parameters (`&[T]`, `&mut [T]`); use a scalar type ({SCALARS})"),
        )),
        _ => Err(ty.span().error( format!("unsupported type; kernels support the scalar types {SCALARS}"))),
    }
}

/// The scalar type a path names: `f32`, a 16-bit float as `f16`, `half::f16` or
/// `lazycl::f16`, a complex type as `c32`, `Complex32`, `Complex<f32>`, `lazycl::c32` or
/// `num_complex::Complex32`.
fn scalar_path(path: &syn::Path) -> Option<Scalar> {
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let last = path.segments.last()?;
    if let Some(c) = complex_of_args(&names, &last.arguments) {
        return Some(c);
    }
    let name = match &names[..] {
        [one] => one,
        [krate, t] if (krate == "half" || krate == "lazycl") && (t == "f16" || t == "bf16") => t,
        [krate, t] if (krate == "num_complex" || krate == "lazycl") && is_complex_name(t) => t,
        _ => return None,
    };
    if path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    Scalar::from_rust(name)
}

/// Whether `name` is a name of a complex type, alone or with its part type
/// (`Complex<f32>`).
pub fn is_complex_name(name: &str) -> bool {
    Scalar::from_rust(name).is_some_and(Scalar::is_complex) || name == "Complex"
}

/// `Complex<f32>` / `num_complex::Complex<f64>`: the complex type of those parts.
fn complex_of_args(names: &[String], args: &syn::PathArguments) -> Option<Scalar> {
    if names.last()? != "Complex" || names.len() > 2 || (names.len() == 2 && names[0] != "num_complex") {
        return None;
    }
    complex_type_args(args)
}

/// The complex type whose parts are the one generic argument `<f32>` / `<f64>`.
pub fn complex_type_args(args: &syn::PathArguments) -> Option<Scalar> {
    let syn::PathArguments::AngleBracketed(a) = args else {
        return None;
    };
    match a.args.first()? {
        syn::GenericArgument::Type(t) if a.args.len() == 1 => match scalar_type(t) {
            Ok(s @ (Scalar::F32 | Scalar::F64)) => s.complex(),
            _ => None,
        },
        _ => None,
    }
}

/// A cast's target type as written names a 16-bit float (`as f16`), which Rust does not
/// have (`half::f16` is no primitive); a type parameter replaced by one (`as T`, in an
/// instance) is not this.
pub fn spelled_narrow_float(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => scalar_path(&p.path).is_some_and(Scalar::is_narrow_float),
        syn::Type::Paren(p) => spelled_narrow_float(&p.elem),
        _ => false,
    }
}

/// A parameter type: a scalar by value, `&[T]` or `&mut [T]`.
pub fn param_type(ty: &syn::Type) -> syn::Result<ParamTy> {
    let unsupported = || {
        ty.span().error(format!(
            "unsupported parameter type; kernel parameters are scalars ({SCALARS}) passed by value, \
                 slices `&[T]` / `&mut [T]` of {ELEMENTS}, tuples of f32, f64, i32, u32, i64 and u64, \
                 or `#[derive(KernelStruct)]` structs"
        ))
    };
    match ty {
        syn::Type::Reference(r) => {
            let mutable = r.mutability.is_some();
            match &*r.elem {
                syn::Type::Slice(s) => {
                    let elem = scalar_type(&s.elem).map_err(|_| unsupported())?;
                    if elem == Scalar::Usize {
                        return Err(s.elem.span().error(
                            "slices of `usize` are not supported (the device's size type may differ from the host's); use `u64` or `u32`",
                        ));
                    }
                    Ok(ParamTy::Slice { elem, mutable })
                }
                syn::Type::Reference(_) => Err(ty
                    .span()
                    .error("a reference to a reference is not supported; use `&[T]` or `&mut [T]`")),
                syn::Type::Array(_) => Err(ty.span().error(
                    "fixed-size array parameters are not supported; use a slice `&[T]` or `&mut [T]`",
                )),
                syn::Type::Paren(p) => param_type(&syn::Type::Reference(syn::TypeReference {
                    elem: p.elem.clone(),
                    ..r.clone()
                })),
                other if scalar_type(other).is_ok() => Err(ty.span().error(
                    "scalars are passed by value in kernels: write `x: T` instead of `x: &T` (a `&mut T` \
                     output can be a one-element `&mut [T]`)",
                )),
                _ => Err(unsupported()),
            }
        }
        syn::Type::Paren(p) => param_type(&p.elem),
        _ => scalar_type(ty).map(ParamTy::Scalar).map_err(|_| unsupported()),
    }
}

/// Which attribute is being expanded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FnKind {
    Kernel,
    DeviceFn,
}

impl FnKind {
    pub fn attr(self) -> &'static str {
        match self {
            FnKind::Kernel => "#[kernel]",
            FnKind::DeviceFn => "#[device_fn]",
        }
    }
}

/// The parameters and return type of a kernel or device function.
pub struct Signature {
    pub params: Vec<Param>,
    pub ret: Option<Scalar>,
    /// Parameters whose type was rejected (uses of them report nothing more).
    pub rejected: Vec<syn::Ident>,
}

/// Checks a function header; errors are collected, good parameters kept.
/// The name of a type that may be a `KernelStruct`: a plain path of one name in upper
/// camel case, as Rust names structs (`u8`, `char` and other Rust types the subset does
/// not have are not, nor are the standard library's `String`, `Vec`, ...).
pub fn struct_type_name(ty: &syn::Type) -> Option<&syn::Ident> {
    const STD: [&str; 7] = ["String", "Vec", "Box", "Option", "Result", "Self", "Array"];
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident().filter(|id| {
            let name = id.to_string();
            name.starts_with(|c: char| c.is_ascii_uppercase())
                && !STD.contains(&name.as_str())
                && !is_complex_name(&name)
        }),
        _ => None,
    }
}

/// The definition of a tuple parameter's type (`(f32, u32)`), where every element is a
/// field type.
pub fn tuple_def(ty: &syn::Type) -> Option<StructDef> {
    let syn::Type::Tuple(t) = ty else {
        return None;
    };
    let elems: Option<Vec<Scalar>> = t.elems.iter().map(|e| scalar_type(e).ok()).collect();
    StructDef::tuple(&elems?)
}

/// Checks a function header; errors are collected, good parameters kept. `structs`: the
/// kernel structs its parameters may take.
pub fn signature(f: &syn::ItemFn, kind: FnKind, structs: &[StructDef], errors: &mut Errors) -> Signature {
    check_header(&f.sig, kind, errors);
    // (Generic parameters and `where` clauses: `generics::type_params`; a function
    // translated here has none, its instances having had them substituted.)
    let mut params = Vec::new();
    let mut rejected = Vec::new();
    for input in &f.sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => errors.add(
                r.span(),
                format!(
                    "{} functions cannot take `self`; they are free functions",
                    kind.attr()
                ),
            ),
            syn::FnArg::Typed(pt) => match param(pt, kind, structs, errors) {
                ParamCheck::Accepted(p) => params.push(p),
                ParamCheck::Rejected(name) => rejected.push(name),
                ParamCheck::Unnamed => {}
            },
        }
    }
    Signature {
        params,
        ret: return_type(&f.sig.output, kind, errors),
        rejected,
    }
}

/// The qualifiers a translated function cannot have: `const`, `async`, an ABI, `...`.
fn check_header(sig: &syn::Signature, kind: FnKind, errors: &mut Errors) {
    let what = kind.attr();
    if let Some(c) = &sig.constness {
        errors.add(c.span(), format!("{what} functions cannot be `const`"));
    }
    if let Some(a) = &sig.asyncness {
        errors.add(a.span(), format!("{what} functions cannot be `async`"));
    }
    if let Some(a) = &sig.abi {
        errors.add(a.span(), format!("{what} functions cannot have an ABI"));
    }
    if let Some(v) = &sig.variadic {
        errors.add(v.span(), format!("{what} functions cannot be variadic"));
    }
}

/// What became of a parameter.
enum ParamCheck {
    Accepted(Param),
    /// Its type was rejected (uses of its name report nothing more).
    Rejected(syn::Ident),
    /// Its pattern is no plain name.
    Unnamed,
}

/// One parameter: a plain name, of a type the function kind takes.
fn param(pt: &syn::PatType, kind: FnKind, structs: &[StructDef], errors: &mut Errors) -> ParamCheck {
    let (name, mutable) = match &*pt.pat {
        syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
            (pi.ident.clone(), pi.mutability.is_some())
        }
        other => {
            errors.add(
                other.span(),
                "unsupported parameter pattern; only plain names (`x: f32`, `mut x: f32`) are supported",
            );
            return ParamCheck::Unnamed;
        }
    };
    let by_value = struct_type_name(&pt.ty)
        .map(|id| id.to_string())
        .or_else(|| tuple_def(&pt.ty).map(|d| d.name))
        .and_then(|name| structs.iter().position(|s| name == s.name));
    if let (Some(k), FnKind::DeviceFn) = (by_value, kind) {
        errors.add(
            pt.ty.span(),
            format!(
                "device functions take scalars and slices; pass the fields of `{}` you need",
                structs[k].name
            ),
        );
        return ParamCheck::Rejected(name);
    }
    match by_value
        .map(ParamTy::Struct)
        .ok_or(())
        .or_else(|_| param_type(&pt.ty))
    {
        Ok(ty) => ParamCheck::Accepted(Param { name, ty, mutable }),
        Err(e) => {
            errors.push(e);
            ParamCheck::Rejected(name)
        }
    }
}

/// The return type: nothing for a kernel, a scalar or nothing for a device function.
fn return_type(output: &syn::ReturnType, kind: FnKind, errors: &mut Errors) -> Option<Scalar> {
    let syn::ReturnType::Type(_, ty) = output else {
        return None;
    };
    let unit = matches!(&**ty, syn::Type::Tuple(t) if t.elems.is_empty());
    match kind {
        FnKind::Kernel => {
            if !unit {
                errors.add(
                    ty.span(),
                    "kernels cannot return a value; write results into a `&mut [T]` parameter",
                );
            }
            None
        }
        FnKind::DeviceFn if unit => None,
        FnKind::DeviceFn => match scalar_type(ty) {
            Ok(s) => Some(s),
            Err(_) => {
                errors.add(
                    ty.span(),
                    format!("device functions return a scalar ({SCALARS}) or nothing"),
                );
                None
            }
        },
    }
}
