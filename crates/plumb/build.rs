//! Stamps the `plumb` binary with the Git commit, tree state, build date and compiler it was
//! built from (`src/stamp.rs`), for `plumb version` and the server's `GET /api/version`.

#[path = "src/stamp.rs"]
mod stamp;

fn main() {
    stamp::run();
}
