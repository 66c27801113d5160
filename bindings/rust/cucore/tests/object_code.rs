//! Object codes: from bytes and files, their contents and names, argument errors (no GPU); kernels
//! by name and by name expression, and module globals read and written (GPU). (Helpers and skip
//! rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

const GLOBALS: &str = r#"
__device__ int counter_value;
__constant__ float coeffs[4];
extern "C" __global__ void use_globals(float *out) {
    out[threadIdx.x] = coeffs[threadIdx.x] * 2.0f;
    atomicAdd(&counter_value, 1);
}
"#;

#[test]
fn from_bytes_keeps_a_copy() {
    let _serial = serial();
    require_nvrtc!("from_bytes_keeps_a_copy");
    let cubin = compile(SAXPY, &ProgramOptions::default().arch(ARCH), CodeType::Cubin, &[]);
    let mut bytes = cubin.code().unwrap().to_vec();
    let copy = ObjectCode::create(&bytes, CodeType::Cubin, Some("saxpy.cubin")).unwrap();
    bytes[0] = 0; // the object code copied the bytes
    assert_eq!(copy.code().unwrap(), cubin.code().unwrap());
    assert_eq!(copy.code_type().unwrap(), CodeType::Cubin);
    assert_eq!(copy.name().unwrap(), "saxpy.cubin");
    assert!(copy.name_expressions().unwrap().is_empty());
    let unnamed = ObjectCode::create(cubin.code().unwrap(), CodeType::Cubin, None).unwrap();
    assert_eq!(unnamed.name().unwrap(), "");
    assert!(format!("{:?}", copy).contains("cubin"));
}

