//! gcsim's integration tests, one test binary: each module was once its own
//! binary, and one link instead of sixteen keeps `cargo test` and CI fast.
//! Filter by module path, e.g. `cargo test --release --test it agreement::`.

mod agreement;
mod analytic_monte_carlo;
mod analytic_reference;
mod architecture;
mod asynchronous;
mod cli;
mod codes;
mod comm;
mod comm_random;
mod common;
mod config_shard;
mod custom_codes;
mod decoder;
mod errors;
mod errors_strategies;
mod figure_style;
mod figures;
mod fit;
mod fit_load;
mod flags_act;
mod groups;
mod guide;
mod hostile_inputs;
mod matmul;
mod merge_partial;
mod partial;
mod persistence;
mod plan;
mod populations;
mod properties;
mod real_units;
mod replay_rows;
mod scenario_train;
mod shard;
mod strategies;
mod timelines;
mod trace;
mod trace_import;
mod trace_intervals;
mod train;
mod train_updates;
mod value_stability;
mod verify;
