//! Programs: options to flags, NVRTC compiles to PTX, cubin and LTO-IR, compile errors and their
//! log, name expressions. No GPU needed (the architecture is given); tests skip with a printed
//! reason where NVRTC is not installed. (Helpers and skip rules: common/mod.rs.)

#[macro_use]
mod common;
use common::*;

const TEMPLATE: &str = r#"
template <typename T>
__global__ void scale(T *x, T a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"#;

#[test]
fn code_type_names_round_trip() {
    for t in [
        CodeType::Cxx,
        CodeType::Ptx,
        CodeType::Nvvm,
        CodeType::Cubin,
        CodeType::LtoIr,
        CodeType::Fatbin,
        CodeType::Object,
        CodeType::Library,
    ] {
        assert_eq!(CodeType::from_raw(t.raw()), t);
        assert_eq!(CodeType::from_name(t.name()), Some(t));
        assert_eq!(t.to_string(), t.name());
    }
    assert_eq!(CodeType::Cxx.name(), "c++");
    assert_eq!(CodeType::LtoIr.raw(), cucore::sys::CUCORE_CODE_LTOIR);
    assert_eq!(CodeType::from_name("CUBIN"), Some(CodeType::Cubin));
    assert_eq!(CodeType::from_name("cu"), Some(CodeType::Cxx));
    assert_eq!(CodeType::from_name("elf"), None);
    assert_eq!(CodeType::from_raw(0), CodeType::Unknown(0));
    for b in [CompilerBackend::Nvrtc, CompilerBackend::Nvvm, CompilerBackend::NvJitLink, CompilerBackend::Driver] {
        assert_eq!(CompilerBackend::from_raw(b.raw()), b);
    }
}

#[test]
fn options_builder_sets_fields() {
    let o = ProgramOptions::default()
        .name("p")
        .arch("sm_90")
        .std("c++17")
        .define("FLAG")
        .define_value("N", "4")
        .undefine("OLD")
        .include_path("/opt/include")
        .header("my.h", "#define MY 1")
        .debug(true)
        .ftz(false)
        .max_register_count(32)
        .diag_suppress(177)
        .ptxas_option("-v")
        .extra_option("--extra");
    assert_eq!(o.name.as_deref(), Some("p"));
    assert_eq!(o.defines, vec!["FLAG".to_string(), "N=4".to_string()]);
    assert_eq!(o.undefines, vec!["OLD".to_string()]);
    assert_eq!(o.headers, vec![("my.h".to_string(), "#define MY 1".to_string())]);
    assert!(o.debug);
    assert_eq!(o.ftz, Some(false));
    assert_eq!(o.prec_div, None, "untouched switches stay the tool's default");
    assert_eq!(o.max_register_count, Some(32));
    assert_eq!(o.diag_suppress, vec![177]);
    assert_eq!(ProgramOptions::default(), ProgramOptions::default().clone());
}

fn has(flags: &[String], any_of: &[&str]) -> bool {
    flags.iter().any(|f| any_of.iter().any(|want| f == want))
}

#[test]
fn options_become_nvrtc_flags() {
    let _serial = serial();
    require_nvrtc!("options_become_nvrtc_flags");
    let o = ProgramOptions::default()
        .arch(ARCH)
        .std("c++17")
        .define("FLAG")
        .define_value("N", "4")
        .include_path("/opt/include")
        .lineinfo(true)
        .ftz(true)
        .prec_div(false)
        .max_register_count(32)
        .relocatable_device_code(true)
        .extra_option("--extra-flag-as-written");
    let p = Program::create(SAXPY, CodeType::Cxx, &o).unwrap();
    assert_eq!(p.code_type().unwrap(), CodeType::Cxx);
    assert_eq!(p.backend().unwrap(), CompilerBackend::Nvrtc);
    assert_eq!(p.arch().unwrap(), "sm_90");
    let flags = p.flags().unwrap();
    assert!(flags.iter().any(|f| f.contains("sm_90")), "{:?}", flags);
    assert!(flags.iter().any(|f| f.contains("c++17")), "{:?}", flags);
    assert!(has(&flags, &["-DFLAG", "--define-macro=FLAG"]), "{:?}", flags);
    assert!(has(&flags, &["-DN=4", "--define-macro=N=4"]), "{:?}", flags);
    assert!(has(&flags, &["-I/opt/include", "--include-path=/opt/include"]), "{:?}", flags);
    assert!(has(&flags, &["-lineinfo", "--generate-line-info"]), "{:?}", flags);
    assert!(has(&flags, &["--ftz=true", "-ftz=true"]), "{:?}", flags);
    assert!(has(&flags, &["--prec-div=false", "-prec-div=false"]), "{:?}", flags);
    assert!(has(&flags, &["--maxrregcount=32", "-maxrregcount=32"]), "{:?}", flags);
    assert!(has(&flags, &["-rdc=true", "--relocatable-device-code=true"]), "{:?}", flags);
    assert_eq!(flags.last().map(String::as_str), Some("--extra-flag-as-written"), "extra options come last");
    assert!(!flags.iter().any(|f| f.contains("prec-sqrt")), "default switches add no flag: {:?}", flags);
    assert_eq!(p.log().unwrap(), "", "no compile ran yet");
}

#[test]
fn interior_nul_is_invalid_argument() {
    let e = Program::create(SAXPY, CodeType::Cxx, &ProgramOptions::default().arch("sm\0_90")).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("arch"), "{}", e);
}

