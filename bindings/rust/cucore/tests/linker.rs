//! Linking: an LTO link of two LTO-IR modules, PTX inputs, logs, backends and errors (no GPU:
//! the architecture is given), and the linked kernel run (GPU). Tests skip with a printed
//! reason where NVRTC or nvJitLink is not installed. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

const CALLER: &str = r#"
extern __device__ int twice(int v);
extern "C" __global__ void apply_twice(int *x) { x[threadIdx.x] = twice(x[threadIdx.x]) + 1; }
"#;
const CALLEE: &str = "__device__ int twice(int v) { return 2 * v; }";

fn lto_inputs(arch: &str) -> (ObjectCode, ObjectCode) {
    let o = ProgramOptions::default().arch(arch).relocatable_device_code(true).link_time_optimization(true);
    (compile(CALLER, &o, CodeType::LtoIr, &[]), compile(CALLEE, &o, CodeType::LtoIr, &[]))
}

#[test]
fn options_builder_sets_fields() {
    let o = LinkerOptions::default()
        .name("l")
        .arch("sm_90")
        .backend(CompilerBackend::NvJitLink)
        .optimization_level(2)
        .max_register_count(64)
        .link_time_optimization(true)
        .ftz(true)
        .verbose(true)
        .ptxas_option("-v")
        .extra_option("-time");
    assert_eq!(o.backend, Some(CompilerBackend::NvJitLink));
    assert_eq!(o.optimization_level, Some(2));
    assert_eq!(o.ftz, Some(true));
    assert_eq!(o.fma, None);
    assert_eq!(o.ptxas_options, vec!["-v".to_string()]);
    assert_eq!(o.extra_options, vec!["-time".to_string()]);
}

#[test]
fn lto_link_of_two_ltoir_modules() {
    let _serial = serial();
    require_nvrtc!("lto_link_of_two_ltoir_modules");
    if !nvjitlink("lto_link_of_two_ltoir_modules") {
        return;
    }
    assert_eq!(Linker::default_backend().unwrap(), CompilerBackend::NvJitLink);
    let before = compile_counts();
    {
        let (a, b) = lto_inputs(ARCH);
        assert_eq!(a.code_type().unwrap(), CodeType::LtoIr);
        let linker =
            Linker::create(&[&a, &b], &LinkerOptions::default().arch(ARCH).link_time_optimization(true).verbose(true))
                .unwrap();
        assert_eq!(linker.backend().unwrap(), CompilerBackend::NvJitLink);
        let cubin = linker.link(CodeType::Cubin).unwrap();
        assert_eq!(cubin.code_type().unwrap(), CodeType::Cubin);
        assert_eq!(&cubin.code().unwrap()[..4], b"\x7fELF");
        assert_eq!(linker.link(CodeType::Cubin).unwrap(), cubin, "a linker links once");
        assert_eq!(linker.link(CodeType::Ptx).unwrap_err().status, Status::InvalidState);
        assert_eq!(linker.error_log().unwrap(), "");
        let _info = linker.info_log().unwrap(); // verbose output; its text belongs to nvJitLink
                                                // The inputs may go before the linker: it holds them.
        drop((a, b));
        drop(linker);
        drop(cubin);
    }
    assert_eq!(compile_counts(), before, "the linker released its inputs and result");
}

#[test]
fn lto_link_to_ptx() {
    let _serial = serial();
    require_nvrtc!("lto_link_to_ptx");
    if !nvjitlink("lto_link_to_ptx") {
        return;
    }
    let (a, b) = lto_inputs(ARCH);
    let linker = Linker::create(&[&a, &b], &LinkerOptions::default().arch(ARCH).link_time_optimization(true)).unwrap();
    let ptx = linker.link(CodeType::Ptx).unwrap();
    let text = String::from_utf8_lossy(ptx.code().unwrap()).into_owned();
    assert!(text.contains("apply_twice"), "{}", text);
}

#[test]
fn unresolved_symbol_is_compilation_with_the_error_log() {
    let _serial = serial();
    require_nvrtc!("unresolved_symbol_is_compilation_with_the_error_log");
    if !nvjitlink("unresolved_symbol_is_compilation_with_the_error_log") {
        return;
    }
    let (a, _) = lto_inputs(ARCH);
    let linker = Linker::create(&[&a], &LinkerOptions::default().arch(ARCH).link_time_optimization(true)).unwrap();
    let e = linker.link(CodeType::Cubin).unwrap_err();
    assert_eq!(e.status, Status::Compilation, "{}", e);
    let log = linker.error_log().unwrap();
    assert!(log.contains("twice"), "the error log names the missing symbol: {}", log);
}

#[test]
fn bad_linker_arguments() {
    let _serial = serial();
    let e = Linker::create(&[], &LinkerOptions::default()).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "no inputs: {}", e);
    let code = ObjectCode::create(b"x", CodeType::LtoIr, None).unwrap();
    let e = Linker::create(&[&code], &LinkerOptions::default().optimization_level(4)).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let e = Linker::create(&[&code], &LinkerOptions::default().arch(ARCH).backend(CompilerBackend::Driver)).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "the driver cannot link LTO-IR: {}", e);
}

#[test]
fn ptx_inputs_link_to_cubin() {
    let _serial = serial();
    require_nvrtc!("ptx_inputs_link_to_cubin");
    if !nvjitlink("ptx_inputs_link_to_cubin") {
        return;
    }
    let o = ProgramOptions::default().arch(ARCH).relocatable_device_code(true);
    let a = compile(CALLER, &o, CodeType::Ptx, &[]);
    let b = compile(CALLEE, &o, CodeType::Ptx, &[]);
    let linker = Linker::create(&[&a, &b], &LinkerOptions::default().arch(ARCH).optimization_level(3)).unwrap();
    let cubin = linker.link(CodeType::Cubin).unwrap();
    assert_eq!(&cubin.code().unwrap()[..4], b"\x7fELF");
}

#[test]
fn linked_kernel_runs() {
    let _serial = serial();
    let dev = require_gpu!("linked_kernel_runs");
    require_nvrtc!("linked_kernel_runs");
    if !nvjitlink("linked_kernel_runs") {
        return;
    }
    let arch = sm_arch(&dev);
    let (a, b) = lto_inputs(&arch);
    let linker = Linker::create(&[&a, &b], &LinkerOptions::default().arch(&arch).link_time_optimization(true)).unwrap();
    let k = linker.link(CodeType::Cubin).unwrap().get_kernel("apply_twice").unwrap();
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    let x = dev.allocate(4 * 32, &s).unwrap();
    let input: Vec<u8> = (0..32i32).flat_map(|v| v.to_ne_bytes()).collect();
    x.copy_from_host(0, &input, &s).unwrap();
    launch(&s, &LaunchConfig::new(1, 32), &k, &[&x]).unwrap();
    let mut host = vec![0u8; 4 * 32];
    x.copy_to_host(0, &mut host, &s).unwrap();
    let got: Vec<i32> = u32s(&host).into_iter().map(|v| v as i32).collect();
    assert_eq!(got, (0..32).map(|v| 2 * v + 1).collect::<Vec<i32>>());
}
