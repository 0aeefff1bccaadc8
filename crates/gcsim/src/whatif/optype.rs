//! The op types of a per-op trace, as the what-if artifact of Lin et al.
//! (OSDI 2025) names them, and how the dependency model treats each.

use std::fmt;

/// One kind of recorded op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpType {
    /// A microbatch's forward pass on a stage.
    ForwardCompute,
    /// A microbatch's backward pass on a stage.
    BackwardCompute,
    /// Activations sent to the next stage.
    ForwardSend,
    /// Activations received from the previous stage.
    ForwardRecv,
    /// Gradients sent to the previous stage.
    BackwardSend,
    /// Gradients received from the next stage.
    BackwardRecv,
    /// The data-parallel all-gather of the parameters (distributed optimizer).
    ParamsAllGather,
    /// The data-parallel reduce-scatter of the gradients.
    GradsReduceScatter,
    /// A data-parallel all-reduce overlapped with the backward passes.
    SeparateGradsAllReduce,
    /// The all-reduce of the tied embedding's gradients (first and last stage).
    EmbeddingGradsAllReduce,
    /// The all-reduce of the layer-norm gradients (sequence parallelism).
    LayernormGradsAllReduce,
    /// The global gradient-norm reduction before the optimizer step.
    OptimizerClipMainGrad,
    /// The optimizer step, the last op of a training step.
    Optimizer,
    /// Garbage collection after the last backward pass.
    Gc,
}

impl OpType {
    /// Every op type, in the order of [`OpType::name`]'s list.
    pub const ALL: [OpType; 14] = [
        OpType::ForwardCompute,
        OpType::BackwardCompute,
        OpType::ForwardSend,
        OpType::ForwardRecv,
        OpType::BackwardSend,
        OpType::BackwardRecv,
        OpType::ParamsAllGather,
        OpType::GradsReduceScatter,
        OpType::SeparateGradsAllReduce,
        OpType::EmbeddingGradsAllReduce,
        OpType::LayernormGradsAllReduce,
        OpType::OptimizerClipMainGrad,
        OpType::Optimizer,
        OpType::Gc,
    ];

    /// The name the trace's `optype` column uses.
    pub fn name(self) -> &'static str {
        match self {
            OpType::ForwardCompute => "forward-compute",
            OpType::BackwardCompute => "backward-compute",
            OpType::ForwardSend => "forward-send",
            OpType::ForwardRecv => "forward-recv",
            OpType::BackwardSend => "backward-send",
            OpType::BackwardRecv => "backward-recv",
            OpType::ParamsAllGather => "params-all-gather",
            OpType::GradsReduceScatter => "grads-reduce-scatter",
            OpType::SeparateGradsAllReduce => "separate-grads-all-reduce",
            OpType::EmbeddingGradsAllReduce => "embedding-grads-all-reduce",
            OpType::LayernormGradsAllReduce => "layernorm-grads-all-reduce",
            OpType::OptimizerClipMainGrad => "optimizer-clip-main-grad",
            OpType::Optimizer => "optimizer",
            OpType::Gc => "gc",
        }
    }

    /// The op type a name stands for.
    pub fn from_name(name: &str) -> Option<OpType> {
        OpType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The accepted names, for error messages.
    pub fn names() -> String {
        OpType::ALL.map(OpType::name).join(", ")
    }

    /// Forward or backward compute.
    pub fn is_compute(self) -> bool {
        matches!(self, OpType::ForwardCompute | OpType::BackwardCompute)
    }

    /// One of the four pipeline send/recv types.
    pub fn is_p2p(self) -> bool {
        matches!(
            self,
            OpType::ForwardSend | OpType::ForwardRecv | OpType::BackwardSend | OpType::BackwardRecv
        )
    }

    /// Whether the ideal run gives this type the median of its times
    /// (communication, layer-norm all-reduce included) rather than the mean
    /// (compute, optimizer, gc), as Lin et al. define the ideal.
    pub fn ideal_is_median(self) -> bool {
        !matches!(
            self,
            OpType::ForwardCompute | OpType::BackwardCompute | OpType::Optimizer | OpType::Gc
        )
    }

    /// The group of the per-op-type attribution: the two send/recv types of a
    /// direction form one group, as in the artifact.
    pub fn group_name(self) -> &'static str {
        match self {
            OpType::ForwardSend | OpType::ForwardRecv => "forward-pp-comm",
            OpType::BackwardSend | OpType::BackwardRecv => "backward-pp-comm",
            t => t.name(),
        }
    }
}

impl fmt::Display for OpType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back() {
        for t in OpType::ALL {
            assert_eq!(OpType::from_name(t.name()), Some(t));
        }
        assert_eq!(OpType::from_name("forward-send-backward-recv"), None);
    }
}