#[test]
fn from_file_reads_the_file() {
    let _serial = serial();
    require_nvrtc!("from_file_reads_the_file");
    let ptx = compile(SAXPY, &ProgramOptions::default().arch(ARCH), CodeType::Ptx, &[]);
    let dir = TempDir::new("object-code");
    let path = dir.path().join("saxpy.ptx");
    std::fs::write(&path, ptx.code().unwrap()).unwrap();
    let code = ObjectCode::from_file(&path, CodeType::Ptx, None).unwrap();
    assert_eq!(code.code().unwrap(), ptx.code().unwrap());
    assert_eq!(code.code_type().unwrap(), CodeType::Ptx);
    assert_eq!(code.name().unwrap(), path.to_str().unwrap(), "the name defaults to the path");
    let named = ObjectCode::from_file(&path, CodeType::Ptx, Some("mine")).unwrap();
    assert_eq!(named.name().unwrap(), "mine");

    let missing = dir.path().join("missing.ptx");
    let e = ObjectCode::from_file(&missing, CodeType::Ptx, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("missing.ptx"), "the message names the path: {}", e);
    let empty = dir.path().join("empty.cubin");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(ObjectCode::from_file(&empty, CodeType::Cubin, None).unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn bad_arguments_are_invalid_argument() {
    let e = ObjectCode::create(&[], CodeType::Cubin, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let e = ObjectCode::create(b"int x;", CodeType::Cxx, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "C++ is not an object code kind: {}", e);
    let e = ObjectCode::create(b"x", CodeType::Cubin, Some("a\0b")).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
}

#[test]
fn object_codes_of_linker_kinds_do_not_load() {
    let _serial = serial();
    let lto = ObjectCode::create(b"not really lto-ir", CodeType::LtoIr, None).unwrap();
    assert_eq!(lto.load().unwrap_err().status, Status::InvalidState);
    assert_eq!(lto.get_kernel("k").unwrap_err().status, Status::InvalidState);
    let obj = ObjectCode::create(b"\x7fELF", CodeType::Object, None).unwrap();
    assert_eq!(obj.load().unwrap_err().status, Status::InvalidState);
}

#[test]
fn kernels_by_name_and_by_name_expression() {
    let _serial = serial();
    let dev = require_gpu!("kernels_by_name_and_by_name_expression");
    require_nvrtc!("kernels_by_name_and_by_name_expression");
    let source = format!("{}\ntemplate <typename T> __global__ void twice(T *x) {{ x[threadIdx.x] *= 2; }}", SAXPY);
    let code = compile(&source, &ProgramOptions::default().arch(&sm_arch(&dev)), CodeType::Cubin, &["twice<int>"]);
    code.load().unwrap();
    code.load().unwrap(); // twice is a no-op
    assert!(!code.handle().unwrap().is_null());
    assert_eq!(code.kernel_count().unwrap(), 2);
    let saxpy = code.get_kernel("saxpy").unwrap();
    assert_eq!(saxpy.name().unwrap(), "saxpy");
    let twice = code.get_kernel("twice<int>").unwrap();
    let lowered = code.symbol_mapping().unwrap()["twice<int>"].clone();
    assert_eq!(twice.name().unwrap(), lowered);
    assert_eq!(code.get_kernel(&lowered).unwrap().name().unwrap(), lowered, "the symbol name works too");
    let e = code.get_kernel("nope").unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("nope"), "{}", e);
}

#[test]
fn module_globals_read_and_written() {
    let _serial = serial();
    let dev = require_gpu!("module_globals_read_and_written");
    require_nvrtc!("module_globals_read_and_written");
    let code = compile(GLOBALS, &ProgramOptions::default().arch(&sm_arch(&dev)), CodeType::Cubin, &[]);
    let g = code.get_global(&dev, "coeffs").unwrap();
    assert_eq!(g.size, 16);
    assert_ne!(g.address, 0);
    assert_eq!(code.get_global(&dev, "counter_value").unwrap().size, 4);

    code.write_global(&dev, "coeffs", &f32_bytes(&[1.0, 2.5, -3.0, 4.25])).unwrap();
    code.write_global_value(&dev, "counter_value", &5i32).unwrap();
    assert_eq!(code.read_global_bytes(&dev, "coeffs").unwrap(), f32_bytes(&[1.0, 2.5, -3.0, 4.25]));

    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let out = dev.allocate(16, &s).unwrap();
    let k = code.get_kernel("use_globals").unwrap();
    launch(&s, &LaunchConfig::new(1, 4), &k, &[&out]).unwrap();
    let mut host = vec![0u8; 16];
    out.copy_to_host(0, &mut host, &s).unwrap();
    assert_eq!(f32s(&host), vec![2.0, 5.0, -6.0, 8.5], "the kernel read the written constants");
    let mut counter = [0u8; 4];
    code.read_global(&dev, "counter_value", &mut counter).unwrap();
    assert_eq!(i32::from_ne_bytes(counter), 9, "5 written + 4 increments");

    let e = code.read_global(&dev, "counter_value", &mut [0u8; 8]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "size mismatch: {}", e);
    let e = code.write_global_value(&dev, "coeffs", &1u64).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "size mismatch: {}", e);
    assert_eq!(code.get_global(&dev, "no_such_global").unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn kernels_keep_their_code_loaded() {
    let _serial = serial();
    let dev = require_gpu!("kernels_keep_their_code_loaded");
    require_nvrtc!("kernels_keep_their_code_loaded");
    let before = compile_counts();
    let k = gpu_kernel(&dev, SAXPY, "saxpy"); // the program and object code are dropped inside
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let n = 64u32;
    let x = dev.allocate(4 * n as u64, &s).unwrap();
    let y = dev.allocate(4 * n as u64, &s).unwrap();
    x.copy_from_host(0, &f32_bytes(&vec![1.0; n as usize]), &s).unwrap();
    y.copy_from_host(0, &f32_bytes(&vec![1.0; n as usize]), &s).unwrap();
    launch(&s, &LaunchConfig::new(1, n), &k, &[&3.0f32, &x, &y, &n]).unwrap();
    let mut host = vec![0u8; 4 * n as usize];
    y.copy_to_host(0, &mut host, &s).unwrap();
    assert!(f32s(&host).iter().all(|v| *v == 4.0));
    drop(k);
    assert_eq!(compile_counts(), before, "the kernel held the object code, and both are gone now");
}
