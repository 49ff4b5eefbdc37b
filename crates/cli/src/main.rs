//! The `yardstick` command. Everything lives in the library so it is testable.
/// mimalloc: the client's threads allocate per request in the drivers, and
/// glibc's allocator spent a quarter of the client's CPU on TPC-C.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(yardstick_cli::main_with_args(std::env::args_os().collect()));
}
