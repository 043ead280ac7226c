//! Generic `#[kernel]`s: their type parameters, the element types each admits (its bound
//! — `Float`, `Integer`, `Signed`, `Numeric`, `ComplexFloat`, `Inexact`, `Arithmetic`,
//! `Element` — or the attribute's
//! `types(..)` list), and their *instances*: one copy of the function per combination of
//! types, with each parameter replaced by its type wherever the function names it
//! (`x: T`, `&[T]`, `as T`, `T::EPSILON`), so that the rest of the pipeline translates
//! ordinary functions. The OpenCL C of every instance is written at compile time.

mod instances;

use proc_macro2::{Ident, TokenStream};
use syn::parse::{Parse, ParseStream};

use crate::diag::{Errors, Spanned};
use crate::ir::Scalar;
use crate::signature::FnKind;
pub use instances::{instance_name, instance_note, instances, substitute_expr};

/// A type parameter and the element types it stands for, in this order.
pub struct TypeParam {
    pub ident: Ident,
    pub types: Vec<Scalar>,
    /// The types were listed (`types(..)`): every one is required, none optional.
    pub listed: bool,
}

impl TypeParam {
    /// Whether an instance with type `t` for this parameter may be left out when it does
    /// not translate: a type narrower than 32 bits, or a complex type, that a bound
    /// admitted beside others (`Element`, `Signed`, `Inexact`, `Arithmetic`: a body
    /// that orders its values has no complex instance).
    pub fn optional(&self, t: Scalar) -> bool {
        !self.listed
            && ((t.bits() < 32 && t != Scalar::Bool) || (t.elem().is_complex() && !self.complex_only()))
    }

    /// Whether every type the parameter admits is complex (`ComplexFloat`).
    fn complex_only(&self) -> bool {
        self.types.iter().all(|t| t.elem().is_complex())
    }
}

/// The element-type bounds and the types each admits, the 32- and 64-bit ones first.
/// The types narrower than 32 bits (`f16 bf16 i8 u8 i16 u16`) are *optional* instances
/// of a bound: one that does not translate (atomics on `f16`, say) is left out, and the
/// `Types` trait's message says why (see `function::optional`).
const BOUNDS: &[(&str, &[Scalar])] = {
    use Scalar::*;
    &[
        ("Float", &[F32, F64, F16, BF16]),
        ("Integer", &[I32, U32, I64, U64, I8, U8, I16, U16]),
        ("Signed", &[I32, I64, F32, F64, I8, I16, F16, BF16, C32, C64]),
        (
            "Numeric",
            &[I32, U32, I64, U64, F32, F64, I8, U8, I16, U16, F16, BF16],
        ),
        ("ComplexFloat", &[C32, C64]),
        ("Inexact", &[F32, F64, F16, BF16, C32, C64]),
        (
            "Arithmetic",
            &[
                I32, U32, I64, U64, F32, F64, I8, U8, I16, U16, F16, BF16, C32, C64,
            ],
        ),
        (
            "Element",
            &[
                Bool, I32, U32, I64, U64, F32, F64, I8, U8, I16, U16, F16, BF16, C32, C64,
            ],
        ),
    ]
};

/// Bounds that say nothing about the element type (every element type has them).
const MARKERS: &[&str] = &[
    "Copy",
    "Clone",
    "Send",
    "Sync",
    "Debug",
    "PartialEq",
    "PartialOrd",
    "Default",
];

/// The attribute's arguments: nothing, or `types(t, ...)`.
struct Attr {
    types: Option<Vec<Scalar>>,
}

