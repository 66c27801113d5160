//! Program caches: keys, in-memory and on-disk hits, misses and stats, entries shared between
//! cache objects of one directory, damaged entries recompiled, clearing. No GPU needed; tests
//! skip with a printed reason where NVRTC is not installed. (Helpers and skip rules:
//! common/mod.rs.)

#[macro_use]
mod common;
use common::*;

fn saxpy_program() -> Program {
    Program::create(SAXPY, CodeType::Cxx, &ProgramOptions::default().arch(ARCH)).unwrap()
}

#[test]
fn keys_depend_on_every_input() {
    let _serial = serial();
    require_nvrtc!("keys_depend_on_every_input");
    let p = saxpy_program();
    let k = ProgramCache::key(&p, CodeType::Cubin, &[]).unwrap();
    assert_eq!(k, ProgramCache::key(&p, CodeType::Cubin, &[]).unwrap(), "deterministic");
    assert_eq!(k, ProgramCache::key(&saxpy_program(), CodeType::Cubin, &[]).unwrap(), "same inputs, same key");
    assert_ne!(k, ProgramCache::key(&p, CodeType::Ptx, &[]).unwrap(), "target");
    assert_ne!(k, ProgramCache::key(&p, CodeType::Cubin, &["saxpy"]).unwrap(), "name expressions");
    let other_arch = Program::create(SAXPY, CodeType::Cxx, &ProgramOptions::default().arch("sm_80")).unwrap();
    assert_ne!(k, ProgramCache::key(&other_arch, CodeType::Cubin, &[]).unwrap(), "architecture");
    let other_option = Program::create(SAXPY, CodeType::Cxx, &ProgramOptions::default().arch(ARCH).ftz(true)).unwrap();
    assert_ne!(k, ProgramCache::key(&other_option, CodeType::Cubin, &[]).unwrap(), "options");
    let other_code =
        Program::create(format!("{}\n// changed", SAXPY), CodeType::Cxx, &ProgramOptions::default().arch(ARCH)).unwrap();
    assert_ne!(k, ProgramCache::key(&other_code, CodeType::Cubin, &[]).unwrap(), "code");
}

#[test]
fn in_memory_hit_miss_and_stats() {
    let _serial = serial();
    require_nvrtc!("in_memory_hit_miss_and_stats");
    let cache = ProgramCache::in_memory(0).unwrap();
    assert_eq!(cache.stats().unwrap(), ProgramCacheStats::default());
    let p = saxpy_program();
    let first = p.compile(CodeType::Cubin, &[], Some(&cache)).unwrap();
    let s = cache.stats().unwrap();
    assert_eq!((s.hits, s.misses, s.entries), (0, 1, 1), "{:?}", s);
    assert!(s.size_bytes >= first.code().unwrap().len() as u64, "{:?}", s);

    // Another program object with the same code and options hits.
    let p2 = saxpy_program();
    let second = p2.compile(CodeType::Cubin, &[], Some(&cache)).unwrap();
    assert_eq!(second.code().unwrap(), first.code().unwrap());
    assert_eq!(p2.log().unwrap(), "", "no compiler ran on a hit");
    let s = cache.stats().unwrap();
    assert_eq!((s.hits, s.misses, s.entries), (1, 1, 1), "{:?}", s);

    // A different target misses; name expressions come back from the cache too.
    let t = Program::create(
        "template <typename T> __global__ void f(T *x) { *x = T(1); }",
        CodeType::Cxx,
        &ProgramOptions::default().arch(ARCH),
    )
    .unwrap();
    let a = t.compile(CodeType::Ptx, &["f<int>"], Some(&cache)).unwrap();
    let b = t.compile(CodeType::Ptx, &["f<int>"], Some(&cache)).unwrap();
    assert_eq!(a.symbol_mapping().unwrap(), b.symbol_mapping().unwrap());
    assert_eq!(b.symbol_mapping().unwrap().len(), 1);
    let s = cache.stats().unwrap();
    assert_eq!((s.hits, s.misses, s.entries), (2, 2, 2), "{:?}", s);

    cache.clear().unwrap();
    let s = cache.stats().unwrap();
    assert_eq!((s.hits, s.misses, s.entries, s.size_bytes), (0, 0, 0, 0), "{:?}", s);
    p.compile(CodeType::Cubin, &[], Some(&cache)).unwrap();
    assert_eq!(cache.stats().unwrap().misses, 1, "cleared entries are gone");
}

