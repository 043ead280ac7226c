//! Plain-data structs kernels take by value (`#[derive(KernelStruct)]`): a name and
//! scalar fields, their OpenCL C `typedef` and its layout (C's: each field at the next
//! multiple of its size, the struct padded to its largest field), and the form in which
//! the derive's hidden macro passes the definition to kernels (`struct|Name|a:f32,b:u32`).

use super::scalar::Scalar;

/// Whether a kernel struct's field may have type `s`: an element type whose layout is the
/// same in Rust (`#[repr(C)]`) and OpenCL C (`bool` is not: its device size varies; nor is
/// `usize`, no element type; nor is a complex type, whose `float2` is aligned to its size
/// in OpenCL C and to its part's in Rust).
pub fn is_field_type(s: Scalar) -> bool {
    // (The 32- and 64-bit numbers: a struct's layout is checked against OpenCL C's, where
    // a 16-bit float field would be a `float`.)
    Scalar::ELEMENTS.contains(&s) && s != Scalar::Bool && s.bits() >= 32 && !s.is_complex()
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    pub name: String,
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: Scalar,
}

/// Where each field lies and how large the struct is, in bytes.
pub struct Layout {
    pub offsets: Vec<usize>,
    pub size: usize,
}

impl StructDef {
    /// The definition of a tuple parameter's type `(f32, u32)`: fields `_0`, `_1`, ...;
    /// `None` unless every element is a field type.
    pub fn tuple(elems: &[Scalar]) -> Option<StructDef> {
        if elems.is_empty() || !elems.iter().all(|&e| is_field_type(e)) {
            return None;
        }
        let name = elems.iter().map(|e| e.rust()).collect::<Vec<_>>().join("_");
        Some(StructDef {
            name: format!("tuple_{name}"),
            fields: (0..elems.len())
                .map(|k| Field {
                    name: format!("_{k}"),
                    ty: elems[k],
                })
                .collect(),
        })
    }

    /// Whether this is a tuple's definition.
    pub fn is_tuple(&self) -> bool {
        self.name.starts_with("tuple_")
    }

    /// How Rust names field `field` of a value `of`: `p.dt`, or `p.0` for a tuple.
    pub fn rust_field(&self, of: &str, field: &str) -> String {
        match self.is_tuple() {
            true => format!("{of}.{}", field.trim_start_matches('_')),
            false => format!("{of}.{field}"),
        }
    }

    /// The `typedef`'s name in OpenCL C.
    pub fn cl_name(&self) -> String {
        format!("lzc_struct_{}", self.name)
    }

    /// C's layout of the fields (every field type's alignment is its size).
    pub fn layout(&self) -> Layout {
        let mut offsets = Vec::with_capacity(self.fields.len());
        let (mut at, mut align) = (0usize, 1usize);
        for f in &self.fields {
            let size = f.ty.bits() as usize / 8;
            at = at.next_multiple_of(size);
            offsets.push(at);
            at += size;
            align = align.max(size);
        }
        Layout {
            offsets,
            size: at.next_multiple_of(align),
        }
    }

    /// The `typedef`, under an include guard (a program may include it more than once).
    pub fn typedef(&self) -> String {
        let fields: String = self
            .fields
            .iter()
            .map(|f| format!(" {} {};", f.ty.cl(), f.name))
            .collect();
        let guard = format!("LZC_STRUCT_{}", self.name);
        format!(
            "#ifndef {guard}\n#define {guard}\ntypedef struct {{{fields} }} {};\n#endif\n",
            self.cl_name()
        )
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// `struct|Name|a:f32,b:u32`.
    pub fn encode(&self) -> String {
        let fields: Vec<String> = self
            .fields
            .iter()
            .map(|f| format!("{}:{}", f.name, f.ty.rust()))
            .collect();
        format!("struct|{}|{}", self.name, fields.join(","))
    }

    /// The definition `encode` wrote, or `None` for anything else (a device function's
    /// signature).
    pub fn decode(s: &str) -> Option<StructDef> {
        let rest = s.strip_prefix("struct|")?;
        let (name, fields) = rest.split_once('|')?;
        let fields = fields
            .split(',')
            .filter(|f| !f.is_empty())
            .map(|f| {
                let (n, t) = f.split_once(':')?;
                Some(Field {
                    name: n.to_string(),
                    ty: Scalar::from_rust(t)?,
                })
            })
            .collect::<Option<Vec<Field>>>()?;
        Some(StructDef {
            name: name.to_string(),
            fields,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_cs_and_the_encoding_round_trips() {
        let d = StructDef {
            name: "P".into(),
            fields: vec![
                Field {
                    name: "a".into(),
                    ty: Scalar::U32,
                },
                Field {
                    name: "b".into(),
                    ty: Scalar::F64,
                },
                Field {
                    name: "c".into(),
                    ty: Scalar::I32,
                },
            ],
        };
        let l = d.layout();
        assert_eq!((l.offsets, l.size), (vec![0, 8, 16], 24));
        assert_eq!(StructDef::decode(&d.encode()), Some(d.clone()));
        assert!(d
            .typedef()
            .contains("typedef struct { uint a; double b; int c; } lzc_struct_P;"));
    }
}
