//! The variants of an `expr!`: the macro cannot see the Rust types of the operands, so
//! it lowers the expression once with an unknown type per operand to find which operands
//! must share an element type (classes) and what each class may be, then lowers it with
//! the `#[kernel]` translator (`lower` + `emit`) once per assignment of element types to
//! the classes. Each valid assignment is a variant with its own exact, type-specific
//! OpenCL C (wrapping, division guards, ...).

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::derivatives::{adjoints, Adjoint};
use super::input::Input;
use super::lowering::{lower, Lowered};
use crate::diag::Spanned;
use crate::emit::{self, FP64_PRAGMA};
use crate::generics::substitute_expr;
use crate::ir::{DevSig, Infer, Scalar, Ty, VarKind};
use crate::lower::Lowerer;
use crate::resolve::callee_sources;
use crate::signature::FnKind;

/// The element types an operand can have, in the order variants are tried.
const ELEMENTS: [Scalar; 15] = Scalar::ELEMENTS;

/// Assignments of element types tried at most (beyond: a compile error).
const MAX_VARIANTS: usize = 4096;

/// One lowering of the expression with every operand's element type fixed.
#[derive(Debug)]
pub(super) struct Variant {
    /// The operands' element types, then the type parameters'.
    pub types: Vec<Scalar>,
    pub result: Scalar,
    /// The OpenCL C expression, with `$i` for operand `i`.
    pub text: String,
    /// The definitions of the helper functions it calls.
    pub helpers: String,
    pub uses_f64: bool,
    /// The device functions (instances) it calls.
    pub callees: Vec<DevSig>,
    /// The derivative with respect to each operand, and the operands' names.
    pub adjoints: Vec<(String, Adjoint)>,
}