#[test]
fn compile_to_ptx_and_cubin() {
    let _serial = serial();
    require_nvrtc!("compile_to_ptx_and_cubin");
    let before = compile_counts();
    {
        let p = Program::create(SAXPY, CodeType::Cxx, &ProgramOptions::default().arch(ARCH)).unwrap();
        let ptx = p.compile(CodeType::Ptx, &[], None).unwrap();
        assert_eq!(ptx.code_type().unwrap(), CodeType::Ptx);
        let text = String::from_utf8_lossy(ptx.code().unwrap()).into_owned();
        assert!(text.contains(".target sm_90"), "{}", text);
        assert!(text.contains(".entry saxpy"), "{}", text);

        let cubin = p.compile(CodeType::Cubin, &[], None).unwrap();
        assert_eq!(cubin.code_type().unwrap(), CodeType::Cubin);
        assert_eq!(&cubin.code().unwrap()[..4], b"\x7fELF", "a cubin is an ELF image");
        assert_ne!(ptx, cubin);
        assert_eq!(cubin.clone(), cubin, "clones are the same object");

        // A PTX program assembles through the linker (nvJitLink or the driver).
        match Program::create(text.as_bytes(), CodeType::Ptx, &ProgramOptions::default().arch(ARCH)) {
            Ok(pp) => {
                assert_eq!(pp.code_type().unwrap(), CodeType::Ptx);
                assert!(matches!(pp.backend().unwrap(), CompilerBackend::NvJitLink | CompilerBackend::Driver));
                if pp.backend().unwrap() == CompilerBackend::NvJitLink {
                    let c = pp.compile(CodeType::Cubin, &[], None).unwrap();
                    assert_eq!(&c.code().unwrap()[..4], b"\x7fELF");
                }
            }
            Err(e) => assert_eq!(e.status, Status::NotSupported, "{}", e),
        }
    }
    assert_eq!(compile_counts(), before, "programs and object codes are freed with their last reference");
}

#[test]
fn compile_to_ltoir() {
    let _serial = serial();
    require_nvrtc!("compile_to_ltoir");
    let p = Program::create(SAXPY, CodeType::Cxx, &ProgramOptions::default().arch(ARCH)).unwrap();
    let lto = p.compile(CodeType::LtoIr, &[], None).unwrap();
    assert_eq!(lto.code_type().unwrap(), CodeType::LtoIr);
    assert!(!lto.code().unwrap().is_empty());
    // LTO-IR is linker input, not loadable.
    assert_eq!(lto.load().unwrap_err().status, Status::InvalidState);
}