impl Parse for Attr {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Ok(Attr { types: None });
        }
        let key: Ident = input.parse()?;
        if key != "types" {
            return Err(syn::Error::new(
                key.span(),
                "unknown argument; #[kernel] takes `types(..)`: the element types of its type parameter, e.g. `#[kernel(types(f32, f64))]`",
            ));
        }
        let content;
        syn::parenthesized!(content in input);
        let list = content.parse_terminated(Ident::parse, syn::Token![,])?;
        let mut types = Vec::new();
        for id in list {
            match Scalar::from_rust(&id.to_string()).filter(|s| *s != Scalar::Usize) {
                Some(s) if types.contains(&s) => {
                    return Err(syn::Error::new(id.span(), format!("`{id}` is listed twice")))
                }
                Some(s) => types.push(s),
                None => {
                    return Err(syn::Error::new(
                        id.span(),
                        "not an element type; `types(..)` lists f32, f64, i32, u32, i64, u64, i8, u8, i16, u16, f16, bf16, c32, c64 or bool",
                    ))
                }
            }
        }
        if types.is_empty() {
            return Err(syn::Error::new(
                key.span(),
                "`types(..)` lists at least one element type",
            ));
        }
        if !input.is_empty() {
            return Err(input.error("#[kernel] takes one argument, `types(..)`"));
        }
        Ok(Attr { types: Some(types) })
    }
}

/// What the attribute says of the element types.
pub enum Listed {
    /// Nothing: the bounds say.
    Nothing,
    /// `types(..)`.
    Types(Vec<Scalar>),
    /// An attribute with an error (already reported): no more errors about the types.
    Broken,
}

/// The element types an attribute lists; errors are collected.
pub fn listed_types(kind: FnKind, attr: TokenStream, errors: &mut Errors) -> Listed {
    if attr.is_empty() {
        return Listed::Nothing;
    }
    let what = kind.attr();
    match syn::parse2::<Attr>(attr)
        .map_err(|e| syn::Error::new(e.span(), e.to_string().replace("#[kernel]", what)))
    {
        Ok(Attr { types: Some(t) }) => Listed::Types(t),
        Ok(Attr { types: None }) => Listed::Nothing,
        Err(e) => {
            errors.push(e);
            Listed::Broken
        }
    }
}

/// The type parameters of `f` and their element types (from `listed`, the attribute's
/// list, for a function with one type parameter); lifetimes, const parameters and
/// `where` clauses are errors.
pub fn type_params(f: &syn::ItemFn, kind: FnKind, listed: &Listed, errors: &mut Errors) -> Vec<TypeParam> {
    let what = kind.attr();
    let generics = &f.sig.generics;
    // After an error in the attribute or a `where` clause, a parameter without a bound
    // says nothing new.
    let quiet = matches!(listed, Listed::Broken) || generics.where_clause.is_some();
    let listed = match listed {
        Listed::Types(t) => Some(&t[..]),
        Listed::Nothing | Listed::Broken => None,
    };
    if let Some(w) = &generics.where_clause {
        errors.add(
            w.span(),
            format!("`where` clauses are not supported on {what} functions; write the bound on the parameter: `T: Float`"),
        );
    }
    let mut params = Vec::new();
    for p in &generics.params {
        match p {
            syn::GenericParam::Type(t) => match admitted(t, listed, generics.params.len(), quiet, errors) {
                Some(types) => params.push(TypeParam {
                    ident: t.ident.clone(),
                    types,
                    listed: listed.is_some(),
                }),
                None => continue,
            },
            syn::GenericParam::Lifetime(l) => errors.add(
                l.span(),
                format!("lifetime parameters are not supported on {what} functions (a slice parameter needs none)"),
            ),
            // (`const_params` reads them.)
            syn::GenericParam::Const(_) => {}
        }
    }
    if listed.is_some() && generics.params.is_empty() {
        errors.add(
            f.sig.ident.span(),
            "`types(..)` lists the element types of a type parameter, and this function has none: add one (`fn name<T>(..)`) or remove `types(..)`",
        );
    }
    params
}

/// A `const N: usize` parameter of a kernel: a compile-time constant of its program,
/// `#define`d when the kernel is bound for a value (one program per value).
pub struct ConstParam {
    pub ident: Ident,
    pub ty: Scalar,
}

impl ConstParam {
    /// Its name in the OpenCL C source.
    pub fn cl_name(&self) -> String {
        format!("LZC_CONST_{}", self.ident)
    }
}

