//! Training on a simulated cluster: the data sets and the objective
//! (least squares or logistic regression) whose gradients the workers compute.

pub mod data;
pub mod problem;
