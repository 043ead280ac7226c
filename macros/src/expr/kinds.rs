//! Whether the variants of an `expr!` can be one impl generic over the element kinds
//! ([`GenericImpl`]), so that the expression also compiles inside a function generic over
//! `T: Float` (where no impl for a concrete `(f32,)` applies to `(T,)`). The variants'
//! slots (operands, then type parameters) fall into classes that always share a type;
//! where every combination of the classes' types is a variant, each class's types are
//! exactly one kind's (`Float`: `f32 f64 f16 bf16`, `Integer`, `Signed`, `Bitwise` (the integers
//! and `bool`), `Numeric`, `Element`) or one type, and the result is one type or a
//! class's, the impl is generic over a type per class bounded by its kind, and picks the
//! variant's template from the types' `DTYPE`s when called. Otherwise the expression keeps one impl per variant.

use super::variants::Variant;
use crate::ir::Scalar;

/// A trait of the runtime that a class's types are exactly the types of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Float,
    Integer,
    Signed,
    Bitwise,
    Numeric,
    Element,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::Float,
        Kind::Integer,
        Kind::Signed,
        Kind::Bitwise,
        Kind::Numeric,
        Kind::Element,
    ];

    /// The trait's name in the runtime.
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Float => "Float",
            Kind::Integer => "Integer",
            Kind::Signed => "Signed",
            Kind::Bitwise => "Bitwise",
            Kind::Numeric => "Numeric",
            Kind::Element => "Element",
        }
    }

    fn admits(self, s: Scalar) -> bool {
        match self {
            Kind::Float => s.is_float(),
            Kind::Integer => s.is_int(),
            Kind::Signed => s.is_float() || s.is_signed_int(),
            Kind::Bitwise => s.is_int() || s == Scalar::Bool,
            Kind::Numeric => s.is_int() || s.is_float(),
            Kind::Element => true,
        }
    }

    /// The kind whose types are exactly `set`.
    fn of(set: &[Scalar]) -> Option<Kind> {
        let all = Scalar::ELEMENTS;
        Kind::ALL.into_iter().find(|k| {
            let count = all.iter().filter(|&&s| k.admits(s)).count();
            set.len() == count && set.iter().all(|&s| k.admits(s))
        })
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

/// One impl for all the variants.
#[derive(Debug)]
pub(super) struct GenericImpl {
    /// Per slot, its class.
    pub class_of: Vec<usize>,
    pub classes: Vec<ClassType>,
    pub result: ResultType,
}

/// The generic impl of `variants`, where one serves them all and is generic at all.
pub(super) fn generic_impl(variants: &[Variant]) -> Option<GenericImpl> {
    let first = variants.first()?;
    let slots = first.types.len();
    let mut class_of: Vec<usize> = Vec::with_capacity(slots);
    let mut reps: Vec<usize> = Vec::new();
    for i in 0..slots {
        let same = reps
            .iter()
            .position(|&r| variants.iter().all(|v| v.types[r] == v.types[i]));
        class_of.push(same.unwrap_or_else(|| {
            reps.push(i);
            reps.len() - 1
        }));
    }
    let mut classes = Vec::with_capacity(reps.len());
    let mut combinations = 1usize;
    for &r in &reps {
        let mut set: Vec<Scalar> = Vec::new();
        for v in variants {
            if !set.contains(&v.types[r]) {
                set.push(v.types[r]);
            }
        }
        combinations = combinations.saturating_mul(set.len());
        classes.push(match set[..] {
            [one] => ClassType::Fixed(one),
            _ => ClassType::Kind(Kind::of(&set)?),
        });
    }
    let generic = classes.iter().any(|c| matches!(c, ClassType::Kind(_)));
    if !generic || combinations != variants.len() {
        return None;
    }
    let result = if variants.iter().all(|v| v.result == first.result) {
        ResultType::Fixed(first.result)
    } else {
        let c = (0..reps.len()).find(|&c| variants.iter().all(|v| v.result == v.types[reps[c]]))?;
        ResultType::Class(c)
    };
    Some(GenericImpl {
        class_of,
        classes,
        result,
    })
}
