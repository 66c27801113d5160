//! TensorMap descriptors against the tests' fake driver (tests/fake_driver, the shared library
//! cucore_fake_cuda), which records each encode's arguments in the descriptor's 128 bytes
//! (tests/fake_driver/tensor_maps.hpp): what the constructors pass, the rules refused before the
//! driver with the rule named, replace_address, the buffer held, and a launch taking the
//! descriptor as a 128-byte argument. CTest's `rust` test names the library in
//! CUCORE_TEST_FAKE_CUDA; without it every test skips with that reason.

#[macro_use]
mod common;

use std::sync::Once;

use common::*;
use cucore::{
    launch, TensorMapDataType, TensorMapDescriptor, TensorMapDescriptorOptions, TensorMapKind, TensorMapSwizzle,
    TensorMapTarget,
};

fn fake_device(test: &str) -> Option<Device> {
    static LOAD: Once = Once::new();
    let path = match std::env::var_os("CUCORE_TEST_FAKE_CUDA") {
        Some(p) if std::path::Path::new(&p).is_file() => p,
        _ => {
            skip(test, "CUCORE_TEST_FAKE_CUDA names no fake driver library (CTest's `rust` test sets it)");
            return None;
        }
    };
    LOAD.call_once(|| {
        std::env::set_var("CUCORE_CUDA_DRIVER_PATH", &path);
        std::env::set_var("FAKE_CUDA_DEVICES", "2");
    });
    gpu(test)
}

/// Word `i` of the fake's record.
fn word(bytes: &[u8; 128], i: usize) -> u64 {
    u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap())
}

const MAGIC: u64 = 0x7E45_03A9_0000_0000;

#[test]
fn descriptors_reach_the_driver_and_rules_are_named() {
    let _serial = serial();
    let test = "descriptors_reach_the_driver_and_rules_are_named";
    let dev = match fake_device(test) {
        Some(d) => d,
        None => return,
    };
    let stream = dev.create_stream(StreamOptions::default()).unwrap();
    let buffer = dev.allocate(1 << 16, &stream).unwrap();
    let o = TensorMapDescriptorOptions::default().swizzle(TensorMapSwizzle::Swizzle128B).element_strides([1, 2, 0, 0, 0]);
    let d = TensorMapDescriptor::tiled(&buffer, TensorMapDataType::Bfloat16, &[128, 64], &[256], &[32, 16], &o).unwrap();
    assert_eq!(d.kind().unwrap(), TensorMapKind::Tiled);
    assert_eq!(d.address().unwrap(), buffer.address().unwrap());
    let b = d.bytes().unwrap();
    assert_eq!(word(&b, 0), MAGIC + 1);
    assert_eq!(word(&b, 1), buffer.address().unwrap());
    assert_eq!(word(&b, 2) & 0xFF, 9, "the driver's BFLOAT16");
    assert_eq!((word(&b, 2) >> 8) & 0xFF, 2, "rank");
    assert_eq!((word(&b, 2) >> 24) & 0xFF, 3, "swizzle 128B");
    assert_eq!((word(&b, 3), word(&b, 4), word(&b, 8)), (128, 64, 256));
    assert_eq!((word(&b, 12) & 0xFFF, (word(&b, 12) >> 12) & 0xFFF), (32, 16));
    assert_eq!(word(&b, 13) & 0xFFFF, 0x0201, "element strides 1, 2");

    // Rules, named.
    for (box_dim, rule) in [([300u32, 8], "boxDim[i] must be in 1..256"), ([6, 8], "multiple of 16 bytes")] {
        let e = TensorMapDescriptor::tiled(&buffer, TensorMapDataType::Float32, &[64, 32], &[256], &box_dim,
                                           &Default::default())
            .unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(e.message.contains(rule), "{}", e.message);
    }
    let e = TensorMapDescriptor::tiled(buffer.address().unwrap() + 8, TensorMapDataType::Float32, &[64, 32], &[256],
                                       &[8, 8], &Default::default())
        .unwrap_err();
    assert!(e.message.contains("global address must be 16-byte aligned"), "{}", e.message);

    // im2col and im2col-wide.
    let i = TensorMapDescriptor::im2col(&buffer, TensorMapDataType::Float16, &[64, 8, 8, 2], &[128, 1024, 8192],
                                        &[-1, -1], &[-1, 1], 64, 32, &Default::default())
        .unwrap();
    assert_eq!(i.kind().unwrap(), TensorMapKind::Im2col);
    let ib = i.bytes().unwrap();
    assert_eq!(word(&ib, 14), 64 | (32 << 32));
    let w = TensorMapDescriptor::im2col_wide(&buffer, TensorMapDataType::Float16, &[64, 8, 8, 2], &[128, 1024, 8192],
                                             0, 0, 64, 16, &TensorMapDescriptorOptions::default()
                                                 .swizzle(TensorMapSwizzle::Swizzle128B))
        .unwrap();
    assert_eq!(w.kind().unwrap(), TensorMapKind::Im2colWide);

    // replace_address, then the descriptor holds the second buffer.
    let second = dev.allocate(1 << 16, &stream).unwrap();
    let mut d2 = d.clone();
    d2.replace_address(&second).unwrap();
    assert_eq!(d.address().unwrap(), second.address().unwrap(), "clones share the descriptor");
    d2.replace_address(TensorMapTarget::BufferAt(&second, second.address().unwrap() + 256)).unwrap();
    assert_eq!(word(&d.bytes().unwrap(), 1), second.address().unwrap() + 256);
    assert_eq!(
        d2.replace_address(second.address().unwrap() + 4).unwrap_err().status,
        Status::InvalidArgument
    );

    // A launch passes the 128 bytes (the library checks the size against the kernel's 128-byte parameter).
    let code = ObjectCode::create(b"FAKECUBIN\nkernel tma 128,4\n\0", CodeType::Cubin, Some("fake")).unwrap();
    let kernel = code.get_kernel("tma").unwrap();
    launch(&stream, &LaunchConfig::new(1, 1), &kernel, &[&d, &7i32]).unwrap();
    let e = launch(&stream, &LaunchConfig::new(1, 1), &kernel, &[&7u64, &7i32]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "an 8-byte argument for the 128-byte parameter");
    drop(buffer);
    drop(second);
    stream.synchronize().unwrap();
    assert_eq!(word(&d.bytes().unwrap(), 0), MAGIC + 1);
}
