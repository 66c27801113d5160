//! What both binaries print: the loaded library's version, and its devices or why there are none
//! (no GPU is needed: the library loads without a CUDA driver and says so when one is used).

pub fn report(program: &str) {
    println!("{}: libcucore {} ({})", program, cucore::version_string(), cucore::version());
    match cucore::Device::count() {
        Ok(n) => println!("{}: {} CUDA device(s)", program, n),
        Err(e) => println!("{}: no CUDA device: {}", program, e),
    }
}
