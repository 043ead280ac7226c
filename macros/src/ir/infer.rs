//! Value types and literal inference: a type is a scalar, unit, never or a variable that
//! an unsuffixed literal introduces; a union-find table resolves the variables, and an
//! unresolved one takes its default (`i32`, `f64`) like in Rust. A complex number made
//! of parts of a type still open (`Complex::new(1.0, 2.0)`) is a variable of its own,
//! tied to its parts' type: `c32` when they are `f32`, `c64` (their default) otherwise.

use super::scalar::Scalar;

/// The kind of an unresolved literal type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum VarKind {
    /// `{integer}`: defaults to `i32`.
    Int,
    /// `{float}`: defaults to `f64`.
    Float,
    /// The unknown element type of an `expr!` operand (only while `expr!` works out which
    /// operands must share a type): unifies with anything.
    Any,
    /// `Complex<{float}>`: `c32` or `c64`, whichever its parts' type is.
    Complex,
}

/// A value type: a scalar, an inference variable (from a literal), unit or never.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ty {
    S(Scalar),
    Var(u32),
    Unit,
    Never,
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    Open(VarKind),
    Link(Ty),
}

/// Union-find table of literal type variables.
#[derive(Default, Debug)]
pub struct Infer {
    slots: Vec<Slot>,
    /// The parts' type of each `Complex` variable, by variable.
    parts: Vec<(u32, Ty)>,
}

impl Infer {
    pub fn fresh(&mut self, kind: VarKind) -> Ty {
        self.slots.push(Slot::Open(kind));
        Ty::Var(self.slots.len() as u32 - 1)
    }

    /// A complex type whose parts have type `part`: `c32` or `c64` for a known float,
    /// else a `Complex` variable tied to `part`.
    pub fn complex_of(&mut self, part: Ty) -> Ty {
        if let Some(c) = self.scalar_now(part).and_then(Scalar::complex) {
            return Ty::S(c);
        }
        let v = self.fresh(VarKind::Complex);
        if let Ty::Var(k) = v {
            self.parts.push((k, part));
        }
        v
    }

    /// The type of the parts of a complex type (`f32` for `c32`, a `Complex` variable's
    /// parts' type); `None` for any other type.
    pub fn part(&self, t: Ty) -> Option<Ty> {
        match self.shallow(t) {
            Ty::S(s) if s.is_complex() => Some(Ty::S(s.real())),
            Ty::Var(v) if self.kind(t) == Some(VarKind::Complex) => self
                .parts
                .iter()
                .find(|(k, _)| *k == v)
                .map(|(_, p)| self.shallow(*p)),
            _ => None,
        }
    }

    /// Whether a type is (or will be) a complex type.
    pub fn is_complex(&self, t: Ty) -> bool {
        self.part(t).is_some()
    }

    /// The scalar a type already is (no defaults).
    fn scalar_now(&self, t: Ty) -> Option<Scalar> {
        match self.shallow(t) {
            Ty::S(s) => Some(s),
            _ => None,
        }
    }

    /// Follows links: a scalar, an open variable, unit or never.
    pub fn shallow(&self, t: Ty) -> Ty {
        let mut t = t;
        while let Ty::Var(v) = t {
            match self.slots[v as usize] {
                Slot::Link(n) => t = n,
                Slot::Open(_) => return t,
            }
        }
        t
    }

    /// The kind of an open variable.
    pub fn kind(&self, t: Ty) -> Option<VarKind> {
        match self.shallow(t) {
            Ty::Var(v) => match self.slots[v as usize] {
                Slot::Open(k) => Some(k),
                Slot::Link(_) => None,
            },
            _ => None,
        }
    }

    /// The final scalar type, applying the defaults (`i32`, `f64`, `c64`).
    pub fn scalar(&self, t: Ty) -> Option<Scalar> {
        match self.shallow(t) {
            Ty::S(s) => Some(s),
            Ty::Var(_) => Some(match self.kind(t) {
                Some(VarKind::Float) => Scalar::F64,
                Some(VarKind::Complex) => match self.part(t).and_then(|p| self.scalar(p)) {
                    Some(Scalar::F32) => Scalar::C32,
                    _ => Scalar::C64,
                },
                _ => Scalar::I32,
            }),
            _ => None,
        }
    }

    /// A human-readable name of a type, as rustc writes it.
    pub fn describe(&self, t: Ty) -> String {
        match self.shallow(t) {
            Ty::S(s) => s.rust().to_string(),
            Ty::Var(_) => match self.kind(t) {
                Some(VarKind::Float) => "{float}".into(),
                Some(VarKind::Any) => "{unknown}".into(),
                Some(VarKind::Complex) => match self.part(t) {
                    Some(p) => format!("Complex<{}>", self.describe(p)),
                    None => "Complex<{float}>".into(),
                },
                _ => "{integer}".into(),
            },
            Ty::Unit => "()".into(),
            Ty::Never => "!".into(),
        }
    }

