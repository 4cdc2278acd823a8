//! Plumb's render worker as a binary of this crate, for its integration tests (which cannot run
//! the `plumb` binary's `render-worker` subcommand): the servers and controllers the tests start
//! render Kustomize and Helm through it. The `plumb` binary runs the same code as `plumb
//! render-worker`.

fn main() -> std::process::ExitCode {
    plumb_source::worker::main(std::env::args_os().skip(1))
}
