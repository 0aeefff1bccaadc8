//! The checks a study passes before it runs that need more than its
//! parameters' ranges: what one trial holds in memory, whether a user's code
//! can decode at all, whether the decoder's flags act on its schemes.

use super::{MAX_DRAWS_PER_TRIAL, Study, StudyError};
use crate::codes::Code;
use crate::codes::custom::CustomMatrix;
use crate::scheme::{Scheme, Strategy};

/// Bytes a trial holds per message of the strategies that send several per
/// worker: multi-message at n = 4096, s = 4000 (16.4 million messages)
/// peaks at 649 MB, whether on one thread or two.
const BYTES_PER_MESSAGE: u64 = 40;

/// Messages from which a trial's memory is asked for before the run
/// (about 40 MB): below, a failed allocation is no likelier than anywhere
/// else in the program.
const PROBED_MESSAGES: u64 = 1 << 20;

impl Study {
    /// The messages of one trial within [`MAX_DRAWS_PER_TRIAL`]: the
    /// strategies that send several per worker hold every message's times
    /// (some 50 bytes) per thread, so multi-message at n = 10000, s = 9900
    /// (99 million messages) needed gigabytes and aborted.
    pub(super) fn check_messages(&self) -> Result<(), StudyError> {
        let per_worker = |s: &Scheme| match s.strategy() {
            Some(Strategy::MultiMessage { s }) => s as u64 + 1,
            Some(Strategy::Partial { .. }) => 2,
            _ => 1,
        };
        let Some(most) = self.schemes.iter().max_by_key(|s| per_worker(s)) else {
            return Ok(());
        };
        let messages = (self.n as u64).saturating_mul(per_worker(most));
        if messages > MAX_DRAWS_PER_TRIAL {
            return Err(StudyError::TooManyMessages {
                scheme: most.to_string(),
                n: self.n,
                messages,
            });
        }
        // What a thread's trial holds, with half as much again for the
        // allocator's arenas and the run's other buffers, is asked of the
        // allocator once, before the run: under a memory limit the run is
        // refused with the flags to change, where its first trial would abort.
        let bytes = messages.saturating_mul(BYTES_PER_MESSAGE);
        let asked = bytes.saturating_add(bytes / 2);
        if messages >= PROBED_MESSAGES && Vec::<u8>::new().try_reserve_exact(asked as usize).is_err() {
            return Err(StudyError::MessagesOutOfMemory {
                scheme: most.to_string(),
                n: self.n,
                messages,
                bytes,
            });
        }
        Ok(())
    }

    /// A user's code that decodes from every worker: one that does not
    /// (rows that do not span the all-ones combination, or entries whose
    /// products overflow float64) would make every trial take forever.
    pub(super) fn check_decodable(m: &CustomMatrix, scheme: &Scheme) -> Result<(), StudyError> {
        let refuse = |why: String| StudyError::CustomMatrix(format!("{}: {why}", m.source));
        // Entries far from 1 overflow or underflow in the decoder's products
        // before its rank test can say anything (1e308 broke its SVD).
        let magnitudes =
            m.b.col_iter()
                .flat_map(|c| c.iter().map(|v| v.abs()).collect::<Vec<_>>());
        if let Some(bad) = magnitudes.filter(|&v| v != 0.0).find(|v| !(1e-100..=1e100).contains(v)) {
            return Err(refuse(format!(
                "an entry of magnitude {} overflows or underflows float64 in its products; accepted: nonzero entries from 1e-100 to 1e100 in magnitude (scale the matrix: any nonzero factor gives the same code)",
                crate::param::plain(bad)
            )));
        }
        if Code::of_custom(scheme, m).decodes_from_all() {
            return Ok(());
        }
        Err(refuse(format!(
            "it does not decode even from all {} workers: the all-ones combination of the partitions is not in the span of its rows (the matrix is rank-deficient); accepted: a matrix whose rows, all together, combine to all ones",
            m.b.nrows()
        )))
    }

    /// The rank decoder and a generator each act on some scheme: a flag
    /// that changes nothing would label rows with what did not happen.
    /// The rank decoder decodes the exact one-message schemes (and a custom
    /// code, always); a generator chooses the code of comm-efficient and mds.
    pub(super) fn check_rank_acts(&self) -> Result<(), StudyError> {
        if let Some(s) = self
            .schemes
            .iter()
            .find(|s| !s.rank_decoded() && !self.decodes_by_code(s))
        {
            return Err(StudyError::RankDoesNotAct(s.kind()));
        }
        if self.generator.is_some() && !self.schemes.iter().any(|s| s.kind().facts().generator) {
            return Err(StudyError::GeneratorDoesNotAct(self.schemes[0].kind()));
        }
        Ok(())
    }
}
