//! Training on a simulated cluster (`gcsim train`): the data sets and the
//! objective (least squares or logistic regression) whose gradients the
//! workers compute, gradient descent on the engine's timeline, and what it
//! answers: which configuration reaches the target first.

pub mod data;
pub mod problem;
pub mod report;
pub mod run;
pub mod setup;
pub mod shard;
pub mod summary;
