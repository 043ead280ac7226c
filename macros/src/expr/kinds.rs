//! Whether the variants of an `expr!` can be one impl generic over the element kinds
//! ([`GenericImpl`]), so that the expression also compiles inside a function generic over
//! `T: Float` (where no impl for a concrete `(f32,)` applies to `(T,)`). The variants'
//! slots (operands, then type parameters) fall into classes that always share a type;
//! where every combination of the classes' types is a variant, each class's types are
//! exactly one kind's (`Float`: `f32 f64 f16 bf16`, `Inexact`: the floats and the complex
//! types, `Integer`, `Signed` (the signed integers, the floats and the complex types),
//! `Bitwise` (the integers and `bool`), `Numeric`, `Arithmetic` (the numeric and complex
//! types), `Element`, `ComplexFloat` (`c32 c64`)) or one type, and the result is one type
//! or a class's, the impl is generic over a type per class bounded by its kind, and picks
//! the variant's template from the types' `DTYPE`s when called. Otherwise the expression
//! keeps one impl per variant.
//!
//! Where complex numbers beside reals of their parts' type make variants of another
//! structure (`(c32, f32)` beside `(T, T)`), the generic impl covers the variants of the
//! real types' structure and those others have impls of their own, which Rust's
//! coherence rules accept since no `(T, T)` is a `(c32, f32)`.
//!
//! A class whose types are a kind's but for its complex ones (`x.abs()`: the signed real
//! types; `x as u32`: every real type) is bounded by that kind too, so that generic code
//! over `T: Signed` or `T: Element` keeps compiling; called with a complex type, which
//! has no variant, the expression records an array that fails with an error naming its
//! element types.

use super::variants::Variant;
use crate::ir::Scalar;

/// A trait of the runtime that a class's types are exactly the types of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Float,
    Inexact,
    Integer,
    Signed,
    Bitwise,
    Numeric,
    Arithmetic,
    Element,
    ComplexFloat,
}

impl Kind {
    const ALL: [Kind; 9] = [
        Kind::Float,
        Kind::Inexact,
        Kind::Integer,
        Kind::Signed,
        Kind::Bitwise,
        Kind::Numeric,
        Kind::Arithmetic,
        Kind::Element,
        Kind::ComplexFloat,
    ];

    /// The trait's name in the runtime.
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Float => "Float",
            Kind::Inexact => "Inexact",
            Kind::Integer => "Integer",
            Kind::Signed => "Signed",
            Kind::Bitwise => "Bitwise",
            Kind::Numeric => "Numeric",
            Kind::Arithmetic => "Arithmetic",
            Kind::Element => "Element",
            Kind::ComplexFloat => "ComplexFloat",
        }
    }

    /// Whether the runtime's trait is implemented for `s`.
    fn admits(self, s: Scalar) -> bool {
        match self {
            Kind::Float => s.is_float(),
            Kind::Inexact => s.is_float() || s.is_complex(),
            Kind::Integer => s.is_int(),
            Kind::Signed => s.is_float() || s.is_signed_int() || s.is_complex(),
            Kind::Bitwise => s.is_int() || s == Scalar::Bool,
            Kind::Numeric => s.is_int() || s.is_float(),
            Kind::Arithmetic => s != Scalar::Bool,
            Kind::Element => true,
            Kind::ComplexFloat => s.is_complex(),
        }
    }

    /// The kind whose types are exactly `set`, else the first whose types but the
    /// complex ones are.
    fn of(set: &[Scalar]) -> Option<Kind> {
        let same = |k: Kind, real_only: bool| {
            let types = Scalar::ELEMENTS
                .into_iter()
                .filter(|&s| k.admits(s) && !(real_only && s.is_complex()));
            let count = types.clone().count();
            set.len() == count && types.into_iter().all(|s| set.contains(&s))
        };
        let exact = Kind::ALL.into_iter().find(|&k| same(k, false));
        exact.or_else(|| Kind::ALL.into_iter().find(|&k| same(k, true)))
    }
}

/// What a class of slots is in the generic impl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ClassType {
    /// Always this type.
    Fixed(Scalar),
    /// A type parameter of the impl bounded by this kind.
    Kind(Kind),
}

/// The result type of the generic impl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ResultType {
    Fixed(Scalar),
    /// The type of this class.
    Class(usize),
}

/// One impl for the variants it covers (all, or those of one structure: see
/// [`generic_impl`]).
#[derive(Debug)]
pub(super) struct GenericImpl {
    /// Per slot, its class.
    pub class_of: Vec<usize>,
    pub classes: Vec<ClassType>,
    pub result: ResultType,
    /// Per variant, whether the impl covers it; the others have impls of their own, for
    /// type tuples the generic one cannot match (complex numbers beside reals of their
    /// parts' type: `(c32, f32)` where the impl is for `(T, T)`).
    pub covers: Vec<bool>,
}

/// The generic impl of `variants`, where one serves them all and is generic at all; else
/// one that serves those of the real types' structure (which slots share a type), the
/// others (with complex types) being of another structure; else one for the real types'
/// variants alone, where every other has another structure.
pub(super) fn generic_impl(variants: &[Variant]) -> Option<GenericImpl> {
    let all: Vec<usize> = (0..variants.len()).collect();
    if let Some(g) = generic_over(variants, &all) {
        return Some(g);
    }
    let real: Vec<usize> = (all.iter().copied())
        .filter(|&i| !variants[i].types.iter().any(|t| t.is_complex()))
        .collect();
    let (class_of, _) = structure(variants, &real)?;
    let shaped: Vec<usize> = (all.iter().copied())
        .filter(|&i| same_structure(&variants[i].types, &class_of))
        .collect();
    [shaped, real].into_iter().find_map(|covered| {
        let g = generic_over(variants, &covered)?;
        let disjoint = (0..variants.len()).all(|i| g.covers[i] || !g.matches(&variants[i].types));
        disjoint.then_some(g)
    })
}