#[test]
fn in_memory_cache_evicts_beyond_its_size() {
    let _serial = serial();
    require_nvrtc!("in_memory_cache_evicts_beyond_its_size");
    let p = saxpy_program();
    let size = p.compile(CodeType::Ptx, &[], None).unwrap().code().unwrap().len() as u64;
    // Room for about one entry: a second entry evicts the first.
    let cache = ProgramCache::in_memory(size + size / 2).unwrap();
    p.compile(CodeType::Ptx, &[], Some(&cache)).unwrap();
    p.compile(CodeType::Ptx, &["saxpy"], Some(&cache)).unwrap();
    let s = cache.stats().unwrap();
    assert!(s.evictions >= 1, "{:?}", s);
    assert!(s.size_bytes <= size + size / 2, "{:?}", s);
}

#[test]
fn on_disk_entries_survive_the_cache_object() {
    let _serial = serial();
    require_nvrtc!("on_disk_entries_survive_the_cache_object");
    let dir = TempDir::new("program-cache");
    let cache_dir = dir.path().join("nested").join("cache");
    let p = saxpy_program();
    let first = {
        let cache = ProgramCache::on_disk(&cache_dir, 0).unwrap();
        let code = p.compile(CodeType::Cubin, &[], Some(&cache)).unwrap();
        let s = cache.stats().unwrap();
        assert_eq!((s.hits, s.misses, s.entries), (0, 1, 1), "{:?}", s);
        code.code().unwrap().to_vec()
    };
    assert!(cache_dir.is_dir(), "the directory was created with its parents");
    let files: Vec<_> = std::fs::read_dir(&cache_dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{:?}", files);

    // A new cache object on the same directory (as another process would) hits.
    let cache = ProgramCache::on_disk(&cache_dir, 0).unwrap();
    let again = saxpy_program().compile(CodeType::Cubin, &[], Some(&cache)).unwrap();
    assert_eq!(again.code().unwrap(), &first[..]);
    let s = cache.stats().unwrap();
    assert_eq!((s.hits, s.misses), (1, 0), "{:?}", s);

    // A damaged entry is a miss, counted, and replaced by the recompiled code.
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &bytes[..bytes.len() / 2]).unwrap();
    let cache = ProgramCache::on_disk(&cache_dir, 0).unwrap();
    let recompiled = saxpy_program().compile(CodeType::Cubin, &[], Some(&cache)).unwrap();
    assert_eq!(recompiled.code().unwrap(), &first[..]);
    let s = cache.stats().unwrap();
    assert_eq!((s.hits, s.misses, s.corrupt_entries), (0, 1, 1), "{:?}", s);
    let cache = ProgramCache::on_disk(&cache_dir, 0).unwrap();
    saxpy_program().compile(CodeType::Cubin, &[], Some(&cache)).unwrap();
    assert_eq!(cache.stats().unwrap().hits, 1, "the replaced entry is whole again");

    cache.clear().unwrap();
    assert_eq!(std::fs::read_dir(&cache_dir).unwrap().count(), 0, "clear removes the entry files");
}

#[test]
fn bad_directories_are_invalid_argument() {
    let dir = TempDir::new("program-cache-bad");
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let e = ProgramCache::on_disk(&file, 0).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("a-file"), "the message names the path: {}", e);
}

#[test]
fn caches_are_shared_across_threads() {
    let _serial = serial();
    require_nvrtc!("caches_are_shared_across_threads");
    let cache = ProgramCache::in_memory(0).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let cache = cache.clone();
            thread::spawn(move || {
                saxpy_program().compile(CodeType::Ptx, &[], Some(&cache)).unwrap().code().unwrap().to_vec()
            })
        })
        .collect();
    let codes: Vec<Vec<u8>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(codes.iter().all(|c| *c == codes[0]));
    let s = cache.stats().unwrap();
    assert_eq!(s.hits + s.misses, 4, "{:?}", s);
    assert_eq!(s.entries, 1, "{:?}", s);
}

#[test]
fn entries_by_key_are_read_stored_and_removed() {
    let _serial = serial();
    let cache = ProgramCache::in_memory(0).unwrap();
    let code = ObjectCode::create(b"not really a cubin", CodeType::Cubin, Some("stored")).unwrap();
    let key = [7u8; 32];
    assert!(cache.get(&key).unwrap().is_none(), "nothing stored yet");
    cache.put(&key, &code).unwrap();
    let got = cache.get(&key).unwrap().expect("stored");
    assert_eq!(got.code().unwrap(), code.code().unwrap());
    assert_eq!(got.code_type().unwrap(), CodeType::Cubin);
    let s = cache.stats().unwrap();
    assert_eq!((s.hits, s.misses, s.entries), (1, 1, 1), "{:?}", s);
    assert!(cache.remove(&key).unwrap());
    assert!(!cache.remove(&key).unwrap(), "already gone");
    assert!(cache.get(&key).unwrap().is_none());
}