    /// Makes two types equal, or says why not.
    pub fn unify(&mut self, a: Ty, b: Ty) -> Result<Ty, String> {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (a, b) {
            _ if a == b => Ok(a),
            (Ty::Never, o) | (o, Ty::Never) => Ok(o),
            (Ty::Var(x), Ty::Var(y)) => {
                let (kx, ky) = (self.kind(a), self.kind(b));
                if ky == Some(VarKind::Any) {
                    self.slots[y as usize] = Slot::Link(a);
                    return Ok(a);
                }
                if kx == Some(VarKind::Any) {
                    self.slots[x as usize] = Slot::Link(b);
                    return Ok(b);
                }
                if kx != ky {
                    return Err(format!(
                        "expected `{}`, found `{}`",
                        self.describe(a),
                        self.describe(b)
                    ));
                }
                let parts = (self.part(a), self.part(b));
                self.slots[y as usize] = Slot::Link(a);
                if let (Some(pa), Some(pb)) = parts {
                    self.unify(pa, pb)?;
                }
                Ok(a)
            }
            (Ty::Var(v), Ty::S(s)) | (Ty::S(s), Ty::Var(v)) => {
                let ok = match self.kind(Ty::Var(v)) {
                    Some(VarKind::Int) => s.is_int(),
                    Some(VarKind::Float) => s.is_float(),
                    Some(VarKind::Complex) => s.is_complex(),
                    Some(VarKind::Any) => true,
                    None => false,
                };
                if !ok {
                    return Err(format!(
                        "expected `{}`, found `{}`",
                        self.describe(a),
                        self.describe(b)
                    ));
                }
                let part = self.part(Ty::Var(v));
                self.slots[v as usize] = Slot::Link(Ty::S(s));
                if let Some(p) = part {
                    self.unify(p, Ty::S(s.real()))?;
                }
                Ok(Ty::S(s))
            }
            _ => Err(format!(
                "expected `{}`, found `{}`",
                self.describe(a),
                self.describe(b)
            )),
        }
    }

    /// Whether a type is (or will default to) an integer type.
    pub fn is_int(&self, t: Ty) -> bool {
        match self.shallow(t) {
            Ty::S(s) => s.is_int(),
            Ty::Var(_) => self.kind(t) == Some(VarKind::Int),
            _ => false,
        }
    }

    /// Whether a type is (or will default to) a float type.
    pub fn is_float(&self, t: Ty) -> bool {
        match self.shallow(t) {
            Ty::S(s) => s.is_float(),
            Ty::Var(_) => self.kind(t) == Some(VarKind::Float),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_inference() {
        let mut inf = Infer::default();
        let a = inf.fresh(VarKind::Float);
        let b = inf.fresh(VarKind::Float);
        assert!(inf.unify(a, b).is_ok());
        assert!(inf.unify(b, Ty::S(Scalar::F32)).is_ok());
        assert_eq!(inf.scalar(a), Some(Scalar::F32));
        let c = inf.fresh(VarKind::Int);
        assert!(inf.unify(c, Ty::S(Scalar::F32)).is_err());
        assert_eq!(inf.scalar(c), Some(Scalar::I32));
    }

    #[test]
    fn complex_of_open_parts() {
        let mut inf = Infer::default();
        let p = inf.fresh(VarKind::Float);
        let z = inf.complex_of(p);
        assert_eq!(inf.scalar(z), Some(Scalar::C64));
        assert_eq!(inf.describe(z), "Complex<{float}>");
        assert!(inf.unify(z, Ty::S(Scalar::F32)).is_err());
        assert!(inf.unify(z, Ty::S(Scalar::C32)).is_ok());
        assert_eq!(inf.scalar(p), Some(Scalar::F32));
        let q = inf.fresh(VarKind::Float);
        let w = inf.complex_of(q);
        assert!(inf.unify(q, Ty::S(Scalar::F64)).is_ok());
        assert_eq!(inf.scalar(w), Some(Scalar::C64));
        assert!(inf.unify(w, Ty::S(Scalar::C32)).is_err());
        assert_eq!(inf.complex_of(Ty::S(Scalar::F32)), Ty::S(Scalar::C32));
        assert_eq!(inf.part(Ty::S(Scalar::C64)), Some(Ty::S(Scalar::F64)));
    }
}
