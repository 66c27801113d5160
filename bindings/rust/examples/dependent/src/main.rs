//! `cargo run`: runs without LD_LIBRARY_PATH and without a build script of its own.
fn main() {
    cucore_dependent::report("cucore-dependent");
}