impl Variant {
    /// The variant's `ExprTemplate`; `rust`: the expression's Rust text (for messages).
    pub(super) fn template(&self, rust: &str) -> TokenStream {
        let p = quote! { ::lazycl::__private };
        // The sources of the device functions (instances) this variant calls.
        let callee_sources = callee_sources(self.callees.iter());
        let text = &self.text;
        let own = format!("{}{}", if self.uses_f64 { FP64_PRAGMA } else { "" }, self.helpers);
        let derivatives = self.adjoints.iter().map(|(name, a)| a.tokens(rust, name));
        quote! {
            #p::ExprTemplate {
                text: #text,
                helpers: ::core::concat!(#(#callee_sources,)* #own),
                rust: #rust,
                derivatives: &[#(#derivatives),*],
            }
        }
    }
}

/// The classes of operands that must share an element type, each with the element types
/// it may have, found by lowering once with an unknown type per operand.
fn classes(input: &Input, operands: &[Ident], sigs: &[DevSig]) -> Vec<(Vec<usize>, Vec<Scalar>)> {
    if let Some(params) = &input.params {
        return params
            .iter()
            .enumerate()
            .map(|(i, (_, s))| (vec![i], vec![*s]))
            .collect();
    }
    let mut infer = Infer::default();
    let vars: Vec<Ty> = operands.iter().map(|_| infer.fresh(VarKind::Any)).collect();
    let mut low = Lowerer::new(FnKind::DeviceFn, None, sigs);
    low.infer = infer;
    for (i, (name, ty)) in operands.iter().zip(&vars).enumerate() {
        low.declare_operand(&name.to_string(), *ty, format!("${i}"));
    }
    let _ = low.expr(&input.body);
    let mut out: Vec<(Ty, Vec<usize>, Vec<Scalar>)> = Vec::new();
    for (i, v) in vars.iter().enumerate() {
        let root = low.infer.shallow(*v);
        if let Some(c) = out
            .iter_mut()
            .find(|c| c.0 == root && !matches!(root, Ty::Unit | Ty::Never))
        {
            c.1.push(i);
            continue;
        }
        let domain: Vec<Scalar> = match root {
            Ty::S(s) => vec![s],
            Ty::Var(_) => match low.infer.kind(root) {
                // (A `{float}` literal meets a float, or a complex number it scales.)
                Some(VarKind::Float) => Scalar::FLOATS_AND_COMPLEX.to_vec(),
                Some(VarKind::Int) => Scalar::INTEGERS.to_vec(),
                Some(VarKind::Complex) => vec![Scalar::C32, Scalar::C64],
                _ => ELEMENTS.to_vec(),
            },
            _ => ELEMENTS.to_vec(),
        };
        out.push((root, vec![i], domain));
    }
    out.into_iter().map(|(_, m, d)| (m, d)).collect()
}

/// Every valid variant, or the errors of the most plausible invalid one (the one with
/// the fewest errors). `names`: the type parameters the expression names; each takes
/// every element type in turn (an assignment whose lowering fails is no variant).
pub(super) fn variants(
    input: &Input,
    operands: &[Ident],
    names: &[Ident],
    sigs: &[DevSig],
) -> Result<Vec<Variant>, syn::Error> {
    let mut classes = classes(input, operands, sigs);
    for k in 0..names.len() {
        classes.push((vec![operands.len() + k], ELEMENTS.to_vec()));
    }
    let total = combinations(input, operands, &classes)?;
    let mut valid = Vec::new();
    // The errors of the most plausible invalid assignment: the one with the fewest, of
    // real types where as few (a complex type is the rarer intent).
    let mut best: Option<((usize, bool), syn::Error)> = None;
    let mut pick = vec![0usize; classes.len()];
    for _ in 0..total {
        let types = assignment(&classes, &pick, operands.len() + names.len());
        let complex = types.iter().any(|t| t.is_complex());
        match variant(input, operands, names, types, sigs) {
            Outcome::Valid(v) => valid.push(v),
            Outcome::Invalid(err) => {
                let n = (err.clone().into_iter().count(), complex);
                if best.as_ref().is_none_or(|(b, _)| n < *b) {
                    best = Some((n, err));
                }
            }
            Outcome::Unwritable(err) => {
                if best.is_none() {
                    best = Some(((1, complex), err));
                }
            }
            Outcome::NoValue => {}
        }
        next_assignment(&mut pick, &classes);
    }
    // The variants of real types first, in the order they are tried, then those with a
    // complex type: the real ones keep the numbers they had before complex types were
    // element types.
    valid.sort_by_key(|v| v.types.iter().any(|t| t.is_complex()));
    if valid.is_empty() {
        return Err(match best {
            Some((_, e)) => e,
            None => input
                .body
                .span()
                .error("expr! found no element types for which this expression is valid"),
        });
    }
    Ok(valid)
}

/// The number of assignments of element types to the classes, or an error when there
/// are more than `MAX_VARIANTS`.
fn combinations(
    input: &Input,
    operands: &[Ident],
    classes: &[(Vec<usize>, Vec<Scalar>)],
) -> Result<usize, syn::Error> {
    let total = classes
        .iter()
        .try_fold(1usize, |acc, (_, d)| acc.checked_mul(d.len().max(1)))
        .unwrap_or(usize::MAX);
    if total <= MAX_VARIANTS {
        return Ok(total);
    }
    let names: Vec<String> = classes
        .iter()
        .filter_map(|(m, _)| m.first().map(|&i| format!("`{}`", operands[i])))
        .collect();
    Err(input.body.span().error(format!(
        "expr! cannot work out the element types: the operands {} are independent of each other \
         ({total} combinations); use the closure form with typed parameters: `expr!(|x: f32, ..| ...)`",
        names.join(", ")
    )))
}

/// What one assignment of element types gives.
enum Outcome {
    Valid(Variant),
    /// The lowering's errors.
    Invalid(syn::Error),
    /// Lowered, but not writable as one OpenCL C expression.
    Unwritable(syn::Error),
    /// No errors and no value.
    NoValue,
}

/// The expression lowered and emitted for the slots' element types `types`.
fn variant(
    input: &Input,
    operands: &[Ident],
    names: &[Ident],
    types: Vec<Scalar>,
    sigs: &[DevSig],
) -> Outcome {
    let body = variant_body(input, names, &types[operands.len()..]);
    let (
        Lowered {
            e,
            infer,
            errors,
            callees,
        },
        result,
    ) = lower_variant(input, &body, operands, &types, sigs);
    match (errors.into_error(), result) {
        (None, Some(result)) => match emit::expression(&e, &infer) {
            Ok(t) => Outcome::Valid(Variant {
                adjoints: operands
                    .iter()
                    .map(|o| o.to_string())
                    .zip(adjoints(input, &body, operands, &types, result, sigs))
                    .collect(),
                types,
                result,
                text: t.text,
                helpers: t.helpers,
                uses_f64: t.uses_f64,
                callees,
            }),
            Err(m) => Outcome::Unwritable(e.span.error(m)),
        },
        (Some(err), _) => Outcome::Invalid(err),
        (None, None) => Outcome::NoValue,
    }
}

/// The next assignment (the first class varies fastest).
fn next_assignment(pick: &mut [usize], classes: &[(Vec<usize>, Vec<Scalar>)]) {
    for (k, (_, domain)) in pick.iter_mut().zip(classes) {
        *k += 1;
        if *k < domain.len() {
            break;
        }
        *k = 0;
    }
}

/// The operands' element types when each class takes the type `pick` chooses.
fn assignment(classes: &[(Vec<usize>, Vec<Scalar>)], pick: &[usize], n: usize) -> Vec<Scalar> {
    let mut types = vec![Scalar::F32; n];
    for ((members, domain), &k) in classes.iter().zip(pick) {
        for &m in members {
            if let Some(&s) = domain.get(k) {
                types[m] = s;
            }
        }
    }
    types
}

/// The input's body with the type parameters it names replaced by `named`.
fn variant_body(input: &Input, names: &[Ident], named: &[Scalar]) -> syn::Expr {
    match names.is_empty() {
        true => input.body.clone(),
        false => substitute_expr(&input.body, names, named),
    }
}

/// Lowers the body for the operands' element types `types`: the IR, the inference
/// table, the result type and the errors, with those of `expr!` itself (a value is an
/// array element: not `usize`, not unit).
fn lower_variant(
    input: &Input,
    body: &syn::Expr,
    operands: &[Ident],
    types: &[Scalar],
    sigs: &[DevSig],
) -> (Lowered, Option<Scalar>) {
    let own = &types[..operands.len()];
    let tys: Vec<Ty> = own.iter().map(|s| Ty::S(*s)).collect();
    let mut lowered = lower(input, body, operands, &tys, sigs);
    let Lowered { e, infer, errors, .. } = &mut lowered;
    let result = infer.scalar(e.ty);
    if errors.is_empty() {
        match result {
            Some(Scalar::Usize) => errors.add(
                e.span,
                "the value of an expr! is an array element; `usize` is not an element type: cast it \
                 (`as u64`)",
            ),
            None => errors.add(e.span, "this expression has no value; expr! needs a value"),
            Some(_) => {}
        }
    }
    if own.contains(&Scalar::Usize) && errors.is_empty() {
        errors.add(
            e.span,
            "an operand would have type `usize`, which is not an array element type; use `u64`",
        );
    }
    (lowered, result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Errors;
    use crate::expr::input::read;
    use proc_macro2::TokenStream;

    /// The variants of an `expr!` input, or its error messages.
    fn variants_of(src: &str) -> Result<Vec<Variant>, Vec<String>> {
        let mut errors = Errors::default();
        let ts: TokenStream = src.parse().map_err(|e| vec![format!("{e}")])?;
        let (input, checked) = read(ts, &mut errors).ok_or_else(|| vec!["no parse".to_string()])?;
        if let Some(e) = errors.into_error() {
            return Err(e.into_iter().map(|e| e.to_string()).collect());
        }
        variants(&input, &checked.operands, &checked.types, &[])
            .map_err(|e| e.into_iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn a_literal_takes_its_operands_type() {
        let v = variants_of("a * x + 2.0").unwrap();
        let types: Vec<_> = v.iter().map(|v| (v.types.clone(), v.result)).collect();
        assert_eq!(
            types,
            [
                (vec![Scalar::F32, Scalar::F32], Scalar::F32),
                (vec![Scalar::F64, Scalar::F64], Scalar::F64),
                (vec![Scalar::F16, Scalar::F16], Scalar::F16),
                (vec![Scalar::BF16, Scalar::BF16], Scalar::BF16),
                (vec![Scalar::C32, Scalar::C32], Scalar::C32),
                (vec![Scalar::C64, Scalar::C64], Scalar::C64)
            ]
        );
        // A `{float}` literal beside a complex number is a real of its parts' type.
        assert_eq!(v[4].text, "lzc_caddr_float2(lzc_cmul_float2($0, $1), 2.0f)");
        assert!(v[5].uses_f64 && v[5].helpers.contains("lzc_cmul_double2"));
        assert_eq!(v[0].text, "(($0 * $1) + 2.0f)");
        assert!(v[1].uses_f64 && !v[0].uses_f64);
        // A 16-bit float's literal is its nearest value of the type.
        let v = variants_of("x * 0.1").unwrap();
        assert_eq!(v[2].text, "($0 * 0.099975586f)");
        assert_eq!(v[3].text, "($0 * 0.100097656f)");
    }

    #[test]
    fn independent_operands_and_fixed_results() {
        let v = variants_of("(x as f32) < y").unwrap();
        // `y` is f32; `x` is anything that casts to f32 (not bool).
        assert_eq!(v.len(), 12);
        assert!(v
            .iter()
            .all(|v| v.types[1] == Scalar::F32 && v.result == Scalar::Bool));
        let v = variants_of("x.sqrt() + y").unwrap();
        // x and y share a float or complex type, or one is complex and the other a real
        // of its parts' type (`x.sqrt()` of an operand of no known type is no clue).
        assert_eq!(
            v.len(),
            10,
            "{:?}",
            v.iter().map(|v| &v.types).collect::<Vec<_>>()
        );
        assert!(v.iter().any(|v| v.types == [Scalar::C32, Scalar::F32]));
        assert!(v.iter().any(|v| v.types == [Scalar::F64, Scalar::C64]));
    }

    #[test]
    fn narrow_integers_wrap_in_their_width() {
        let v = variants_of("a * 2 + b").unwrap();
        let u8v = v.iter().find(|v| v.types[0] == Scalar::U8).unwrap();
        assert_eq!(
            u8v.text,
            "((uchar)((uchar)(((uchar)((uchar)($0) * (uchar)(((uchar)2))))) + (uchar)($1)))"
        );
        let i8v = v.iter().find(|v| v.types[0] == Scalar::I8).unwrap();
        assert!(i8v.text.starts_with("(as_char((uchar)"), "{}", i8v.text);
        // Saturating casts from floats, the 16-bit ones included.
        let v = variants_of("x as u8").unwrap();
        let f16v = v.iter().find(|v| v.types[0] == Scalar::F16).unwrap();
        assert_eq!(f16v.text, "lzc_uchar_from_float($0)");
        assert_eq!(v.iter().filter(|v| v.types[0].is_float()).count(), 4);
    }

    #[test]
    fn lets_are_inlined_and_branches_are_selects() {
        let v = variants_of("{ let t = x * 2.0; if t > 1.0 { t } else { -t } }").unwrap();
        assert_eq!(
            v[0].text,
            "((($0 * 2.0f)) > 1.0f ? (($0 * 2.0f)) : (-(($0 * 2.0f))))"
        );
    }

    #[test]
    fn integer_semantics_come_with_their_helpers() {
        let v = variants_of("x / y").unwrap();
        let i32v = v.iter().find(|v| v.types[0] == Scalar::I32).unwrap();
        assert!(i32v.text.contains("lzc_div_int($0, $1)"), "{}", i32v.text);
        assert!(i32v.helpers.contains("#ifndef LZC_HELPER_lzc_div_int"));
    }

    #[test]
    fn errors_say_what_is_supported() {
        let e = variants_of("(x * 2.0).frobnicate()").unwrap_err();
        assert!(e[0].contains("unsupported method `frobnicate` on `f32`"), "{e:?}");
        // On an operand: the operand's method, to call before the expression.
        let e = variants_of("x / x.sum()").unwrap_err();
        assert!(e[0].contains("`let r = x.sum();`"), "{e:?}");
        let e = variants_of("m.w * x").unwrap_err();
        assert!(e[0].contains("`let w = &m.w;`"), "{e:?}");
        let e = variants_of("|x: f32| x * a").unwrap_err();
        assert!(e[0].contains("cannot capture `a`"), "{e:?}");
        let e = variants_of("{ x += 1.0; x }").unwrap_err();
        assert!(e[0].contains("assignments are not supported"), "{e:?}");
        let e = variants_of("1.0 + 2.0").unwrap_err();
        assert!(e[0].contains("at least one array operand"), "{e:?}");
    }
}