#[test]
fn compile_error_is_compilation_with_the_log() {
    let _serial = serial();
    require_nvrtc!("compile_error_is_compilation_with_the_log");
    let source = "extern \"C\" __global__ void broken(int *x) { *x = undeclared_thing; }";
    let p = Program::create(source, CodeType::Cxx, &ProgramOptions::default().arch(ARCH).name("broken.cu")).unwrap();
    let e = p.compile(CodeType::Ptx, &[], None).unwrap_err();
    assert_eq!(e.status, Status::Compilation, "{}", e);
    assert_eq!(e.status.raw(), 11);
    assert!(e.message.contains("undeclared_thing"), "the message carries the log's first lines: {}", e);
    let log = p.log().unwrap();
    assert!(log.contains("undeclared_thing"), "{}", log);
    assert!(log.contains("error"), "{}", log);
    assert!(e.to_string().starts_with("CUCORE_ERROR_COMPILATION"), "{}", e);
}

#[test]
fn name_expressions_give_lowered_names() {
    let _serial = serial();
    require_nvrtc!("name_expressions_give_lowered_names");
    let p = Program::create(TEMPLATE, CodeType::Cxx, &ProgramOptions::default().arch(ARCH)).unwrap();
    let names = ["scale<float>", "scale<int>"];
    let ptx = p.compile(CodeType::Ptx, &names, None).unwrap();
    let pairs = ptx.name_expressions().unwrap();
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[0].0, "scale<float>");
    assert_eq!(pairs[1].0, "scale<int>");
    let text = String::from_utf8_lossy(ptx.code().unwrap()).into_owned();
    for (expression, lowered) in &pairs {
        assert!(lowered.starts_with("_Z"), "{} -> {}", expression, lowered);
        assert!(text.contains(lowered.as_str()), "the PTX defines {}", lowered);
    }
    assert_ne!(pairs[0].1, pairs[1].1);
    let map = ptx.symbol_mapping().unwrap();
    assert_eq!(map.get("scale<float>"), Some(&pairs[0].1));
    assert_eq!(map.len(), 2);
    // Code compiled without name expressions knows none.
    assert!(p.compile(CodeType::Ptx, &[], None).unwrap().symbol_mapping().unwrap().is_empty());
    // An expression that names nothing is a compile error.
    let e = p.compile(CodeType::Ptx, &["no_such_kernel<float>"], None).unwrap_err();
    assert_eq!(e.status, Status::Compilation, "{}", e);
}

#[test]
fn in_memory_headers_and_defines_reach_the_compiler() {
    let _serial = serial();
    require_nvrtc!("in_memory_headers_and_defines_reach_the_compiler");
    let source = "#include \"value.h\"\nextern \"C\" __global__ void k(int *x) { *x = VALUE + EXTRA; }";
    let o = ProgramOptions::default().arch(ARCH).header("value.h", "#define VALUE 40").define_value("EXTRA", "2");
    let ptx = Program::create(source, CodeType::Cxx, &o).unwrap().compile(CodeType::Ptx, &[], None).unwrap();
    let text = String::from_utf8_lossy(ptx.code().unwrap()).into_owned();
    assert!(text.contains("42"), "VALUE + EXTRA folds to 42: {}", text);
    // Without the define the program does not compile.
    let o = ProgramOptions::default().arch(ARCH).header("value.h", "#define VALUE 40");
    let e = Program::create(source, CodeType::Cxx, &o).unwrap().compile(CodeType::Ptx, &[], None).unwrap_err();
    assert_eq!(e.status, Status::Compilation);
}

#[test]
fn compiler_versions() {
    require_nvrtc!("compiler_versions");
    let v = compiler_version(CompilerBackend::Nvrtc).unwrap();
    assert!(v >= 12000, "NVRTC version {}", v);
    assert_eq!(v % 10, 0, "major * 1000 + minor * 10: {}", v);
    let e = compiler_version(CompilerBackend::Driver).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
}

#[test]
fn programs_cross_threads() {
    let _serial = serial();
    require_nvrtc!("programs_cross_threads");
    let p = Program::create(SAXPY, CodeType::Cxx, &ProgramOptions::default().arch(ARCH)).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let p = p.clone();
            thread::spawn(move || p.compile(CodeType::Ptx, &[], None).unwrap().code().unwrap().len())
        })
        .collect();
    let sizes: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(sizes.iter().all(|s| *s == sizes[0] && *s > 0), "{:?}", sizes);
}
