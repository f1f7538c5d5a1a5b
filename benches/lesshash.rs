//! The crate's criterion benches. Each module of `groups/` registers its
//! groups; this entry runs them all.

mod groups {
    pub mod count_min;
    pub mod format;
}

criterion::criterion_group!(
    benches,
    groups::count_min::register,
    groups::format::register
);
criterion::criterion_main!(benches);
