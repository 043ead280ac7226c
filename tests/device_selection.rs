//! Device selection: every `LAZYCL_DEVICE` form and the builder, including bad values.
//! One test function, because it changes the process environment.

// A binary of its own, not a module of tests/it: it sets `LAZYCL_DEVICE` (to bad values
// too) and removes it, which the tests running beside it there would read in their
// `Context::new`.

use lazycl::{devices, Context, DeviceSelector, Error};

#[test]
fn every_selection_form() {
    let list = devices().expect("an OpenCL platform");
    assert!(!list.is_empty());
    let first = &list[0];
    let table = lazycl::device_table(&list);
    assert!(table.contains(&first.name), "{table}");

    std::env::remove_var("LAZYCL_DEVICE");
    let default = Context::new().unwrap();
    let expected = list
        .iter()
        .find(|d| d.device_type == lazycl::DeviceType::Gpu)
        .unwrap_or(first);
    assert_eq!(default.device().name, expected.name);

    let kind = if first.device_type == lazycl::DeviceType::Gpu {
        "gpu"
    } else {
        "cpu"
    };
    for value in [
        kind.to_string(),
        kind.to_uppercase(),
        first.index_pair(),
        first.name.to_lowercase(),
        first.platform_name.to_uppercase(),
        first.platform_name.split_whitespace().next().unwrap().to_string(),
    ] {
        std::env::set_var("LAZYCL_DEVICE", &value);
        let ctx = Context::new().unwrap_or_else(|e| panic!("LAZYCL_DEVICE={value}: {e}"));
        assert_eq!(ctx.device().name, first.name, "LAZYCL_DEVICE={value}");
    }

    // PoCL is named only in its version strings; `pocl` must still find it.
    if let Some(pocl) = list
        .iter()
        .find(|d| d.platform_version.to_lowercase().contains("pocl"))
    {
        std::env::set_var("LAZYCL_DEVICE", "pocl");
        assert_eq!(Context::new().unwrap().device().name, pocl.name);
    }

    for bad in ["no-such-device-xyz", "9:9", "0:77"] {
        std::env::set_var("LAZYCL_DEVICE", bad);
        let err = Context::new().unwrap_err();
        assert!(matches!(err, Error::NoMatchingDevice { .. }), "{bad}: {err:?}");
        let text = err.to_string();
        assert!(text.contains(bad), "the error names the request: {text}");
        assert!(
            text.contains(&first.name),
            "the error lists what is available: {text}"
        );
    }
    std::env::set_var("LAZYCL_DEVICE", "   ");
    assert!(matches!(
        Context::new().unwrap_err(),
        Error::NoMatchingDevice { .. }
    ));
    std::env::remove_var("LAZYCL_DEVICE");

    // The builder takes the same choices and overrides the environment.
    std::env::set_var("LAZYCL_DEVICE", "no-such-device-xyz");
    let ctx = Context::builder()
        .device(DeviceSelector::Index {
            platform: 0,
            device: 0,
        })
        .build()
        .unwrap();
    assert_eq!(ctx.device().name, first.name);
    let ctx = Context::builder()
        .device_str(&first.index_pair())
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(ctx.device().name, first.name);
    let err = Context::builder()
        .device(DeviceSelector::Name("zzz-nothing".into()))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("zzz-nothing"), "{err}");
    std::env::remove_var("LAZYCL_DEVICE");

    assert_eq!(DeviceSelector::parse("GPU").unwrap(), DeviceSelector::Gpu);
    assert_eq!(
        DeviceSelector::parse(" 1:0 ").unwrap(),
        DeviceSelector::Index {
            platform: 1,
            device: 0
        }
    );
    assert_eq!(
        DeviceSelector::parse("nvidia").unwrap(),
        DeviceSelector::Name("nvidia".into())
    );
}
