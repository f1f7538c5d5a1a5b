//! The `lesshash` command-line tool (placeholder).

fn main() {}
