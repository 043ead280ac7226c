//! Functions as others see them: parameter types, parameters, and the signature of a
//! device function, with the encoded form in which it passes between macro invocations.

use super::scalar::Scalar;

/// A parameter type of a kernel or device function.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParamTy {
    Scalar(Scalar),
    Slice {
        elem: Scalar,
        mutable: bool,
    },
    /// A `KernelStruct` by value: its index in the kernel's struct definitions
    /// (`resolve::Deps::structs`); kernels only.
    Struct(usize),
}

#[derive(Clone, Debug)]
pub struct Param {
    /// The Rust name.
    pub name: syn::Ident,
    pub ty: ParamTy,
    /// `mut x: f32`
    pub mutable: bool,
}

/// The signature of a device function (or of one instance of a generic one), as other
/// macro invocations see it.
#[derive(Clone, Debug, PartialEq)]
pub struct DevSig {
    pub name: String,
    pub params: Vec<ParamTy>,
    pub ret: Option<Scalar>,
    pub uses_f64: bool,
    /// The instance of a generic device function: its types joined by `_` (`f32`,
    /// `f64_i32`); empty for a function that is not generic.
    pub instance: String,
    /// Why the function has no partial derivatives (`grad`), if it has none.
    pub no_derivative: Option<String>,
}

/// The OpenCL C name of a device function.
pub fn device_fn_cl_name(name: &str) -> String {
    format!("lzc_fn_{name}")
}

/// The OpenCL C name of instance `instance` (empty: the only one) of a device function:
/// `lzc_fn_name__f32` (two underscores, which snake-case names of other device functions
/// do not take).
fn device_fn_instance_cl_name(name: &str, instance: &str) -> String {
    match instance {
        "" => device_fn_cl_name(name),
        i => device_fn_cl_name(&format!("{name}__{i}")),
    }
}

impl DevSig {
    /// Serialized form passed between macro invocations:
    /// `name|p1,p2|ret|f64|instance|why-no-derivative` (the last empty when it has one).
    pub fn encode(&self) -> String {
        let params: Vec<String> = self.params.iter().map(|p| encode_param(*p)).collect();
        format!(
            "{}|{}|{}|{}|{}|{}",
            self.name,
            params.join(","),
            self.ret.map(|s| s.rust()).unwrap_or("()"),
            u8::from(self.uses_f64),
            self.instance,
            self.no_derivative.as_deref().unwrap_or("").replace('|', "/"),
        )
    }

    /// The OpenCL C name of this function (instance).
    pub fn cl_name(&self) -> String {
        device_fn_instance_cl_name(&self.name, &self.instance)
    }

    pub fn decode(s: &str) -> Option<DevSig> {
        let mut parts = s.split('|');
        let name = parts.next()?.to_string();
        let params_s = parts.next()?;
        let ret_s = parts.next()?;
        let f64_s = parts.next()?;
        let instance = parts.next()?.to_string();
        let why = parts.next()?;
        let mut params = Vec::new();
        for p in params_s.split(',').filter(|p| !p.is_empty()) {
            params.push(decode_param(p)?);
        }
        let ret = if ret_s == "()" {
            None
        } else {
            Some(Scalar::from_rust(ret_s)?)
        };
        Some(DevSig {
            name,
            params,
            ret,
            uses_f64: f64_s == "1",
            instance,
            no_derivative: (!why.is_empty()).then(|| why.to_string()),
        })
    }
}

fn encode_param(p: ParamTy) -> String {
    match p {
        ParamTy::Scalar(s) => s.rust().to_string(),
        ParamTy::Slice { elem, mutable: false } => format!("&[{}]", elem.rust()),
        ParamTy::Slice { elem, mutable: true } => format!("&mut [{}]", elem.rust()),
        // (Device functions take no structs: never encoded; decodes to nothing.)
        ParamTy::Struct(_) => "struct".to_string(),
    }
}

fn decode_param(p: &str) -> Option<ParamTy> {
    if let Some(rest) = p.strip_prefix("&mut [") {
        Some(ParamTy::Slice {
            elem: Scalar::from_rust(rest.strip_suffix(']')?)?,
            mutable: true,
        })
    } else if let Some(rest) = p.strip_prefix("&[") {
        Some(ParamTy::Slice {
            elem: Scalar::from_rust(rest.strip_suffix(']')?)?,
            mutable: false,
        })
    } else {
        Some(ParamTy::Scalar(Scalar::from_rust(p)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sig_roundtrip() {
        let s = DevSig {
            name: "f".into(),
            params: vec![
                ParamTy::Scalar(Scalar::F32),
                ParamTy::Slice {
                    elem: Scalar::I32,
                    mutable: true,
                },
                ParamTy::Slice {
                    elem: Scalar::Bool,
                    mutable: false,
                },
            ],
            ret: Some(Scalar::Usize),
            uses_f64: true,
            instance: "f32_i64".into(),
            no_derivative: Some("it has a loop".into()),
        };
        assert_eq!(DevSig::decode(&s.encode()), Some(s));
    }
}