/// Which slots of the variants `of` always share a type: each slot's class, and each
/// class's first slot.
fn structure(variants: &[Variant], of: &[usize]) -> Option<(Vec<usize>, Vec<usize>)> {
    let slots = variants[*of.first()?].types.len();
    let mut class_of: Vec<usize> = Vec::with_capacity(slots);
    let mut reps: Vec<usize> = Vec::new();
    for i in 0..slots {
        let same = reps
            .iter()
            .position(|&r| of.iter().all(|&v| variants[v].types[r] == variants[v].types[i]));
        class_of.push(same.unwrap_or_else(|| {
            reps.push(i);
            reps.len() - 1
        }));
    }
    Some((class_of, reps))
}

/// Whether `types` are equal in the slots of each class.
fn same_structure(types: &[Scalar], class_of: &[usize]) -> bool {
    (0..types.len()).all(|i| {
        let first = class_of.iter().position(|&c| c == class_of[i]).unwrap_or(i);
        types[first] == types[i]
    })
}

/// The generic impl of the variants `covered`, where one serves them all and is generic
/// at all.
fn generic_over(variants: &[Variant], covered: &[usize]) -> Option<GenericImpl> {
    let first = &variants[*covered.first()?];
    let (class_of, reps) = structure(variants, covered)?;
    let mut classes = Vec::with_capacity(reps.len());
    let mut combinations = 1usize;
    for &r in &reps {
        let mut set: Vec<Scalar> = Vec::new();
        for &v in covered {
            if !set.contains(&variants[v].types[r]) {
                set.push(variants[v].types[r]);
            }
        }
        combinations = combinations.saturating_mul(set.len());
        classes.push(match set[..] {
            [one] => ClassType::Fixed(one),
            _ => ClassType::Kind(Kind::of(&set)?),
        });
    }
    let generic = classes.iter().any(|c| matches!(c, ClassType::Kind(_)));
    if !generic || combinations != covered.len() {
        return None;
    }
    let result = if covered.iter().all(|&v| variants[v].result == first.result) {
        ResultType::Fixed(first.result)
    } else {
        let c = (0..reps.len())
            .find(|&c| (covered.iter()).all(|&v| variants[v].result == variants[v].types[reps[c]]))?;
        ResultType::Class(c)
    };
    Some(GenericImpl {
        class_of,
        classes,
        result,
        covers: (0..variants.len()).map(|i| covered.contains(&i)).collect(),
    })
}

impl GenericImpl {
    /// Whether the impl's type tuple can be `types` (whatever the bounds, which Rust's
    /// coherence rules do not rely on for foreign types): the slots of each class equal,
    /// a fixed class's slots its type.
    fn matches(&self, types: &[Scalar]) -> bool {
        same_structure(types, &self.class_of)
            && (self.class_of.iter().zip(types)).all(|(&c, t)| match self.classes[c] {
                ClassType::Fixed(s) => s == *t,
                ClassType::Kind(_) => true,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Errors;
    use crate::expr::input::read;
    use crate::expr::variants::variants;

    /// The variants of an `expr!` input.
    fn variants_of(src: &str) -> Vec<Variant> {
        let mut errors = Errors::default();
        let (input, checked) = read(src.parse().unwrap(), &mut errors).unwrap();
        variants(&input, &checked.operands, &checked.types, &[]).unwrap()
    }

    /// The kinds of the generic impl's classes and how many variants it covers.
    fn generic(src: &str) -> Option<(Vec<ClassType>, usize, usize)> {
        let v = variants_of(src);
        let g = generic_impl(&v)?;
        Some((
            g.classes.clone(),
            g.covers.iter().filter(|c| **c).count(),
            v.len(),
        ))
    }

    #[test]
    fn complex_types_complete_the_kinds_that_have_them() {
        let k = |k: Kind| ClassType::Kind(k);
        assert_eq!(generic("a * x + y"), Some((vec![k(Kind::Arithmetic)], 14, 14)));
        assert_eq!(
            generic("z.conj() * 2.0"),
            Some((vec![k(Kind::ComplexFloat)], 2, 2))
        );
        assert_eq!(generic("-x"), Some((vec![k(Kind::Signed)], 10, 10)));
        // Valid for the real types of a kind only: bounded by it still (a complex type
        // records an error when called).
        assert_eq!(generic("x.abs()"), Some((vec![k(Kind::Signed)], 8, 8)));
        assert_eq!(generic("x as u32"), Some((vec![k(Kind::Element)], 13, 13)));
    }

    #[test]
    fn complex_variants_of_another_structure_keep_impls_of_their_own() {
        // `(T, T, T, T)` of the floats, and `(c32, c32, c32, f32)`, `(c64, c64, c64, f64)`.
        let (classes, covered, all) = generic("(x - m) / (s + T::EPSILON)").unwrap();
        assert_eq!(classes, [ClassType::Kind(Kind::Float)]);
        assert_eq!((covered, all), (4, 6));
        // `(T, T)` of the floats and complex types; `(c32, f32)`, `(f32, c32)`, ... apart.
        let (classes, covered, all) = generic("x * T::from(2.0) + T::ONE").unwrap();
        assert_eq!(classes, [ClassType::Kind(Kind::Inexact)]);
        assert_eq!((covered, all), (6, 10));
    }
}
