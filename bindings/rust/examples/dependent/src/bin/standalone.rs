//! Runs outside cargo too: build.rs gives it libcucore's directory as its RUNPATH.
fn main() {
    cucore_dependent::report("standalone");
}