/// The const parameters of `f` (integers, on kernels), with errors for the others.
pub fn const_params(f: &syn::ItemFn, kind: FnKind, errors: &mut Errors) -> Vec<ConstParam> {
    let mut out = Vec::new();
    for p in &f.sig.generics.params {
        let syn::GenericParam::Const(c) = p else {
            continue;
        };
        if kind != FnKind::Kernel {
            errors.add(
                c.span(),
                "const generic parameters work on #[kernel] functions (one program per value); a \
                 #[device_fn] takes the value as a parameter",
            );
            continue;
        }
        if let Some(d) = &c.default {
            errors.add(
                d.span(),
                "default values are not supported on kernel const parameters",
            );
            continue;
        }
        let ty = match &c.ty {
            syn::Type::Path(tp) => tp
                .path
                .get_ident()
                .and_then(|i| Scalar::from_rust(&i.to_string())),
            _ => None,
        };
        match ty {
            Some(ty @ (Scalar::Usize | Scalar::U32 | Scalar::I32 | Scalar::U64 | Scalar::I64)) => {
                out.push(ConstParam {
                    ident: c.ident.clone(),
                    ty,
                })
            }
            _ => errors.add(
                c.ty.span(),
                "a kernel's const parameter is an integer: `usize`, `u32`, `i32`, `u64` or `i64`",
            ),
        }
    }
    out
}

/// The element types type parameter `t` admits, or `None` after an error.
fn admitted(
    t: &syn::TypeParam,
    listed: Option<&[Scalar]>,
    count: usize,
    quiet: bool,
    errors: &mut Errors,
) -> Option<Vec<Scalar>> {
    if let Some(d) = &t.default {
        errors.add(
            d.span(),
            "default types are not supported on kernel type parameters",
        );
        return None;
    }
    let Ok(types) = bound_types(t, errors) else {
        return None;
    };
    match (listed, types) {
        (Some(_), _) if count > 1 => {
            errors.add(
                t.span(),
                "`types(..)` lists the types of a function with one type parameter; bound each of several with `Float`, `Integer`, ...",
            );
            None
        }
        (Some(list), Some(admits)) => match list.iter().find(|s| !admits.contains(s)) {
            Some(bad) => {
                errors.add(
                    t.span(),
                    format!(
                        "`types(..)` lists `{}`, which the bound of `{}` does not admit",
                        bad.rust(),
                        t.ident
                    ),
                );
                None
            }
            None => Some(list.to_vec()),
        },
        (Some(list), None) => Some(list.to_vec()),
        (None, Some(admits)) if admits.is_empty() => {
            errors.add(
                t.span(),
                format!("no element type satisfies every bound of `{}`", t.ident),
            );
            None
        }
        (None, Some(admits)) => Some(admits),
        (None, None) if quiet => None,
        (None, None) => {
            errors.add(
                t.span(),
                format!(
                    "`{0}` needs a bound that says its element types: `{0}: Float` (f32, f64, f16, bf16), `Integer`, `Signed`, `Numeric`, \
                     `Element`, or list them: `#[kernel(types(f32, f64))]`",
                    t.ident
                ),
            );
            None
        }
    }
}

/// The element types the bounds of `t` admit (`Float`: f32 and f64; several bounds:
/// the types all admit), `None` without an element-type bound; `Err` after a bound that
/// says nothing of element types.
fn bound_types(t: &syn::TypeParam, errors: &mut Errors) -> Result<Option<Vec<Scalar>>, ()> {
    let mut types: Option<Vec<Scalar>> = None;
    for b in &t.bounds {
        let syn::TypeParamBound::Trait(tb) = b else {
            continue;
        };
        let Some(last) = tb.path.segments.last() else {
            continue;
        };
        let name = last.ident.to_string();
        if let Some((_, admits)) = BOUNDS.iter().find(|(n, _)| *n == name) {
            types = Some(match types {
                None => admits.to_vec(),
                Some(before) => before.into_iter().filter(|s| admits.contains(s)).collect(),
            });
        } else if !MARKERS.contains(&name.as_str()) {
            errors.add(
                tb.span(),
                format!(
                    "unsupported bound `{name}`; a kernel's type parameter is bounded by the element types it stands for: \
                     `Float` (f32, f64, f16, bf16), `Integer` (i32, u32, i64, u64, i8, u8, i16, u16), `Signed` (the signed integers and the floats), `Numeric` (all but bool) or `Element` (all)"
                ),
            );
            return Err(());
        }
    }
    Ok(types)
}
