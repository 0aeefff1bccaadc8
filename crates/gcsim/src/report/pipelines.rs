//! A hybrid-parallel job's columns of a row.

use super::Row;
use crate::engine::pipelines::PipelineShares;
use crate::study::Study;

impl Row {
    /// Under `study`'s layout, the GPUs the cost view counts, the
    /// pipelines' shares and the sums' time timed on the pipelines.
    pub(super) fn pipeline_columns(&mut self, study: &Study, shares: Option<PipelineShares>) {
        if let Some(l) = study.parallel() {
            self.gpus = Some(l.layout.ranks());
        }
        let Some(p) = shares else { return };
        // One bucket's sum takes its cost, which the row has exactly.
        if self.collective_time.is_some() && study.aggregation().collective().is_some_and(|c| c.buckets > 1) {
            self.collective_time = Some(p.collective_time);
        }
        self.bubble_fraction = Some(p.bubble_fraction);
        let busy: Vec<String> = p.stage_busy.iter().map(|b| crate::param::plain(*b)).collect();
        self.stage_busy = Some(busy.join(";"));
    }
}
