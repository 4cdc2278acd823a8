//! Plumb's render worker as a binary of its own, for plumb-source's tests and benches: the
//! `plumb` binary runs the same code as `plumb render-worker`.

fn main() -> std::process::ExitCode {
    plumb_source::worker::main(std::env::args_os().skip(1))
}
