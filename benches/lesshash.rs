//! The crate's criterion benches. Each module of `groups/` registers its
//! groups; this entry runs them all.

mod groups {
    pub mod count_min;
}

criterion::criterion_group!(benches, groups::count_min::register);
criterion::criterion_main!(benches);
