//! Puts libcucore's directory in the RUNPATH of the binary `standalone`, so that it runs outside
//! cargo too. cucore-sys found the directory; cargo passes it to the build scripts of the crates
//! that depend on cucore-sys directly, as `DEP_CUCORE_LIB_DIR` (it is absent when the library
//! came from a directory the linker searches by itself). `cargo:rustc-link-arg=...` would do it
//! for every binary of this package.
//!
//! The other binary, `cucore-dependent`, gets no RUNPATH: it shows what every dependent gets
//! without a build script, `cargo run` working without LD_LIBRARY_PATH.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_CUCORE_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_CUCORE_LIB_DIR") {
        println!("cargo:rustc-link-arg-bin=standalone=-Wl,-rpath,{}", dir);
    }
}
