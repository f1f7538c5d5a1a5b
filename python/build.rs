//! PyO3's configuration flags for this crate's own code: `Py_GIL_DISABLED`
//! picks how one-key calls reach a shared filter (src/shared.rs).

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
